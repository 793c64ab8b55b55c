"""Shared thresholds and helpers of the rule families (not a rules module: it exposes no RULES).

"Sustained" (used by every ceiling rule):
- AT_CEILING_FRACTION = 0.90: EBS gp2/gp3 are "designed to deliver at least 90% of their provisioned
  IOPS performance 99% of the time" (docs/reference/ebs-volume-types.md#performance-consistency, AWS "Amazon EBS-optimized instances"): at or above 90% of a ceiling a
  volume is inside the band where AWS promises nothing more, so we call it "at the ceiling".
- SUSTAINED_MIN_RUN_MINUTES = 30: the condition holds for at least 30 consecutive minutes. Headroom choice,
  anchored on AWS's own unit of "a burst" (docs/reference/ec2-ebs-limits.md#the-burst-rule: burst sizes hold their maximum "for 30 minutes at
  least once every 24 hours"); a shorter excursion is a spike that credits or queues absorb.
- SUSTAINED_MIN_SHARE = 0.05: or for at least 5% of the window (72 min a day) in shorter runs. Headroom
  choice: repeated short runs add up to a daily pattern even when none lasts 30 min.
- SUSTAINED_MIN_TOTAL_MINUTES = 15: the share alone is not enough; the runs must also add up to at least 15
  minutes, three of CloudWatch's 5-minute periods (EC2's default resolution, docs/reference/cloudwatch.md#instance-ebs-metrics), so one spike in a
  short window (3 minutes are 5% of an hour) is never "sustained". Headroom choice.
- JUDGING_WINDOW_HOURS = 24: a window shorter than a day does not show the daily cycle (nor AWS's "once every
  24 hours" burst allowance, docs/reference/ec2-ebs-limits.md#the-burst-rule); findings from it lose SHORT_WINDOW_CONFIDENCE_PENALTY of confidence and say
  why. Headroom choice.
Every value and its reason: docs/thresholds/sustained.md (cited by the findings as SUSTAINED_SOURCE).
Durations are time, not samples: every series a rule reads is on the window's grid (Context.series aligns series
of other periods, docs/series-alignment.md), so k steps last k x the window step.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import Any

import numpy as np

from headroom.domain import references as refs
from headroom.domain.advisor.context import (
    Array,
    Context,
    bridge_gaps,
    minutes,
    ratio,
    runs,
)
from headroom.domain.advisor.buckets import instance_io_series as instance_io_series  # the rules' shared import
from headroom.domain.advisor.finding import Finding
from headroom.domain.model import Ceiling, Evidence, ReferenceLine
from headroom.domain.physics.ceilings import IoDimension, at_value, in_force
from headroom.domain.snapshot.schema import Node
from headroom.domain.units import format_duration_words, format_share

AT_CEILING_FRACTION = (
    0.90  # docs/reference/ebs-volume-types.md#performance-consistency: "at least 90% of their provisioned IOPS performance 99% of the time"
)
SUSTAINED_MIN_RUN_MINUTES = 30.0  # Headroom choice, the 30-minute burst unit of docs/reference/ec2-ebs-limits.md#the-burst-rule
SUSTAINED_MIN_SHARE = 0.05  # Headroom choice: >= 5% of the window
SUSTAINED_MIN_TOTAL_MINUTES = 15.0  # Headroom choice: three 5-minute CloudWatch periods (docs/reference/cloudwatch.md#instance-ebs-metrics) at the least
MAX_BRIDGED_GAP_SECONDS = 300  # Headroom choice: a gap of up to one 5-minute CloudWatch period (docs/reference/cloudwatch.md#instance-ebs-metrics) inside a run
JUDGING_WINDOW_HOURS = 24.0  # Headroom choice: a window shorter than a day does not show the daily cycle
SHORT_WINDOW_CONFIDENCE_PENALTY = 0.2  # Headroom choice: lowers a short window's finding below the base 0.6
SUSTAINED_SOURCE = refs.headroom_threshold("sustained.md", "sustained time at a ceiling")  # Headroom's own thresholds, each with its reason
# After a fix, the observed peak should sit at or below this share of the new ceiling. Headroom choice: below
# the 90% band of docs/reference/ebs-volume-types.md#performance-consistency with room for growth; the same 75% as the top of PingCAP's scheduler utilisation band
# (docs/reference/pingcap-guidance.md#thread-pools "keep utilization at 50-75%").
TARGET_UTILISATION = 0.75
# Projected ceilings (projected.py, disk.py): warn when the forecast reaches a ceiling within 30 days, critical
# within 7, and size the fix for 90 days of growth. Headroom choices: docs/thresholds/projected-ceiling.md.
PROJECTION_WARNING_DAYS = 30.0
PROJECTION_CRITICAL_DAYS = 7.0
PROJECTION_SIZING_DAYS = 90.0
# A demand pinned at a ceiling is clipped: the true demand is unknown but at least the ceiling. Headroom
# choice: size the fix for max(p99 / TARGET_UTILISATION, served peak × 1.25) when pinned.
CLIPPED_DEMAND_FACTOR = 1.25
# PingCAP (docs/reference/pingcap-guidance.md#ebs-latency-at-the-limits): "once IOPS reaches the limit, latency experiences a dramatic penalty, often more than
# 10 ms"; used as the corroboration threshold for a latency jump.
LATENCY_JUMP_MS = 10.0
# A series whose peak reaches 99% of the ceiling is pinned at it (served = ceiling; the rest is clipped).
# Headroom choice: 1% absorbs rounding of CloudWatch sums.
PINNED_RATIO = 0.99
# Confidence of a finding: a base for a sustained condition on one source of data, raised by independent
# corroboration (AWS's own exceeded check, the latency jump PingCAP describes). Headroom choice, not a
# calibrated probability.
CONFIDENCE_BASE = 0.6
CONFIDENCE_EXCEEDED_CHECK = 0.2
CONFIDENCE_LATENCY = 0.1
# PingCAP's AWS deployment guide (docs/reference/pingcap-guidance.md#aws-deployment): TiKV on gp3 at 4,000 IOPS / 400 MiB/s. Used as
# the floor of a gp3 data-volume fix. Raft volumes: PingCAP's public-cloud practice (docs/reference/pingcap-guidance.md#raft-engine-disk) says gp3's free
# 3,000 IOPS / 125 MiB/s "are usually enough for Raft Engine".
PINGCAP_GP3_DATA_IOPS = 4000
PINGCAP_GP3_DATA_MIBPS = 400.0


def demand_estimate(p99_value: float, served_peak: float, pinned: bool) -> float:
    """Return the capacity a fix should provide: p99 at 75% utilisation, and 25% above a clipped peak."""
    need = p99_value / TARGET_UTILISATION
    if pinned:
        need = max(need, served_peak * CLIPPED_DEMAND_FACTOR)
    return need


@dataclass(frozen=True)
class Pressure:
    """How a series sat against a ceiling over the window (its percentiles are computed when first read)."""

    threshold: float  # fraction of the ceiling tested (e.g. 0.9)
    share: float  # fraction of valid points at or above threshold × ceiling
    longest_run_minutes: float
    minutes_at: float  # time at or above threshold × ceiling, all runs together
    episodes: int
    peak_ratio: float  # highest value / ceiling at that point
    ceiling_min: float  # lowest ceiling in the window
    ceiling_max: float
    mask: np.ndarray[Any, np.dtype[np.bool_]]
    values: Array = field(repr=False)

    @property
    def sustained(self) -> bool:
        """Whether the condition held for 30 consecutive minutes, or for 5% of the window and 15 minutes in all."""
        return self.longest_run_minutes >= SUSTAINED_MIN_RUN_MINUTES or (
            self.share >= SUSTAINED_MIN_SHARE and self.minutes_at >= SUSTAINED_MIN_TOTAL_MINUTES
        )

    def held_text(self) -> str:
        """Return how long the condition held, in time and as a share: "45 min (3% of the window)"."""
        return f"{format_duration_words(60 * (self.minutes_at))} ({pct(self.share)} of the window)"

    @cached_property
    def _finite(self) -> Array:
        finite: Array = self.values[~np.isnan(self.values)]
        return finite

    @property
    def peak(self) -> float:
        """Return the highest observed value (NaN without any)."""
        return float(self._finite.max()) if self._finite.size else math.nan

    @cached_property
    def _p95_p99(self) -> tuple[float, float]:
        if not self._finite.size:
            return math.nan, math.nan
        p95_, p99_ = np.percentile(self._finite, [95, 99])
        return float(p95_), float(p99_)

    @property
    def p95(self) -> float:
        """Return the 95th percentile of the observed values."""
        return self._p95_p99[0]

    @property
    def p99(self) -> float:
        """Return the 99th percentile of the observed values."""
        return self._p95_p99[1]


def pressure(
    values: Array, ceiling: Array | float, step_seconds: int, threshold: float = AT_CEILING_FRACTION
) -> Pressure:
    """Measure how often and how long `values` sat at or above `threshold` × `ceiling`."""
    ceil = np.broadcast_to(np.asarray(ceiling, dtype=np.float64), values.shape)
    # A constant ceiling divides as itself (the same quotients, without testing every broadcast copy of it).
    r = ratio(values, ceiling if np.ndim(ceiling) == 0 else ceil)
    missing = np.isnan(r)
    n_missing = int(np.count_nonzero(missing))
    with np.errstate(invalid="ignore"):
        mask = np.asarray(r >= threshold, dtype=np.bool_)  # NaN compares False: mask_at_or_above's mask
    valid = r.size - n_missing
    at = int(np.count_nonzero(mask))
    share = at / valid if valid else 0.0
    # A run's length is measured in time across short gaps (at most one 5-minute CloudWatch period): a missing
    # datapoint inside a run does not split it. Time at the ceiling (minutes_at, share) counts observed points only.
    # (Without a point at the ceiling there is no run to bridge; without a missing point no gap.)
    if not at:
        held: list[tuple[int, int]] = []
    elif n_missing:
        held = runs(bridge_gaps(mask, missing, max(1, MAX_BRIDGED_GAP_SECONDS // step_seconds)))
    else:
        held = runs(mask)
    if ceil.size == 0:
        ceiling_min = ceiling_max = math.nan
    elif np.ndim(ceiling) == 0:
        ceiling_min = ceiling_max = float(ceiling)
    else:
        ceiling_min, ceiling_max = float(np.nanmin(ceil)), float(np.nanmax(ceil))
    return Pressure(
        threshold=threshold,
        share=share,
        longest_run_minutes=minutes(max((length for _, length in held), default=0), step_seconds),
        minutes_at=minutes(at, step_seconds),
        episodes=len(held),
        peak_ratio=float(np.fmax.reduce(r)) if valid else math.nan,  # peak(r): the highest non-NaN ratio
        ceiling_min=ceiling_min,
        ceiling_max=ceiling_max,
        mask=mask,
        values=values,
    )


def share_where(flags: Array | None, mask: np.ndarray) -> float | None:
    """Return the share of the masked points where a 0/1 series (e.g. VolumeIOPSExceededCheck) reads 1."""
    if flags is None or len(flags) != len(mask) or not mask.any():
        return None
    sel = flags[mask]
    sel = sel[~np.isnan(sel)]
    return float(np.count_nonzero(sel >= 1.0)) / sel.size if sel.size else None


def median_where(values: Array | None, mask: np.ndarray) -> float | None:
    """Return the median of `values` at the masked points (None when nothing is left)."""
    if values is None or len(values) != len(mask):
        return None
    sel = values[mask]
    sel = sel[~np.isnan(sel)]
    return float(np.median(sel)) if sel.size else None


def round_up(x: float, step: float) -> float:
    """Round up to a multiple of `step`; within 0.1% of a step counts as on it (measurement noise)."""
    return math.ceil(x / step - 1e-3) * step


def pct(x: float) -> str:
    """Format a fraction as a percentage ("93%")."""
    return format_share(x)


def node_scope(ctx: Context, node: Node) -> tuple[tuple[str, str], ...]:
    """Return what a per-node check may read about its node (Context.memo's depends_on): the node, its instance,
    the other nodes on that instance, the node's volumes and every volume on the instance."""
    iid = node.instance_id
    vols = {*node.data_volume_ids, *node.raft_volume_ids, *(v.id for v in ctx.volumes_on_instance(iid))}
    return (
        ("node", node.id),
        ("instance", iid),
        *(("node", n.id) for n in ctx.nodes_on_instance(iid)),
        *(("volume", v) for v in sorted(vols)),
    )


def per_node(
    ctx: Context, name: str, node: Node, finding_for: Callable[[], Finding | None]
) -> Finding | None:
    """Return `finding_for()`, a per-node check's finding on `node`, computed once per run; a what-if context
    takes the run's when nothing in the node's scope (`node_scope`) changed. `name` names the check (with every
    argument besides the node it depends on)."""
    return ctx.memo(("per_node", name, node.id), finding_for, node_scope(ctx, node))


def each_node(ctx: Context, finding_for: Callable[[Context, Node], Finding | None]) -> list[Finding]:
    """Return the findings of a per-node check, in node order, skipping nodes it has nothing to say about.

    A module-level check reads only its node's scope (`node_scope`), so a what-if re-run reuses the run's finding
    for every node the changes leave alone; a closure is run on every node."""
    name = f"{finding_for.__module__}.{finding_for.__qualname__}"
    if getattr(finding_for, "__closure__", None) is not None or "<" in name:
        return [f for f in (finding_for(ctx, node) for node in ctx.nodes) if f is not None]
    found = (per_node(ctx, name, node, partial(finding_for, ctx, node)) for node in ctx.nodes)
    return [f for f in found if f is not None]


def window_hours(ctx: Context) -> float:
    """Return the length of the snapshot window in hours."""
    return (ctx.window.end - ctx.window.start).total_seconds() / 3600.0


def short_window_note(ctx: Context) -> str | None:
    """Return why a window shorter than JUDGING_WINDOW_HOURS is judged with less confidence (None otherwise)."""
    hours = window_hours(ctx)
    if hours >= JUDGING_WINDOW_HOURS:
        return None
    return (
        f"the window is {format_duration_words(hours * 3600)}, shorter than a day: the daily cycle is not seen, so confidence is lowered "
        f"({SUSTAINED_SOURCE})"
    )


def window_confidence(ctx: Context, confidence: float) -> float:
    """Return a finding's confidence lowered by SHORT_WINDOW_CONFIDENCE_PENALTY when the window is under a day."""
    if window_hours(ctx) >= JUDGING_WINDOW_HOURS:
        return confidence
    return round(max(0.1, confidence - SHORT_WINDOW_CONFIDENCE_PENALTY), 2)


def window_evidence(ctx: Context, **fields: Any) -> Evidence:
    """Return an Evidence over the context's window; `fields` are the rest of Evidence's (condition, measures...)."""
    return Evidence(
        window_start=ctx.window.start, window_end=ctx.window.end, step_seconds=ctx.step_seconds, **fields
    )


# --- instance EBS series (shared by the instance-ebs and cost rules) ---------------------------------------


def instance_ceiling(ctx: Context, iid: str, base: float, maximum: float, metric: str, n: int) -> Array:
    """Return an instance's EBS ceiling per point: `maximum` while its balance `metric` has credits, else `base`."""
    return in_force(maximum, base, ctx.series("instance", iid, metric), n)  # the one rule (physics.ceilings)


# --- the ceilings a rule compares to, as the charts and the glance table show them ---------------------------


def ceiling_of(
    ctx: Context, kind: str, entity_id: str, dimension: IoDimension, value: float
) -> Ceiling | None:
    """Return the ceiling of a volume or an instance (kind) a comparison held it to: the one of its ceilings
    (Context.volume_ceilings / instance_ceilings, physics.ceilings) whose value is `value`, None when none is."""
    ceilings = ctx.volume_ceilings(entity_id) if kind == "volume" else ctx.instance_ceilings(entity_id)
    return at_value(ceilings[dimension], value) if ceilings else None


def ceiling_line(ceiling: Ceiling | None, value: float, label: str, unit: str) -> ReferenceLine:
    """Return a chart's line for a ceiling: its kind and public source are the ceiling's own."""
    return ReferenceLine(
        value=value, label=label, unit=unit,
        kind=ceiling.kind if ceiling is not None else None,
        source=ceiling.source if ceiling is not None else None,
    )
