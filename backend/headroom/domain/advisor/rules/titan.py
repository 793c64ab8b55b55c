"""Rule family: compaction I/O as the bottleneck -> Titan for large values, zstd everywhere for small ones.

PingCAP's public-cloud best practice (docs/reference/pingcap-guidance.md#titan-and-compression, "Reduce compaction I/O
traffic in KV RocksDB"): cloud volumes
have limited throughput, RocksDB's write amplification makes disk throughput the bottleneck, and pending
compaction bytes grow until flow control throttles writes. When the average row is larger than 512 bytes,
enable Titan with `min-blob-size` "512B" or "1KB" and `blob-file-compression = "zstd"`; below 512 bytes Titan
does not help: set every level of the default CF to zstd instead.

Version-aware (docs/reference/tikv-config.md#keys-and-defaults): Titan is on by default for clusters created on v7.6.0 or later, with
`min-blob-size = 32KB` (1KB before): there the Titan option only lowers `min-blob-size` so that 512 B-32 KiB
values leave the LSM tree. `rocksdb.titan.enabled` cannot change online and cannot simply be turned off again
(docs/reference/tikv-config.md#keys-and-defaults: fallback needs `blob-run-mode = "fallback"` and a full compaction).

The snapshot has no average value size (the metric registry carries no `tikv_engine_size_bytes` /
`tikv_engine_estimate_num_keys`): with the size unknown, the reversible zstd option comes first and Titan second.
"""

from __future__ import annotations

import numpy as np

from headroom.domain import references as refs
from headroom.domain.advisor.context import Context, p95
from headroom.domain.advisor.finding import Finding, make_dedup_key
from headroom.domain.advisor.rule import Rule
from headroom.domain.advisor.rules._common import AT_CEILING_FRACTION, each_node, pct, pressure
from headroom.domain.advisor.rules._tikv_helpers import (
    ceiling_source,
    KIB,
    MIB,
    config_bool,
    config_bytes,
    config_value,
    data_path,
    evidence,
    finite,
    tikv_change,
    utilisation_p95,
)
from headroom.domain.model import Change, Impact, Measure, Option, ReferenceLine, SeriesRef
from headroom.domain.snapshot import metric_ids as mid
from headroom.domain.snapshot.schema import Node

RULE_ID = "compaction-io-titan"
TITAN_ENABLED = "rocksdb.titan.enabled"
MIN_BLOB = "rocksdb.defaultcf.titan.min-blob-size"
BLOB_COMPRESSION = "rocksdb.defaultcf.titan.blob-file-compression"
COMPRESSION = "rocksdb.defaultcf.compression-per-level"
KEYS = (TITAN_ENABLED, MIN_BLOB, BLOB_COMPRESSION, COMPRESSION)

# docs/reference/pingcap-guidance.md#titan-and-compression: Titan helps when "the average row size is larger than 512 bytes"; below it, zstd at every level.
LARGE_VALUE_BYTES = 512
# docs/reference/pingcap-guidance.md#titan-and-compression: min-blob-size "512B" or "1KB"; the larger keeps more small values in the LSM tree (cheaper scans).
PROPOSED_MIN_BLOB = "1KiB"
# docs/reference/pingcap-guidance.md#titan-and-compression: compression-per-level = ["zstd", "zstd", "zstd", "zstd", "zstd", "zstd", "zstd"].
ALL_ZSTD = ["zstd"] * 7
# What zstd at every level costs (said with every zstd fix): RocksDB's compression guide calls LZ4 (TiKV's default
# for levels 2-4) "lightweight ... a good balance between space and CPU usage" and zstd at every level the choice
# "if you have a lot of free CPU" (https://github.com/facebook/rocksdb/wiki/Compression); compression-per-level is
# not changeable online (docs/reference/tikv-config.md#online-changes), so it takes a rolling restart of every TiKV.
ZSTD_TRADE_OFFS = [
    "zstd at every level costs CPU on every flush, compaction and block read of the upper levels (RocksDB's "
    "compression guide: heavy-weight compression everywhere is for hosts with free CPU); watch the TiKV CPU",
    "compression-per-level does not change online (PingCAP, TiKV configuration file): it needs a rolling restart of every TiKV, and "
    "existing SST files change compression only as compaction rewrites them",
]
# Headroom choice (shared with compaction-rate-limit): compaction is the bottleneck when its reads + writes are
# at least half of the volume's bytes while the volume sits at its MiB/s ceiling.
COMPACTION_SHARE = 0.50


def average_value_bytes(ctx: Context, node: Node) -> float | None:
    """Return the node's average value size in bytes when the snapshot can tell it (today it cannot: None)."""
    _ = (ctx, node)
    return None


