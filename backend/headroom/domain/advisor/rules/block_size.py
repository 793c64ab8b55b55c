"""Rule family: RocksDB data block size (`rocksdb.defaultcf.block-size`, `rocksdb.writecf.block-size`).

PingCAP, "Best Practices for TiDB on AWS Cloud" (docs/reference/pingcap-guidance.md#block-size): a point read fetches at least one whole block, so the block size trades read
throughput for read IOPS: "As a rule of thumb, changing block size from 64 KiB to 4 KiB doubles read IOPS and
halves read throughput." Four halvings of the block size double the IOPS, so one halving multiplies read IOPS by
2^(1/4) and read bytes by 2^(-1/4); the rule projects every candidate size (4-64 KiB) that way.

- Bandwidth-bound (MiB/s at the ceiling) with IOPS to spare, reads being most of the bytes -> smaller blocks.
- IOPS-bound with bandwidth to spare, reads being most of the I/Os -> larger blocks.
The two conditions exclude each other (one needs the MiB/s ceiling sustained, the other the IOPS ceiling, and
each requires the projected other side to stay under 75%). The block size is not online-changeable
(`#[online_config(skip)]`, docs/reference/tikv-config.md#online-changes) and only applies to SST files written after the restart, i.e. as
compaction rewrites the data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from headroom.domain import derived
from headroom.domain import references as refs
from headroom.domain.advisor.context import Array, Context, p95
from headroom.domain.advisor.finding import Finding, make_dedup_key
from headroom.domain.advisor.rule import Rule
from headroom.domain.advisor.rules._common import (
    AT_CEILING_FRACTION,
    TARGET_UTILISATION,
    each_node,
    pct,
    pressure,
)
from headroom.domain.advisor.rules._tikv_helpers import (
    KIB,
    DataPath,
    ceiling_label,
    config_bytes,
    data_path,
    evidence,
    finite,
    size_text,
    size_words,
    tikv_change,
    utilisation_p95,
)
from headroom.domain.model import Impact, Measure, ReferenceLine, SeriesRef
from headroom.domain.snapshot import metric_ids as mid
from headroom.domain.snapshot.schema import Node
from headroom.domain.units import format_quantity

RULE_ID = "block-size"
KEYS = ("rocksdb.defaultcf.block-size", "rocksdb.writecf.block-size")
# PingCAP's range (docs/reference/pingcap-guidance.md#block-size): its rule of thumb spans 64 KiB down to 4 KiB; powers of two as RocksDB users set them.
CANDIDATES_KIB = (4, 8, 16, 32, 64)
# docs/reference/pingcap-guidance.md#block-size: 64 KiB -> 4 KiB (four halvings) doubles read IOPS and halves read throughput.
HALVINGS_PER_DOUBLING = 4.0
# Headroom choice: block size matters when point reads (block-cache misses) are at least half of the bytes (or
# I/Os) while at the ceiling; scans and compaction read 256 KiB I/Os whatever the block size.
READ_DOMINANT = 0.50

Direction = Literal["smaller", "larger"]


def read_factors(current_kib: float, new_kib: float) -> tuple[float, float]:
    """Return (read-IOPS factor, read-throughput factor) of a block-size change, by PingCAP's rule of thumb (pingcap-guidance.md#block-size)."""
    halvings = math.log2(current_kib / new_kib)
    return 2.0 ** (halvings / HALVINGS_PER_DOUBLING), 2.0 ** (-halvings / HALVINGS_PER_DOUBLING)


@dataclass(frozen=True)
class Projection:
    """Utilisation of both ceilings (p95 over the window) if the block size were `new_kib`."""

    new_kib: int
    iops_util_p95: float
    mibps_util_p95: float

    @property
    def fits(self) -> bool:
        """Whether both ceilings would sit at or below the 75% target."""
        return self.iops_util_p95 <= TARGET_UTILISATION and self.mibps_util_p95 <= TARGET_UTILISATION


def point_reads(path: DataPath, block_kib: float) -> tuple[Array, Array]:
    """Split the data path's reads into point reads of one block and 256 KiB reads; return (ops/s, MiB/s).

    EBS merges sequential I/O up to 256 KiB (docs/reference/ebs-io-accounting.md#io-size-cap), so scans and compaction reads arrive as 256 KiB
    I/Os while block-cache misses read one block each. With R reads/s moving B KiB/s, the point reads are
    n = (256 R - B) / (256 - block), clamped to [0, R]: only they change with the block size.
    """
    big = 256.0
    ops = path.read_iops
    kib = path.read_mibps * 1024.0
    if block_kib >= big:
        return np.zeros_like(ops), np.zeros_like(ops)
    n = np.clip((big * ops - kib) / (big - block_kib), 0.0, ops)
    return n, n * block_kib / 1024.0


