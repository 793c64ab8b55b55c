"""Rule family: the RocksDB block cache (`storage.block-cache.capacity`) against memory, hit ratio and read IOPS.

One rule, `block-cache-size`, three aspects (never two on one node: their conditions exclude each other):
- `shared-host`: several TiKV instances on one host whose block caches add up past what the host can hold
  (each unset capacity defaults to 45% of the *host's* memory): OOM risk; split the default share.
- `shrink`: judged from the evidence PingCAP's guidance names (docs/reference/pingcap-guidance.md#block-cache-on-ebs), not from one
  hit-ratio cut-off: the workload is read-heavy and its reads sit at the IOPS ceiling ("high read I/O pressure
  on the storage monitor"); the read set does not fit in the block cache (the cache is full and its misses are
  what reaches the disk); and there is page-cache room to gain (the cache is well above PingCAP's 4 GB of 32 GB,
  and memory moved to the page cache holds blocks compressed). Thresholds: docs/thresholds/block-cache.md.
- `grow`: memory-rich node far from its ceilings, block cache below 30% of memory and a poor hit ratio: back to
  the default 45%, inside the template's 30-50% band.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from headroom.domain import derived
from headroom.domain import references as refs
from headroom.domain.advisor.context import Array, Context, p95, percentile
from headroom.domain.advisor.finding import Finding, make_dedup_key
from headroom.domain.advisor.rule import Rule
from headroom.domain.advisor.rules._common import AT_CEILING_FRACTION, Pressure, pct, per_node, pressure
from headroom.domain.advisor.rules._tikv_helpers import (
    ceiling_source,
    GIB,
    DataPath,
    ceiling_label,
    config_bytes,
    data_path,
    evidence,
    finite,
    gib_floor,
    size_text,
    size_words,
    tikv_change,
    utilisation_p95,
)
from headroom.domain.model import Impact, Measure, ReferenceLine, SeriesRef
from headroom.domain.snapshot import metric_ids as mid
from headroom.domain.snapshot.schema import Node
from headroom.domain.units import format_quantity

RULE_ID = "block-cache-size"
KEY = "storage.block-cache.capacity"

# docs/reference/tikv-config.md#keys-and-defaults, docs/reference/pingcap-guidance.md#block-cache: the default capacity is 45% of system memory (BLOCK_CACHE_RATE = 0.45, raft-kv).
DEFAULT_RATE = 0.45
# docs/reference/tikv-config.md#keys-and-defaults: memory-usage-limit defaults to 75% of memory = capacity / 0.45 × 0.75, i.e. 5/3 of the block
# cache. When the caches of the instances on one host add up past 60% of its memory, their memory-usage-limits
# add up past 100%: the host can OOM before any TiKV throttles itself (docs/reference/pingcap-guidance.md#block-cache: "Set it explicitly when
# several TiKV instances share one host, to avoid OOM").
MEMORY_LIMIT_PER_CACHE = 5.0 / 3.0
SHARED_HOST_MAX_SHARE = 1.0 / MEMORY_LIMIT_PER_CACHE  # 0.6 of host memory for all block caches together
# docs/reference/pingcap-guidance.md#block-cache / template: "Normally it should be tuned to 30%-50% of system's total memory".
BAND_LOW = 0.30
BAND_HIGH = 0.50
# PingCAP, "Best Practices for TiDB on AWS Cloud" (docs/reference/pingcap-guidance.md#block-cache-on-ebs): "to avoid read IOPS from hitting the EBS limit, we reserve 4 GB for
# block cache in EC2 instances with 32 GB memory".
PINGCAP_SMALL_RATE = 4.0 / 32.0
# Headroom choice (no PingCAP figure; docs/reference/pingcap-guidance.md#block-cache is silent on hit ratios): below 50% most lookups miss the block
# cache, i.e. "the read set can't fit in the block cache" (docs/reference/pingcap-guidance.md#block-cache-on-ebs).
POOR_HIT_RATIO = 0.50
# Headroom choice: "read-heavy" (docs/reference/pingcap-guidance.md#block-cache-on-ebs) = reads are the majority of the I/Os issued while at the ceiling.
READ_HEAVY_SHARE = 0.50
# Headroom choice: a larger block cache takes memory from the page cache, so more misses can reach the disk;
# only propose it with at least half of every ceiling spare at p95.
FAR_FROM_CEILING = 0.50
# Headroom choice: only shrink when the cache is at least 1.5× the PingCAP size; closer, the fix is IOPS.
SHRINK_MIN_FACTOR = 1.5
# Headroom choice (docs/thresholds/block-cache.md): the read set "can't fit in the block cache" (PingCAP's words) when
# the cache is full (its size gauge at >= 90% of the capacity: a cache that never fills holds the whole read set)
# and its misses feed the disk: at the ceiling, block-cache misses per second are at least half the disk's read
# IOPS. A miss the page cache does not hold becomes one disk read; if the disk reads far more than the cache
# misses, they come from elsewhere (compaction, scans that bypass the cache) and a smaller cache does not help.
CACHE_FULL_SHARE = 0.90
MISSES_FEED_DISK = 0.50
THRESHOLDS_DOC = refs.decides_page("block-cache.md")


def hit_ratio(ctx: Context, node_id: str) -> Array | None:
    """Return the KV block-cache hit ratio per step (hit / (hit + miss)), or None without the series."""
    hit = ctx.series("node", node_id, mid.TIKV_BLOCK_CACHE_HIT)
    miss = ctx.series("node", node_id, mid.TIKV_BLOCK_CACHE_MISS)
    if hit is None or miss is None or len(hit) != len(miss):
        return None
    return derived.hit_ratio(hit, miss)


def memory_share_bytes(ctx: Context, node: Node) -> float:
    """Return the memory one TiKV on this host may plan with: host memory / TiKV instances on the host."""
    others = ctx.nodes_on_instance(node.instance_id)
    return node.memory_gib * GIB / max(1, len(others))


def shrink_target_bytes(memory_bytes: float) -> int:
    """Return PingCAP's read-heavy block cache for this memory: 4 GB per 32 GB, whole GiB (pingcap-guidance.md#block-cache-on-ebs)."""
    return gib_floor(memory_bytes * PINGCAP_SMALL_RATE)


