"""The metric registry: every canonical series name a snapshot may carry, with its unit and source.

Collectors write series under these names and the advisor reads them by these names; this module is the
contract between them. CloudWatch series keep CloudWatch's own statistic and unit over one step (a `Sum` of
`Count` per period, not a rate), so a collector stores what `GetMetricData` returns; Prometheus series are
stored as the PromQL below evaluates (a rate, a gauge or a quantile), with `$instance` standing for the TiKV
status address or the node_exporter target of the node.

Sources: CloudWatch names and statistics from docs/reference/cloudwatch.md#volume-metrics, docs/reference/cloudwatch.md#instance-ebs-metrics (AWS "Amazon CloudWatch metrics for
Amazon EBS", "CloudWatch metrics for your EC2 instances"); TiKV names and selectors from docs/reference/tikv-metrics.md#thread-names and the official Grafana
dashboard (`metrics/grafana/tikv_details.dashboard.py` in tikv/tikv @8e964719, see docs/reference/tikv-metrics.md#metric-names); node_exporter names from its standard
collectors (`collector/diskstats_linux.go`, `meminfo.go`, `cpu_linux.go`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

EntityKind = Literal["volume", "instance", "node"]

SourceKind = Literal["cloudwatch", "prometheus"]
CloudWatchStatistic = Literal["Sum", "Average", "Minimum", "Maximum"]

# node_exporter's standard series that the registry uses (node_exporter `collector/diskstats_linux.go`,
# `collector/meminfo.go`, `collector/cpu_linux.go`); the TiKV dashboard itself only queries io_time.
NODE_EXPORTER_STANDARD: frozenset[str] = frozenset(
    {
        "node_disk_reads_completed_total",
        "node_disk_writes_completed_total",
        "node_disk_read_bytes_total",
        "node_disk_written_bytes_total",
        "node_disk_read_time_seconds_total",
        "node_disk_write_time_seconds_total",
        "node_disk_io_time_seconds_total",
        "node_memory_MemTotal_bytes",
        "node_memory_MemAvailable_bytes",
        "node_cpu_seconds_total",
        "node_filesystem_size_bytes",
        "node_filesystem_avail_bytes",
    }
)


@dataclass(frozen=True)
class CloudWatchSource:
    """Where a CloudWatch series comes from: namespace, metric name, statistic and dimension."""

    namespace: Literal["AWS/EBS", "AWS/EC2"]
    metric_name: str
    statistic: CloudWatchStatistic
    dimension: Literal["VolumeId", "InstanceId"]

    kind: SourceKind = "cloudwatch"


@dataclass(frozen=True)
class PrometheusSource:
    """Where a Prometheus series comes from: the metric names it reads and the PromQL that makes it."""

    metrics: tuple[str, ...]
    query: str
    statistic: Literal["rate", "gauge", "p99", "count"]

    kind: SourceKind = "prometheus"


@dataclass(frozen=True)
class MetricSpec:
    """One canonical series: its name, the entity it describes, its unit, meaning and source."""

    name: str
    entity: EntityKind
    unit: str
    description: str
    source: CloudWatchSource | PrometheusSource

    @property
    def statistic(self) -> str:
        """Return the statistic stored in the snapshot (CloudWatch statistic or PromQL kind)."""
        return self.source.statistic


def _ebs(name: str, metric: str, unit: str, stat: CloudWatchStatistic, d: str) -> MetricSpec:
    return MetricSpec(name, "volume", unit, d, CloudWatchSource("AWS/EBS", metric, stat, "VolumeId"))


def _ec2(name: str, metric: str, unit: str, stat: CloudWatchStatistic, d: str) -> MetricSpec:
    return MetricSpec(name, "instance", unit, d, CloudWatchSource("AWS/EC2", metric, stat, "InstanceId"))


def _prom(
    name: str,
    unit: str,
    stat: Literal["rate", "gauge", "p99", "count"],
    metrics: tuple[str, ...],
    query: str,
    d: str,
) -> MetricSpec:
    return MetricSpec(name, "node", unit, d, PrometheusSource(metrics, query, stat))


def _thread_cpu(pool: str, selector: str, d: str) -> MetricSpec:
    return _prom(
        f"tikv.thread_cpu.{pool}",
        "cores",
        "rate",
        ("tikv_thread_cpu_seconds_total",),
        f'sum(rate(tikv_thread_cpu_seconds_total{{instance="$instance",name=~"{selector}"}}[1m]))',
        f'CPU used by the {d} threads, in cores (1.0 = one core = 100%); selector name=~"{selector}".',
    )


def _p99(name: str, metric: str, selector: str, d: str) -> MetricSpec:
    extra = f",{selector}" if selector else ""
    return _prom(
        name,
        "seconds",
        "p99",
        (metric,),
        f'histogram_quantile(0.99, sum(rate({metric}{{instance="$instance"{extra}}}[1m])) by (le))',
        d,
    )


REGISTRY_LIST: tuple[MetricSpec, ...] = (
    # --- AWS/EBS, per volume, one value per step (docs/reference/cloudwatch.md#volume-metrics) ---
    _ebs(
        "ebs.read_ops",
        "VolumeReadOps",
        "Count",
        "Sum",
        "Read operations completed in the step. IOPS = value / step.",
    ),
    _ebs("ebs.write_ops", "VolumeWriteOps", "Count", "Sum", "Write operations completed in the step."),
    _ebs(
        "ebs.read_bytes",
        "VolumeReadBytes",
        "Bytes",
        "Sum",
        "Bytes read in the step. Avg read size = bytes/ops.",
    ),
    _ebs("ebs.write_bytes", "VolumeWriteBytes", "Bytes", "Sum", "Bytes written in the step."),
    _ebs(
        "ebs.total_read_time",
        "VolumeTotalReadTime",
        "Seconds",
        "Sum",
        "Total seconds spent by the reads completed in the step. Avg latency = value / read ops.",
    ),
    _ebs(
        "ebs.total_write_time", "VolumeTotalWriteTime", "Seconds", "Sum", "Total seconds spent by the writes."
    ),
    _ebs(
        "ebs.queue_length", "VolumeQueueLength", "Count", "Average", "Average number of pending I/O requests."
    ),
    _ebs("ebs.idle_time", "VolumeIdleTime", "Seconds", "Sum", "Seconds in the step with no I/O submitted."),
    _ebs(
        "ebs.burst_balance",
        "BurstBalance",
        "Percent",
        "Minimum",
        "gp2/st1/sc1 burst credits left, in % of capacity. Absent for gp3/io1/io2 and for gp2 >= 1 TiB.",
    ),
    _ebs(
        "ebs.iops_exceeded_check",
        "VolumeIOPSExceededCheck",
        "None",
        "Maximum",
        "1 when the application tried to drive more IOPS than the volume provides in the minute, else 0.",
    ),
    _ebs(
        "ebs.throughput_exceeded_check",
        "VolumeThroughputExceededCheck",
        "None",
        "Maximum",
        "1 when the application tried to drive more throughput than the volume provides, else 0.",
    ),
    # --- AWS/EC2, per instance: EBS aggregate of all attached volumes (docs/reference/cloudwatch.md#instance-ebs-metrics) ---
    _ec2(
        "ec2.ebs_read_ops", "EBSReadOps", "Count", "Sum", "Read ops of all attached EBS volumes in the step."
    ),
    _ec2(
        "ec2.ebs_write_ops",
        "EBSWriteOps",
        "Count",
        "Sum",
        "Write ops of all attached EBS volumes in the step.",
    ),
    _ec2("ec2.ebs_read_bytes", "EBSReadBytes", "Bytes", "Sum", "Bytes read from all attached EBS volumes."),
    _ec2(
        "ec2.ebs_write_bytes", "EBSWriteBytes", "Bytes", "Sum", "Bytes written to all attached EBS volumes."
    ),
    _ec2(
        "ec2.ebs_io_balance",
        "EBSIOBalance%",
        "Percent",
        "Minimum",
        "Instance EBS I/O burst credits left (burst-capable sizes only: 30 min at maximum per 24 h).",
    ),
    _ec2(
        "ec2.ebs_byte_balance",
        "EBSByteBalance%",
        "Percent",
        "Minimum",
        "Instance EBS throughput burst credits left (burst-capable sizes only).",
    ),
    # --- TiKV (Prometheus), per node (docs/reference/tikv-metrics.md#metric-names) ---
    _prom(
        "tikv.block_cache_hit",
        "ops/s",
        "rate",
        ("tikv_engine_cache_efficiency",),
        'sum(rate(tikv_engine_cache_efficiency{instance="$instance",db="kv",type="block_cache_hit"}[1m]))',
        "KV RocksDB block-cache hits per second.",
    ),
    _prom(
        "tikv.block_cache_miss",
        "ops/s",
        "rate",
        ("tikv_engine_cache_efficiency",),
        'sum(rate(tikv_engine_cache_efficiency{instance="$instance",db="kv",type="block_cache_miss"}[1m]))',
        "KV RocksDB block-cache misses per second. Hit ratio = hit / (hit + miss).",
    ),
    _prom(
        "tikv.block_cache_size",
        "bytes",
        "gauge",
        ("tikv_engine_block_cache_size_bytes",),
        'sum(tikv_engine_block_cache_size_bytes{instance="$instance",db="kv"})',
        "Bytes held by the KV block cache (at most storage.block-cache.capacity).",
    ),
    _thread_cpu("scheduler", "sched_.*", "scheduler worker (storage.scheduler-worker-pool-size)"),
    _thread_cpu("apply", "apply_[0-9]+", "async apply (raftstore.apply-pool-size)"),
    _thread_cpu("raftstore", "(raftstore|rs)_.*", "raftstore (raftstore.store-pool-size)"),
    _thread_cpu("store_writer", "store_write.*", "StoreWriter (raftstore.store-io-pool-size)"),
    _thread_cpu(
        "unified_read_pool", "unified_read_po.*", "unified read pool (readpool.unified.max-thread-count)"
    ),
    _thread_cpu("grpc", "grpc.*", "gRPC poll (server.grpc-concurrency)"),
    _thread_cpu("rocksdb", "rocksdb.*", "RocksDB background (flush and compaction)"),
    _p99(
        "tikv.wait.scheduler_latch",
        "tikv_scheduler_latch_wait_duration_seconds_bucket",
        "",
        "p99 time a write command waits for scheduler latches.",
    ),
    _p99(
        "tikv.wait.propose",
        "tikv_raftstore_request_wait_time_duration_secs_bucket",
        "",
        "p99 propose wait: time a write waits before raftstore handles it.",
    ),
    _p99(
        "tikv.wait.apply",
        "tikv_raftstore_apply_wait_time_duration_secs_bucket",
        "",
        "p99 apply wait: time committed entries wait for an apply thread.",
    ),
    _p99(
        "tikv.wait.store_write",
        "tikv_raftstore_store_write_task_wait_duration_secs_bucket",
        "",
        "p99 time a write task waits for a StoreWriter thread.",
    ),
    _p99(
        "tikv.wait.unified_read_pool",
        "tikv_yatp_pool_schedule_wait_duration_bucket",
        'name=~"unified-read.*"',
        "p99 time a read task waits in the unified read pool queue.",
    ),
    _p99(
        "tikv.raft_log_fsync",
        "raft_engine_sync_log_duration_seconds_bucket",
        "",
        "p99 Raft Engine log fsync duration (on the raft volume, or on the data volume when shared).",
    ),
    _prom(
        "tikv.compaction_read_bytes",
        "bytes/s",
        "rate",
        ("tikv_engine_compaction_flow_bytes",),
        'sum(rate(tikv_engine_compaction_flow_bytes{instance="$instance",db="kv",type="bytes_read"}[1m]))',
        "Bytes per second read by KV RocksDB compaction.",
    ),
    _prom(
        "tikv.compaction_write_bytes",
        "bytes/s",
        "rate",
        ("tikv_engine_compaction_flow_bytes",),
        'sum(rate(tikv_engine_compaction_flow_bytes{instance="$instance",db="kv",type="bytes_written"}[1m]))',
        "Bytes per second written by KV RocksDB compaction.",
    ),
    _prom(
        "tikv.flush_write_bytes",
        "bytes/s",
        "rate",
        ("tikv_io_bytes",),
        'sum(rate(tikv_io_bytes{instance="$instance",type="flush",op="write"}[1m]))',
        "Bytes per second written by memtable flushes.",
    ),
    _prom(
        "tikv.pending_compaction_bytes",
        "bytes",
        "gauge",
        ("tikv_engine_pending_compaction_bytes",),
        'sum(tikv_engine_pending_compaction_bytes{instance="$instance",db="kv"})',
        "Estimated bytes KV RocksDB still has to compact; flow control acts above the soft limit (192 GiB).",
    ),
    _prom(
        "tikv.write_stall",
        "microseconds",
        "gauge",
        ("tikv_engine_write_stall",),
        'max(tikv_engine_write_stall{instance="$instance",db="kv",type="write_stall_max"})',
        "Longest write stall in the window, in microseconds (0 when writes never stalled).",
    ),
    _prom(
        "tikv.store_used_bytes",
        "bytes",
        "gauge",
        ("tikv_store_size_bytes",),
        'sum(tikv_store_size_bytes{instance="$instance",type="used"})',
        "Bytes of the store's disk used by TiKV.",
    ),
    # TiKV's store heartbeat (components/raftstore/src/store/worker/pd.rs): capacity = the data directory's
    # filesystem size, or raftstore.capacity when that is set and smaller; available = min(capacity - used,
    # the filesystem's free space). PD reads the same two numbers for its low-space check.
    _prom(
        "tikv.store_capacity_bytes",
        "bytes",
        "gauge",
        ("tikv_store_size_bytes",),
        'sum(tikv_store_size_bytes{instance="$instance",type="capacity"})',
        "Capacity TiKV reports to PD: its data filesystem's size, or raftstore.capacity when smaller.",
    ),
    _prom(
        "tikv.store_available_bytes",
        "bytes",
        "gauge",
        ("tikv_store_size_bytes",),
        'sum(tikv_store_size_bytes{instance="$instance",type="available"})',
        "Space TiKV reports to PD as available: capacity - used, or the filesystem's free space when smaller.",
    ),
    _prom(
        "tikv.memory_rss",
        "bytes",
        "gauge",
        ("process_resident_memory_bytes",),
        'process_resident_memory_bytes{instance="$instance",job="tikv"}',
        "Resident memory of the TiKV process.",
    ),
    _prom(
        "tikv.cpu",
        "cores",
        "rate",
        ("process_cpu_seconds_total",),
        'rate(process_cpu_seconds_total{instance="$instance",job="tikv"}[1m])',
        "CPU used by the whole TiKV process, in cores.",
    ),
    # --- node_exporter, per node; labels carry the block device and the volume it maps to ---
    _prom(
        "node.disk_reads",
        "ops/s",
        "rate",
        ("node_disk_reads_completed_total",),
        'rate(node_disk_reads_completed_total{instance="$instance",device="$device"}[1m])',
        "Reads completed per second on a block device, as the OS sees them (before EBS 256 KiB accounting).",
    ),
    _prom(
        "node.disk_writes",
        "ops/s",
        "rate",
        ("node_disk_writes_completed_total",),
        'rate(node_disk_writes_completed_total{instance="$instance",device="$device"}[1m])',
        "Writes completed per second on a block device.",
    ),
    _prom(
        "node.disk_read_bytes",
        "bytes/s",
        "rate",
        ("node_disk_read_bytes_total",),
        'rate(node_disk_read_bytes_total{instance="$instance",device="$device"}[1m])',
        "Bytes read per second on a block device.",
    ),
    _prom(
        "node.disk_written_bytes",
        "bytes/s",
        "rate",
        ("node_disk_written_bytes_total",),
        'rate(node_disk_written_bytes_total{instance="$instance",device="$device"}[1m])',
        "Bytes written per second on a block device.",
    ),
    _prom(
        "node.disk_io_time",
        "ratio",
        "rate",
        ("node_disk_io_time_seconds_total",),
        'rate(node_disk_io_time_seconds_total{instance="$instance",device="$device"}[1m])',
        "Fraction of time the device had I/O in flight (iostat %util / 100).",
    ),
    _prom(
        "node.memory_total",
        "bytes",
        "gauge",
        ("node_memory_MemTotal_bytes",),
        'node_memory_MemTotal_bytes{instance="$instance"}',
        "Memory of the host.",
    ),
    _prom(
        "node.memory_available",
        "bytes",
        "gauge",
        ("node_memory_MemAvailable_bytes",),
        'node_memory_MemAvailable_bytes{instance="$instance"}',
        "Memory the host could still hand out (free plus reclaimable page cache).",
    ),
    _prom(
        "node.cpu_count",
        "cores",
        "count",
        ("node_cpu_seconds_total",),
        'count(node_cpu_seconds_total{instance="$instance",mode="idle"})',
        "Number of CPUs of the host.",
    ),
    _prom(
        "node.cpu_busy",
        "cores",
        "rate",
        ("node_cpu_seconds_total",),
        'sum(rate(node_cpu_seconds_total{instance="$instance",mode!="idle"}[1m]))',
        "CPUs busy on the host, in cores.",
    ),
    # node_exporter's filesystem collector (collector/filesystem_linux.go, statfs): one series per mount point;
    # the snapshot picks the mount that holds TiKV's storage.data-dir (views.disk_view). The size keeps the mount's
    # `fstype` label too: the AWS script's filesystem step grows xfs or ext4 and checks the host agrees
    # (docs/reference/filesystem-grow.md#where-the-filesystem-type-comes-from).
    _prom(
        "node.fs_size_bytes",
        "bytes",
        "gauge",
        ("node_filesystem_size_bytes",),
        'max(node_filesystem_size_bytes{instance="$instance",mountpoint="$mountpoint",fstype="$fstype",fstype!~"tmpfs|overlay|squashfs|nsfs|ramfs"})',
        "Size of a filesystem of the host (labels mountpoint, fstype).",
    ),
    _prom(
        "node.fs_avail_bytes",
        "bytes",
        "gauge",
        ("node_filesystem_avail_bytes",),
        'max(node_filesystem_avail_bytes{instance="$instance",mountpoint="$mountpoint",fstype!~"tmpfs|overlay|squashfs|nsfs|ramfs"})',
        "Space of a filesystem available to unprivileged users (label mountpoint).",
    ),
)

REGISTRY: dict[str, MetricSpec] = {spec.name: spec for spec in REGISTRY_LIST}


class UnknownMetric(KeyError):
    """A series name that the registry does not list."""


def metric_spec(name: str) -> MetricSpec:
    """Return the registry entry for a canonical series name."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise UnknownMetric(f"unknown metric {name!r}; see headroom.domain.snapshot.registry.REGISTRY") from None


def metrics_for(entity: EntityKind) -> tuple[MetricSpec, ...]:
    """Return the registry entries describing one kind of entity."""
    return tuple(spec for spec in REGISTRY_LIST if spec.entity == entity)


def prometheus_metric_names() -> frozenset[str]:
    """Return every Prometheus metric name the registry reads."""
    names: set[str] = set()
    for spec in REGISTRY_LIST:
        if isinstance(spec.source, PrometheusSource):
            names.update(spec.source.metrics)
    return frozenset(names)
