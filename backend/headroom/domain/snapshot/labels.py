"""Every series a user can see, by name: the one mapping from a metric id (`ebs.burst_balance`,
`derived.counted_iops`) to the words a chart title, a legend or a finding says, and the unit it is drawn in.

The ids stay the machine's (the API returns them next to the label, the UI fetches by them); no surface shows one.
A test checks that every metric of the registry and every derived view has its label here.
"""

from __future__ import annotations

from dataclasses import dataclass

from headroom.domain.snapshot import metric_ids as mid
from headroom.domain.snapshot.registry import REGISTRY
from headroom.domain.units import GIB, MIB, SECOND


@dataclass(frozen=True)
class MetricLabel:
    """What a series is called where people read it, and the unit its values are drawn in."""

    label: str
    unit: str


METRIC_LABELS: dict[str, MetricLabel] = {
    # AWS/EBS, per volume
    mid.EBS_READ_OPS: MetricLabel("Read operations", "ops"),
    mid.EBS_WRITE_OPS: MetricLabel("Write operations", "ops"),
    mid.EBS_READ_BYTES: MetricLabel("Bytes read", "bytes"),
    mid.EBS_WRITE_BYTES: MetricLabel("Bytes written", "bytes"),
    mid.EBS_TOTAL_READ_TIME: MetricLabel("Time spent reading", "s"),
    mid.EBS_TOTAL_WRITE_TIME: MetricLabel("Time spent writing", "s"),
    mid.EBS_QUEUE_LENGTH: MetricLabel("Queue length", "requests"),
    mid.EBS_IDLE_TIME: MetricLabel("Idle time", "s"),
    mid.EBS_BURST_BALANCE: MetricLabel("Burst balance", "%"),
    mid.EBS_IOPS_EXCEEDED_CHECK: MetricLabel("Asked for more IOPS than the volume provides", "flag"),
    mid.EBS_THROUGHPUT_EXCEEDED_CHECK: MetricLabel("Asked for more throughput than the volume provides", "flag"),
    # AWS/EC2, per instance: all attached EBS volumes together
    mid.EC2_EBS_READ_OPS: MetricLabel("Instance EBS read operations", "ops"),
    mid.EC2_EBS_WRITE_OPS: MetricLabel("Instance EBS write operations", "ops"),
    mid.EC2_EBS_READ_BYTES: MetricLabel("Instance EBS bytes read", "bytes"),
    mid.EC2_EBS_WRITE_BYTES: MetricLabel("Instance EBS bytes written", "bytes"),
    mid.EC2_EBS_IO_BALANCE: MetricLabel("Instance EBS IOPS burst balance", "%"),
    mid.EC2_EBS_BYTE_BALANCE: MetricLabel("Instance EBS throughput burst balance", "%"),
    # TiKV, per store
    mid.TIKV_BLOCK_CACHE_HIT: MetricLabel("Block cache hits", "ops/s"),
    mid.TIKV_BLOCK_CACHE_MISS: MetricLabel("Block cache misses", "ops/s"),
    mid.TIKV_BLOCK_CACHE_SIZE: MetricLabel("Block cache size", "GiB"),
    mid.TIKV_THREAD_CPU_SCHEDULER: MetricLabel("Scheduler worker CPU", "cores"),
    mid.TIKV_THREAD_CPU_APPLY: MetricLabel("Apply pool CPU", "cores"),
    mid.TIKV_THREAD_CPU_RAFTSTORE: MetricLabel("Raftstore CPU", "cores"),
    mid.TIKV_THREAD_CPU_STORE_WRITER: MetricLabel("Store writer CPU", "cores"),
    mid.TIKV_THREAD_CPU_UNIFIED_READ_POOL: MetricLabel("Unified read pool CPU", "cores"),
    mid.TIKV_THREAD_CPU_GRPC: MetricLabel("gRPC poll CPU", "cores"),
    mid.TIKV_THREAD_CPU_ROCKSDB: MetricLabel("RocksDB flush and compaction CPU", "cores"),
    mid.TIKV_WAIT_SCHEDULER_LATCH: MetricLabel("Scheduler latch wait, p99", "ms"),
    mid.TIKV_WAIT_PROPOSE: MetricLabel("Propose wait, p99", "ms"),
    mid.TIKV_WAIT_APPLY: MetricLabel("Apply wait, p99", "ms"),
    mid.TIKV_WAIT_STORE_WRITE: MetricLabel("Store write wait, p99", "ms"),
    mid.TIKV_WAIT_UNIFIED_READ_POOL: MetricLabel("Read pool queue wait, p99", "ms"),
    mid.TIKV_RAFT_LOG_FSYNC: MetricLabel("Raft log fsync, p99", "ms"),
    mid.TIKV_COMPACTION_READ_BYTES: MetricLabel("Compaction reads", "MiB/s"),
    mid.TIKV_COMPACTION_WRITE_BYTES: MetricLabel("Compaction writes", "MiB/s"),
    mid.TIKV_FLUSH_WRITE_BYTES: MetricLabel("Memtable flush writes", "MiB/s"),
    mid.TIKV_PENDING_COMPACTION_BYTES: MetricLabel("Pending compaction bytes", "GiB"),
    mid.TIKV_WRITE_STALL: MetricLabel("Longest write stall", "ms"),
    mid.TIKV_STORE_USED_BYTES: MetricLabel("Space used by TiKV", "GiB"),
    mid.TIKV_STORE_CAPACITY_BYTES: MetricLabel("Capacity TiKV reports", "GiB"),
    mid.TIKV_STORE_AVAILABLE_BYTES: MetricLabel("Space TiKV reports available", "GiB"),
    mid.TIKV_MEMORY_RSS: MetricLabel("TiKV memory", "GiB"),
    mid.TIKV_CPU: MetricLabel("TiKV CPU", "cores"),
    # the host, as node_exporter sees it
    mid.NODE_DISK_READS: MetricLabel("Disk reads (as the OS sees them)", "ops/s"),
    mid.NODE_DISK_WRITES: MetricLabel("Disk writes (as the OS sees them)", "ops/s"),
    mid.NODE_DISK_READ_BYTES: MetricLabel("Disk bytes read", "MiB/s"),
    mid.NODE_DISK_WRITTEN_BYTES: MetricLabel("Disk bytes written", "MiB/s"),
    mid.NODE_DISK_IO_TIME: MetricLabel("Disk busy time", "%"),
    mid.NODE_MEMORY_TOTAL: MetricLabel("Host memory", "GiB"),
    mid.NODE_MEMORY_AVAILABLE: MetricLabel("Host memory available", "GiB"),
    mid.NODE_CPU_COUNT: MetricLabel("Host CPUs", "cores"),
    mid.NODE_CPU_BUSY: MetricLabel("Host CPU busy", "cores"),
    mid.NODE_FS_SIZE_BYTES: MetricLabel("Filesystem size", "GiB"),
    mid.NODE_FS_AVAIL_BYTES: MetricLabel("Filesystem space available", "GiB"),
    # derived views (headroom.domain.derived, computed from the series above)
    "derived.counted_iops": MetricLabel("IOPS counted in 256 KiB units", "IOPS"),
    "derived.mibps": MetricLabel("Throughput", "MiB/s"),
    "derived.read_latency_ms": MetricLabel("Read latency", "ms"),
    "derived.write_latency_ms": MetricLabel("Write latency", "ms"),
    "derived.iops_ceiling": MetricLabel("IOPS ceiling in force", "IOPS"),
    "derived.mibps_ceiling": MetricLabel("Throughput ceiling in force", "MiB/s"),
}