def grow_target_bytes(memory_bytes: float) -> int:
    """Return the default-rate block cache for this memory (45%, docs/reference/tikv-config.md#keys-and-defaults), whole GiB."""
    return gib_floor(memory_bytes * DEFAULT_RATE)


# Said of the ceiling line a finding was judged by when the chart draws another beside it.
JUDGED = "the finding's limit"


def judged_iops_ceiling(path: DataPath, mask: np.ndarray) -> float:
    """Return the IOPS ceiling the at-ceiling steps were judged against: the one in force there (their median).

    A gp2 volume's ceiling is its burst (3,000 IOPS) while the bucket has credits and its baseline once it is empty
    (AWS gp2 I/O credits): the steps at the ceiling are judged against the one in force at each, so the limit a
    reader compares with is the one in force at those steps, not the window's highest or lowest."""
    at = path.iops_ceiling[mask] if len(path.iops_ceiling) == len(mask) else path.iops_ceiling
    at = at[np.isfinite(at)]
    return float(np.median(at)) if at.size else float(np.nanmin(path.iops_ceiling))


def iops_ceiling_lines(ctx: Context, path: DataPath, judged: float) -> list[ReferenceLine]:
    """Return the IOPS reference lines of the data path: the judged ceiling, labelled as the finding's measure
    states it, and, for a burst volume whose other ceiling was in force part of the window, that one too."""
    label = ceiling_label(path, ctx, "iops")
    src = ceiling_source(path, "iops")
    highest, lowest = float(np.nanmax(path.iops_ceiling)), float(np.nanmin(path.iops_ceiling))
    # The instance's ceiling, expressed in this node's share of its traffic, moves every step: only the judged one.
    if path.iops_binding != "volume" or highest - lowest < 0.5:
        return [ReferenceLine(value=judged, label=label, unit="IOPS", source=src)]
    if judged < highest:
        return [
            ReferenceLine(value=judged, label=f"{label} baseline, {JUDGED}", unit="IOPS", kind="sustained", source=src),
            ReferenceLine(value=highest, label=f"{label} burst, while credits last", unit="IOPS", kind="burst",
                          source=src),
        ]
    return [
        ReferenceLine(value=judged, label=f"{label} burst, {JUDGED}", unit="IOPS", kind="burst", source=src),
        ReferenceLine(value=lowest, label=f"{label} baseline, once credits run out", unit="IOPS", kind="sustained",
                      source=src),
    ]


