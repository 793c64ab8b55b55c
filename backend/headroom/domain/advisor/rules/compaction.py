"""Rule family: the compaction rate limiter (`rocksdb.rate-bytes-per-sec`, `rocksdb.rate-limiter-auto-tuned`).

The config template (docs/reference/pingcap-guidance.md#compaction-io): "Consider setting this to 50% ~ 80% of the disk throughput
for a more stable result. However, in heavy write workload, limiting compaction and flush speed can cause write
stalls too." PingCAP's AWS practice (docs/reference/pingcap-guidance.md#compaction-io, "I/O rate limiting"): EBS latency grows with throughput, so
compaction bursts hurt foreground I/O; set the limit moderately low, and the auto-tuned limiter adapts within it.

One rule, `compaction-rate-limit`, two aspects that exclude each other (one needs the disk at its MiB/s ceiling,
the other needs it below):
- `limit`: the volume sits at its throughput ceiling, compaction is most of its bytes and latency moves with the
  compaction flow, while the limiter does not bind (above 80% of the disk): set it inside 50-80% of the disk,
  above compaction's mean need so it smooths bursts without starving compaction.
- `raise`: the limiter binds (flush + compaction writes at >= 90% of it), pending compaction bytes sit above
  flow control's soft limit and the disk has throughput to spare: the limit itself causes the stalls; raise it
  to 80% of the disk.
"""

from __future__ import annotations

import math

import numpy as np

from headroom.domain import references as refs
from headroom.domain.advisor.context import Array, Context, mean, p95, percentile
from headroom.domain.advisor.finding import Finding, make_dedup_key
from headroom.domain.advisor.rule import Rule
from headroom.domain.advisor.rules._common import AT_CEILING_FRACTION, each_node, pct, pressure
from headroom.domain.advisor.rules._tikv_helpers import (
    ceiling_source,
    MIB,
    DataPath,
    ceiling_label,
    config_bool,
    config_bytes,
    correlation,
    data_path,
    evidence,
    finite,
    mib_floor,
    rate_words,
    size_text,
    tikv_change,
    utilisation_p95,
)
from headroom.domain.model import Change, Impact, Measure, ReferenceLine, SeriesRef
from headroom.domain.snapshot import metric_ids as mid
from headroom.domain.snapshot.schema import Node
from headroom.domain.units import format_quantity

RULE_ID = "compaction-rate-limit"
RATE_KEY = "rocksdb.rate-bytes-per-sec"
RATE_SOURCE = refs.TIKV_CONFIG.cite(RATE_KEY)
AUTO_KEY = "rocksdb.rate-limiter-auto-tuned"
SOFT_KEY = "storage.flow-control.soft-pending-compaction-bytes-limit"
# Template [storage.flow-control]: soft-pending-compaction-bytes-limit = "192GB" (the flow-control default).
SOFT_DEFAULT_BYTES = 192 * 1024**3

# docs/reference/pingcap-guidance.md#compaction-io (template comment on rate-bytes-per-sec): "50% ~ 80% of the disk throughput".
BAND_LOW = 0.50
BAND_HIGH = 0.80
# Headroom choice: compaction is "the bulk" of the volume's bytes when its reads + writes are half or more.
COMPACTION_SHARE = 0.50
# Headroom choice: "latency spikes that move with compaction" (the graph of compaction flow against write ops in
# PingCAP's AWS article, docs/reference/pingcap-guidance.md#compaction-io) = Pearson correlation >= 0.5 between compaction bytes/s and the volume's latency.
LATENCY_CORRELATION = 0.50
# Headroom choice: a limit 25% above compaction's mean need smooths bursts and still catches up between them.
NEED_MARGIN = 1.25


def limit_target(disk_mibps: float, mean_need_mibps: float) -> float | None:
    """Return the MiB/s a limiter should allow: 25% above the mean need, inside 50-80% of the disk; None if
    even 80% of the disk is below the mean need (a limit there would stall writes: template warning)."""
    if mean_need_mibps > BAND_HIGH * disk_mibps:
        return None
    return min(max(mean_need_mibps * NEED_MARGIN, BAND_LOW * disk_mibps), BAND_HIGH * disk_mibps)


