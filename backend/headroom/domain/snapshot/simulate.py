"""Deterministic fleet simulator: a scenario (see `headroom.domain.snapshot.scenario`) -> a cluster snapshot.

Pure: the window start and the seed are parameters; the same inputs give the same snapshot. The model, in
order (docs/snapshot.md has the formulas and where each assumption comes from):

1. Demand per node and minute: the workload's daily means × diurnal cosine × weekly growth × spikes ×
   noise.
2. Memory: block cache = `storage.block-cache.capacity`; what the host has left after every TiKV's block
   cache and overhead is page cache, which holds compressed blocks. Hit ratio
   h(x) = 0.99 (1 − e^(−k x)) / (1 − e^(−k)) for the fraction x of the working set that fits (block cache
   / working set for the block cache; (block cache + page cache × compression ratio) / working set for
   "served from memory"); misses become disk reads of one block (`rocksdb.defaultcf.block-size`).
3. Writes: the raft log (fsyncs, small writes) goes to the raft volume if there is one, else to the data
   volume; flush + compaction write `write_amplification` bytes per user byte (less with Titan for values
   at or above `min-blob-size`), read as much as they write, in 256 KiB I/Os, limited by
   `rocksdb.rate-bytes-per-sec`; the backlog is pending compaction bytes, worked off at the limit.
4. Physics, minute by minute per host: each volume serves its demand up to its IOPS ceiling (counted in
   256 KiB / 1 MiB chunks, `headroom.domain.physics.io`) and its throughput ceiling; gp2/st1/sc1 ceilings follow
   their credit buckets, and the instance's total follows its EBS limits and burst buckets
   (`headroom.domain.physics.burst`); a RAID 0 array runs at its slowest stripe. Demand above a ceiling is clipped.
5. Latency and queue: base latency by type + transfer time + a queueing term that rises steeply near the
   ceiling + a throttling penalty of at least 10 ms at an IOPS or instance ceiling; queue length by
   Little's law.
6. TiKV threads: CPU = work × cost per op, capped at pool size × 100%; read-pool threads also wait for
   disk reads; waits rise steeply as a pool nears saturation.
"""

from __future__ import annotations

import hashlib
import math
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from headroom.domain import derived
from headroom.domain.catalog import InstanceLimits, VolumeLimits, instance_limits, volume_limits
from headroom.domain.physics.burst import CreditBucket, InstanceEbsBucket, volume_bucket
from headroom.domain.snapshot import metric_ids as mid
from headroom.domain.snapshot.errors import ScenarioError
from headroom.domain.snapshot.registry import REGISTRY
from headroom.domain.physics.io import SSD_CHUNK_KIB
from headroom.domain.snapshot.lookback import peak_over
from headroom.domain.snapshot.scenario import (
    Monitoring,
    Scenario,
    ScenarioLookback,
    VolumeSpec,
    Workload,
    load_scenario,
    node_workload,
)
from headroom.domain.snapshot.schema import (
    SCHEMA_VERSION,
    Cluster,
    Entity,
    EntityKind,
    Instance,
    Lookback,
    Node,
    Series,
    Snapshot,
    Source,
    Volume,
    Window,
    config_get,
    config_set,
)
from headroom.domain.snapshot.tikv_defaults import default_config, flatten
from headroom.domain.snapshot.views import IO_METRICS, aligned, find_series
from headroom.domain.units import parse_size

Array = NDArray[np.float64]

MIB = 1024.0 * 1024.0
KIB = 1024.0
GIB = 1024.0**3
HIT_MAX = 0.99  # a working set never fits entirely: 1% of reads stay cold
TIKV_OVERHEAD_GIB = 2.5  # memtables, raft-engine memory, allocator slack per TiKV (assumption)
OS_RESERVED_GIB = 1.0
# The data filesystem: ext4's metadata (inode tables, journal) takes ~1.5 % of a large volume (assumption of the
# simulator, in the range mkfs.ext4's defaults give), and the raft log takes a few GiB where it shares the disk.
FS_OVERHEAD = 0.015
RAFT_LOG_ON_DATA_GIB = 4.0
COMPACTION_DRAIN_SECONDS = 300.0  # backlog worked off over ~5 min when the limiter allows ...
DRAIN_MIBPS_PER_JOB = 8.0  # ... but at most 8 MiB/s more per rocksdb.max-background-jobs (assumption)
RAFT_LOG_IO_KIB_MIN = 4.0
FSYNC_P99_FACTOR = 2.5  # p99 / mean for fsync latency (assumption)
SOFT_PENDING_KEY = "storage.flow-control.soft-pending-compaction-bytes-limit"
HARD_PENDING_KEY = "storage.flow-control.hard-pending-compaction-bytes-limit"
# Base service time (ms) of an idle volume by type: gp2/gp3 "single-digit ms", io2 Block Express "sub-ms",
# HDD several ms (AWS volume-type pages); the split below is an assumption.
BASE_LATENCY_MS: dict[str, tuple[float, float]] = {
    "gp2": (0.6, 1.0),
    "gp3": (0.5, 0.9),
    "io1": (0.4, 0.7),
    "io2": (0.25, 0.5),
    "st1": (4.0, 2.0),
    "sc1": (8.0, 4.0),
}
# PingCAP, "Best Practices for TiDB on AWS Cloud" (docs/reference/pingcap-guidance.md#ebs-latency-at-the-limits): at the
# IOPS limit "latency experiences a dramatic penalty, often more than 10 ms"
THROTTLE_MS = 10.0


# ----------------------------------------------------------------------------------------------------
# Inventory


@dataclass
class _VolumePlan:
    id: str
    spec: VolumeSpec
    limits: VolumeLimits
    node_id: str
    instance_id: str
    device: str
    raid_group: str | None
    stripes: int
    bucket: CreditBucket | None


@dataclass
class _NodePlan:
    id: str
    index: int
    group_index: int
    host: str
    instance_id: str
    instance_type: str
    vcpus: int
    memory_gib: float
    version: str
    address: str
    status_address: str
    config: dict[str, object]
    workload: Workload
    data_volumes: list[_VolumePlan] = field(default_factory=list)
    raft_volumes: list[_VolumePlan] = field(default_factory=list)
    other_volumes: list[_VolumePlan] = field(default_factory=list)


@dataclass
class _HostPlan:
    key: str
    instance_id: str
    limits: InstanceLimits
    ebs_balance_percent: float
    nodes: list[_NodePlan] = field(default_factory=list)

    @property
    def volumes(self) -> list[_VolumePlan]:
        return [v for n in self.nodes for v in (*n.data_volumes, *n.raft_volumes, *n.other_volumes)]


def _fake_id(prefix: str, *parts: str) -> str:
    digest = hashlib.sha256("/".join(parts).encode()).hexdigest()
    return f"{prefix}-0{digest[:16]}"


def volume_specs(scenario: Scenario) -> dict[str, VolumeSpec]:
    """Each simulated volume's spec (its node group's), by volume id: what a `modified` spec of `simulate` replaces."""
    return {v.id: v.spec for host in _plan(scenario) for v in host.volumes}


