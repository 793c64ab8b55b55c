"""Rule family: a dedicated EBS volume for the Raft log (`raft-dedicated-volume`).

PingCAP's public-cloud best practice (docs/reference/pingcap-guidance.md#raft-engine-disk): giving Raft Engine its own disk is "crucial" for performance
and stability on the cloud; a dedicated 20 GB gp3 (3,000 IOPS / 125 MB/s free) for a write-heavy social app
gave +17.5% QPS and -45.6% p99 insert latency for 0.4% more cost; io2 when lower latency is needed. PingCAP's AWS article:
"a separate Raft volume reduces write latency on the critical path", 40 GB io1 at 2K IOPS for the best
stability. The Raft log is fsync-bound: every synced batch waits for `fdatasync()` (same page), so on a shared
data volume each fsync queues behind compaction and reads.

Fires for a node whose raft log shares its data volume(s) (no raft volume in the inventory) when the raft-log
fsync p99 stays slow; proposes an AWS change (create and attach a small gp3, io2 as the second option) plus the
tikv.toml directory key: `raft-engine.dir`, or `raftstore.raftdb-path` when Raft Engine is off (docs/reference/tikv-config.md#keys-and-defaults).
The mount point (`<storage.data-dir>-raft`) and the Raft directory now and on the new volume come from the node's
config; where it does not say, the spec leaves them None and the AWS script asks for them
(docs/reference/new-volumes.md#the-raft-directory-and-the-mount-point).
"""

from __future__ import annotations

import math

import numpy as np

from headroom.domain import references as refs
from headroom.domain.advisor.context import Array, Context, p95, percentile
from headroom.domain.advisor.finding import Finding, make_dedup_key
from headroom.domain.advisor.rule import Rule
from headroom.domain.advisor.rules._common import each_node, median_where, pct, pressure
from headroom.domain.advisor.rules._tikv_helpers import MIB, config_bool, evidence, finite, tikv_change
from headroom.domain.catalog import CatalogError, ebs_monthly_cost
from headroom.domain.model import Change, Impact, Measure, Option, ReferenceLine, SeriesRef
from headroom.domain.physics.io import SSD_CHUNK_KIB
from headroom.domain.snapshot import metric_ids as mid
from headroom.domain.snapshot.schema import Node
from headroom.domain.units import format_quantity, format_usd_change

RULE_ID = "raft-dedicated-volume"
RAFT_ENGINE_DIR = "raft-engine.dir"
RAFTDB_PATH = "raftstore.raftdb-path"
# Headroom choice: AWS promises "single-digit millisecond" latency for gp2/gp3; a raft-log fsync whose p99 sits at
# 5 ms or more is in the upper half of that range, i.e. queued behind other I/O on the shared volume.
FSYNC_P99_SLOW_S = 0.005
# Headroom choice: "fsync-heavy" = the raft log issues at least 200 writes/s on the shared volume, about a third
# of the 571 fsync/s PingCAP's iostat shows (docs/reference/pingcap-guidance.md#raft-engine-disk) on a write-heavy node's Raft Engine disk.
FSYNC_HEAVY_PER_S = 200.0
# docs/reference/pingcap-guidance.md#raft-engine-disk: "gp3 ... 3000 IOPS and 125 MB/s free ... usually enough for Raft Engine"; 20 GB in their example.
GP3_SIZE_GIB = 20.0
GP3_IOPS = 3000
GP3_MIBPS = 125.0
# docs/reference/pingcap-guidance.md#raft-engine-disk: "for the best system stability ... a 40 GB io1 provisioned
# with 2 K IOPS" (the AWS article); the public-cloud page names io2 for lower latency on AWS.
IO2_SIZE_GIB = 40.0
IO2_IOPS = 2000
# Where the new volume is mounted when the node's config does not give storage.data-dir (the AWS script then asks
# for the mount point instead of assuming it: spec "mount" is None). With a data-dir, the mount is next to it,
# `<data-dir>-raft`, one per TiKV (two TiKVs on one host get two).
MOUNT = "/raft/tikv"
# The directory each key defaults to when empty (docs/reference/tikv-config.md#keys-and-defaults).
_DEFAULT_SUBDIR = {"raft-engine.dir": "raft-engine", "raftstore.raftdb-path": "raft"}


def volume_cost(vtype: str, size_gib: float, iops: float | None, mibps: float | None, region: str) -> float:
    """Return the monthly USD cost of a volume from the catalog (NaN when the catalog has no price)."""
    try:
        return ebs_monthly_cost(vtype, size_gib, iops, mibps, region=region).total_usd
    except CatalogError:
        return float("nan")


