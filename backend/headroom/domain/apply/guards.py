"""The guard metrics that watch an apply, with Headroom's own thresholds (docs/thresholds/apply-guards.md).

A guard compares the metric's p99 over the minutes after a step with its p99 over the same length before it.
It trips when the after value is both above `factor` times the before value and above `floor` (so a latency
going from 0.2 ms to 0.5 ms on an idle volume does not stop a run). A tripped guard stops the run before the next
step and offers to undo the steps done (each as soon as its undo is allowed).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from headroom.domain.model import Impact
from headroom.domain.snapshot import metric_ids

THRESHOLDS_PAGE = "docs/thresholds/apply-guards.md"
WATCH_MINUTES = 15  # docs/thresholds/apply-guards.md#watch: the window after each step and before it


class Guard(BaseModel):
    """A metric watched while a plan runs, and when it stops the run."""

    model_config = ConfigDict(frozen=True)

    metric: str = Field(description="The series watched (the metrics API's id).")
    label: str = Field(description="The metric in words.")
    unit: str
    statistic: str = Field(description="How it is taken over the window, e.g. p99.")
    factor: float = Field(description="Trips above this multiple of the value before the step ...")
    floor: float = Field(description="... and above this value, in `unit`.")
    watch_minutes: int = Field(description="Minutes watched after each step (and compared with as many before).")
    rule: str = Field(description="The rule in words.")


def _guard(metric: str, label: str, unit: str, factor: float, floor: float) -> Guard:
    rule = (f"Stop if the p99 of {label.lower()} over the {WATCH_MINUTES} minutes after a step is above "
            f"{factor:g} times its p99 over the {WATCH_MINUTES} minutes before it and above {floor:g} {unit}.")
    return Guard(metric=metric, label=label, unit=unit, statistic="p99", factor=factor, floor=floor,
                 watch_minutes=WATCH_MINUTES, rule=rule)


# docs/thresholds/apply-guards.md#latency and #scheduler: Headroom's choices, explained there.
READ_LATENCY = _guard("derived.read_latency_ms", "Read latency", "ms", 1.5, 10.0)
WRITE_LATENCY = _guard("derived.write_latency_ms", "Write latency", "ms", 1.5, 10.0)
SCHEDULER_WAIT = _guard(metric_ids.TIKV_WAIT_SCHEDULER_LATCH, "Scheduler latch wait", "ms", 2.0, 10.0)


def plan_guards(finding_metric: str | None, finding_metric_label: str | None, impact: Impact | None) -> list[Guard]:
    """Return the guards of a plan: the finding's own metric (it must not get worse), then read and write latency
    p99 and the scheduler latch wait p99."""
    guards: list[Guard] = []
    if finding_metric:
        label = finding_metric_label or (impact.metric if impact and impact.metric else "The finding's metric")
        unit = impact.unit if impact and impact.unit else ""
        # docs/thresholds/apply-guards.md#finding-metric: the fix must not make its own metric worse by 25 %.
        guards.append(Guard(metric=finding_metric, label=label, unit=unit, statistic="p99", factor=1.25, floor=0.0,
                            watch_minutes=WATCH_MINUTES,
                            rule=f"Stop if the p99 of {label.lower()} over the {WATCH_MINUTES} minutes after a step is "
                                 f"above 1.25 times its p99 over the {WATCH_MINUTES} minutes before it."))
    guards.extend((READ_LATENCY, WRITE_LATENCY, SCHEDULER_WAIT))
    return guards


def tripped(guard: Guard, before: float | None, after: float | None) -> bool:
    """Whether the guard stops the run: a window without data stops it too (docs/thresholds/apply-guards.md#watch)."""
    if before is None or after is None:
        return True
    return after > guard.factor * before and after > guard.floor