def titan_changes(ctx: Context, node: Node) -> list[Change]:
    """Return the Titan changes still needed on this node ([] when Titan already takes 512 B+ values)."""
    enabled = config_bool(ctx, node, TITAN_ENABLED)
    min_blob = config_bytes(ctx, node, MIN_BLOB)
    out: list[Change] = []
    if enabled is not True:
        out.append(
            tikv_change(
                ctx,
                node,
                TITAN_ENABLED,
                True,
                "store values >= min-blob-size in blob files, out of the LSM tree that compaction rewrites "
                "(PingCAP, TiDB Best Practices on Public Cloud); not online, and turning it off again needs blob-run-mode = fallback and a full "
                "compaction (PingCAP, TiKV configuration file)",
            )
        )
    if min_blob is None or min_blob > 1 * KIB:
        out.append(
            tikv_change(
                ctx,
                node,
                MIN_BLOB,
                PROPOSED_MIN_BLOB,
                "PingCAP, TiDB Best Practices on Public Cloud: min-blob-size 512B-1KB so that rows above 512 B leave the LSM tree"
                + (" (32KB is the default since v7.6.0, PingCAP, TiKV configuration file)" if min_blob == 32 * KIB else ""),
            )
        )
    if out and config_value(ctx, node, BLOB_COMPRESSION) != "zstd":
        out.append(tikv_change(ctx, node, BLOB_COMPRESSION, "zstd", "PingCAP, TiDB Best Practices on Public Cloud: blob-file-compression = zstd"))
    return out


def zstd_changes(ctx: Context, node: Node) -> list[Change]:
    """Return the zstd-everywhere change for the default CF ([] when every level is zstd already)."""
    current = config_value(ctx, node, COMPRESSION)
    if isinstance(current, list) and [str(x).lower() for x in current] == ALL_ZSTD:
        return []
    return [
        tikv_change(
            ctx,
            node,
            COMPRESSION,
            list(ALL_ZSTD),
            "PingCAP, TiDB Best Practices on Public Cloud: zstd at every level of the default CF shrinks what compaction reads and writes; not "
            "online (PingCAP, TiKV configuration file), applies as compaction rewrites the levels",
        )
    ]


def rank_options(value_bytes: float | None, titan: Option | None, zstd: Option | None) -> list[Option]:
    """Order the fixes by PingCAP's public-cloud rule (pingcap-guidance.md#titan-and-compression): Titan first above 512 B, zstd only at or below, zstd first if unknown."""
    if value_bytes is not None and value_bytes > LARGE_VALUE_BYTES:
        ordered = [titan, zstd]
    elif value_bytes is not None:
        ordered = [zstd]  # PingCAP: Titan "is not applicable" below 512 B
    else:
        ordered = [zstd, titan]
    return [o for o in ordered if o is not None]