def raft_write_rate(ctx: Context, node: Node) -> Array | None:
    """Estimate the Raft log's writes/s on the shared data volume(s): volume write ops minus the 256 KiB I/Os
    of flush and compaction writes (EBS merges them up to 256 KiB, docs/reference/ebs-io-accounting.md#io-size-cap); None without the series."""
    flush = ctx.series("node", node.id, mid.TIKV_FLUSH_WRITE_BYTES)
    comp = ctx.series("node", node.id, mid.TIKV_COMPACTION_WRITE_BYTES)
    views = [ctx.volume_io(v) for v in node.data_volume_ids]
    if flush is None or comp is None or not views or any(v is None for v in views):
        return None
    writes = np.sum(np.vstack([v.write_iops for v in views if v is not None]), axis=0)
    if len(writes) != len(flush) or len(flush) != len(comp):
        return None
    out: Array = np.maximum(writes - (flush + comp) / (SSD_CHUNK_KIB * 1024), 0.0)
    return out


def _absolute(value: object) -> str | None:
    return value.rstrip("/") or "/" if isinstance(value, str) and value.startswith("/") else None


def raft_paths(ctx: Context, node: Node, key: str) -> tuple[str | None, str | None, str]:
    """Return (mount point of the new volume, the Raft directory now, the Raft directory on the new volume), read
    from the node's config: `storage.data-dir` and the key's own value (empty: `{data-dir}/raft-engine` or
    `{data-dir}/raft`, docs/reference/tikv-config.md#keys-and-defaults). None where the config does not say; the
    new directory then falls back to MOUNT and the AWS script makes the user set the mount point."""
    data = ctx.config(node.id, "storage.data-dir")
    data_dir = _absolute(data.value) if data.origin == "config" else None
    configured = ctx.config(node.id, key)
    now = _absolute(configured.value) if configured.origin == "config" else None
    if now is None and data_dir is not None and configured.value in ("", None):
        now = f"{data_dir.rstrip('/')}/{_DEFAULT_SUBDIR[key]}"
    mount = f"{data_dir.rstrip('/')}-raft" if data_dir not in (None, "/") else None
    subdir = "raftdb" if key == RAFTDB_PATH else "raft-engine"
    return mount, now, f"{mount or MOUNT}/{subdir}"


def _create(
    node: Node, ctx: Context, vtype: str, size: float, iops: int, mibps: float | None, key: str
) -> Change:
    inst = ctx.instance(node.instance_id)
    mount, now, target_dir = raft_paths(ctx, node, key)
    spec: dict[str, object] = {
        "type": vtype,
        "size_gib": size,
        "iops": iops,
        "role": "raft",
        "attach_to": node.instance_id,
        "node": node.id,
        "mount": mount,  # None: not known from the config; the AWS script asks for it
        "raft_key": key,
        "raft_dir": target_dir,
        "raft_dir_now": now,  # None: not known from the config; the AWS script asks for it
    }
    if mibps is not None:
        spec["throughput_mibps"] = mibps
    if inst.availability_zone:
        spec["availability_zone"] = inst.availability_zone
    return Change(
        target="aws",
        key="volume.create",
        current=None,
        proposed=spec,
        online=True,  # creating and attaching an EBS volume does not stop the instance
        reason=(
            f"a dedicated {format_quantity(size, 'GiB')} {vtype} for {node.id}'s Raft log, attached to {node.instance_id} "
            f"({inst.availability_zone or 'same AZ'}) and mounted at {mount or '<a mount point you choose>'}"
        ),
        entity=ctx.entity_for_instance(node.instance_id),
    )


