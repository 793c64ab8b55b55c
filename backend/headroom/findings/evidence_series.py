"""The points behind a finding's evidence charts: each SeriesRef the advisor named (a registry metric or a
`derived.*` view, domain/advisor/context.py) read from the store over the evidence window, with its reference lines.

The advisor stores references, not points (a finding row stays small); this rebuilds the snapshot of the
finding's window the same way the advice run did (services.snapshots.build_snapshot) and reads each series through
the advisor's own Context, so the chart shows the numbers the rule judged. Callers commit (nothing is written).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from dataclasses import dataclass
import uuid
from typing import Any, Protocol

import numpy as np
from sqlalchemy.orm import Session

from headroom.domain.advisor.context import Context
from headroom.domain.advisor.rules._common import instance_ceiling
from headroom.domain.model import Evidence, EvidenceSeries, SeriesRef, Statistic
from headroom.domain.snapshot import metric_ids as mid
from headroom.domain.snapshot.align import method_of
from headroom.domain.snapshot.labels import metric_label
from headroom.domain.snapshot.registry import REGISTRY
from headroom.domain.snapshot.schema import Snapshot
from headroom.domain.snapshot.views import IO_METRICS, find_series
from headroom.platform.errors import NotFound
from headroom.timeseries.snapshots import MAX_WINDOW, RAW_STEP_SECONDS, build_snapshot

# derived view -> (unit, how to read it); units as domain/advisor/context.py and domain/snapshot/views.py compute them
DERIVED_UNITS = {
    "derived.counted_iops": "IOPS",
    "derived.mibps": "MiB/s",
    "derived.read_latency_ms": "ms",
    "derived.write_latency_ms": "ms",
    "derived.iops_ceiling": "IOPS",
    "derived.mibps_ceiling": "MiB/s",
}


# CloudWatch's exceeded checks read 1 in a minute the application asked for more than the volume provides, else 0
# (https://docs.aws.amazon.com/ebs/latest/userguide/using_cloudwatch_ebs.html): a yes/no, not a count, so it is
# charted in its own unit ("bool", yes/no), never on the axis of a count such as VolumeQueueLength. Its words are
# the one metric label mapping's (domain/snapshot/labels.py).
FLAG_METRICS = frozenset({mid.EBS_IOPS_EXCEEDED_CHECK, mid.EBS_THROUGHPUT_EXCEEDED_CHECK})
FLAG_UNIT = "bool"


def entity_name(snapshot: Snapshot, kind: str, entity_id: str) -> str:
    """A short name for a chart legend: a store's address; a volume or an instance with the store it serves
    ("10.0.1.14:20160 vol-0abc"), so two stores' series of one chart are told apart."""
    nodes = snapshot.nodes
    if kind == "node":
        node = next((n for n in nodes if entity_id in (n.id, n.address)), None)
        return node.address if node is not None else entity_id
    if kind == "volume":
        served = [n for n in nodes if entity_id in (*n.data_volume_ids, *n.raft_volume_ids)]
    elif kind == "instance":
        served = [n for n in nodes if n.instance_id == entity_id]
    else:
        served = []
    return f"{served[0].address} {entity_id}" if len(served) == 1 else entity_id


@dataclass(frozen=True)
class EvidenceChart:
    """A finding's evidence series over its window (the API's EvidenceChartRead, as it is)."""

    finding_id: uuid.UUID
    window_start: dt.datetime
    window_end: dt.datetime
    step_seconds: int
    series: list[EvidenceSeries]


# What the derived views read (Context.volume_io / instance_io: views.io_view_of, a volume's latency sums and queue
# length) and the balances that decide their ceiling in force (Context.volume_iops_ceiling, rules._common
# instance_ceiling).
DERIVED_READS = frozenset({*IO_METRICS["volume"], *IO_METRICS["instance"], mid.EBS_TOTAL_READ_TIME,
                           mid.EBS_TOTAL_WRITE_TIME, mid.EBS_QUEUE_LENGTH, mid.EBS_BURST_BALANCE,
                           mid.EC2_EBS_IO_BALANCE, mid.EC2_EBS_BYTE_BALANCE})


def metrics_read(refs: Sequence[SeriesRef]) -> frozenset[str]:
    """The stored metrics a chart of these references reads: each stored one, and a derived view's inputs."""
    named = {ref.metric for ref in refs}
    return frozenset(named - DERIVED_UNITS.keys()) | (DERIVED_READS if named & DERIVED_UNITS.keys() else frozenset())


def _derived(ctx: Context, kind: str, entity_id: str, metric: str) -> Any:
    if metric == "derived.iops_ceiling":
        return ctx.volume_iops_ceiling(entity_id) if kind == "volume" else None
    if metric == "derived.mibps_ceiling":
        return ctx.volume_mibps_ceiling(entity_id) if kind == "volume" else None
    view = ctx.volume_io(entity_id) if kind == "volume" else ctx.instance_io(entity_id) if kind == "instance" else None
    if view is None:
        return None
    return {
        "derived.counted_iops": view.counted_iops,
        "derived.mibps": view.mibps,
        "derived.read_latency_ms": view.read_latency_ms,
        "derived.write_latency_ms": view.write_latency_ms,
    }[metric]


