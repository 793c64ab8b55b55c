"""The guard metrics that watch an apply, with Headroom's own thresholds (docs/thresholds/apply-guards.md).

A guard compares the metric's p99 over the minutes after a step with its p99 over the same length before it.
It trips when the after value is both above `factor` times the before value and above `floor` (so a latency
going from 0.2 ms to 0.5 ms on an idle volume does not stop a run). A tripped guard stops the run before the next
step and offers to undo the steps done (each as soon as its undo is allowed).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from headroom.domain.snapshot import metric_ids as mid
from headroom.domain.snapshot.labels import metric_label, metric_unit

THRESHOLDS_PAGE = "docs/thresholds/apply-guards.md"
WATCH_MINUTES = 15  # docs/thresholds/apply-guards.md#watch: the window after each step and before it
# docs/thresholds/apply-guards.md#late-data: how much longer a watch waits for a guard's first point after the step
WATCH_GRACE_MINUTES = 15


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
    worse_when: Literal["higher", "lower"] = Field(
        default="higher", description="Which way is worse: a latency rising, or a hit rate or a balance falling.")


def _guard(metric: str, label: str, unit: str, factor: float, floor: float) -> Guard:
    rule = (f"Stop if the p99 of {label.lower()} over the {WATCH_MINUTES} minutes after a step is above "
            f"{factor:g} times its p99 over the {WATCH_MINUTES} minutes before it and above {floor:g} {unit}.")
    return Guard(metric=metric, label=label, unit=unit, statistic="p99", factor=factor, floor=floor,
                 watch_minutes=WATCH_MINUTES, rule=rule)


# docs/thresholds/apply-guards.md#latency and #scheduler: Headroom's choices, explained there.
READ_LATENCY = _guard("derived.read_latency_ms", "Read latency", "ms", 1.5, 10.0)
WRITE_LATENCY = _guard("derived.write_latency_ms", "Write latency", "ms", 1.5, 10.0)
SCHEDULER_WAIT = _guard(mid.TIKV_WAIT_SCHEDULER_LATCH, "Scheduler latch wait", "ms", 2.0, 10.0)


# Series of which less is worse (docs/thresholds/apply-guards.md#finding-metric): fewer block cache hits means
# more reads go to the disk; a falling burst balance or free space is what the findings warn of.
LOWER_IS_WORSE = frozenset({
    mid.TIKV_BLOCK_CACHE_HIT, mid.EBS_BURST_BALANCE, mid.EC2_EBS_IO_BALANCE, mid.EC2_EBS_BYTE_BALANCE,
    mid.EBS_IDLE_TIME, mid.TIKV_STORE_AVAILABLE_BYTES, mid.NODE_MEMORY_AVAILABLE, mid.NODE_FS_AVAIL_BYTES,
})
FINDING_FACTOR = 1.25  # docs/thresholds/apply-guards.md#finding-metric: its own metric must not get 25 % worse

def finding_guard(metric: str) -> Guard:
    """The guard on the finding's own series: named and measured as the series is drawn (its label and unit, not
    the finding's impact's), and worse in the series' own direction."""
    label, unit = metric_label(metric), metric_unit(metric) or ""
    lower = metric in LOWER_IS_WORSE
    limit = (f"below {1 / FINDING_FACTOR:g} times" if lower else f"above {FINDING_FACTOR:g} times")
    return Guard(metric=metric, label=label, unit=unit, statistic="p99", factor=FINDING_FACTOR, floor=0.0,
                 watch_minutes=WATCH_MINUTES, worse_when="lower" if lower else "higher",
                 rule=f"Stop if the p99 of {label.lower()} over the {WATCH_MINUTES} minutes after a step is {limit} "
                      f"its p99 over the {WATCH_MINUTES} minutes before it.")


# Volume types with a burst bucket: AWS publishes BurstBalance only for these (docs/reference/cloudwatch.md).
BURST_BUCKET_TYPES = frozenset({"gp2", "st1", "sc1"})


def plan_guards(finding_metric: str | None, *, burst_bucket_removed: bool = False) -> list[Guard]:
    """Return the guards of a plan: the finding's own metric (it must not get worse), then read and write latency
    p99 and the scheduler latch wait p99.

    A plan that moves a volume to a type without a burst bucket (gp2 -> gp3: `burst_bucket_removed`) ends the
    volume's burst balance: AWS stops publishing it, so it cannot guard the step (a window without data would stop
    every such run) and the latency guards judge it (docs/thresholds/apply-guards.md#finding-metric)."""
    own = finding_metric and not (burst_bucket_removed and finding_metric == mid.EBS_BURST_BALANCE)
    guards = [finding_guard(finding_metric)] if finding_metric and own else []
    guards.extend((READ_LATENCY, WRITE_LATENCY, SCHEDULER_WAIT))
    return guards


def tripped(guard: Guard, before: float | None, after: float | None) -> bool:
    """Whether the guard stops the run: a window without data stops it too (docs/thresholds/apply-guards.md#watch)."""
    if before is None or after is None:
        return True
    if guard.worse_when == "lower":
        return after * guard.factor < before
    return after > guard.factor * before and after > guard.floor