def _series_refs(node_id: str, path: DataPath | None, lines: list[ReferenceLine]) -> list[SeriesRef]:
    refs = [
        SeriesRef(
            entity_kind="node", entity_id=node_id, metric=mid.TIKV_BLOCK_CACHE_HIT, label="block-cache hits/s"
        ),
        SeriesRef(
            entity_kind="node",
            entity_id=node_id,
            metric=mid.TIKV_BLOCK_CACHE_MISS,
            label="block-cache misses/s",
        ),
        SeriesRef(
            entity_kind="node", entity_id=node_id, metric=mid.TIKV_BLOCK_CACHE_SIZE, label="block-cache bytes"
        ),
    ]
    if path is not None:
        for vid in path.volume_ids:
            refs.append(
                SeriesRef(
                    entity_kind="volume",
                    entity_id=vid,
                    metric="derived.counted_iops",
                    label="data volume IOPS (256 KiB units)",
                    reference_lines=lines,
                )
            )
    return refs


def _shared_host(ctx: Context) -> list[Finding]:
    out: list[Finding] = []
    for inst in ctx.instances:
        nodes = ctx.nodes_on_instance(inst.id)
        if len(nodes) < 2:
            continue
        caps = {n.id: config_bytes(ctx, n, KEY) for n in nodes}
        if any(c is None for c in caps.values()):
            continue
        memory = inst.memory_gib * GIB
        total = float(sum(c for c in caps.values() if c is not None))
        if total <= SHARED_HOST_MAX_SHARE * memory:
            continue
        target = gib_floor(memory * DEFAULT_RATE / len(nodes))
        for node in nodes:
            cap = caps[node.id]
            assert cap is not None
            if cap <= target:
                continue
            looks_unset = abs(cap - memory * DEFAULT_RATE) <= 2 * 1024**2  # within TiKV's MiB rounding
            entity = ctx.entity_for_node(node.id)
            reason = (
                f"{len(nodes)} TiKV instances share {inst.type} ({format_quantity(inst.memory_gib, 'GiB')}): give each "
                f"{pct(DEFAULT_RATE)} / {len(nodes)} of the host's memory, so their memory-usage-limits "
                "(5/3 of the cache) fit in it"
            )
            out.append(
                Finding(
                    rule=RULE_ID,
                    severity="critical",
                    entity=entity,
                    title=(
                        f"{node.id}: {len(nodes)} TiKV block caches add up to {format_quantity(total / GIB, 'GiB')} "
                        f"({pct(total / memory)}) of {format_quantity(inst.memory_gib, 'GiB')} host memory: OOM risk"
                    ),
                    evidence=evidence(
                        ctx,
                        f"sum of storage.block-cache.capacity on host > {pct(SHARED_HOST_MAX_SHARE)} of memory",
                        [
                            Measure(
                                label="block caches on the host",
                                value=total / GIB,
                                unit="GiB",
                                limit=SHARED_HOST_MAX_SHARE * memory / GIB,
                                limit_label="60% of host memory (memory-usage-limit = 5/3 of the cache)",
                                statistic="config",
                                source=refs.TIKV_CONFIG.cite('memory-usage-limit; Block cache'),
                            ),
                            Measure(
                                label=f"{node.id} block cache",
                                value=cap / GIB,
                                unit="GiB",
                                statistic="config",
                            ),
                            Measure(
                                label="TiKV instances on the host", value=float(len(nodes)), unit="count"
                            ),
                        ],
                        [
                            SeriesRef(entity_kind="node", entity_id=n.id, metric=mid.TIKV_MEMORY_RSS)
                            for n in nodes
                        ]
                        + [SeriesRef(entity_kind="node", entity_id=node.id, metric=mid.NODE_MEMORY_AVAILABLE)],
                        corroboration=(
                            [f"{node.id}'s capacity equals the 45% default: it looks unset"]
                            if looks_unset
                            else []
                        ),
                    ),
                    why=(
                        "An unset storage.block-cache.capacity defaults to 45% of the host's memory in every "
                        "TiKV instance, and memory-usage-limit to 5/3 of it (PingCAP, TiKV configuration file). Several instances on "
                        "one host each claim that share, so together they can grow past physical memory and the "
                        "kernel OOM-kills a TiKV. PingCAP: set the capacity explicitly when several TiKV "
                        "instances share one host (TiKV config template)."
                    ),
                    changes=[tikv_change(ctx, node, KEY, size_text(target), reason)],
                    impact=Impact(
                        summary=(
                            f"block caches on the host drop from {format_quantity(total / GIB, 'GiB')} to "
                            f"{format_quantity(len(nodes) * target / GIB, 'GiB')} ({pct(len(nodes) * target / memory)} of memory)"
                        ),
                        metric="block cache, GiB",
                        unit="GiB",
                        before=cap / GIB,
                        after=target / GIB,
                        monthly_cost_delta_usd=0.0,
                    ),
                    confidence=0.9,
                    dedup_key=make_dedup_key(RULE_ID, ctx.cluster_key, entity, "shared-host"),
                    sources=[
                        refs.TIKV_CONFIG.cite('storage.block-cache.capacity, memory-usage-limit'),
                        refs.TIKV_CONFIG_TEMPLATE.cite('Block cache'),
                    ],
                )
            )
    return out