def _plan(scenario: Scenario, modified: Mapping[str, VolumeSpec] | None = None) -> list[_HostPlan]:
    """The fleet's hosts, nodes and volumes; a volume `modified` names (by id) has that spec instead of its group's."""
    modified = modified or {}
    cluster = scenario.cluster.name
    hosts: list[_HostPlan] = []
    node_index = 0
    for gi, group in enumerate(scenario.nodes):
        limits = instance_limits(group.instance_type)
        assert limits.vcpus and limits.memory_gib  # checked by the scenario validator
        workload = node_workload(scenario, gi)
        version = group.tikv_version or scenario.cluster.tikv_version
        names = group.node_names
        for start in range(0, len(names), group.tikv_per_host):
            host_names = names[start : start + group.tikv_per_host]
            host_key = (
                f"{group.name}-host-{start // group.tikv_per_host + 1}"
                if group.tikv_per_host > 1
                else names[start]
            )
            instance_id = _fake_id("i", cluster, host_key)
            host = _HostPlan(host_key, instance_id, limits, group.ebs_balance_percent)
            ip = f"10.0.{1 + len(hosts) // 200}.{10 + len(hosts) % 200}"
            device_no = 1
            for slot, name in enumerate(host_names):
                config = default_config(version, limits.vcpus, limits.memory_gib)
                for key, value in flatten(group.config).items():
                    config = config_set(config, key, value)
                node = _NodePlan(
                    id=name,
                    index=node_index,
                    group_index=gi,
                    host=host_key,
                    instance_id=instance_id,
                    instance_type=group.instance_type,
                    vcpus=limits.vcpus,
                    memory_gib=limits.memory_gib,
                    version=version,
                    address=f"{ip}:{20160 + slot}",
                    status_address=f"{ip}:{20180 + slot}",
                    config=config,
                    workload=workload,
                )
                node_index += 1
                for vi, vspec in enumerate(group.volumes):
                    stripes = vspec.raid0.stripes if vspec.raid0 else 1
                    raid = f"md{slot * 2 + (0 if vspec.role == 'data' else 1)}" if vspec.raid0 else None
                    vlimits = volume_limits(
                        vspec.type,
                        vspec.size_gib,
                        vspec.iops,
                        vspec.throughput_mibps,
                        region=scenario.cluster.region,
                    )
                    for s in range(stripes):
                        vid = _fake_id("vol", cluster, name, str(vi), str(s))
                        spec, slimits = vspec, vlimits
                        if vid in modified:
                            spec = modified[vid]
                            slimits = volume_limits(spec.type, spec.size_gib, spec.iops, spec.throughput_mibps,
                                                    region=scenario.cluster.region)
                        vol = _VolumePlan(
                            id=vid,
                            spec=spec,
                            limits=slimits,
                            node_id=name,
                            instance_id=instance_id,
                            device=f"/dev/nvme{device_no}n1",
                            raid_group=raid,
                            stripes=stripes,
                            bucket=volume_bucket(slimits),
                        )
                        device_no += 1
                        if vspec.role == "data":
                            node.data_volumes.append(vol)
                        elif vspec.role == "raft":
                            node.raft_volumes.append(vol)
                        else:  # attached but carrying no TiKV I/O
                            node.other_volumes.append(vol)
                host.nodes.append(node)
            hosts.append(host)
    return hosts


# ----------------------------------------------------------------------------------------------------
# Demand


def hit_ratio(cached_fraction: Array | float, skew: float) -> Array:
    """Return the fraction of reads served from a cache holding `cached_fraction` of the working set."""
    x = np.clip(np.asarray(cached_fraction, dtype=np.float64), 0.0, 1.0)
    return np.asarray(HIT_MAX * (1.0 - np.exp(-skew * x)) / (1.0 - math.exp(-skew)), dtype=np.float64)


def _smooth_noise(rng: np.random.Generator, n: int, sigma: float, skip: int = 0) -> Array:
    """Return steps skip..skip+n-1 of the noise sequence the generator makes (a later window of one history)."""
    if sigma <= 0:
        return np.ones(n)
    # AR(1)-like: white noise through an exponential kernel (about 10 minutes of memory), unit variance.
    kernel = 0.9 ** np.arange(40)
    kernel /= math.sqrt(float(np.sum(kernel**2)))
    z = np.convolve(rng.standard_normal(skip + n + len(kernel)), kernel, mode="valid")[skip : skip + n]
    return np.asarray(np.exp(sigma * z - sigma**2 / 2), dtype=np.float64)


def _shape(
    w: Workload, t_hours: Array, hour_of_day: Array, kind: str, rng: np.random.Generator, skip: int = 0
) -> Array:
    diurnal = 1.0 + w.diurnal.amplitude * np.cos(2 * np.pi * (hour_of_day - w.diurnal.peak_hour_utc) / 24.0)
    growth = (1.0 + w.growth_per_week) ** (np.maximum(t_hours, 0.0) / 168.0)
    spikes = np.ones_like(t_hours)
    for spike in w.spikes:
        if spike.applies_to not in ("all", kind):
            continue
        rel = t_hours - spike.at_hour
        if spike.repeat_every_hours:
            rel = np.where(rel >= 0, np.mod(rel, spike.repeat_every_hours), rel)
        active = (rel >= 0) & (rel < spike.duration_minutes / 60.0)
        spikes = np.where(active, spikes * spike.factor, spikes)
    noise = _smooth_noise(rng, len(t_hours), w.noise, skip)
    return np.asarray(diurnal * growth * spikes * noise * w.load_factor)


@dataclass
class _NodeDemand:
    reads: Array  # logical point reads/s
    bc_hit_ratio: Array
    mem_hit_ratio: Array
    disk_reads: Array  # ops/s to the data volume
    read_io_kib: float
    scan_mibps: Array
    write_mibps: Array
    kv_writes: Array  # writes/s
    fsyncs: Array
    raft_bytes: Array  # bytes/s of raft log
    raft_ops: Array
    flush_bytes: Array  # bytes/s, after the rate limiter
    compaction_bytes: Array  # write demand, bytes/s (compaction reads as much)
    rate_limit_bytes: float
    soft_pending_bytes: float
    hard_pending_bytes: float
    compaction_drain_bytes: float  # extra bytes/s compaction may spend on a backlog
    working_set_gib: Array
    data_gib: Array
    block_cache_bytes: float


def _node_demand(
    node: _NodePlan, page_cache_gib: float, t_hours: Array, hour_of_day: Array, seed: int, skip: int = 0
) -> _NodeDemand:
    w = node.workload
    rngs = [np.random.default_rng([seed, node.index, k]) for k in range(4)]
    reads = w.reads_per_sec * _shape(w, t_hours, hour_of_day, "reads", rngs[0], skip)
    scans = w.scan_mibps * _shape(w, t_hours, hour_of_day, "scans", rngs[1], skip)
    writes = w.write_mibps * _shape(w, t_hours, hour_of_day, "writes", rngs[2], skip)
    fsync_shape = _shape(w, t_hours, hour_of_day, "writes", rngs[3], skip)
    fsyncs = w.fsyncs_per_sec * fsync_shape
    growth = (1.0 + w.growth_per_week) ** (np.maximum(t_hours, 0.0) / 168.0)

    cfg = node.config
    block_cache = float(parse_size(config_get(cfg, "storage.block-cache.capacity", "0KiB")))
    block_kib = parse_size(config_get(cfg, "rocksdb.defaultcf.block-size", "32KiB")) / KIB
    working_set = w.working_set_gib * growth
    bc_x = block_cache / GIB / working_set
    mem_x = (block_cache / GIB + page_cache_gib * w.compression_ratio) / working_set
    bc_hit = hit_ratio(bc_x, w.cache_skew)
    mem_hit = np.maximum(hit_ratio(mem_x, w.cache_skew), bc_hit)

    # Titan keeps values >= min-blob-size out of the LSM: compaction rewrites keys; blob GC ~half once.
    wa = w.write_amplification
    titan = bool(config_get(cfg, "rocksdb.titan.enabled", False))
    min_blob = parse_size(config_get(cfg, "rocksdb.defaultcf.titan.min-blob-size", "32KiB"))
    if titan and w.value_size_bytes >= min_blob:
        value_share = w.value_size_bytes / (w.value_size_bytes + w.key_size_bytes)
        wa = 1.0 + (wa - 1.0) * (1.0 - value_share) + 0.5 * value_share
    rate_limit = float(parse_size(config_get(cfg, "rocksdb.rate-bytes-per-sec", "10GiB")))
    user_bytes = writes * MIB
    flush = np.minimum(user_bytes, rate_limit)
    compaction = user_bytes * (wa - 1.0)

    raft_bytes = user_bytes.copy()
    raft_ops = np.maximum(fsyncs, raft_bytes / (128 * KIB))
    kv_writes = user_bytes / (w.value_size_bytes + w.key_size_bytes)
    default_data = (
        0.4 * sum(v.spec.size_gib for v in node.data_volumes) / max(1, node.data_volumes[0].stripes)
    )
    data = (w.data_size_gib or default_data) * growth
    return _NodeDemand(
        reads=reads,
        bc_hit_ratio=bc_hit,
        mem_hit_ratio=mem_hit,
        disk_reads=reads * (1.0 - mem_hit),
        read_io_kib=w.read_io_kib or block_kib,
        scan_mibps=scans,
        write_mibps=writes,
        kv_writes=kv_writes,
        fsyncs=fsyncs,
        raft_bytes=raft_bytes,
        raft_ops=raft_ops,
        flush_bytes=flush,
        compaction_bytes=compaction,
        rate_limit_bytes=rate_limit,
        soft_pending_bytes=float(parse_size(config_get(cfg, SOFT_PENDING_KEY, "192GiB"))),
        compaction_drain_bytes=DRAIN_MIBPS_PER_JOB
        * MIB
        * float(str(config_get(cfg, "rocksdb.max-background-jobs", 8))),
        hard_pending_bytes=float(parse_size(config_get(cfg, HARD_PENDING_KEY, "1TiB"))),
        working_set_gib=working_set,
        data_gib=data,
        block_cache_bytes=block_cache,
    )