def metric_label(metric: str) -> str:
    """Name a series the way people read it ("Burst balance"); an id without a label is said in words, not code."""
    known = METRIC_LABELS.get(metric)
    if known is not None:
        return known.label
    words = metric.rsplit(".", 1)[-1].replace("_", " ")
    return words[:1].upper() + words[1:]


def metric_unit(metric: str) -> str | None:
    """The unit a series is drawn in, or None for an id without a label."""
    known = METRIC_LABELS.get(metric)
    return known.unit if known is not None else None


# From the unit a series is stored in (the metric registry's) to the unit it is drawn in (METRIC_LABELS): the one
# table every surface scales with (the Metrics charts, the apply guards), so a guard's verdict and the chart of the
# same series say the same number in the same unit. TiKV exports durations in seconds or microseconds and sizes in
# bytes (Prometheus's base units); people read ms, GiB and MiB/s (docs/number-formats.md).
STORED_TO_SHOWN: dict[tuple[str, str], float] = {
    ("seconds", "ms"): float(SECOND),  # units.SECOND: milliseconds in a second
    ("microseconds", "ms"): 1 / 1000,
    ("bytes", "GiB"): 1 / GIB,
    ("bytes/s", "MiB/s"): 1 / MIB,
    ("ratio", "%"): 100.0,
}


def shown_scale(stored_unit: str, shown_unit: str) -> float:
    """The factor from a value in `stored_unit` to `shown_unit` (1 when they are the same unit by other names)."""
    return STORED_TO_SHOWN.get((stored_unit, shown_unit), 1.0)


def metric_scale(metric: str) -> float:
    """The factor from a metric's stored values (the registry's unit) to the unit it is drawn in (metric_unit)."""
    spec, shown = REGISTRY.get(metric), metric_unit(metric)
    return shown_scale(spec.unit, shown) if spec is not None and shown is not None else 1.0