def _series(ctx: Context, node: Node) -> dict[str, Array] | None:
    names = {
        "comp_w": mid.TIKV_COMPACTION_WRITE_BYTES,
        "comp_r": mid.TIKV_COMPACTION_READ_BYTES,
        "flush": mid.TIKV_FLUSH_WRITE_BYTES,
        "pending": mid.TIKV_PENDING_COMPACTION_BYTES,
    }
    out: dict[str, Array] = {}
    for short, metric in names.items():
        values = ctx.series("node", node.id, metric)
        if values is None:
            return None
        out[short] = values
    stall = ctx.series("node", node.id, mid.TIKV_WRITE_STALL)
    if stall is not None:
        out["stall"] = stall
    return out


def _refs(node: Node, path: DataPath, rate_mibps: float, disk_mibps: float) -> list[SeriesRef]:
    refs = [
        SeriesRef(
            entity_kind="node",
            entity_id=node.id,
            metric=mid.TIKV_COMPACTION_WRITE_BYTES,
            label="compaction writes",
            reference_lines=[ReferenceLine(value=rate_mibps * MIB, label=RATE_KEY, unit="bytes/s", kind="configured",
                                           source=RATE_SOURCE)],
        ),
        SeriesRef(
            entity_kind="node", entity_id=node.id, metric=mid.TIKV_FLUSH_WRITE_BYTES, label="flush writes"
        ),
        SeriesRef(entity_kind="node", entity_id=node.id, metric=mid.TIKV_PENDING_COMPACTION_BYTES),
        SeriesRef(entity_kind="node", entity_id=node.id, metric=mid.TIKV_WRITE_STALL),
    ]
    for vid in path.volume_ids:
        refs.append(
            SeriesRef(
                entity_kind="volume",
                entity_id=vid,
                metric="derived.mibps",
                reference_lines=[
                    ReferenceLine(value=disk_mibps, label="disk throughput ceiling", unit="MiB/s",
                                  source=ceiling_source(path, "mibps"))
                ],
            )
        )
        refs.append(SeriesRef(entity_kind="volume", entity_id=vid, metric="derived.write_latency_ms"))
    return refs


def _changes(ctx: Context, node: Node, target_bytes: int, reason: str) -> list[Change]:
    changes = [tikv_change(ctx, node, RATE_KEY, size_text(target_bytes), reason)]
    if config_bool(ctx, node, AUTO_KEY) is not True:
        changes.append(
            tikv_change(
                ctx,
                node,
                AUTO_KEY,
                True,
                f"auto-tune between 10 MB/s and {rate_words(target_bytes)} as the write load moves (PingCAP, TiKV configuration file)",
            )
        )
    return changes