def _finding(ctx: Context, node: Node) -> Finding | None:
    path = data_path(ctx, node)
    comp_w = ctx.series("node", node.id, mid.TIKV_COMPACTION_WRITE_BYTES)
    comp_r = ctx.series("node", node.id, mid.TIKV_COMPACTION_READ_BYTES)
    if path is None or comp_w is None or comp_r is None or len(comp_w) != len(path.mibps):
        return None
    at_ceiling = pressure(path.mibps_util, 1.0, ctx.step_seconds, AT_CEILING_FRACTION)
    if not at_ceiling.sustained:
        return None
    comp_mibps = (comp_w + comp_r) / MIB
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(path.mibps > 0, comp_mibps / path.mibps, np.nan)
    sel = share[at_ceiling.mask]
    sel = sel[np.isfinite(sel)]
    comp_share = float(np.median(sel)) if sel.size else float("nan")
    if not comp_share >= COMPACTION_SHARE:
        return None
    value_bytes = average_value_bytes(ctx, node)
    t_changes, z_changes = titan_changes(ctx, node), zstd_changes(ctx, node)
    pending = ctx.series("node", node.id, mid.TIKV_PENDING_COMPACTION_BYTES)
    pending_p95 = p95(pending) if pending is not None else float("nan")
    util_p95 = p95(path.mibps_util)

    def impact(summary: str) -> Impact:
        return Impact(
            summary=summary,
            metric="compaction share of the data volume's bytes at the ceiling",
            unit="ratio",
            before=finite(comp_share),
            headroom_before_pct=finite(100 * (1 - util_p95)),
            monthly_cost_delta_usd=0.0,
        )

    titan = (
        Option(
            label="Titan for values > 512 B (PingCAP, TiDB Best Practices on Public Cloud)",
            changes=t_changes,
            impact=impact(
                "values above min-blob-size leave the LSM tree: compaction rewrites keys and blob "
                "indexes instead of whole values (PingCAP, TiDB Best Practices on Public Cloud)"
            ),
            notes=[
                "range scans on the primary key can get slightly slower with Titan (PingCAP, TiDB Best Practices on Public Cloud)",
                "rocksdb.titan.enabled does not change online (PingCAP, TiKV configuration file): a rolling restart of every TiKV; once "
                "enabled it cannot simply be turned off (falling back needs blob-run-mode = fallback and a full "
                "compaction)",
            ],
        )
        if t_changes
        else None
    )
    zstd = (
        Option(
            label="zstd at every level for values <= 512 B (PingCAP, TiDB Best Practices on Public Cloud)",
            changes=z_changes,
            impact=impact(
                "smaller SSTs at every level: fewer bytes per compaction read and write (PingCAP, TiDB Best Practices on Public Cloud)"
            ),
            notes=ZSTD_TRADE_OFFS,
        )
        if z_changes
        else None
    )
    options = rank_options(value_bytes, titan, zstd)
    if not options:
        return None
    first = options[0]
    entity = ctx.entity_for_node(node.id)
    notes = []
    if value_bytes is None:
        notes.append(
            "average value size unknown (no tikv_engine_size_bytes / tikv_engine_estimate_num_keys for the "
            "default CF in the snapshot): choose Titan if rows average more than 512 B, zstd otherwise"
        )
    return Finding(
        rule=RULE_ID,
        severity="warning",
        entity=entity,
        title=(
            f"{node.id}: compaction is {pct(comp_share)} of the data volume's bytes at its MiB/s ceiling "
            f"({pct(util_p95)} at p95): {first.label.split(' (')[0]}"
            + (f" (or {options[1].label.split(' (')[0]})" if len(options) > 1 else "")
        ),
        evidence=evidence(
            ctx,
            f"MiB/s >= {pct(AT_CEILING_FRACTION)} of the ceiling for >= 30 min or 5% of the window and "
            f"compaction reads + writes >= {pct(COMPACTION_SHARE)} of the bytes meanwhile",
            [
                utilisation_p95("MiB/s", util_p95),
                Measure(
                    label="compaction share of the bytes at the ceiling",
                    value=finite(comp_share),
                    unit="ratio",
                    limit=COMPACTION_SHARE,
                    statistic="median",
                ),
                Measure(
                    label="compaction reads + writes p95",
                    value=finite(p95(comp_mibps)),
                    unit="MiB/s",
                    statistic="p95",
                ),
                Measure(
                    label="pending compaction bytes p95",
                    value=finite(pending_p95 / 1024**3),
                    unit="GiB",
                    statistic="p95",
                ),
                Measure(
                    label="rocksdb.titan.enabled",
                    value=1.0 if config_bool(ctx, node, TITAN_ENABLED) else 0.0,
                    unit="bool",
                    statistic="config",
                ),
            ],
            [
                SeriesRef(entity_kind="node", entity_id=node.id, metric=mid.TIKV_COMPACTION_WRITE_BYTES),
                SeriesRef(entity_kind="node", entity_id=node.id, metric=mid.TIKV_COMPACTION_READ_BYTES),
                SeriesRef(entity_kind="node", entity_id=node.id, metric=mid.TIKV_PENDING_COMPACTION_BYTES),
            ]
            + [
                SeriesRef(
                    entity_kind="volume",
                    entity_id=vid,
                    metric="derived.mibps",
                    reference_lines=[
                        ReferenceLine(
                            value=finite(float(np.nanmin(path.mibps_ceiling))),
                            label="MiB/s ceiling",
                            unit="MiB/s",
                            source=ceiling_source(path, "mibps"),
                        )
                    ],
                )
                for vid in path.volume_ids
            ],
            share=at_ceiling.share,
            longest_run_minutes=at_ceiling.longest_run_minutes,
            episodes=at_ceiling.episodes,
            threshold_pct=100 * AT_CEILING_FRACTION,
        ),
        why=(
            "RocksDB rewrites every byte several times as it compacts it down the levels; on a cloud volume "
            "with limited throughput that write amplification, not the user's writes, fills the disk, and "
            "pending compaction bytes grow until flow control throttles writes (PingCAP, TiDB Best Practices on Public Cloud). Titan keeps values "
            "above min-blob-size in blob files that compaction does not rewrite; for rows below 512 B it does "
            "not help, and zstd at every level shrinks what compaction moves instead (PingCAP, TiDB Best Practices on Public Cloud). Titan is on by "
            "default only for clusters created on v7.6.0+, with min-blob-size 32KB (PingCAP, TiKV configuration file)."
        ),
        changes=list(first.changes),
        options=options,
        impact=first.impact,
        confidence=0.6 if value_bytes is None else 0.75,
        dedup_key=make_dedup_key(RULE_ID, ctx.cluster_key, entity),
        sources=[
            refs.PINGCAP_PUBLIC_CLOUD.cite('reduce compaction I/O (Titan, zstd)'),
            refs.TIKV_CONFIG.cite('rocksdb.titan.enabled, min-blob-size, compression-per-level'),
            refs.headroom_threshold("titan.md"),
        ],
        notes=notes,
    )


def evaluate(ctx: Context) -> list[Finding]:
    """Return one finding per node whose data volume is throughput-bound by compaction."""
    return each_node(ctx, _finding)


RULES = (
    Rule(
        id=RULE_ID,
        family="tikv",
        description=(
            "Compaction I/O fills the data volume's throughput: Titan (values > 512 B) or zstd at every level "
            "(smaller values), version-aware (Titan default for new clusters since v7.6.0)."
        ),
        evaluate=evaluate,
        tikv_keys=KEYS,
        sources=(refs.PINGCAP_PUBLIC_CLOUD.cite(), refs.TIKV_CONFIG.cite()),
    ),
)