def project(path: DataPath, current_kib: float, new_kib: int) -> Projection:
    """Project the node's data-path utilisation with another block size (point reads scale, the rest not)."""
    f_iops, f_bytes = read_factors(current_kib, new_kib)
    p_ops, p_mibps = point_reads(path, current_kib)
    counted = path.counted_iops + p_ops * (f_iops - 1.0)
    mibps = path.mibps + p_mibps * (f_bytes - 1.0)
    iops_util = derived.utilisation(counted, path.iops_ceiling)
    mibps_util = derived.utilisation(mibps, path.mibps_ceiling)
    return Projection(new_kib, p95(iops_util), p95(mibps_util))


def choose(path: DataPath, current_kib: float, direction: Direction) -> Projection | None:
    """Return the nearest candidate size in `direction` whose projection fits both ceilings, or None."""
    if direction == "smaller":
        sizes = sorted((s for s in CANDIDATES_KIB if s < current_kib), reverse=True)
    else:
        sizes = sorted(s for s in CANDIDATES_KIB if s > current_kib)
    for size in sizes:
        proj = project(path, current_kib, size)
        if proj.fits:
            return proj
    return None


def _median_at(values: Array, mask: np.ndarray) -> float:
    sel = values[mask]
    sel = sel[np.isfinite(sel)]
    return float(np.median(sel)) if sel.size else float("nan")