def _node_findings(ctx: Context, node: Node, crowded: bool) -> Finding | None:
    cap = config_bytes(ctx, node, KEY)
    ratio_series = hit_ratio(ctx, node.id)
    path = data_path(ctx, node)
    if cap is None or ratio_series is None or path is None or crowded:
        return None
    hit = percentile(ratio_series, 50)
    if not np.isfinite(hit):
        return None
    memory = memory_share_bytes(ctx, node)
    iops_p = pressure(path.iops_util, 1.0, ctx.step_seconds, AT_CEILING_FRACTION)
    if iops_p.sustained:
        return _shrink(ctx, node, cap, hit, memory, path, iops_p)
    if hit >= POOR_HIT_RATIO:
        return None
    return _grow(ctx, node, cap, hit, memory, path)


def _median_at(values: Array | None, mask: np.ndarray) -> float:
    """Median of `values` where `mask` holds (the whole window when the steps differ); NaN without data."""
    if values is None:
        return float("nan")
    sel = values[mask] if len(values) == len(mask) else values
    sel = sel[np.isfinite(sel)]
    return float(np.median(sel)) if sel.size else float("nan")


def _shrink(
    ctx: Context, node: Node, cap: int, hit: float, memory: float, path: DataPath, iops_p: Pressure
) -> Finding | None:
    """Shrink on PingCAP's evidence: read-heavy at the IOPS ceiling, read set past the cache, page-cache room."""
    read_share = _median_at(path.read_share_iops, iops_p.mask)
    target = shrink_target_bytes(memory)
    if not (read_share >= READ_HEAVY_SHARE and cap >= SHRINK_MIN_FACTOR * target):
        return None
    # The read set does not fit: the cache is full, and its misses are what the disk reads.
    size = ctx.series("node", node.id, mid.TIKV_BLOCK_CACHE_SIZE)
    fill = _median_at(size, iops_p.mask) / cap if size is not None else float("nan")
    if np.isfinite(fill) and fill < CACHE_FULL_SHARE:
        return None
    misses = _median_at(ctx.series("node", node.id, mid.TIKV_BLOCK_CACHE_MISS), iops_p.mask)
    disk_reads = _median_at(path.read_iops, iops_p.mask)
    if not (np.isfinite(misses) and np.isfinite(disk_reads) and disk_reads > 0):
        return None
    miss_per_read = misses / disk_reads
    if miss_per_read < MISSES_FEED_DISK:
        return None
    entity = ctx.entity_for_node(node.id)
    hit_measure = Measure(
        label="block-cache hit ratio (median)", value=finite(hit), unit="ratio", statistic="p50"
    )
    freed = cap - target
    util_p95 = p95(path.iops_util)
    judged = judged_iops_ceiling(path, iops_p.mask)
    lines = iops_ceiling_lines(ctx, path, judged)
    stored = ctx.series("node", node.id, mid.TIKV_STORE_USED_BYTES)
    known = stored is not None and bool(np.any(np.isfinite(stored)))
    stored_gib = float(np.nanmax(stored)) / GIB if stored is not None and known else None
    corroboration = []
    if np.isfinite(fill):
        corroboration.append(f"the block cache is full: {pct(fill)} of its {size_words(cap)} at the ceiling")
    if stored_gib is not None:
        corroboration.append(
            f"the store holds {format_quantity(stored_gib, 'GiB')} on disk (compressed) against {format_quantity(memory / GIB, 'GiB')} of "
            "memory: the page cache, which holds blocks compressed, covers more of it per GiB than the "
            "block cache"
        )
    return Finding(
        rule=RULE_ID,
        severity="warning",
        entity=entity,
        title=(
            f"{node.id}: read IOPS at the ceiling ({pct(util_p95)} at p95), {pct(hit)} block-cache hit "
            f"ratio and {pct(cap / memory)} of memory in the block cache: shrink it to {size_words(target)}"
        ),
        evidence=evidence(
            ctx,
            f"counted IOPS >= {pct(AT_CEILING_FRACTION)} of the {ceiling_label(path, ctx, 'iops')}, reads "
            f">= {pct(READ_HEAVY_SHARE)} of I/Os, block cache full with misses >= {pct(MISSES_FEED_DISK)} of "
            f"the disk's reads, capacity >= {format_quantity(SHRINK_MIN_FACTOR, '')}x PingCAP's 4 GB of 32 GB",
            [
                utilisation_p95("IOPS", util_p95, limit_label="at the ceiling (AWS: 90% of provisioned, 99% of the time)"),
                # the table's limit is the chart's judged line: same value, same words, same source
                Measure(
                    label="counted IOPS p95",
                    value=finite(p95(path.counted_iops)),
                    unit="IOPS",
                    limit=finite(judged),
                    limit_label=lines[0].label.removesuffix(f", {JUDGED}"),
                    statistic="p95",
                    source=(
                        refs.EBS_OPTIMIZED.cite()
                        if path.iops_binding == "instance"
                        else refs.EBS_VOLUME_TYPES.cite() + "; " + refs.EBS_GP.cite()
                        if len(lines) > 1
                        else refs.EBS_VOLUME_TYPES.cite()
                    ),
                ),
                Measure(
                    label="reads among I/Os at the ceiling",
                    value=finite(read_share),
                    unit="ratio",
                    limit=READ_HEAVY_SHARE,
                    statistic="median",
                ),
                hit_measure,
                Measure(
                    label="block-cache misses per disk read at the ceiling",
                    value=finite(miss_per_read),
                    unit="ratio",
                    limit=MISSES_FEED_DISK,
                    limit_label="misses feed the disk from 0.5 (Headroom choice)",
                    statistic="median",
                    source=THRESHOLDS_DOC,
                ),
                Measure(label="block cache", value=cap / GIB, unit="GiB", statistic="config"),
                Measure(label="memory per TiKV", value=memory / GIB, unit="GiB"),
            ],
            _series_refs(node.id, path, lines),
            share=iops_p.share,
            longest_run_minutes=iops_p.longest_run_minutes,
            episodes=iops_p.episodes,
            threshold_pct=100 * AT_CEILING_FRACTION,
            corroboration=corroboration,
        ),
        why=(
            f"{pct(1 - hit)} of block lookups miss the block cache, which is full, and those misses are what "
            "the disk reads: the read set does not fit, so reads fall through to the EBS volume, which is at "
            "its IOPS ceiling (where EBS latency jumps by 10 ms or more, PingCAP, Best Practices for TiDB on AWS Cloud). The block cache holds "
            "uncompressed blocks; the OS page cache holds the same data compressed, so memory moved from the "
            "block cache to the page cache keeps more of the read set in memory and off the disk. PingCAP "
            "(PingCAP, Best Practices for TiDB on AWS Cloud, 'Cache allocation'): for read-heavy workloads whose read set does not fit, tune the "
            "block cache down; in their 5K-warehouse TPC-C runs they kept 4 GB of 32 GB for it to keep read "
            "IOPS under the EBS limit."
        ),
        changes=[
            tikv_change(
                ctx,
                node,
                KEY,
                size_text(target),
                f"PingCAP's 4 GB per 32 GB (PingCAP, Best Practices for TiDB on AWS Cloud) of {format_quantity(memory / GIB, 'GiB')}: frees "
                f"{format_quantity(freed / GIB, 'GiB')} for the page cache",
            )
        ],
        impact=Impact(
            summary=(
                f"{format_quantity(freed / GIB, 'GiB')} move from the block cache to the page cache, which caches compressed "
                "blocks: fewer reads reach the volume. Re-check read IOPS after a day."
            ),
            metric="block cache, GiB",
            unit="GiB",
            before=cap / GIB,
            after=target / GIB,
            headroom_before_pct=finite(100.0 * (1.0 - util_p95)),
            monthly_cost_delta_usd=0.0,
        ),
        confidence=0.7,
        dedup_key=make_dedup_key(RULE_ID, ctx.cluster_key, entity, "shrink"),
        sources=[
            refs.PINGCAP_AWS.cite('Cache allocation'),
            refs.EBS_VOLUME_TYPES.cite(),
            THRESHOLDS_DOC,
        ],
    )