def _finding(ctx: Context, node: Node) -> Finding | None:
    if node.raft_volume_ids or not node.data_volume_ids:
        return None
    fsync = ctx.series("node", node.id, mid.TIKV_RAFT_LOG_FSYNC)
    if fsync is None:
        return None
    slow = pressure(fsync, FSYNC_P99_SLOW_S, ctx.step_seconds, 1.0)
    if not slow.sustained:
        return None
    raft_writes = raft_write_rate(ctx, node)
    if raft_writes is None:
        return None
    heavy = median_where(raft_writes, slow.mask)
    if heavy is None or heavy < FSYNC_HEAVY_PER_S:
        return None
    engine_on = config_bool(ctx, node, "raft-engine.enable")
    key = RAFTDB_PATH if engine_on is False else RAFT_ENGINE_DIR
    target_dir = raft_paths(ctx, node, key)[2]
    entity = ctx.entity_for_node(node.id)
    region = ctx.cluster.region
    gp3_cost = volume_cost("gp3", GP3_SIZE_GIB, GP3_IOPS, GP3_MIBPS, region)
    io2_cost = volume_cost("io2", IO2_SIZE_GIB, IO2_IOPS, None, region)
    dir_reason = (
        f"point {'raftdb' if key == RAFTDB_PATH else 'Raft Engine'} at the new volume; not online: stop "
        f"{node.id}, copy the existing {'raftdb' if key == RAFTDB_PATH else 'raft-engine'} directory to "
        f"{target_dir}, then start it (PingCAP, TiKV configuration file: this section cannot change online)"
    )
    gp3_changes = [
        _create(node, ctx, "gp3", GP3_SIZE_GIB, GP3_IOPS, GP3_MIBPS, key),
        tikv_change(ctx, node, key, target_dir, dir_reason),
    ]
    io2_changes = [
        _create(node, ctx, "io2", IO2_SIZE_GIB, IO2_IOPS, None, key),
        tikv_change(ctx, node, key, target_dir, dir_reason),
    ]
    fsync_p50, fsync_p95 = percentile(fsync, 50), p95(fsync)
    writer_wait = ctx.series("node", node.id, mid.TIKV_WAIT_STORE_WRITE)
    propose_wait = ctx.series("node", node.id, mid.TIKV_WAIT_PROPOSE)
    flush = ctx.series("node", node.id, mid.TIKV_FLUSH_WRITE_BYTES)
    raft_mibps = p95(flush) / MIB if flush is not None else float("nan")
    corroboration = []
    if writer_wait is not None:
        corroboration.append(f"StoreWriter wait p99 at its window p95: {format_quantity(p95(writer_wait) * 1000, 'ms')}")
    if propose_wait is not None:
        corroboration.append(
            f"propose wait p99 at its window p95: {format_quantity(p95(propose_wait) * 1000, 'ms')} (PingCAP, Best Practices for Tuning Massive Regions: < 50-100 ms)"
        )
    if math.isfinite(raft_mibps):
        corroboration.append(
            f"raft log write rate ~ user writes (flush) p95 {format_quantity(raft_mibps, 'MiB/s')}, vs the gp3's free 125 MiB/s"
        )
    vols = [ctx.volume(v) for v in node.data_volume_ids]
    write_lat = [ctx.volume_io(v.id) for v in vols]
    lat = [percentile(w.write_latency_ms, 95) for w in write_lat if w is not None]
    measures = [
        Measure(
            label="raft-log fsync p99 (window p50)",
            value=fsync_p50 * 1000,
            unit="ms",
            limit=FSYNC_P99_SLOW_S * 1000,
            limit_label="slow at >= 5 ms (Headroom choice; AWS: single-digit ms for gp3)",
            statistic="p50",
        ),
        Measure(
            label="raft-log fsync p99 (window p95)",
            value=finite(fsync_p95 * 1000),
            unit="ms",
            statistic="p95",
        ),
        Measure(
            label="share of the window with slow fsync", value=slow.share, unit="ratio", statistic="share"
        ),
        Measure(
            label="raft-log writes on the data volume while slow (estimate)",
            value=heavy,
            unit="writes/s",
            limit=FSYNC_HEAVY_PER_S,
            limit_label="fsync-heavy at >= 200/s (Headroom choice; PingCAP, TiDB Best Practices on Public Cloud shows 571 f/s)",
            statistic="median",
        ),
    ]
    if lat:
        measures.append(
            Measure(
                label="data volume write latency p95",
                value=finite(float(np.nanmax(lat))),
                unit="ms",
                statistic="p95",
            )
        )
    gp3_impact = Impact(
        summary=(
            f"the Raft log stops queueing behind compaction and reads on the data volume; PingCAP measured "
            f"+17.5% QPS and -45.6% p99 insert latency with a 20 GB gp3 (PingCAP, TiDB Best Practices on Public Cloud); {format_usd_change(gp3_cost)}/month"
        ),
        metric="raft-log fsync p99",
        unit="ms",
        before=finite(fsync_p95 * 1000),
        monthly_cost_before_usd=0.0,
        monthly_cost_after_usd=finite(gp3_cost),
        monthly_cost_delta_usd=finite(gp3_cost),
    )
    io2_impact = Impact(
        summary=f"lowest, steadiest fsync latency (PingCAP's AWS and public-cloud best practices: io1/io2 for strict latency); {format_usd_change(io2_cost)}/month",
        metric="raft-log fsync p99",
        unit="ms",
        before=finite(fsync_p95 * 1000),
        monthly_cost_before_usd=0.0,
        monthly_cost_after_usd=finite(io2_cost),
        monthly_cost_delta_usd=finite(io2_cost),
    )
    return Finding(
        rule=RULE_ID,
        severity="warning",
        entity=entity,
        title=(
            f"{node.id}: Raft log shares the data volume and its fsync p99 is {format_quantity(fsync_p50 * 1000, 'ms')} "
            f"(>= 5 ms {pct(slow.share)} of the time): give it a dedicated {format_quantity(GP3_SIZE_GIB, 'GiB')} gp3 "
            f"({format_usd_change(gp3_cost)}/month)"
        ),
        evidence=evidence(
            ctx,
            "no raft volume (Raft log on the data volume), raft-log fsync p99 >= 5 ms for >= 30 min or 5% "
            "of the window, >= 200 raft-log writes/s meanwhile",
            measures,
            [
                SeriesRef(
                    entity_kind="node",
                    entity_id=node.id,
                    metric=mid.TIKV_RAFT_LOG_FSYNC,
                    label="raft-log fsync p99",
                    reference_lines=[ReferenceLine(value=FSYNC_P99_SLOW_S, label="5 ms", unit="seconds",
                                                   source=refs.headroom_threshold("raft.md", "a slow raft-log fsync"))],
                ),
                SeriesRef(entity_kind="node", entity_id=node.id, metric=mid.TIKV_WAIT_STORE_WRITE),
                SeriesRef(entity_kind="node", entity_id=node.id, metric=mid.TIKV_WAIT_PROPOSE),
            ]
            + [
                SeriesRef(entity_kind="volume", entity_id=v.id, metric="derived.write_latency_ms")
                for v in vols
            ],
            share=slow.share,
            longest_run_minutes=slow.longest_run_minutes,
            episodes=slow.episodes,
            corroboration=corroboration,
        ),
        why=(
            "TiKV's Raft log is its write-ahead log: every synced write batch waits for fdatasync() before the "
            "write is acknowledged (PingCAP, TiDB Best Practices on Public Cloud). On a volume shared with KV RocksDB, those small fsyncs queue "
            "behind compaction's 256 KiB I/Os and reads, which puts the data volume's load on the critical write "
            "path. PingCAP recommends a dedicated disk for Raft Engine on public clouds (PingCAP, TiDB Best Practices on Public Cloud; PingCAP, Best Practices for TiDB on AWS Cloud "
            "'Raft volume'): on AWS a small gp3, whose free 3,000 IOPS and 125 MB/s are usually enough, or io2 "
            "for lower latency."
        ),
        changes=gp3_changes,
        options=[
            Option(
                label=f"gp3 {format_quantity(GP3_SIZE_GIB, 'GiB')} (3,000 IOPS, 125 MiB/s free)",
                changes=gp3_changes,
                impact=gp3_impact,
            ),
            Option(
                label=f"io2 {format_quantity(IO2_SIZE_GIB, 'GiB')} at {format_quantity(IO2_IOPS, 'IOPS')} (strict latency)",
                changes=io2_changes,
                impact=io2_impact,
                notes=[refs.PINGCAP_AWS.cite("'a 40 GB io1 provisioned with 2 K IOPS' for the best stability")],
            ),
        ],
        impact=gp3_impact,
        confidence=0.7,
        dedup_key=make_dedup_key(RULE_ID, ctx.cluster_key, entity),
        sources=[
            refs.PINGCAP_PUBLIC_CLOUD.cite('dedicated Raft Engine disk'),
            refs.PINGCAP_AWS.cite('Raft volume'),
            refs.TIKV_CONFIG.cite('raft-engine.dir, raftstore.raftdb-path'),
            refs.EBS_PRICING.cite('gp3 / io2 prices'),
            refs.headroom_threshold("raft.md"),
        ],
        notes=[
            "the AWS patch creates and attaches the volume (create-volume + attach-volume, or Terraform); "
            "making the file system and mounting it on the host stay manual steps"
        ],
    )


def evaluate(ctx: Context) -> list[Finding]:
    """Return one finding per node whose slow Raft log shares the data volume."""
    return each_node(ctx, _finding)


RULES = (
    Rule(
        id=RULE_ID,
        family="tikv",
        description=(
            "Raft log on the data volume with slow fsyncs: add a dedicated 20 GiB gp3 (or io2) and point "
            "raft-engine.dir (or raftstore.raftdb-path) at it (PingCAP's TiDB Best Practices on Public Cloud)."
        ),
        evaluate=evaluate,
        tikv_keys=(RAFT_ENGINE_DIR, RAFTDB_PATH),
        aws_actions=("volume.create",),
        sources=(refs.PINGCAP_PUBLIC_CLOUD.cite(), refs.PINGCAP_AWS.cite('Raft volume'), refs.TIKV_CONFIG.cite()),
    ),
)