@dataclass
class _VolumeDemand:
    """Per-volume demand excluding compaction (added inside the step loop)."""

    read_ops: Array
    read_bytes: Array
    write_ops: Array
    write_bytes: Array
    counted_iops: Array
    mibps: Array
    compaction_share: float  # share of the node's compaction this volume carries (RAID stripes split it)


def _counted(ops: Array, io_kib: Array | float, chunk_kib: int) -> Array:
    return np.asarray(ops * derived.chunks_per_io(io_kib, chunk_kib), dtype=np.float64)


def _volume_demands(node: _NodePlan, d: _NodeDemand) -> dict[str, _VolumeDemand]:
    out: dict[str, _VolumeDemand] = {}
    raft_on_data = not node.raft_volumes
    n = len(d.reads)
    zero = np.zeros(n)
    groups: list[tuple[list[_VolumePlan], bool]] = [(node.data_volumes, True)]
    if node.raft_volumes:
        groups.append((node.raft_volumes, False))
    for vol in node.other_volumes:
        out[vol.id] = _VolumeDemand(zero, zero, zero, zero, zero, zero, 0.0)
    for vols, is_data in groups:
        stripes = len(vols)
        chunk = vols[0].limits.io_chunk_kib
        r_ops, r_bytes, w_ops, w_bytes, counted = (
            zero.copy(),
            zero.copy(),
            zero.copy(),
            zero.copy(),
            zero.copy(),
        )
        if is_data:
            point_ops = d.disk_reads
            scan_bytes = d.scan_mibps * MIB
            scan_ops = scan_bytes / (256 * KIB)
            flush_ops = d.flush_bytes / (256 * KIB)
            r_ops = r_ops + point_ops + scan_ops
            r_bytes = r_bytes + point_ops * d.read_io_kib * KIB + scan_bytes
            w_ops = w_ops + flush_ops
            w_bytes = w_bytes + d.flush_bytes
            counted = counted + _counted(point_ops, d.read_io_kib, chunk) + _counted(scan_ops, 256.0, chunk)
            counted = counted + _counted(flush_ops, 256.0, chunk)
        if not is_data or raft_on_data:
            io_kib = np.maximum(d.raft_bytes / np.maximum(d.raft_ops, 1e-9) / KIB, RAFT_LOG_IO_KIB_MIN)
            w_ops = w_ops + d.raft_ops
            w_bytes = w_bytes + d.raft_bytes
            counted = counted + _counted(d.raft_ops, io_kib, chunk)
        for vol in vols:
            out[vol.id] = _VolumeDemand(
                read_ops=r_ops / stripes,
                read_bytes=r_bytes / stripes,
                write_ops=w_ops / stripes,
                write_bytes=w_bytes / stripes,
                counted_iops=counted / stripes,
                mibps=(r_bytes + w_bytes) / MIB / stripes,
                compaction_share=(1.0 / stripes) if is_data else 0.0,
            )
    return out


# ----------------------------------------------------------------------------------------------------
# Physics: the minute-by-minute loop of one host


@dataclass(frozen=True)
class SimState:
    """Where the physics stands at a moment (after a minute), as the series report it: a run given a state
    starts from it instead of warming up, so it continues the run that ended there (the demo fleet continues
    its stored history this way). Ids are the snapshot's; what is missing starts as the scenario says."""

    volume_balance_pct: Mapping[str, float] = field(default_factory=dict)  # BurstBalance, by volume id
    instance_io_balance_pct: Mapping[str, float] = field(default_factory=dict)  # EBSIOBalance%, by instance
    instance_byte_balance_pct: Mapping[str, float] = field(default_factory=dict)  # EBSByteBalance%
    pending_compaction_bytes: Mapping[str, float] = field(default_factory=dict)  # by node id


@dataclass
class _VolumeRun:
    demand_iops: Array
    demand_mibps: Array
    offered_iops: Array  # demand that got past the instance's EBS limit to the volume
    offered_mibps: Array
    served_fraction: Array
    iops_cap: Array
    mibps_cap: Array
    balance_pct: Array | None
    compaction_bytes: Array  # compaction write demand placed on this volume (bytes/s; reads the same)


@dataclass
class _HostRun:
    volumes: dict[str, _VolumeRun]
    instance_fraction: Array
    io_balance_pct: Array | None
    byte_balance_pct: Array | None
    compaction_served: dict[str, Array]  # node id -> compaction bytes/s written (reads the same)
    pending_bytes: dict[str, Array]


def _caps(vol: _VolumePlan, balance: float) -> tuple[float, float]:
    lim = vol.limits
    bucket = vol.bucket
    if bucket is None:
        return lim.baseline_iops, lim.max_throughput_mibps
    has_credits = balance > 0 and bucket.bursts
    if bucket.unit == "IOPS":  # gp2: throughput rides on the IOPS credits (burst band 170-334 GiB)
        iops = bucket.served_rate(balance, math.inf)
        mibps = lim.max_throughput_mibps if has_credits else lim.baseline_throughput_mibps
        return iops, mibps
    return lim.baseline_iops, bucket.served_rate(balance, math.inf)  # st1/sc1: throughput credits


