"""Rule family: TiKV thread pools running hot relative to their configured size (`thread-pool-saturation`).

For the scheduler, apply, raftstore and unified read pools, the pool's CPU (`tikv_thread_cpu_seconds_total` by
thread name, in cores) is divided by the pool's *configured* size (effective config, else the version default),
not compared with the fixed 1.6-core raftstore alert of TiKV's alert rules (docs/reference/tikv-metrics.md#alert-rules): 1.6 cores is 80% of the default 2
threads but only 20% of 8. The pool fires when that utilisation stays above PingCAP's band for 30 minutes or 5%
of the window (`_common.pressure`); the pool's queue wait is shown next to it (propose wait has a PingCAP limit).
The proposed size puts the p99 CPU in the middle of the pool's band, not at its top (a pool sized to the top has
no room, and 0.02 cores of noise would flip the count between identical nodes): `round(p99 / target)` threads,
never fewer than keep the p99 under the band's top, one thread more at least, never more threads than the host
has vCPUs minus one (template: the scheduler pool "should be less than total CPU cores"). Bands: PingCAP's where
published (scheduler 50-75%, unified read pool 60-90%); for pools with only an upper limit, the band below it
keeps the scheduler's proportions (lower = 2/3 of the upper). Why: docs/thresholds/thread-pools.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from headroom.domain import references as refs
from headroom.domain.advisor.context import Context, p95, p99, peak
from headroom.domain.advisor.finding import Finding, make_dedup_key
from headroom.domain.advisor.rule import Rule
from headroom.domain.advisor.rules._common import pct, pressure
from headroom.domain.advisor.rules._tikv_helpers import config_int, evidence, finite, tikv_change
from headroom.domain.model import Impact, Measure, ReferenceLine, SeriesRef
from headroom.domain.snapshot import metric_ids as mid
from headroom.domain.snapshot.schema import Node
from headroom.domain.units import format_quantity

RULE_ID = "thread-pool-saturation"

# TiKV's alert rule TiKV_cpu_quota (docs/reference/tikv-metrics.md#alert-rules): "TiKV CPU usage is over 80% of CPU quota". Above it the host itself is
# short of cores: more threads compete for the same CPUs.
HOST_CPU_BUSY = 0.80
# Headroom choice: a pool whose peak CPU is within 5% of its size is pinned: its real demand is hidden.
PINNED = 0.95
# Headroom choice (docs/thresholds/thread-pools.md): a pool with only a published upper limit gets a band below it
# in the scheduler's proportions, 50-75% -> lower = 2/3 of the upper.
UNPUBLISHED_LOWER = 2.0 / 3.0
THRESHOLDS_DOC = refs.decides_page("thread-pools.md")


@dataclass(frozen=True)
class Pool:
    """One TiKV thread pool: its CPU series, its size key and PingCAP's utilisation limit."""

    name: str
    label: str
    cpu_metric: str
    wait_metric: str
    key: str
    upper: float  # utilisation (CPU / pool size) above which the pool is saturated
    source: str
    wait_limit_s: float | None = None
    wait_source: str | None = None
    lower: float | None = None  # the band's published lower edge; None: 2/3 of `upper` (Headroom choice)

    @property
    def band(self) -> tuple[float, float]:
        """Return the utilisation band (lower, upper) a well-sized pool runs in."""
        return (self.lower if self.lower is not None else self.upper * UNPUBLISHED_LOWER, self.upper)

    @property
    def target(self) -> float:
        """Return the utilisation the proposed size aims the p99 CPU at: the middle of the band."""
        low, high = self.band
        return (low + high) / 2.0