def _finding(ctx: Context, node: Node) -> Finding | None:
    current = config_bytes(ctx, node, KEYS[0])
    path = data_path(ctx, node)
    if current is None or path is None:
        return None
    current_kib = current / KIB
    mibps_p = pressure(path.mibps_util, 1.0, ctx.step_seconds, AT_CEILING_FRACTION)
    iops_p = pressure(path.iops_util, 1.0, ctx.step_seconds, AT_CEILING_FRACTION)
    direction: Direction
    p_ops, p_mibps = point_reads(path, current_kib)
    with np.errstate(invalid="ignore", divide="ignore"):
        byte_share = np.where(path.mibps > 0, p_mibps / path.mibps, np.nan)
        op_share = np.where(
            path.read_iops + path.write_iops > 0, p_ops / (path.read_iops + path.write_iops), np.nan
        )
    if mibps_p.sustained and _median_at(byte_share, mibps_p.mask) >= READ_DOMINANT:
        direction, bound, read_share = "smaller", mibps_p, _median_at(byte_share, mibps_p.mask)
    elif iops_p.sustained and _median_at(op_share, iops_p.mask) >= READ_DOMINANT:
        direction, bound, read_share = "larger", iops_p, _median_at(op_share, iops_p.mask)
    else:
        return None
    proj = choose(path, current_kib, direction)
    if proj is None:
        return None
    new_bytes = proj.new_kib * KIB
    entity = ctx.entity_for_node(node.id)
    iops_now, mibps_now = p95(path.iops_util), p95(path.mibps_util)
    f_iops, f_bytes = read_factors(current_kib, proj.new_kib)
    reason = (
        f"{'bandwidth' if direction == 'smaller' else 'IOPS'}-bound at the "
        f"{ceiling_label(path, ctx, 'mibps' if direction == 'smaller' else 'iops')}: {size_words(current)} -> "
        f"{size_words(new_bytes)} moves read IOPS ×{format_quantity(f_iops, '')} and read MiB/s ×{format_quantity(f_bytes, '')} (PingCAP's rule of "
        "thumb); not online: takes effect for SST files written after a rolling restart, as compaction "
        "rewrites the data"
    )
    changes = []
    for key in KEYS:
        cf_bytes = config_bytes(ctx, node, key)
        if cf_bytes is None or cf_bytes == new_bytes:
            continue
        if (direction == "smaller") != (cf_bytes > new_bytes):
            continue  # never move one column family the other way
        changes.append(tikv_change(ctx, node, key, size_text(new_bytes), reason))
    if not changes:
        return None
    if direction == "smaller":
        ceiling = float(np.nanmin(path.mibps_ceiling))
        observed = p95(path.mibps)
        limit_label = f"MiB/s ceiling ({ceiling_label(path, ctx, 'mibps')})"
        unit = "MiB/s"
        chart_metric = "derived.mibps"
    else:
        ceiling = float(np.nanmin(path.iops_ceiling))
        observed = p95(path.counted_iops)
        limit_label = f"IOPS ceiling ({ceiling_label(path, ctx, 'iops')})"
        unit = "IOPS"
        chart_metric = "derived.counted_iops"
    title = (
        f"{node.id}: {'read bandwidth' if direction == 'smaller' else 'read IOPS'} at the ceiling "
        f"({pct(mibps_now if direction == 'smaller' else iops_now)} at p95) with "
        f"{'IOPS' if direction == 'smaller' else 'bandwidth'} to spare: block-size {size_words(current)} -> "
        f"{size_words(new_bytes)}"
    )
    return Finding(
        rule=RULE_ID,
        severity="warning",
        entity=entity,
        title=title,
        evidence=evidence(
            ctx,
            f"{'MiB/s' if direction == 'smaller' else 'counted IOPS'} >= {pct(AT_CEILING_FRACTION)} of the "
            f"ceiling for >= 30 min or 5% of the window, point reads >= {pct(READ_DOMINANT)} of "
            f"{'bytes' if direction == 'smaller' else 'I/Os'}",
            [
                Measure(
                    label=f"{unit} p95",
                    value=finite(observed),
                    unit=unit,
                    limit=finite(ceiling),
                    limit_label=limit_label,
                    statistic="p95",
                    source=refs.EBS_VOLUME_TYPES.cite(),
                ),
                utilisation_p95("MiB/s", mibps_now),
                utilisation_p95("IOPS", iops_now),
                Measure(
                    label=f"point reads' share of {'bytes' if direction == 'smaller' else 'I/Os'} at the ceiling",
                    value=finite(read_share),
                    unit="ratio",
                    limit=READ_DOMINANT,
                    statistic="median",
                ),
                Measure(
                    label="rocksdb.defaultcf.block-size", value=current_kib, unit="KiB", statistic="config"
                ),
                Measure(
                    label=f"projected {'IOPS' if direction == 'smaller' else 'MiB/s'} utilisation p95 at "
                    f"{size_words(new_bytes)}",
                    value=finite(proj.iops_util_p95 if direction == "smaller" else proj.mibps_util_p95),
                    unit="ratio",
                    limit=TARGET_UTILISATION,
                    limit_label="target after a fix (_common.TARGET_UTILISATION)",
                    statistic="p95",
                ),
            ],
            [
                SeriesRef(
                    entity_kind="volume",
                    entity_id=vid,
                    metric=chart_metric,
                    reference_lines=[ReferenceLine(value=finite(ceiling), label=limit_label, unit=unit,
                                                   source=refs.EBS_VOLUME_TYPES.cite())],
                )
                for vid in path.volume_ids
            ]
            + [SeriesRef(entity_kind="node", entity_id=node.id, metric=mid.TIKV_BLOCK_CACHE_MISS)],
            share=bound.share,
            longest_run_minutes=bound.longest_run_minutes,
            episodes=bound.episodes,
            threshold_pct=100 * AT_CEILING_FRACTION,
        ),
        why=(
            "Every block-cache miss reads one whole data block from the volume. "
            + (
                "The node moves as many bytes as its ceiling allows while its IOPS ceiling has room: smaller "
                "blocks read fewer unneeded bytes per point get, at the cost of more I/Os for reads with "
                "locality. PingCAP (Best Practices for TiDB on AWS Cloud) used exactly this on m5.4xlarge, whose EBS bandwidth (593.75 MB/s) "
                "binds before provisioned IOPS do."
                if direction == "smaller"
                else "The node issues as many I/Os as its ceiling allows while bandwidth has room: larger blocks "
                "serve reads with locality in fewer I/Os, at the cost of more bytes per point get (PingCAP, Best Practices for TiDB on AWS Cloud)."
            )
            + " As a rule of thumb, 64 KiB -> 4 KiB doubles read IOPS and halves read throughput (PingCAP, Best Practices for TiDB on AWS Cloud). "
            "block-size cannot change online (PingCAP, TiKV configuration file); new SSTs use it after a restart, and the data "
            "converges as compaction rewrites it, so test on one node first (PingCAP, Best Practices for TiDB on AWS Cloud: 'do a few test runs')."
        ),
        changes=changes,
        impact=Impact(
            summary=(
                f"projected p95 utilisation at {size_words(new_bytes)}: MiB/s {pct(mibps_now)} -> "
                f"{pct(proj.mibps_util_p95)}, IOPS {pct(iops_now)} -> {pct(proj.iops_util_p95)} (PingCAP, Best Practices for TiDB on AWS Cloud "
                "rule of thumb, once the data is rewritten)"
            ),
            metric="MiB/s utilisation p95" if direction == "smaller" else "IOPS utilisation p95",
            unit="ratio",
            before=finite(mibps_now if direction == "smaller" else iops_now),
            after=finite(proj.mibps_util_p95 if direction == "smaller" else proj.iops_util_p95),
            headroom_before_pct=finite(100 * (1 - (mibps_now if direction == "smaller" else iops_now))),
            headroom_after_pct=finite(
                100 * (1 - (proj.mibps_util_p95 if direction == "smaller" else proj.iops_util_p95))
            ),
            monthly_cost_delta_usd=0.0,
        ),
        confidence=0.6,
        dedup_key=make_dedup_key(RULE_ID, ctx.cluster_key, entity),
        sources=[
            refs.PINGCAP_AWS.cite('Block size'),
            refs.TIKV_CONFIG.cite('block-size'),
            refs.headroom_threshold("block-size.md"),
        ],
    )


def evaluate(ctx: Context) -> list[Finding]:
    """Return at most one block-size finding per node (smaller or larger, never both)."""
    return each_node(ctx, _finding)


RULES = (
    Rule(
        id=RULE_ID,
        family="tikv",
        description=(
            "Bandwidth-bound reads with IOPS to spare -> smaller RocksDB blocks; IOPS-bound reads with bandwidth "
            "to spare -> larger (PingCAP's rule of thumb). Not online; applies as data is rewritten."
        ),
        evaluate=evaluate,
        tikv_keys=KEYS,
        sources=(refs.PINGCAP_AWS.cite('Block size'), refs.TIKV_CONFIG.cite()),
    ),
)