def _run_host(
    host: _HostPlan,
    demands: dict[str, _VolumeDemand],
    nodes: dict[str, _NodeDemand],
    dt: float,
    state: SimState | None = None,
) -> _HostRun:
    vols = host.volumes
    n = len(next(iter(nodes.values())).reads)
    nv = len(vols)
    # Python lists in the loop: per-element numpy indexing is slower than list access.
    base_iops = [demands[v.id].counted_iops.tolist() for v in vols]
    base_mib = [demands[v.id].mibps.tolist() for v in vols]
    share = [demands[v.id].compaction_share for v in vols]
    node_of = [v.node_id for v in vols]
    chunk_kib = [float(v.limits.io_chunk_kib) for v in vols]
    groups: dict[str, list[int]] = {}
    for i, v in enumerate(vols):
        key = v.raid_group and f"{v.node_id}/{v.raid_group}"
        if key:
            groups.setdefault(key, []).append(i)
    comp_dem = {nid: d.compaction_bytes.tolist() for nid, d in nodes.items()}
    flush = {nid: d.flush_bytes.tolist() for nid, d in nodes.items()}
    limit = {nid: d.rate_limit_bytes for nid, d in nodes.items()}
    soft = {nid: d.soft_pending_bytes for nid, d in nodes.items()}
    drain_cap = {nid: d.compaction_drain_bytes for nid, d in nodes.items()}
    span = {nid: max(d.hard_pending_bytes - d.soft_pending_bytes, 1.0) for nid, d in nodes.items()}

    given = state or SimState()
    balances = [
        v.bucket.credits_from_percent(given.volume_balance_pct.get(v.id, v.spec.burst_balance_percent))
        if v.bucket is not None
        else 0.0
        for v in vols
    ]
    io_bucket = InstanceEbsBucket.for_iops(host.limits)
    byte_bucket = InstanceEbsBucket.for_throughput(host.limits)
    inst_bursts = io_bucket.bursts or byte_bucket.bursts
    io_bal = io_bucket.credits_from_percent(
        given.instance_io_balance_pct.get(host.instance_id, host.ebs_balance_percent)
    )
    byte_bal = byte_bucket.credits_from_percent(
        given.instance_byte_balance_pct.get(host.instance_id, host.ebs_balance_percent)
    )
    pending = {nid: float(given.pending_compaction_bytes.get(nid, 0.0)) for nid in nodes}
    fixed_caps = [_caps(v, 0.0) if v.bucket is None else None for v in vols]
    inst_caps = (io_bucket.baseline_rate, byte_bucket.baseline_rate)

    out_d_iops = [[0.0] * n for _ in range(nv)]
    out_d_mib = [[0.0] * n for _ in range(nv)]
    out_o_iops = [[0.0] * n for _ in range(nv)]
    out_o_mib = [[0.0] * n for _ in range(nv)]
    out_f = [[1.0] * n for _ in range(nv)]
    out_icap = [[0.0] * n for _ in range(nv)]
    out_mcap = [[0.0] * n for _ in range(nv)]
    out_bal = [[100.0] * n for _ in range(nv)]
    out_comp = [[0.0] * n for _ in range(nv)]
    out_g = [1.0] * n
    out_io_bal = [100.0] * n
    out_byte_bal = [100.0] * n
    comp_served = {nid: [0.0] * n for nid in nodes}
    pend = {nid: [0.0] * n for nid in nodes}

    for t in range(n):
        # compaction this minute: the demand plus a drain of the backlog, within the rate limiter
        comp_w: dict[str, float] = {}
        for nid in nodes:
            want = comp_dem[nid][t] + min(pending[nid] / COMPACTION_DRAIN_SECONDS, drain_cap[nid])
            comp_w[nid] = min(want, max(limit[nid] - flush[nid][t], 0.0))
        f = [1.0] * nv
        d_iops = [0.0] * nv
        d_mib = [0.0] * nv
        for i, v in enumerate(vols):
            c_bytes = comp_w[node_of[i]] * share[i] if share[i] else 0.0
            # compaction reads and writes as much as it writes, in chunk-sized I/Os
            di = base_iops[i][t] + 2.0 * c_bytes / (chunk_kib[i] * KIB)
            dm = base_mib[i][t] + 2.0 * c_bytes / MIB
            icap, mcap = fixed_caps[i] or _caps(v, balances[i])
            fi = 1.0
            if di > icap:
                fi = icap / di
            if dm > mcap:
                fi = min(fi, mcap / dm)
            f[i] = fi
            d_iops[i] = di
            d_mib[i] = dm
            out_icap[i][t] = icap
            out_mcap[i][t] = mcap
            out_comp[i][t] = c_bytes
        for members in groups.values():  # a RAID 0 array moves at the pace of its slowest stripe
            slowest = min(f[i] for i in members)
            for i in members:
                f[i] = slowest
        s_iops = sum(d_iops[i] * f[i] for i in range(nv))
        s_mib = sum(d_mib[i] * f[i] for i in range(nv))
        g = 1.0
        if inst_bursts:
            icap_inst = io_bucket.served_rate(io_bal, math.inf)
            mcap_inst = byte_bucket.served_rate(byte_bal, math.inf)
        else:
            icap_inst, mcap_inst = inst_caps
        if s_iops > icap_inst:
            g = icap_inst / s_iops
        if s_mib > mcap_inst:
            g = min(g, mcap_inst / s_mib)
        # what the instance lets through of the raw demand: the I/O each volume is actually offered
        raw_iops, raw_mib = sum(d_iops), sum(d_mib)
        g_offered = min(
            1.0,
            icap_inst / raw_iops if raw_iops > icap_inst else 1.0,
            mcap_inst / raw_mib if raw_mib > mcap_inst else 1.0,
        )
        if inst_bursts:
            # the buckets may empty inside the minute: serve what they actually let through
            want_io, want_b = s_iops * g, s_mib * g
            io_bal, got_io = io_bucket.step(io_bal, want_io, dt)
            byte_bal, got_b = byte_bucket.step(byte_bal, want_b, dt)
            g *= min(1.0, got_io / want_io if want_io > 0 else 1.0, got_b / want_b if want_b > 0 else 1.0)
        for i, v in enumerate(vols):
            fi = f[i] * g
            bucket = v.bucket
            if bucket is not None:
                wanted = d_iops[i] * fi if bucket.unit == "IOPS" else d_mib[i] * fi
                balances[i], served = bucket.step(balances[i], wanted, dt)
                if wanted > 0 and served < wanted:
                    fi *= served / wanted
                out_bal[i][t] = bucket.percent(balances[i])
            out_f[i][t] = fi
            out_d_iops[i][t] = d_iops[i]
            out_d_mib[i][t] = d_mib[i]
            out_o_iops[i][t] = d_iops[i] * g_offered
            out_o_mib[i][t] = d_mib[i] * g_offered
        out_g[t] = g
        out_io_bal[t] = io_bucket.percent(io_bal)
        out_byte_bal[t] = byte_bucket.percent(byte_bal)
        # compaction done = what the data volume(s) served of it; the rest piles up as pending bytes
        served_frac: dict[str, float] = {}
        for i in range(nv):
            if share[i]:
                nid = node_of[i]
                served_frac[nid] = min(served_frac.get(nid, 1.0), out_f[i][t])
        for nid in nodes:
            done = comp_w[nid] * served_frac.get(nid, 1.0)
            # flow control (storage.flow-control) throttles foreground writes between the soft and hard
            # pending-compaction limits, so new compaction debt shrinks as pending bytes approach the hard one
            debt = comp_dem[nid][t] * max(0.05, 1.0 - max(pending[nid] - soft[nid], 0.0) / span[nid])
            pending[nid] = max(0.0, pending[nid] + (debt - done) * dt)
            comp_served[nid][t] = done
            pend[nid][t] = pending[nid]

    runs = {}
    for i, v in enumerate(vols):
        runs[v.id] = _VolumeRun(
            demand_iops=np.array(out_d_iops[i]),
            demand_mibps=np.array(out_d_mib[i]),
            offered_iops=np.array(out_o_iops[i]),
            offered_mibps=np.array(out_o_mib[i]),
            served_fraction=np.array(out_f[i]),
            iops_cap=np.array(out_icap[i]),
            mibps_cap=np.array(out_mcap[i]),
            balance_pct=np.array(out_bal[i]) if v.bucket is not None and v.bucket.bursts else None,
            compaction_bytes=np.array(out_comp[i]),
        )
    return _HostRun(
        volumes=runs,
        instance_fraction=np.array(out_g),
        io_balance_pct=np.array(out_io_bal) if io_bucket.bursts else None,
        byte_balance_pct=np.array(out_byte_bal) if byte_bucket.bursts else None,
        compaction_served={nid: np.array(x) for nid, x in comp_served.items()},
        pending_bytes={nid: np.array(x) for nid, x in pend.items()},
    )


# ----------------------------------------------------------------------------------------------------
# Latency, queues and threads (vectorised)


@dataclass
class _VolumeObs:
    read_ops: Array  # served, per second
    write_ops: Array
    read_bytes: Array
    write_bytes: Array
    read_latency_ms: Array
    write_latency_ms: Array
    queue_length: Array
    iops_exceeded: Array
    throughput_exceeded: Array


def _observe_volume(v: _VolumePlan, d: _VolumeDemand, run: _VolumeRun, g: Array) -> _VolumeObs:
    f = run.served_fraction
    comp = run.compaction_bytes
    comp_ops = comp / (256 * KIB)
    read_ops = (d.read_ops + comp_ops) * f
    write_ops = (d.write_ops + comp_ops) * f
    read_bytes = (d.read_bytes + comp) * f
    write_bytes = (d.write_bytes + comp) * f
    iops_over = run.offered_iops / np.maximum(run.iops_cap, 1e-9)
    mib_over = run.offered_mibps / np.maximum(run.mibps_cap, 1e-9)
    iops_exceeded = iops_over > 1.0 + 1e-6
    tp_exceeded = mib_over > 1.0 + 1e-6
    inst_over = 1.0 / np.maximum(g, 1e-9)
    util = np.minimum(np.maximum(iops_over, mib_over) * f * inst_over, 1.0)
    base_r, base_w = BASE_LATENCY_MS[v.spec.type]
    # transfer time of one average I/O at the volume's throughput ceiling: latency grows with throughput
    avg_r_kib = np.where(read_ops > 0, read_bytes / np.maximum(read_ops, 1e-9) / KIB, 0.0)
    avg_w_kib = np.where(write_ops > 0, write_bytes / np.maximum(write_ops, 1e-9) / KIB, 0.0)
    per_kib_ms = 1000.0 / (np.maximum(run.mibps_cap, 1e-9) * KIB)
    queue = 0.5 * util / (1.0 - 0.9 * util)
    throttle = (
        np.where(iops_exceeded, THROTTLE_MS + 15.0 * np.clip(iops_over - 1.0, 0, 6), 0.0)
        + np.where(tp_exceeded, 5.0 + 10.0 * np.clip(mib_over - 1.0, 0, 6), 0.0)
        + np.where(g < 1.0 - 1e-6, THROTTLE_MS + 15.0 * np.clip(inst_over - 1.0, 0, 6), 0.0)
    )
    lat_r = base_r * (1.0 + queue) + avg_r_kib * per_kib_ms + throttle
    lat_w = base_w * (1.0 + queue) + avg_w_kib * per_kib_ms + throttle
    qlen = (read_ops * lat_r + write_ops * lat_w) / 1000.0
    return _VolumeObs(
        read_ops=read_ops,
        write_ops=write_ops,
        read_bytes=read_bytes,
        write_bytes=write_bytes,
        read_latency_ms=lat_r,
        write_latency_ms=lat_w,
        queue_length=qlen,
        iops_exceeded=iops_exceeded.astype(np.float64),
        throughput_exceeded=tp_exceeded.astype(np.float64),
    )