SCHEDULER = Pool(
    "scheduler",
    "scheduler worker",
    mid.TIKV_THREAD_CPU_SCHEDULER,
    mid.TIKV_WAIT_SCHEDULER_LATCH,
    "storage.scheduler-worker-pool-size",
    0.75,  # docs/reference/pingcap-guidance.md#thread-pools (tune-tikv-thread-performance): "keep utilization at 50-75%"
    refs.TUNE_THREADS.cite('scheduler 50-75%'),
    lower=0.50,
)
APPLY = Pool(
    "apply",
    "apply",
    mid.TIKV_THREAD_CPU_APPLY,
    mid.TIKV_WAIT_APPLY,
    "raftstore.apply-pool-size",
    # TiKV's alert rule TiKV_thread_apply_worker_cpu_seconds (docs/reference/tikv-metrics.md#alert-rules): an apply thread above 0.9 cores is "high";
    # applied to the pool as 90% of apply-pool-size (docs/reference/pingcap-guidance.md#thread-pools gives no apply band).
    0.90,
    refs.TIKV_ALERT_RULES.cite('TiKV_thread_apply_worker_cpu_seconds, > 0.9 per thread'),
)
RAFTSTORE_WITH_WRITER = Pool(
    "raftstore",
    "raftstore",
    mid.TIKV_THREAD_CPU_RAFTSTORE,
    mid.TIKV_WAIT_PROPOSE,
    "raftstore.store-pool-size",
    0.85,  # docs/reference/pingcap-guidance.md#massive-regions: "Raft store CPU < raftstore.store-pool-size × 85%"
    refs.MASSIVE_REGIONS.cite('raftstore CPU < 85% of store-pool-size'),
    0.100,  # docs/reference/pingcap-guidance.md#massive-regions: "Propose wait duration < 50-100 ms" (upper end)
    refs.MASSIVE_REGIONS.cite('propose wait < 50-100 ms'),
)
RAFTSTORE_NO_WRITER = Pool(
    "raftstore",
    "raftstore",
    mid.TIKV_THREAD_CPU_RAFTSTORE,
    mid.TIKV_WAIT_PROPOSE,
    "raftstore.store-pool-size",
    0.60,  # docs/reference/pingcap-guidance.md#thread-pools: with store-io-pool-size = 0, "keep total Raftstore CPU < 60%"
    refs.TUNE_THREADS.cite('raftstore < 60% when store-io-pool-size = 0'),
    0.100,  # docs/reference/pingcap-guidance.md#massive-regions: "Propose wait duration < 50-100 ms" (upper end)
    refs.MASSIVE_REGIONS.cite('propose wait < 50-100 ms'),
)
UNIFIED_READ = Pool(
    "unified-read-pool",
    "unified read pool",
    mid.TIKV_THREAD_CPU_UNIFIED_READ_POOL,
    mid.TIKV_WAIT_UNIFIED_READ_POOL,
    "readpool.unified.max-thread-count",
    0.90,  # docs/reference/pingcap-guidance.md#thread-pools: UnifyReadPool "keep it at 60-90% of pool size"
    refs.TUNE_THREADS.cite('unified read pool 60-90%'),
    lower=0.60,
)


def pools_for(store_io_pool_size: int | None) -> tuple[Pool, ...]:
    """Return the pools checked on a node (the raftstore limit depends on whether StoreWriter is on)."""
    raftstore = RAFTSTORE_NO_WRITER if store_io_pool_size == 0 else RAFTSTORE_WITH_WRITER
    return (SCHEDULER, APPLY, raftstore, UNIFIED_READ)


def max_threads(vcpus: int) -> int:
    """Return the most threads one pool may get: one less than the host's vCPUs (template, at least 1)."""
    return max(1, vcpus - 1)


def proposed_size(current: int, p99_cores: float, upper: float, vcpus: int, lower: float | None = None) -> int:
    """Return the pool size that puts the p99 CPU in the middle of the band: at least one more, at most vCPUs − 1.

    Rounding to the nearest size around the middle (not up to the top) gives identical nodes whose CPU differs by
    noise the same size; where two sizes are equally near, both keep the p99 inside the band.
    """
    low = lower if lower is not None else upper * UNPUBLISHED_LOWER
    target = (low + upper) / 2.0
    nearest = math.floor(p99_cores / target + 0.5)
    under_top = math.ceil(p99_cores / upper - 1e-9)  # never leave the p99 above the band's top
    need = max(nearest, under_top, current + 1)
    return min(need, max_threads(vcpus))