def _in_force(ctx: Context, kind: str, entity_id: str, metric: str) -> Any:
    """The ceiling in force at each point of a volume's or an instance's counted IOPS / MiB/s (None otherwise)."""
    if metric not in ("derived.counted_iops", "derived.mibps"):
        return None
    iops = metric == "derived.counted_iops"
    if kind == "volume":
        return ctx.volume_iops_ceiling(entity_id) if iops else ctx.volume_mibps_ceiling(entity_id)
    lim = ctx.instance_limits(entity_id) if kind == "instance" else None
    if lim is None:
        return None
    # the advisor's own instance ceiling per point (the one in-force rule, headroom.domain.physics.ceilings)
    if iops:
        return instance_ceiling(ctx, entity_id, lim.baseline_iops, lim.max_iops, mid.EC2_EBS_IO_BALANCE, ctx.points)
    return instance_ceiling(ctx, entity_id, lim.baseline_throughput_mibps, lim.max_throughput_mibps,
                            mid.EC2_EBS_BYTE_BALANCE, ctx.points)


def series_id(ref: SeriesRef) -> str:
    """A series' id within its chart: entity, metric and labels ("volume:vol-0abc:derived.counted_iops")."""
    labels = ",".join(f"{k}={v}" for k, v in sorted(ref.labels.items()))
    return f"{ref.entity_kind}:{ref.entity_id}:{ref.metric}" + (f"{{{labels}}}" if labels else "")


def statistic_of(metric: str, step_seconds: int) -> Statistic:
    """Which aggregate of a step's samples the snapshot holds: one sample per raw minute (avg); over a longer step
    the lowest of a Minimum series, the highest of a Maximum or p99 one, else the mean (timeseries/snapshots.py)."""
    spec = REGISTRY.get(metric)
    if step_seconds <= RAW_STEP_SECONDS or spec is None:
        return "avg"
    method = method_of(spec.statistic)
    return "min" if method == "min" else "max" if method == "max" else "avg"


def chart_series(snapshot: Snapshot, refs: Sequence[SeriesRef]) -> list[EvidenceSeries]:
    """Return the points of each series reference (the evidence's `series`) read from a snapshot."""
    ctx = Context(snapshot)
    window = snapshot.window
    start = int(window.start.timestamp())
    out: list[EvidenceSeries] = []
    for ref in refs:
        kind, entity_id, metric, labels = ref.entity_kind, ref.entity_id, ref.metric, ref.labels
        unit = DERIVED_UNITS.get(metric, "")
        values: Any = None
        try:
            if metric in DERIVED_UNITS:
                values = _derived(ctx, kind, entity_id, metric)
            else:
                found = find_series(snapshot, kind, entity_id, metric, labels)
                if found is not None:
                    unit = FLAG_UNIT if metric in FLAG_METRICS else found.unit
                    values = ctx.series(kind, entity_id, metric, labels)
        except KeyError:  # an entity the snapshot of this window does not hold any more
            values = None
        arr = np.asarray(values if values is not None else [], dtype=np.float64)
        ceiling = _in_force(ctx, kind, entity_id, metric) if values is not None else None
        out.append(EvidenceSeries(
            id=series_id(ref), label=ref.label or metric_label(metric), unit=unit, entity_kind=kind,
            entity_id=entity_id, entity_name=entity_name(snapshot, kind, entity_id),
            statistic=statistic_of(metric, window.step_seconds), step_seconds=window.step_seconds,
            t=[start + i * window.step_seconds for i in range(len(arr))],
            # NaN (no sample, or no I/O to average a latency over) is a gap: None, never 0
            values=[None if math.isnan(v) else float(v) for v in arr.tolist()],
            metric=metric, reference_lines=list(ref.reference_lines), found=values is not None,
            in_force=None if ceiling is None else [None if math.isnan(v) else float(v)
                                                   for v in np.asarray(ceiling, dtype=np.float64).tolist()],
        ))
    return out


class Charted(Protocol):
    """A stored finding, as much of it as its chart needs (a row or a findings.service.StoredFinding)."""

    @property
    def id(self) -> uuid.UUID: ...
    @property
    def org_id(self) -> uuid.UUID: ...
    @property
    def cluster_id(self) -> uuid.UUID: ...
    @property
    def evidence(self) -> Evidence | None: ...


def evidence_series(db: Session, finding: Charted) -> EvidenceChart:
    """Return the points of a finding's evidence series over its window (the last 7 days of a longer one)."""
    evidence = finding.evidence
    if evidence is None:
        raise NotFound("This finding has no evidence window to chart.", code="no_evidence_window")
    start, end, step = evidence.window_start, evidence.window_end, evidence.step_seconds or RAW_STEP_SECONDS
    start = max(start, end - MAX_WINDOW)  # the snapshot reader's own cap (timeseries/snapshots.py MAX_WINDOW)
    # the snapshot's step is whole minutes (check_window); the advisor's runs use 60 s or a multiple
    step = max(RAW_STEP_SECONDS, step - step % RAW_STEP_SECONDS)
    # only the series of the hosts the evidence names (a few dozen, not the cluster's hundreds), and of those
    # only the metrics the chart reads
    named = [(ref.entity_kind, ref.entity_id) for ref in evidence.series]
    snapshot = build_snapshot(db, finding.org_id, finding.cluster_id, start=start, end=end, step_seconds=step,
                              hosts_of=named, metrics=metrics_read(evidence.series))
    return EvidenceChart(finding.id, snapshot.window.start, snapshot.window.end, snapshot.window.step_seconds,
                          chart_series(snapshot, evidence.series))