def pool_wait_seconds(utilisation: Array) -> Array:
    """Return a p99 queue wait for a thread pool at a utilisation (busy threads / pool size).

    0.2 ms when idle, rising as u² / (1 − u) towards 10 ms at 98%; past 100% the queue grows for as long as
    the overload lasts, which we cap at 0.05 + 0.5 × min(u − 1, 3) s (clients time out and retry).
    """
    u = np.clip(utilisation, 0.0, 0.98)
    wait = 2e-4 * (1.0 + u**2 / (1.0 - u))
    overload = np.minimum(np.maximum(np.asarray(utilisation) - 1.0, 0.0), 3.0)
    return np.asarray(wait + np.where(overload > 0, 0.05 + 0.5 * overload, 0.0), dtype=np.float64)


def _writer_wait(utilisation: Array, fsync_seconds: Array) -> Array:
    """Return the p99 wait of a raft-log writer: past ~95% busy it batches, so waits grow by fsyncs only."""
    batching = np.maximum(utilisation - 0.95, 0.0) / 0.05
    return np.asarray(
        pool_wait_seconds(np.minimum(utilisation, 0.95))
        + np.minimum(batching, 4.0) * fsync_seconds * FSYNC_P99_FACTOR,
        dtype=np.float64,
    )


def _pool(cpu: Array, busy: Array, size: float) -> tuple[Array, Array]:
    """Return (CPU in cores capped at the pool size, pool utilisation) for CPU and busy-thread demand."""
    size = max(size, 1e-9)
    capped = np.where(busy > size, size * cpu / np.maximum(busy, 1e-9), cpu)
    return np.minimum(capped, size), busy / size


# ----------------------------------------------------------------------------------------------------
# Entry point


_OP_COUNTS = frozenset({mid.EBS_READ_OPS, mid.EBS_WRITE_OPS, mid.EC2_EBS_READ_OPS, mid.EC2_EBS_WRITE_OPS})


def _round(values: Array, decimals: int, *, whole_ops: bool = False) -> list[float | None]:
    # Op counts round up to whole I/Os: rounding them down while bytes round to nearest would push a 256 KiB
    # average just past the chunk and double its counted IOPS (headroom.domain.physics.io counts ceil(avg / 256 KiB)).
    rounded = np.ceil(values - 1e-6) if whole_ops else np.round(values, decimals)
    if not np.isnan(rounded).any():
        return rounded.tolist()  # type: ignore[no-any-return]
    return [None if math.isnan(x) else x for x in rounded.tolist()]


_DECIMALS = {
    "Count": 0,
    "Bytes": 0,
    "Seconds": 3,
    "Percent": 2,
    "None": 0,
    "ops/s": 1,
    "bytes/s": 0,
    "bytes": 0,
    "cores": 3,
    "seconds": 6,
    "microseconds": 0,
    "ratio": 4,
}


def _decimals(metric: str, unit: str) -> int:
    if metric == mid.EBS_QUEUE_LENGTH:
        return 3
    return _DECIMALS.get(unit, 4)


EC2_PERIOD_SECONDS = (
    300  # basic monitoring, and EBSIOBalance% / EBSByteBalance% in every mode (AWS EC2 metrics)
)
# Missing datapoints (Headroom's own choice of rates, docs/snapshot.md "Missing data"): CloudWatch now and then
# has no datapoint for a minute or a period; a Prometheus scrape now and then fails or times out.
CLOUDWATCH_MISSING_SHARE = 0.002  # of a volume's minutes / an instance's periods
SCRAPE_MISSING_SHARE = 0.005  # of a node's scrapes (1-minute steps)
_BALANCES = frozenset({mid.EC2_EBS_IO_BALANCE, mid.EC2_EBS_BYTE_BALANCE})


def _uniforms(seed: int, key: str, first: int, n: int) -> Array:
    """Return n uniforms in [0, 1) for the absolute steps first..first+n-1 of one entity (splitmix64 of the
    step): a function of the clock, so two runs that overlap miss the same datapoints."""
    mix = np.uint64(((seed & 0xFFFFFFFF) << 32) | zlib.crc32(key.encode()))
    with np.errstate(over="ignore"):
        z = np.arange(first, first + n, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15) ^ mix
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return np.asarray((z >> np.uint64(11)).astype(np.float64) / float(1 << 53), dtype=np.float64)