def _finding(ctx: Context, node: Node, pool: Pool) -> Finding | None:
    size = config_int(ctx, node, pool.key)
    cpu = ctx.series("node", node.id, pool.cpu_metric)
    if size is None or size <= 0 or cpu is None:
        return None
    p = pressure(cpu, float(size), ctx.step_seconds, pool.upper)
    if not p.sustained:
        return None
    cpu_p95, cpu_p99, cpu_peak = p95(cpu), p99(cpu), peak(cpu)
    entity = ctx.entity_for_node(node.id)
    new_size = proposed_size(size, cpu_p99, pool.upper, node.vcpus, pool.lower)
    low, _ = pool.band
    band_text = f"{pct(low)}-{pct(pool.upper)}"
    wait = ctx.series("node", node.id, pool.wait_metric)
    wait_p95 = p95(wait) if wait is not None else float("nan")
    host_busy = ctx.series("node", node.id, mid.NODE_CPU_BUSY)
    host_p95 = p95(host_busy) / node.vcpus if host_busy is not None else float("nan")
    pinned = cpu_peak >= PINNED * size
    corroboration: list[str] = []
    notes: list[str] = []
    if math.isfinite(wait_p95):
        limit_text = (
            f" (limit {format_quantity(pool.wait_limit_s * 1000, 'ms')}, {pool.wait_source})" if pool.wait_limit_s else ""
        )
        corroboration.append(
            f"{pool.label} wait p99 at its p95 over the window: {format_quantity(wait_p95 * 1000, 'ms')}{limit_text}"
        )
    if pinned:
        corroboration.append(
            f"CPU peaked at {format_quantity(cpu_peak, '')} of {size} cores: the pool is pinned and its real demand is higher"
        )
    host_short = math.isfinite(host_p95) and host_p95 >= HOST_CPU_BUSY
    if host_short:
        notes.append(
            f"the host's CPUs are {pct(host_p95)} busy at p95 (over the 80% of TiKV's TiKV_cpu_quota alert): "
            "more threads compete for the same cores; a larger instance gives the pool real headroom"
        )
    wait_over = pool.wait_limit_s is not None and math.isfinite(wait_p95) and wait_p95 > pool.wait_limit_s
    severity = "critical" if (pinned and wait_over) else "warning"
    measures = [
        Measure(
            label=f"{pool.label} CPU / pool size, p95",
            value=finite(cpu_p95 / size),
            unit="ratio",
            limit=pool.upper,
            limit_label=f"{pct(pool.upper)} of {pool.key} = {size}",
            statistic="p95",
            source=pool.source,
        ),
        Measure(
            label=f"{pool.label} CPU p99",
            value=finite(cpu_p99),
            unit="cores",
            limit=float(size),
            limit_label=pool.key,
            statistic="p99",
        ),
        Measure(label="host vCPUs", value=float(node.vcpus), unit="cores"),
        Measure(
            label=f"{pool.label} target utilisation (p99 CPU / proposed size)",
            value=finite(cpu_p99 / new_size),
            unit="ratio",
            limit=pool.target,
            limit_label=f"the middle of the {band_text} band",
            statistic="p99",
            source=THRESHOLDS_DOC,
        ),
    ]
    if math.isfinite(wait_p95):
        measures.append(
            Measure(
                label=f"{pool.label} wait p99 (window p95)",
                value=wait_p95 * 1000,
                unit="ms",
                limit=pool.wait_limit_s * 1000 if pool.wait_limit_s else None,
                limit_label=pool.wait_source,
                statistic="p95",
            )
        )
    changes = []
    if new_size > size:
        changes.append(
            tikv_change(
                ctx,
                node,
                pool.key,
                new_size,
                f"{pool.label} CPU p99 {format_quantity(cpu_p99, 'cores')} at the {pct(pool.target)} target (the middle of the "
                f"{band_text} band, {THRESHOLDS_DOC}) needs {format_quantity(cpu_p99 / pool.target, 'threads')} -> {new_size} "
                f"({pct(cpu_p99 / new_size)} of the pool); at most {max_threads(node.vcpus)} "
                f"({node.vcpus} vCPUs − 1)",
            )
        )
    else:
        notes.append(
            f"{pool.key} is already {size}, the most this {node.vcpus}-vCPU host allows: the fix is more cores"
        )
    if changes and cpu_p99 / new_size > pool.upper:
        notes.append(
            f"{new_size} threads is the most this {node.vcpus}-vCPU host allows, and the p99 still sits at "
            f"{pct(cpu_p99 / new_size)} of the pool, above {pct(pool.upper)}: the rest of the fix is more cores"
        )
    title = (
        f"{node.id}: {pool.label} pool at {pct(cpu_p95 / size)} of its {size} threads (p95), above "
        f"{pct(pool.upper)}"
        + (
            f": raise {pool.key} to {new_size} (p99 at {pct(cpu_p99 / new_size)}, target {pct(pool.target)})"
            if changes
            else ": the host has no vCPU to spare"
        )
    )
    series = [
        SeriesRef(
            entity_kind="node",
            entity_id=node.id,
            metric=pool.cpu_metric,
            label=f"{pool.label} CPU (cores)",
            reference_lines=[
                ReferenceLine(value=float(size), label=f"{pool.key} = {size}", unit="cores", kind="configured",
                              source=refs.TIKV_CONFIG.cite(pool.key)),
                ReferenceLine(value=pool.upper * size, label=f"{pct(pool.upper)} of the pool", unit="cores",
                              source=pool.source),
            ],
        ),
        SeriesRef(
            entity_kind="node", entity_id=node.id, metric=pool.wait_metric, label=f"{pool.label} wait p99"
        ),
    ]
    return Finding(
        rule=RULE_ID,
        severity=severity,
        entity=entity,
        title=title,
        evidence=evidence(
            ctx,
            f"{pool.label} CPU >= {pct(pool.upper)} of {pool.key} ({size}) for >= 30 min or >= 5% of the window",
            measures,
            series,
            share=p.share,
            longest_run_minutes=p.longest_run_minutes,
            episodes=p.episodes,
            threshold_pct=100 * pool.upper,
            corroboration=corroboration,
        ),
        why=(
            f"A TiKV thread pool queues work once its threads are busy: the {pool.label} pool's CPU, relative to "
            f"its configured {size} threads, stays above {pct(pool.upper)} ({pool.source}), so requests wait for "
            "a thread before they reach the disk or Raft. PingCAP's AWS best practice (PingCAP, Best Practices for TiDB on AWS Cloud) says the same for "
            "cloud disks: with higher I/O latency, set larger pools for critical components and watch their wait "
            "durations."
        ),
        changes=changes,
        impact=Impact(
            summary=(
                f"{pool.label} utilisation at p99 from {pct(cpu_p99 / size)} to {pct(cpu_p99 / new_size)} "
                f"of the pool"
                if changes
                else "no thread change possible on this host"
            ),
            metric=f"{pool.label} utilisation (p99 CPU / pool size)",
            unit="ratio",
            before=finite(cpu_p99 / size),
            after=finite(cpu_p99 / new_size),
            headroom_before_pct=finite(100 * (1 - cpu_p99 / size)),
            headroom_after_pct=finite(100 * (1 - cpu_p99 / new_size)),
            monthly_cost_delta_usd=0.0,
        ),
        confidence=0.5 if host_short else 0.75,
        dedup_key=make_dedup_key(RULE_ID, ctx.cluster_key, entity, pool.name),
        sources=[pool.source, refs.PINGCAP_AWS.cite('Thread pool size'), refs.TIKV_ALERT_RULES.cite('TiKV_cpu_quota'), THRESHOLDS_DOC],
        notes=notes,
    )


def evaluate(ctx: Context) -> list[Finding]:
    """Return one finding per saturated pool per node."""
    out: list[Finding] = []
    for node in ctx.nodes:
        writers = config_int(ctx, node, "raftstore.store-io-pool-size")
        for pool in pools_for(writers):
            finding = _finding(ctx, node, pool)
            if finding is not None:
                out.append(finding)
    return out


RULES = (
    Rule(
        id=RULE_ID,
        family="tikv",
        description=(
            "Scheduler, apply, raftstore and unified read pools busy above PingCAP's band relative to their "
            "configured size; propose a larger pool within the host's vCPUs."
        ),
        evaluate=evaluate,
        tikv_keys=(
            "storage.scheduler-worker-pool-size",
            "raftstore.apply-pool-size",
            "raftstore.store-pool-size",
            "readpool.unified.max-thread-count",
        ),
        sources=(refs.TUNE_THREADS.cite(), refs.MASSIVE_REGIONS.cite(), refs.TIKV_ALERT_RULES.cite()),
    ),
)