def _grow(ctx: Context, node: Node, cap: int, hit: float, memory: float, path: DataPath) -> Finding | None:
    """Grow a memory-rich node's small block cache back to the 45% default (template 30-50%)."""
    target = grow_target_bytes(memory)
    if cap >= BAND_LOW * memory or target <= cap:  # (tested before the percentiles: most caches are not small)
        return None
    iops_p95, mibps_p95 = p95(path.iops_util), p95(path.mibps_util)
    if not (iops_p95 < FAR_FROM_CEILING and mibps_p95 < FAR_FROM_CEILING):
        return None
    entity = ctx.entity_for_node(node.id)
    hit_measure = Measure(
        label="block-cache hit ratio (median)",
        value=finite(hit),
        unit="ratio",
        limit=POOR_HIT_RATIO,
        limit_label="poor below 50% (Headroom choice)",
        statistic="p50",
    )
    available = ctx.series("node", node.id, mid.NODE_MEMORY_AVAILABLE)
    # Headroom choice: never propose memory the host did not have free all window.
    if (
        available is not None
        and np.any(np.isfinite(available))
        and float(np.nanmin(available)) < target - cap
    ):
        return None
    return Finding(
        rule=RULE_ID,
        severity="info",
        entity=entity,
        title=(
            f"{node.id}: block cache is {format_quantity(cap / GIB, 'GiB')} of {format_quantity(memory / GIB, 'GiB')} memory "
            f"({pct(cap / memory)}) with a {pct(hit)} hit ratio: raise it to {size_words(target)}"
        ),
        evidence=evidence(
            ctx,
            f"capacity < {pct(BAND_LOW)} of memory, hit ratio < {pct(POOR_HIT_RATIO)}, IOPS and MiB/s "
            f"< {pct(FAR_FROM_CEILING)} of their ceilings at p95",
            [
                Measure(
                    label="block cache / memory",
                    value=cap / memory,
                    unit="ratio",
                    limit=BAND_LOW,
                    limit_label="template: 30%-50% of system memory",
                    statistic="config",
                    source=refs.TIKV_CONFIG_TEMPLATE.cite('Block cache'),
                ),
                hit_measure,
                Measure(
                    label="IOPS utilisation p95",
                    value=finite(iops_p95),
                    unit="ratio",
                    limit=FAR_FROM_CEILING,
                    statistic="p95",
                ),
                Measure(
                    label="MiB/s utilisation p95",
                    value=finite(mibps_p95),
                    unit="ratio",
                    limit=FAR_FROM_CEILING,
                    statistic="p95",
                ),
            ],
            _series_refs(node.id, path, [])
            + [SeriesRef(entity_kind="node", entity_id=node.id, metric=mid.NODE_MEMORY_AVAILABLE)],
        ),
        why=(
            "Most lookups miss the block cache and are served from the OS page cache instead: each pays a "
            "decompression and a copy, and the cache set aside for TiKV is well below the 30%-50% of memory the "
            "TiKV template recommends (TiKV config template). The disks are far from their ceilings and the host has the "
            "memory free, so returning the block cache to TiKV's default 45% of memory (PingCAP, TiKV configuration file) costs no "
            "I/O headroom worth worrying about."
        ),
        changes=[
            tikv_change(
                ctx,
                node,
                KEY,
                size_text(target),
                f"TiKV's default 45% of {format_quantity(memory / GIB, 'GiB')}, inside the template's 30%-50%",
            )
        ],
        impact=Impact(
            summary=f"block cache from {format_quantity(cap / GIB, 'GiB')} to {format_quantity(target / GIB, 'GiB')}: more lookups hit uncompressed blocks",
            metric="block cache, GiB",
            unit="GiB",
            before=cap / GIB,
            after=target / GIB,
            monthly_cost_delta_usd=0.0,
        ),
        confidence=0.6,
        dedup_key=make_dedup_key(RULE_ID, ctx.cluster_key, entity, "grow"),
        sources=[refs.TIKV_CONFIG.cite('storage.block-cache.capacity'), refs.TIKV_CONFIG_TEMPLATE.cite('Block cache')],
    )


def evaluate(ctx: Context) -> list[Finding]:
    """Return block-cache findings: shared-host OOM risk first, else shrink or grow per node."""
    out = _shared_host(ctx)
    crowded = {f.entity.id for f in out}
    for node in ctx.nodes:
        is_crowded = node.id in crowded
        finding = per_node(
            ctx, f"{RULE_ID}/{is_crowded}", node, partial(_node_findings, ctx, node, is_crowded)
        )
        if finding is not None:
            out.append(finding)
    return out


RULES = (
    Rule(
        id=RULE_ID,
        family="tikv",
        description=(
            "Block cache vs memory, hit ratio and read IOPS: shared-host OOM risk, read-heavy nodes at the "
            "IOPS ceiling (shrink, PingCAP 4 GB of 32 GB), memory-rich nodes below 30% (grow to 45%)."
        ),
        evaluate=evaluate,
        tikv_keys=(KEY,),
        sources=(refs.TIKV_CONFIG.cite(), refs.TIKV_CONFIG_TEMPLATE.cite('Block cache'), refs.PINGCAP_AWS.cite('Cache allocation')),
    ),
)