def _to_period(
    values: Array, begin: datetime, step: int, period: int, statistic: str
) -> tuple[datetime, Array]:
    """Aggregate step-spaced values into CloudWatch periods aligned to the clock (12:00, 12:05, ...): Sums add
    up, Minimum/Maximum/Average take the period's; only periods wholly inside the window are kept."""
    per = period // step
    k0 = (-int(begin.timestamp()) % period) // step
    m = max((len(values) - k0) // per, 0)
    block = values[k0 : k0 + m * per].reshape(m, per)
    if statistic == "Sum":
        agg = block.sum(axis=1)
    elif statistic == "Minimum":
        agg = block.min(axis=1)
    elif statistic == "Maximum":
        agg = block.max(axis=1)
    else:
        agg = block.mean(axis=1)
    return begin + timedelta(seconds=k0 * step), np.asarray(agg, dtype=np.float64)


def simulate(
    scenario: Scenario,
    *,
    hours: float = 168.0,
    seed: int = 0,
    start: datetime | None = None,
    step_seconds: int = 60,
    monitoring: Monitoring | None = None,
    origin: datetime | None = None,
    state: SimState | None = None,
    modified: Mapping[str, VolumeSpec] | None = None,
    lookback: bool = True,
) -> Snapshot:
    """Simulate a scenario over `hours` from `start` (or the scenario's start) and return its snapshot.

    `monitoring` replaces the scenario's (periods and gaps). `origin` is where the workload's time starts
    (growth, spikes and noise; default `start`): windows simulated with one origin are pieces of one history.
    `state` is where the physics stands at `start` (see `SimState`); without it the run warms up for the
    scenario's `warmup_hours` from the scenario's starting balances. `modified` gives volumes (by id) a spec of
    their own in place of their node group's, as a ModifyVolume changes one volume (the demo's applied changes); a
    volume that gains a burst bucket starts it at its spec's `burst_balance_percent` unless `state` has its balance.
    `lookback=False` leaves out the lookback the scenario declares (the demo's ingest writes the series only).
    """
    if hours <= 0:
        raise ScenarioError(f"hours: must be positive, got {hours}")
    begin = start or scenario.start
    if begin is None:
        raise ScenarioError("start: give a start time (the scenario's start or --start)")
    if begin.tzinfo is None:
        raise ScenarioError("start: must carry a time zone (e.g. 2026-01-05T00:00:00Z)")
    begin = begin.replace(second=0, microsecond=0)
    anchor = (origin or begin).replace(second=0, microsecond=0)
    mon = monitoring or scenario.monitoring
    ec2_mode, gaps = mon.ec2_mode, mon.with_gaps
    dt = float(step_seconds)
    n = int(round(hours * 3600 / dt))
    scenario_warm = int(round(scenario.warmup_hours * 3600 / dt))
    warm = 0 if state is not None else scenario_warm
    total = n + warm
    since_origin = (begin - anchor).total_seconds()
    t_hours = np.asarray((np.arange(total) - warm) * dt / 3600.0 + since_origin / 3600.0, dtype=np.float64)
    # the noise of one origin is one sequence that starts a warm-up before the origin
    skip = max(int(round(since_origin / dt)) + scenario_warm - warm, 0)
    begin_utc = begin.astimezone(UTC)  # the diurnal peak is given in UTC hours
    start_hour = begin_utc.hour + begin_utc.minute / 60.0
    hour_of_day = np.asarray(
        np.mod(start_hour + (np.arange(total) - warm) * dt / 3600.0, 24.0), dtype=np.float64
    )

    hosts = _plan(scenario, modified)
    window = slice(warm, total)
    series: list[Series] = []
    first_step = int(begin.timestamp()) // step_seconds

    # An entity's uniforms are a function of (entity, steps): every series of it misses the same datapoints, so
    # they are drawn once per entity and steps, not once per series.
    drawn: dict[tuple[str, int, int], Array] = {}

    def missing(key: str, share: float, count: int, first: int = first_step) -> NDArray[np.bool_]:
        if not gaps:
            return np.zeros(count, dtype=bool)
        uniforms = drawn.get((key, first, count))
        if uniforms is None:
            uniforms = drawn[key, first, count] = _uniforms(seed, key, first, count)
        return uniforms < share

    def add(
        kind: str,
        entity_id: str,
        metric: str,
        values: Array,
        labels: dict[str, str] | None = None,
        absent: NDArray[np.bool_] | None = None,
    ) -> None:
        spec = REGISTRY[metric]
        window_values = np.asarray(values, dtype=np.float64)[window]
        at, step = begin, step_seconds
        if spec.entity in (
            "volume",
            "node",
        ):  # a missed CloudWatch minute / a failed scrape: every series of it
            share = CLOUDWATCH_MISSING_SHARE if spec.entity == "volume" else SCRAPE_MISSING_SHARE
            gap = missing(entity_id, share, n)
            absent = gap if absent is None else (gap | absent)
        if absent is not None:
            window_values = np.where(absent, np.nan, window_values)
        if (
            spec.entity == "instance"
            and step_seconds < EC2_PERIOD_SECONDS
            and EC2_PERIOD_SECONDS % step_seconds == 0
            and (ec2_mode == "basic" or (ec2_mode == "detailed" and metric in _BALANCES))
        ):
            at, window_values = _to_period(
                window_values, begin, step_seconds, EC2_PERIOD_SECONDS, spec.statistic
            )
            step = EC2_PERIOD_SECONDS
            if len(window_values) == 0:
                return
            first_period = int(at.timestamp()) // step
            window_values = np.where(
                missing(entity_id, CLOUDWATCH_MISSING_SHARE, len(window_values), first_period),
                np.nan,
                window_values,
            )
        elif spec.entity == "instance":
            window_values = np.where(missing(entity_id, CLOUDWATCH_MISSING_SHARE, n), np.nan, window_values)
        series.append(
            Series(
                entity=Entity(kind=spec.entity, id=entity_id),
                metric=metric,
                unit=spec.unit,
                statistic=spec.statistic,
                labels=labels or {},
                start=at,
                step_seconds=step,
                values=_round(window_values, _decimals(metric, spec.unit), whole_ops=metric in _OP_COUNTS),
            )
        )

    nodes_out: list[Node] = []
    instances_out: list[Instance] = []
    volumes_out: list[Volume] = []
    store_id = 1
    for host in hosts:
        mem = host.limits.memory_gib or 0.0
        caches = [
            parse_size(config_get(nd.config, "storage.block-cache.capacity", "0KiB")) / GIB
            for nd in host.nodes
        ]
        page_cache = max(mem - sum(caches) - TIKV_OVERHEAD_GIB * len(host.nodes) - OS_RESERVED_GIB, 0.0)
        node_demand = {
            nd.id: _node_demand(nd, page_cache / len(host.nodes), t_hours, hour_of_day, seed, skip)
            for nd in host.nodes
        }
        vol_demand: dict[str, _VolumeDemand] = {}
        for nd in host.nodes:
            vol_demand.update(_volume_demands(nd, node_demand[nd.id]))
        run = _run_host(host, vol_demand, node_demand, dt, state)
        g = run.instance_fraction

        instances_out.append(
            Instance(
                id=host.instance_id,
                type=host.limits.name,
                vcpus=host.limits.vcpus or 1,
                memory_gib=mem,
                availability_zone=f"{scenario.cluster.region}{'abc'[len(instances_out) % 3]}",
                name=host.key,
            )
        )
        obs: dict[str, _VolumeObs] = {}
        for v in host.volumes:
            o = _observe_volume(v, vol_demand[v.id], run.volumes[v.id], g)
            obs[v.id] = o
            volumes_out.append(
                Volume(
                    id=v.id,
                    type=v.spec.type,
                    size_gib=v.spec.size_gib,
                    iops=v.limits.provisioned_iops,
                    throughput_mibps=v.limits.provisioned_throughput_mibps,
                    instance_id=host.instance_id,
                    device=v.device,
                    role=v.spec.role,
                    raid_group=v.raid_group,
                )
            )
            add("volume", v.id, mid.EBS_READ_OPS, o.read_ops * dt)
            add("volume", v.id, mid.EBS_WRITE_OPS, o.write_ops * dt)
            add("volume", v.id, mid.EBS_READ_BYTES, o.read_bytes * dt)
            add("volume", v.id, mid.EBS_WRITE_BYTES, o.write_bytes * dt)
            add("volume", v.id, mid.EBS_TOTAL_READ_TIME, o.read_ops * dt * o.read_latency_ms / 1000.0)
            add("volume", v.id, mid.EBS_TOTAL_WRITE_TIME, o.write_ops * dt * o.write_latency_ms / 1000.0)
            add("volume", v.id, mid.EBS_QUEUE_LENGTH, o.queue_length)
            add("volume", v.id, mid.EBS_IDLE_TIME, dt * np.exp(-o.queue_length))
            balance = run.volumes[v.id].balance_pct
            if balance is not None:  # "No data when the volume is idle" (AWS EBS CloudWatch page)
                idle = ((o.read_ops + o.write_ops) <= 0)[window] if gaps else None
                add("volume", v.id, mid.EBS_BURST_BALANCE, balance, absent=idle)
            add("volume", v.id, mid.EBS_IOPS_EXCEEDED_CHECK, o.iops_exceeded)
            add("volume", v.id, mid.EBS_THROUGHPUT_EXCEEDED_CHECK, o.throughput_exceeded)

        def host_sum(attr: str, vols: Sequence[_VolumePlan], obs: dict[str, _VolumeObs] = obs) -> Array:
            acc = np.zeros(total)
            for v in vols:
                acc = acc + getattr(obs[v.id], attr)
            return acc

        add("instance", host.instance_id, mid.EC2_EBS_READ_OPS, host_sum("read_ops", host.volumes) * dt)
        add("instance", host.instance_id, mid.EC2_EBS_WRITE_OPS, host_sum("write_ops", host.volumes) * dt)
        add("instance", host.instance_id, mid.EC2_EBS_READ_BYTES, host_sum("read_bytes", host.volumes) * dt)
        add("instance", host.instance_id, mid.EC2_EBS_WRITE_BYTES, host_sum("write_bytes", host.volumes) * dt)
        if run.io_balance_pct is not None:
            add("instance", host.instance_id, mid.EC2_EBS_IO_BALANCE, run.io_balance_pct)
        if run.byte_balance_pct is not None:
            add("instance", host.instance_id, mid.EC2_EBS_BYTE_BALANCE, run.byte_balance_pct)

        host_cpu = np.zeros(total)
        host_rss = np.zeros(total)
        node_rows: list[tuple[_NodePlan, Array, Array]] = []
        for nd in host.nodes:
            d = node_demand[nd.id]
            cfg = nd.config
            w = nd.workload
            cost = w.cpu_cost
            data_obs = [obs[v.id] for v in nd.data_volumes]
            log_vols = nd.raft_volumes or nd.data_volumes
            read_lat_s = np.mean([o.read_latency_ms for o in data_obs], axis=0) / 1000.0
            fsync_s = np.mean([obs[v.id].write_latency_ms for v in log_vols], axis=0) / 1000.0
            comp_done = run.compaction_served[nd.id]
            pending = run.pending_bytes[nd.id]

            def pool_size(key: str, cfg: dict[str, object] = cfg) -> float:
                value = config_get(cfg, key, 0)
                return float(value) if isinstance(value, int | float) else 0.0

            scan_kib = d.scan_mibps * KIB
            read_cpu = d.reads * cost.point_read_us * 1e-6 + scan_kib * cost.scan_us_per_kib * 1e-6
            data_f = np.mean([run.volumes[v.id].served_fraction for v in nd.data_volumes], axis=0)
            # read-pool threads block on the disk reads they issue (Little's law on the served reads)
            read_busy = read_cpu + (d.disk_reads + d.scan_mibps * 4) * data_f * read_lat_s
            read_cores, read_util = _pool(read_cpu, read_busy, pool_size("readpool.unified.max-thread-count"))
            sched_cpu = d.kv_writes * cost.scheduler_us_per_write * 1e-6
            sched_cores, sched_util = _pool(
                sched_cpu, sched_cpu, pool_size("storage.scheduler-worker-pool-size")
            )
            apply_cpu = d.kv_writes * cost.apply_us_per_write * 1e-6
            apply_cores, apply_util = _pool(apply_cpu, apply_cpu, pool_size("raftstore.apply-pool-size"))
            writers = pool_size("raftstore.store-io-pool-size")
            sw_cpu = d.fsyncs * cost.store_writer_us_per_fsync * 1e-6
            # a writer that cannot keep up batches more per fsync: the excess shows up as wait (_writer_wait)
            # rather than as an ever-growing queue
            sw_busy = sw_cpu + d.fsyncs * fsync_s
            rs_cpu = d.kv_writes * cost.raftstore_us_per_write * 1e-6 + 0.05
            rs_busy = rs_cpu if writers > 0 else rs_cpu + sw_busy
            if writers > 0:
                sw_cores, sw_util = _pool(sw_cpu, sw_busy, writers)
            else:  # store-io-pool-size = 0: raftstore threads write the log themselves
                rs_cpu = rs_cpu + sw_cpu
                sw_cores, sw_util = np.zeros(total), np.zeros(total)
            rs_cores, rs_util = _pool(rs_cpu, rs_busy, pool_size("raftstore.store-pool-size"))
            grpc_cpu = (d.reads + d.kv_writes + d.scan_mibps * 4) * cost.grpc_us_per_request * 1e-6
            grpc_cores, _ = _pool(grpc_cpu, grpc_cpu, pool_size("server.grpc-concurrency"))
            bg_cpu = comp_done / KIB * cost.compaction_us_per_kib * 1e-6
            bg_cores, _ = _pool(bg_cpu, bg_cpu, pool_size("rocksdb.max-background-jobs"))
            tikv_cpu = (
                read_cores + sched_cores + apply_cores + rs_cores + sw_cores + grpc_cores + bg_cores + 0.1
            )

            soft = float(
                parse_size(
                    config_get(cfg, "storage.flow-control.soft-pending-compaction-bytes-limit", "192GiB")
                )
            )
            hard = float(
                parse_size(
                    config_get(cfg, "storage.flow-control.hard-pending-compaction-bytes-limit", "1TiB")
                )
            )
            over_soft = np.clip((pending - soft) / max(hard - soft, 1.0), 0.0, 1.0)
            stall_us = np.where(pending > soft, 1000.0 + 999_000.0 * over_soft, 0.0)
            flow_wait = np.where(pending > soft, 0.05 + 1.0 * over_soft, 0.0)

            bc_size = np.minimum(d.block_cache_bytes, d.working_set_gib * GIB)
            rss = bc_size + TIKV_OVERHEAD_GIB * GIB
            host_cpu = host_cpu + tikv_cpu
            host_rss = host_rss + rss
            node_rows.append((nd, tikv_cpu, rss))

            nid = nd.id
            add("node", nid, mid.TIKV_BLOCK_CACHE_HIT, d.reads * d.bc_hit_ratio)
            add("node", nid, mid.TIKV_BLOCK_CACHE_MISS, d.reads * (1.0 - d.bc_hit_ratio))
            add("node", nid, mid.TIKV_BLOCK_CACHE_SIZE, bc_size)
            add("node", nid, mid.TIKV_THREAD_CPU_SCHEDULER, sched_cores)
            add("node", nid, mid.TIKV_THREAD_CPU_APPLY, apply_cores)
            add("node", nid, mid.TIKV_THREAD_CPU_RAFTSTORE, rs_cores)
            add("node", nid, mid.TIKV_THREAD_CPU_STORE_WRITER, sw_cores)
            add("node", nid, mid.TIKV_THREAD_CPU_UNIFIED_READ_POOL, read_cores)
            add("node", nid, mid.TIKV_THREAD_CPU_GRPC, grpc_cores)
            add("node", nid, mid.TIKV_THREAD_CPU_ROCKSDB, bg_cores)
            add("node", nid, mid.TIKV_WAIT_SCHEDULER_LATCH, pool_wait_seconds(sched_util) + flow_wait)
            add(
                "node",
                nid,
                mid.TIKV_WAIT_PROPOSE,
                _writer_wait(rs_util, fsync_s) if writers == 0 else pool_wait_seconds(rs_util),
            )
            add("node", nid, mid.TIKV_WAIT_APPLY, pool_wait_seconds(apply_util))
            if writers > 0:
                add("node", nid, mid.TIKV_WAIT_STORE_WRITE, _writer_wait(sw_util, fsync_s))
            add("node", nid, mid.TIKV_WAIT_UNIFIED_READ_POOL, pool_wait_seconds(read_util))
            add("node", nid, mid.TIKV_RAFT_LOG_FSYNC, fsync_s * FSYNC_P99_FACTOR)
            add("node", nid, mid.TIKV_COMPACTION_READ_BYTES, comp_done)
            add("node", nid, mid.TIKV_COMPACTION_WRITE_BYTES, comp_done)
            add(
                "node",
                nid,
                mid.TIKV_FLUSH_WRITE_BYTES,
                d.flush_bytes * np.mean([run.volumes[v.id].served_fraction for v in nd.data_volumes], axis=0),
            )
            add("node", nid, mid.TIKV_PENDING_COMPACTION_BYTES, pending)
            add("node", nid, mid.TIKV_WRITE_STALL, stall_us)
            add("node", nid, mid.TIKV_STORE_USED_BYTES, d.data_gib * GIB)
            # TiKV's store heartbeat: capacity = the data filesystem's size (raftstore.capacity unset);
            # available = min(capacity - used, the filesystem's free space). The filesystem also holds the raft
            # log when there is no raft volume (RAFT_LOG_ON_DATA_GIB) and ext4's own metadata (FS_OVERHEAD).
            fs_size = sum(v.spec.filesystem_gib or v.spec.size_gib for v in nd.data_volumes) * GIB * (1.0 - FS_OVERHEAD)
            fs_free = np.maximum(fs_size - d.data_gib * GIB - (0.0 if nd.raft_volumes else RAFT_LOG_ON_DATA_GIB * GIB), 0.0)
            add("node", nid, mid.TIKV_STORE_CAPACITY_BYTES, np.full(total, fs_size))
            add("node", nid, mid.TIKV_STORE_AVAILABLE_BYTES, np.minimum(np.maximum(fs_size - d.data_gib * GIB, 0.0), fs_free))
            if len(host.nodes) == 1:  # one mount per TiKV: its data-dir's parent (several TiKVs per host: not modelled)
                data_dir = str(config_get(cfg, "storage.data-dir", "/data/tikv"))
                mount = {"mountpoint": data_dir.rstrip("/").rsplit("/", 1)[0] or "/"}
                # node_exporter labels the size with the filesystem type; the simulated hosts use ext4 (FS_OVERHEAD)
                add("node", nid, mid.NODE_FS_SIZE_BYTES, np.full(total, fs_size), {**mount, "fstype": "ext4"})
                add("node", nid, mid.NODE_FS_AVAIL_BYTES, fs_free, mount)
            add("node", nid, mid.TIKV_MEMORY_RSS, rss)
            add("node", nid, mid.TIKV_CPU, tikv_cpu)
            for v in (*nd.data_volumes, *nd.raft_volumes):
                o = obs[v.id]
                labels = {"device": v.device.removeprefix("/dev/"), "volume_id": v.id}
                add("node", nid, mid.NODE_DISK_READS, o.read_ops, labels)
                add("node", nid, mid.NODE_DISK_WRITES, o.write_ops, labels)
                add("node", nid, mid.NODE_DISK_READ_BYTES, o.read_bytes, labels)
                add("node", nid, mid.NODE_DISK_WRITTEN_BYTES, o.write_bytes, labels)
                add("node", nid, mid.NODE_DISK_IO_TIME, 1.0 - np.exp(-o.queue_length), labels)

        available = np.maximum(mem * GIB - host_rss - OS_RESERVED_GIB * GIB, 0.0)
        for nd, _cpu, _rss in node_rows:
            add("node", nd.id, mid.NODE_MEMORY_TOTAL, np.full(total, mem * GIB))
            add("node", nd.id, mid.NODE_MEMORY_AVAILABLE, available)
            add("node", nd.id, mid.NODE_CPU_COUNT, np.full(total, float(nd.vcpus)))
            add("node", nd.id, mid.NODE_CPU_BUSY, np.minimum(host_cpu + 0.2, float(nd.vcpus)))
            nodes_out.append(
                Node(
                    id=nd.id,
                    store_id=store_id,
                    address=nd.address,
                    status_address=nd.status_address,
                    instance_id=nd.instance_id,
                    instance_type=nd.instance_type,
                    vcpus=nd.vcpus,
                    memory_gib=nd.memory_gib,
                    tikv_version=nd.version,
                    host=nd.host,
                    data_volume_ids=[v.id for v in nd.data_volumes],
                    raft_volume_ids=[v.id for v in nd.raft_volumes],
                    config=_with_raft_dir(nd),
                )
            )
            store_id += 1

    end = begin + timedelta(seconds=n * dt)
    snapshot = Snapshot(
        schema_version=SCHEMA_VERSION,
        generated_at=end,
        source=Source(kind="simulated", tool="headroom simulate", scenario=scenario.cluster.name, seed=seed),
        cluster=Cluster(
            name=scenario.cluster.name,
            tikv_version=scenario.cluster.tikv_version,
            deployment=scenario.cluster.deployment,
            region=scenario.cluster.region,
        ),
        window=Window(start=begin, end=end, step_seconds=step_seconds),
        nodes=nodes_out,
        instances=instances_out,
        volumes=volumes_out,
        series=series,
    )
    if scenario.lookback is None or not lookback:
        return snapshot
    return snapshot.model_copy(update={"lookback": scenario_lookback(snapshot, scenario.lookback)})


def scenario_lookback(snapshot: Snapshot, spec: ScenarioLookback) -> Lookback:
    """Return the lookback a scenario declares: its history's peak is the window's, times `peak_scale`, counted by
    the one derivation (lookback.peak_over), at the moment the window peaks."""
    history = min(spec.history_days, float(spec.days))
    peaks = []
    entities: list[tuple[EntityKind, str, int]] = [
        ("volume", v.id, derived.io_chunk_kib(v.type)) for v in snapshot.volumes
    ] + [
        ("instance", i.id, SSD_CHUNK_KIB) for i in snapshot.instances
    ]
    for kind, eid, chunk in entities:
        if find_series(snapshot, kind, eid, IO_METRICS[kind][0]) is None:
            continue

        def read(metric: str, kind: EntityKind = kind, eid: str = eid) -> Array | None:
            found = find_series(snapshot, kind, eid, metric)
            if found is None:
                return None
            return aligned(found, snapshot.window) * spec.peak_scale

        peaks.append(peak_over(kind, eid, [(snapshot.window, read)], chunk, history))
    return Lookback(days=spec.days, end=snapshot.window.end, peaks=peaks)


def _with_raft_dir(node: _NodePlan) -> dict[str, object]:
    """Point the Raft Engine dir at the raft volume's mount when the node has one (as a deployment would)."""
    config = node.config
    if node.raft_volumes:
        key = "raft-engine.dir" if config_get(config, "raft-engine.enable", True) else "raftstore.raftdb-path"
        if not config_get(config, key):
            config = config_set(config, key, "/raft/tikv")
    return config


# ----------------------------------------------------------------------------------------------------
# The physics kernel on its own: one volume on one instance, for tests and what-if questions


@dataclass(frozen=True)
class VolumeTrace:
    """What one volume served, minute by minute, for a given demand (see `simulate_volume`)."""

    served_ops: Array  # I/Os per second as issued
    served_counted_iops: Array  # in 256 KiB (SSD) / 1 MiB (HDD) units, what the IOPS limit sees
    served_mibps: Array
    iops_ceiling: Array  # the volume's IOPS ceiling at each step (burst or baseline)
    mibps_ceiling: Array
    burst_balance_pct: Array | None  # gp2/st1/sc1 only
    read_latency_ms: Array
    queue_length: Array
    iops_exceeded: Array  # 0/1
    throughput_exceeded: Array  # 0/1
    instance_fraction: Array  # share of the demand the instance let through (1 = not instance-bound)
    instance_io_balance_pct: Array | None
    instance_byte_balance_pct: Array | None


def simulate_volume(
    volume: VolumeSpec,
    ops_per_sec: Sequence[float] | Array,
    io_kib: float = 16.0,
    *,
    instance_type: str = "r5b.16xlarge",
    instance_balance_percent: float = 100.0,
    step_seconds: int = 60,
) -> VolumeTrace:
    """Serve a read demand (I/Os per second of `io_kib` each) on one volume with the simulator's physics."""
    ops = np.asarray(ops_per_sec, dtype=np.float64)
    n = len(ops)
    limits = volume_limits(volume.type, volume.size_gib, volume.iops, volume.throughput_mibps)
    inst = instance_limits(instance_type)
    vol = _VolumePlan(
        "vol-kernel", volume, limits, "node", "i-kernel", "/dev/nvme1n1", None, 1, volume_bucket(limits)
    )
    node = _NodePlan(
        id="node", index=0, group_index=0, host="host", instance_id="i-kernel",
        instance_type=instance_type, vcpus=inst.vcpus or 1, memory_gib=inst.memory_gib or 1.0,
        version="v8.5.1", address="", status_address="", config={}, workload=Workload(), data_volumes=[vol],
    )  # fmt: skip
    host = _HostPlan("host", "i-kernel", inst, instance_balance_percent, [node])
    zero = np.zeros(n)
    counted = _counted(ops, io_kib, limits.io_chunk_kib)
    demand = _VolumeDemand(ops, ops * io_kib * KIB, zero, zero, counted, ops * io_kib / KIB, 0.0)
    idle = _NodeDemand(
        reads=zero, bc_hit_ratio=zero, mem_hit_ratio=zero, disk_reads=zero, read_io_kib=io_kib,
        scan_mibps=zero, write_mibps=zero, kv_writes=zero, fsyncs=zero, raft_bytes=zero, raft_ops=zero,
        flush_bytes=zero, compaction_bytes=zero, rate_limit_bytes=0.0, soft_pending_bytes=GIB,
        hard_pending_bytes=2 * GIB, compaction_drain_bytes=0.0, working_set_gib=zero, data_gib=zero,
        block_cache_bytes=0.0,
    )  # fmt: skip
    run = _run_host(host, {vol.id: demand}, {"node": idle}, float(step_seconds))
    vr = run.volumes[vol.id]
    obs = _observe_volume(vol, demand, vr, run.instance_fraction)
    return VolumeTrace(
        served_ops=obs.read_ops,
        served_counted_iops=vr.demand_iops * vr.served_fraction,
        served_mibps=vr.demand_mibps * vr.served_fraction,
        iops_ceiling=vr.iops_cap,
        mibps_ceiling=vr.mibps_cap,
        burst_balance_pct=vr.balance_pct,
        read_latency_ms=obs.read_latency_ms,
        queue_length=obs.queue_length,
        iops_exceeded=obs.iops_exceeded,
        throughput_exceeded=obs.throughput_exceeded,
        instance_fraction=run.instance_fraction,
        instance_io_balance_pct=run.io_balance_pct,
        instance_byte_balance_pct=run.byte_balance_pct,
    )


DEMO_SCENARIO = Path(__file__).with_name(
    "demo.yaml"
)  # a copy of examples/scenarios/demo.yaml (a test keeps it so)


def demo_snapshot(end: datetime, *, hours: float = 168.0, seed: int = 0) -> Snapshot:
    """Simulate the embedded demo fleet over the `hours` before `end` (the caller passes the clock)."""
    scenario = load_scenario(DEMO_SCENARIO)
    aligned = end.replace(second=0, microsecond=0)
    return simulate(scenario, hours=hours, seed=seed, start=aligned - timedelta(hours=hours))