def _finding(ctx: Context, node: Node) -> Finding | None:
    rate = config_bytes(ctx, node, RATE_KEY)
    path = data_path(ctx, node)
    s = _series(ctx, node)
    if rate is None or path is None or s is None:
        return None
    disk_mibps = float(np.nanmedian(path.mibps_ceiling))
    if not math.isfinite(disk_mibps) or disk_mibps <= 0:
        return None
    rate_mibps = rate / MIB
    entity = ctx.entity_for_node(node.id)
    flow_mibps = (s["comp_w"] + s["flush"]) / MIB  # what the limiter meters (writes of flush + compaction)
    mibps_p = pressure(path.mibps_util, 1.0, ctx.step_seconds, AT_CEILING_FRACTION)
    soft = config_bytes(ctx, node, SOFT_KEY) or SOFT_DEFAULT_BYTES
    disk_label = ceiling_label(path, ctx, "mibps")

    # --- raise: the limiter itself starves compaction ---
    limiter_p = pressure(flow_mibps, rate_mibps, ctx.step_seconds, AT_CEILING_FRACTION)
    # (the backlog is measured only when the other two conditions hold)
    pending_p = (
        pressure(s["pending"], float(soft), ctx.step_seconds, 1.0)
        if limiter_p.sustained and not mibps_p.sustained
        else None
    )
    if limiter_p.sustained and pending_p is not None and pending_p.sustained and not mibps_p.sustained:
        target = mib_floor(BAND_HIGH * disk_mibps * MIB)
        if target <= rate:
            return None
        stall_p95 = p95(s["stall"]) if "stall" in s else float("nan")
        reason = (
            f"the limiter allows {rate_words(rate)} and compaction falls behind while the disk has "
            f"{format_quantity(disk_mibps, 'MiB/s')}: 80% of the disk (template: 50%-80%)"
        )
        return Finding(
            rule=RULE_ID,
            severity="critical" if math.isfinite(stall_p95) and stall_p95 > 0 else "warning",
            entity=entity,
            title=(
                f"{node.id}: {RATE_KEY} at {rate_words(rate)} throttles compaction: pending bytes above the "
                f"{format_quantity(soft / 1024**3, 'GiB')} soft limit {pct(pending_p.share)} of the time, disk at "
                f"{pct(p95(path.mibps_util))}: raise it to {rate_words(target)}"
            ),
            evidence=evidence(
                ctx,
                f"flush + compaction writes >= {pct(AT_CEILING_FRACTION)} of {RATE_KEY} and pending compaction "
                f"bytes >= {SOFT_KEY}, each for >= 30 min or 5% of the window; disk below "
                f"{pct(AT_CEILING_FRACTION)} of its MiB/s ceiling",
                [
                    Measure(
                        label="flush + compaction writes p95",
                        value=finite(p95(flow_mibps)),
                        unit="MiB/s",
                        limit=rate_mibps,
                        limit_label=RATE_KEY,
                        statistic="p95",
                    ),
                    Measure(
                        label="pending compaction bytes p95",
                        value=finite(p95(s["pending"]) / 1024**3),
                        unit="GiB",
                        limit=soft / 1024**3,
                        limit_label=SOFT_KEY,
                        statistic="p95",
                        source=refs.TIKV_CONFIG_TEMPLATE.cite("[storage.flow-control]"),
                    ),
                    utilisation_p95("disk MiB/s", p95(path.mibps_util), limit_label=disk_label),
                    Measure(
                        label="disk throughput ceiling",
                        value=disk_mibps,
                        unit="MiB/s",
                        limit_label=disk_label,
                    ),
                    Measure(
                        label="write stall p95", value=finite(stall_p95), unit="microseconds", statistic="p95"
                    ),
                ],
                _refs(node, path, rate_mibps, disk_mibps),
                share=pending_p.share,
                longest_run_minutes=pending_p.longest_run_minutes,
                episodes=pending_p.episodes,
            ),
            why=(
                "rocksdb.rate-bytes-per-sec caps flush and compaction writes. Set below what compaction needs, "
                "the backlog (pending compaction bytes) grows past storage.flow-control's soft limit and TiKV "
                "throttles foreground writes: the template warns that 'in heavy write workload, limiting "
                "compaction and flush speed can cause write stalls too' (TiKV config template). The disk is not the "
                "constraint here, so the limit can rise to 80% of its throughput, the top of the template's "
                "50%-80% band."
            ),
            changes=_changes(ctx, node, target, reason),
            impact=Impact(
                summary=(
                    f"compaction may write {format_quantity(target / MIB, 'MiB/s')} instead of {format_quantity(rate_mibps, 'MiB/s')}: the backlog "
                    "drains and flow control stops throttling writes"
                ),
                metric="rate limit, MiB/s",
                unit="MiB/s",
                before=rate_mibps,
                after=target / MIB,
                monthly_cost_delta_usd=0.0,
            ),
            confidence=0.8,
            dedup_key=make_dedup_key(RULE_ID, ctx.cluster_key, entity, "raise"),
            sources=[refs.TIKV_CONFIG_TEMPLATE.cite('Compaction I/O'), refs.TIKV_CONFIG.cite('rocksdb.rate-bytes-per-sec'), refs.headroom_threshold("compaction.md")],
        )

    # --- limit: compaction competes with foreground I/O at the disk's throughput ceiling ---
    if not mibps_p.sustained or rate_mibps <= BAND_HIGH * disk_mibps:
        return None
    comp_mibps = (s["comp_w"] + s["comp_r"]) / MIB
    with np.errstate(invalid="ignore", divide="ignore"):
        share_series = np.where(path.mibps > 0, comp_mibps / path.mibps, np.nan)
    sel = share_series[mibps_p.mask]
    sel = sel[np.isfinite(sel)]
    comp_share = float(np.median(sel)) if sel.size else float("nan")
    latency = np.fmax(path.read_latency_ms, path.write_latency_ms)
    corr = correlation(comp_mibps, latency)
    if not (comp_share >= COMPACTION_SHARE and corr >= LATENCY_CORRELATION):
        return None
    mean_need = mean(flow_mibps)
    target_mibps = limit_target(disk_mibps, mean_need)
    if target_mibps is None:
        return None  # compaction needs more than 80% of the disk on average: a limit would stall writes
    target = mib_floor(target_mibps * MIB)
    reason = (
        f"{format_quantity(target / MIB, 'MiB/s')} = {pct(target / MIB / disk_mibps)} of the {format_quantity(disk_mibps, 'MiB/s')} disk "
        f"(template: 50%-80%), {pct(target / MIB / mean_need - 1) if mean_need > 0 else 'well'} above "
        "compaction's mean need so the backlog still drains"
    )
    lat_p50, lat_p99 = percentile(latency, 50), percentile(latency, 99)
    return Finding(
        rule=RULE_ID,
        severity="warning",
        entity=entity,
        title=(
            f"{node.id}: compaction is {pct(comp_share)} of the data volume's bytes at its MiB/s ceiling and "
            f"latency moves with it: set {RATE_KEY} to {rate_words(target)}"
        ),
        evidence=evidence(
            ctx,
            f"MiB/s >= {pct(AT_CEILING_FRACTION)} of the ceiling for >= 30 min or 5% of the window, compaction >= "
            f"{pct(COMPACTION_SHARE)} of the bytes, correlation(compaction, latency) >= {LATENCY_CORRELATION}",
            [
                utilisation_p95("disk MiB/s", p95(path.mibps_util), limit_label=disk_label),
                Measure(
                    label="compaction share of the volume's bytes at the ceiling",
                    value=finite(comp_share),
                    unit="ratio",
                    limit=COMPACTION_SHARE,
                    statistic="median",
                ),
                Measure(
                    label="correlation of compaction bytes/s with latency",
                    value=finite(corr),
                    unit="r",
                    limit=LATENCY_CORRELATION,
                    statistic="pearson",
                ),
                Measure(label="latency p50", value=finite(lat_p50), unit="ms", statistic="p50"),
                Measure(label="latency p99", value=finite(lat_p99), unit="ms", statistic="p99"),
                Measure(
                    label="flush + compaction writes, mean",
                    value=finite(mean_need),
                    unit="MiB/s",
                    statistic="mean",
                ),
                Measure(
                    label=RATE_KEY,
                    value=rate_mibps,
                    unit="MiB/s",
                    limit=BAND_HIGH * disk_mibps,
                    limit_label="80% of the disk: above it the limiter never binds",
                    statistic="config",
                ),
            ],
            _refs(node, path, rate_mibps, disk_mibps),
            share=mibps_p.share,
            longest_run_minutes=mibps_p.longest_run_minutes,
            episodes=mibps_p.episodes,
            threshold_pct=100 * AT_CEILING_FRACTION,
            corroboration=[f"latency p99 {format_quantity(lat_p99, 'ms')} vs p50 {format_quantity(lat_p50, 'ms')}"],
        ),
        why=(
            "EBS latency grows with throughput well before the throughput limit, and at the limit every "
            "foreground read and Raft write queues behind compaction's 256 KiB I/Os (PingCAP, Best Practices for TiDB on AWS Cloud, 'I/O rate "
            "limiting': foreground write ops fall as compaction flow rises). The limiter is effectively off "
            f"({rate_words(rate)}), so compaction bursts take the whole disk. PingCAP recommends a moderately low "
            "rocksdb.rate-bytes-per-sec, 50%-80% of the disk throughput (TiKV config template), with the "
            "auto-tuned limiter (default since 5.0) adapting inside it."
        ),
        changes=_changes(ctx, node, target, reason),
        impact=Impact(
            summary=(
                f"flush + compaction writes capped at {format_quantity(target / MIB, 'MiB/s')} of the {format_quantity(disk_mibps, 'MiB/s')} disk: "
                "bursts no longer take the whole volume from foreground I/O"
            ),
            metric="rate limit, MiB/s",
            unit="MiB/s",
            before=rate_mibps,
            after=target / MIB,
            monthly_cost_delta_usd=0.0,
        ),
        confidence=0.6,
        dedup_key=make_dedup_key(RULE_ID, ctx.cluster_key, entity, "limit"),
        sources=[refs.TIKV_CONFIG_TEMPLATE.cite('Compaction I/O'), refs.PINGCAP_AWS.cite('I/O rate limiting'), refs.TIKV_CONFIG.cite(), refs.headroom_threshold("compaction.md")],
    )


def evaluate(ctx: Context) -> list[Finding]:
    """Return at most one compaction-rate-limit finding per node."""
    return each_node(ctx, _finding)


RULES = (
    Rule(
        id=RULE_ID,
        family="tikv",
        description=(
            "rocksdb.rate-bytes-per-sec inside 50-80% of the disk throughput: cap compaction that competes with "
            "foreground I/O at the ceiling, or raise a limit that starves compaction into write stalls."
        ),
        evaluate=evaluate,
        tikv_keys=(RATE_KEY, AUTO_KEY),
        sources=(refs.TIKV_CONFIG_TEMPLATE.cite('Compaction I/O'), refs.PINGCAP_AWS.cite('I/O rate limiting')),
    ),
)
