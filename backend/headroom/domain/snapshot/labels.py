"""Every series a user can see, by name: the one mapping from a metric id (`ebs.burst_balance`,
`derived.counted_iops`) to the words a chart title, a legend or a finding says, and the unit it is drawn in.

The ids stay the machine's (the API returns them next to the label, the UI fetches by them); no surface shows one.
A test checks that every metric of the registry and every derived view has its label here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MetricLabel:
    """What a series is called where people read it, and the unit its values are drawn in."""

    label: str
    unit: str


METRIC_LABELS: dict[str, MetricLabel] = {
    # AWS/EBS, per volume
    "ebs.read_ops": MetricLabel("Read operations", "ops"),
    "ebs.write_ops": MetricLabel("Write operations", "ops"),
    "ebs.read_bytes": MetricLabel("Bytes read", "bytes"),
    "ebs.write_bytes": MetricLabel("Bytes written", "bytes"),
    "ebs.total_read_time": MetricLabel("Time spent reading", "s"),
    "ebs.total_write_time": MetricLabel("Time spent writing", "s"),
    "ebs.queue_length": MetricLabel("Queue length", "requests"),
    "ebs.idle_time": MetricLabel("Idle time", "s"),
    "ebs.burst_balance": MetricLabel("Burst balance", "%"),
    "ebs.iops_exceeded_check": MetricLabel("Asked for more IOPS than the volume provides", "flag"),
    "ebs.throughput_exceeded_check": MetricLabel("Asked for more throughput than the volume provides", "flag"),
    # AWS/EC2, per instance: all attached EBS volumes together
    "ec2.ebs_read_ops": MetricLabel("Instance EBS read operations", "ops"),
    "ec2.ebs_write_ops": MetricLabel("Instance EBS write operations", "ops"),
    "ec2.ebs_read_bytes": MetricLabel("Instance EBS bytes read", "bytes"),
    "ec2.ebs_write_bytes": MetricLabel("Instance EBS bytes written", "bytes"),
    "ec2.ebs_io_balance": MetricLabel("Instance EBS IOPS burst balance", "%"),
    "ec2.ebs_byte_balance": MetricLabel("Instance EBS throughput burst balance", "%"),
    # TiKV, per store
    "tikv.block_cache_hit": MetricLabel("Block cache hits", "ops/s"),
    "tikv.block_cache_miss": MetricLabel("Block cache misses", "ops/s"),
    "tikv.block_cache_size": MetricLabel("Block cache size", "GiB"),
    "tikv.thread_cpu.scheduler": MetricLabel("Scheduler worker CPU", "cores"),
    "tikv.thread_cpu.apply": MetricLabel("Apply pool CPU", "cores"),
    "tikv.thread_cpu.raftstore": MetricLabel("Raftstore CPU", "cores"),
    "tikv.thread_cpu.store_writer": MetricLabel("Store writer CPU", "cores"),
    "tikv.thread_cpu.unified_read_pool": MetricLabel("Unified read pool CPU", "cores"),
    "tikv.thread_cpu.grpc": MetricLabel("gRPC poll CPU", "cores"),
    "tikv.thread_cpu.rocksdb": MetricLabel("RocksDB flush and compaction CPU", "cores"),
    "tikv.wait.scheduler_latch": MetricLabel("Scheduler latch wait, p99", "ms"),
    "tikv.wait.propose": MetricLabel("Propose wait, p99", "ms"),
    "tikv.wait.apply": MetricLabel("Apply wait, p99", "ms"),
    "tikv.wait.store_write": MetricLabel("Store write wait, p99", "ms"),
    "tikv.wait.unified_read_pool": MetricLabel("Read pool queue wait, p99", "ms"),
    "tikv.raft_log_fsync": MetricLabel("Raft log fsync, p99", "ms"),
    "tikv.compaction_read_bytes": MetricLabel("Compaction reads", "MiB/s"),
    "tikv.compaction_write_bytes": MetricLabel("Compaction writes", "MiB/s"),
    "tikv.flush_write_bytes": MetricLabel("Memtable flush writes", "MiB/s"),
    "tikv.pending_compaction_bytes": MetricLabel("Pending compaction bytes", "GiB"),
    "tikv.write_stall": MetricLabel("Longest write stall", "ms"),
    "tikv.store_used_bytes": MetricLabel("Space used by TiKV", "GiB"),
    "tikv.store_capacity_bytes": MetricLabel("Capacity TiKV reports", "GiB"),
    "tikv.store_available_bytes": MetricLabel("Space TiKV reports available", "GiB"),
    "tikv.memory_rss": MetricLabel("TiKV memory", "GiB"),
    "tikv.cpu": MetricLabel("TiKV CPU", "cores"),
    # the host, as node_exporter sees it
    "node.disk_reads": MetricLabel("Disk reads (as the OS sees them)", "ops/s"),
    "node.disk_writes": MetricLabel("Disk writes (as the OS sees them)", "ops/s"),
    "node.disk_read_bytes": MetricLabel("Disk bytes read", "MiB/s"),
    "node.disk_written_bytes": MetricLabel("Disk bytes written", "MiB/s"),
    "node.disk_io_time": MetricLabel("Disk busy time", "%"),
    "node.memory_total": MetricLabel("Host memory", "GiB"),
    "node.memory_available": MetricLabel("Host memory available", "GiB"),
    "node.cpu_count": MetricLabel("Host CPUs", "cores"),
    "node.cpu_busy": MetricLabel("Host CPU busy", "cores"),
    "node.fs_size_bytes": MetricLabel("Filesystem size", "GiB"),
    "node.fs_avail_bytes": MetricLabel("Filesystem space available", "GiB"),
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
