"""A TiKV-shaped exporter for the Prometheus tests, driven by the deterministic simulator.

Two faces:

* `openmetrics_history(...)` turns a simulated snapshot into the raw series TiKV and node_exporter expose
  (real metric names and label sets: docs/reference/tikv-metrics.md#metric-names, tikv-dashboard-metric-names.txt, node_exporter's
  diskstats/meminfo/cpu collectors) as OpenMetrics text for `promtool tsdb create-blocks-from openmetrics`.
  The raw series are built so that the registry's PromQL gives back exactly the simulated values:
  - counters get two samples a minute (t-30 s, t) rising at the simulated rate over (t-60 s, t], so
    `rate(x[1m])` at t is the rate (two samples 30 s apart extrapolate to the full minute);
  - gauges hold the simulated value;
  - a simulated scrape gap (None) is a minute with no samples at all, as a failed scrape leaves it (the counter
    does not move across it, so the next minute's rate is its own);
  - p99 histograms get buckets le="0", le="1000", le="+Inf" with the per-minute share c1 in (0, 1000] chosen so
    histogram_quantile's linear interpolation returns q: q = 1000 * (0.99 - c0) / c1, c0 = 1 - c1
    => c1 = 0.01 / (1 - q / 1000).
  Decoys (raft db, other cache types, a non-matching thread, a tmpfs mount) check that the selectors filter.
* `ExporterServer`: a live HTTP endpoint per TiKV serving `/metrics` (a few current values) and `/config`
  (the node's effective config as nested kebab-case JSON, like TiKV's status server, docs/reference/tikv-metrics.md#config-json).
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from headroom.domain.snapshot.schema import Series, Snapshot

HIST_UPPER = 1000.0
HIST_PER_MINUTE = 600.0  # observations per minute (any positive number works; the ratio is what counts)

# Thread names as TiKV's sanitize_thread_name leaves them (docs/reference/tikv-metrics.md#metric-names: '-' -> '_', 15-char comm limit).
THREADS: dict[str, tuple[str, ...]] = {
    "tikv.thread_cpu.scheduler": ("sched_worker_po", "sched_worker_po"),
    "tikv.thread_cpu.apply": ("apply_0", "apply_1"),
    "tikv.thread_cpu.raftstore": ("raftstore_1_0", "rs_1_1"),
    "tikv.thread_cpu.store_writer": ("store_write_0",),
    "tikv.thread_cpu.unified_read_pool": ("unified_read_po", "unified_read_po"),
    "tikv.thread_cpu.grpc": ("grpc_server_0", "grpc_server_1"),
    "tikv.thread_cpu.rocksdb": ("rocksdb_low0", "rocksdb_high0"),
}
HISTOGRAMS: dict[str, tuple[str, dict[str, str]]] = {
    "tikv.wait.scheduler_latch": ("tikv_scheduler_latch_wait_duration_seconds_bucket", {"type": "prewrite"}),
    "tikv.wait.propose": ("tikv_raftstore_request_wait_time_duration_secs_bucket", {}),
    "tikv.wait.apply": ("tikv_raftstore_apply_wait_time_duration_secs_bucket", {}),
    "tikv.wait.store_write": ("tikv_raftstore_store_write_task_wait_duration_secs_bucket", {}),
    "tikv.wait.unified_read_pool": (
        "tikv_yatp_pool_schedule_wait_duration_bucket",
        {"name": "unified-read-pool"},
    ),
    "tikv.raft_log_fsync": ("raft_engine_sync_log_duration_seconds_bucket", {}),
}
# registry name -> (raw metric, labels, kind); node_exporter ones take the device from the series labels.
SIMPLE: dict[str, tuple[str, dict[str, str], str]] = {
    "tikv.block_cache_hit": (
        "tikv_engine_cache_efficiency",
        {"db": "kv", "type": "block_cache_hit"},
        "counter",
    ),
    "tikv.block_cache_miss": (
        "tikv_engine_cache_efficiency",
        {"db": "kv", "type": "block_cache_miss"},
        "counter",
    ),
    "tikv.block_cache_size": ("tikv_engine_block_cache_size_bytes", {"db": "kv", "cf": "default"}, "gauge"),
    "tikv.compaction_read_bytes": (
        "tikv_engine_compaction_flow_bytes",
        {"db": "kv", "type": "bytes_read"},
        "counter",
    ),
    "tikv.compaction_write_bytes": (
        "tikv_engine_compaction_flow_bytes",
        {"db": "kv", "type": "bytes_written"},
        "counter",
    ),
    "tikv.flush_write_bytes": ("tikv_io_bytes", {"type": "flush", "op": "write"}, "counter"),
    "tikv.pending_compaction_bytes": (
        "tikv_engine_pending_compaction_bytes",
        {"db": "kv", "cf": "default"},
        "gauge",
    ),
    "tikv.write_stall": ("tikv_engine_write_stall", {"db": "kv", "type": "write_stall_max"}, "gauge"),
    "tikv.store_used_bytes": ("tikv_store_size_bytes", {"type": "used"}, "gauge"),
    "tikv.store_capacity_bytes": ("tikv_store_size_bytes", {"type": "capacity"}, "gauge"),
    "tikv.store_available_bytes": ("tikv_store_size_bytes", {"type": "available"}, "gauge"),
    "node.fs_size_bytes": ("node_filesystem_size_bytes", {"fstype": "ext4", "device": "/dev/nvme1n1"}, "gauge"),
    "node.fs_avail_bytes": ("node_filesystem_avail_bytes", {"fstype": "ext4", "device": "/dev/nvme1n1"}, "gauge"),
    "tikv.memory_rss": ("process_resident_memory_bytes", {}, "gauge"),
    "tikv.cpu": ("process_cpu_seconds_total", {}, "counter"),
    "node.disk_reads": ("node_disk_reads_completed_total", {}, "counter"),
    "node.disk_writes": ("node_disk_writes_completed_total", {}, "counter"),
    "node.disk_read_bytes": ("node_disk_read_bytes_total", {}, "counter"),
    "node.disk_written_bytes": ("node_disk_written_bytes_total", {}, "counter"),
    "node.disk_io_time": ("node_disk_io_time_seconds_total", {}, "counter"),
    "node.memory_total": ("node_memory_MemTotal_bytes", {}, "gauge"),
    "node.memory_available": ("node_memory_MemAvailable_bytes", {}, "gauge"),
}
# Series that must not be selected: (raw metric, labels, constant value or rate, kind).
DECOYS: tuple[tuple[str, dict[str, str], float, str], ...] = (
    ("tikv_engine_cache_efficiency", {"db": "raft", "type": "block_cache_hit"}, 5000.0, "counter"),
    ("tikv_engine_cache_efficiency", {"db": "kv", "type": "block_cache_data_hit"}, 7000.0, "counter"),
    ("tikv_engine_block_cache_size_bytes", {"db": "raft", "cf": "default"}, 1.0e9, "gauge"),
    ("tikv_thread_cpu_seconds_total", {"name": "pd_worker", "tid": "99"}, 0.7, "counter"),
    # node_exporter's in-memory and container filesystems are not disks (the registry's fstype filter)
    ("node_filesystem_size_bytes", {"mountpoint": "/run", "fstype": "tmpfs", "device": "tmpfs"}, 8.0e9, "gauge"),
    ("node_filesystem_avail_bytes", {"mountpoint": "/run", "fstype": "tmpfs", "device": "tmpfs"}, 8.0e9, "gauge"),
    ("tikv_io_bytes", {"type": "flush", "op": "read"}, 1.0e6, "counter"),
    ("tikv_engine_size_bytes", {"db": "kv", "type": "default"}, 5.0e10, "gauge"),
)


@dataclass
class NodeLabels:
    """How one simulated node is labelled: its TiKV target labels and its node_exporter target labels."""

    tikv: dict[str, str]
    node_exporter: dict[str, str]


@dataclass
class _Family:
    lines: dict[tuple[tuple[str, str], ...], list[tuple[float, float]]] = field(
        default_factory=lambda: defaultdict(list)
    )


def _fmt(labels: dict[str, str]) -> str:
    inner = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    return "{" + inner + "}"


class _Writer:
    def __init__(self, step: int) -> None:
        self.step = step
        self.families: dict[str, _Family] = defaultdict(_Family)

    def counter(self, name: str, labels: dict[str, str], start: float, rates: list[float | None]) -> None:
        total = 0.0
        points = self.families[name].lines[tuple(sorted(labels.items()))]
        for i, rate in enumerate(rates):
            if rate is None:  # a failed scrape: no sample in this minute
                continue
            ts = start + i * self.step
            r = float(rate)
            points.append((ts - self.step / 2, total + r * self.step / 2))
            total += r * self.step
            points.append((ts, total))

    def gauge(self, name: str, labels: dict[str, str], start: float, values: list[float | None]) -> None:
        points = self.families[name].lines[tuple(sorted(labels.items()))]
        for i, value in enumerate(values):
            if value is None:
                continue
            ts = start + i * self.step
            points.append((ts - self.step / 2, float(value)))
            points.append((ts, float(value)))

    def histogram(
        self, name: str, labels: dict[str, str], start: float, quantiles: list[float | None]
    ) -> None:
        c0s: list[float | None] = []
        c1s: list[float | None] = []
        total: list[float | None] = []
        for q in quantiles:
            if q is None:  # a failed scrape: no bucket sample in this minute
                c0s.append(None)
                c1s.append(None)
                total.append(None)
                continue
            c1 = 0.01 / (1.0 - min(float(q), 0.99 * HIST_UPPER) / HIST_UPPER)
            c0s.append((1.0 - c1) * HIST_PER_MINUTE / self.step)
            c1s.append(c1 * HIST_PER_MINUTE / self.step)
            total.append(HIST_PER_MINUTE / self.step)
        self.counter(name, {**labels, "le": "0"}, start, c0s)
        le_1000 = [None if a is None or b is None else a + b for a, b in zip(c0s, c1s, strict=True)]
        self.counter(name, {**labels, "le": "1000"}, start, le_1000)
        self.counter(name, {**labels, "le": "+Inf"}, start, total)

    def render(self) -> Iterator[str]:
        for name, family in sorted(self.families.items()):
            yield f"# TYPE {name} unknown\n"
            for labels, points in family.lines.items():
                head = name + _fmt(dict(labels))
                for ts, value in points:
                    yield f"{head} {value!r} {ts:.3f}\n"
        yield "# EOF\n"


def openmetrics_history(snapshot: Snapshot, labels_of: Callable[[str], NodeLabels]) -> Iterator[str]:
    """Yield OpenMetrics lines of the raw TiKV and node_exporter series behind a snapshot's node series."""
    step = snapshot.window.step_seconds
    writer = _Writer(step)
    start = snapshot.window.start.timestamp()
    n = snapshot.window.points
    cpus: dict[str, float] = {}
    for series in snapshot.series:
        if series.entity.kind != "node":
            continue
        node = labels_of(series.entity.id)
        _emit(writer, series, node, start)
        if series.metric == "node.cpu_count":
            # the first sampled count: a window that opens on a gap must not export one CPU for a 16-CPU node
            cpus[series.entity.id] = float(next((v for v in series.values if v is not None), 1.0))
    for series in snapshot.series:
        if series.metric == "node.cpu_busy":
            node = labels_of(series.entity.id)
            count = int(cpus[series.entity.id])
            writer.counter(
                "node_cpu_seconds_total",
                {**node.node_exporter, "cpu": "0", "mode": "user"},
                start,
                list(series.values),
            )
            idle = [None if v is None else max(count - v, 0.0) / count for v in series.values]
            for cpu in range(count):
                writer.counter(
                    "node_cpu_seconds_total",
                    {**node.node_exporter, "cpu": str(cpu), "mode": "idle"},
                    start,
                    idle,
                )
    for node_id in {s.entity.id for s in snapshot.series if s.entity.kind == "node"}:
        node = labels_of(node_id)
        for name, extra, value, kind in DECOYS:
            values: list[float | None] = [value] * n
            base = node.node_exporter if name.startswith("node_") else node.tikv
            if kind == "counter":
                writer.counter(name, {**base, **extra}, start, values)
            else:
                writer.gauge(name, {**base, **extra}, start, values)
    return writer.render()


def _emit(writer: _Writer, series: Series, node: NodeLabels, start: float) -> None:
    metric = series.metric
    values = list(series.values)
    if metric in THREADS:
        names = THREADS[metric]
        share = [None if v is None else v / len(names) for v in values]
        for tid, name in enumerate(names):
            writer.counter(
                "tikv_thread_cpu_seconds_total",
                {**node.tikv, "name": name, "tid": str(1000 + tid)},
                start,
                share,
            )
    elif metric in HISTOGRAMS:
        name, extra = HISTOGRAMS[metric]
        writer.histogram(name, {**node.tikv, **extra}, start, values)
    elif metric in SIMPLE:
        name, extra, kind = SIMPLE[metric]
        base = node.node_exporter if metric.startswith("node.") else node.tikv
        labels = {**base, **extra}
        for label in ("device", "mountpoint", "fstype"):
            if label in series.labels:
                labels[label] = series.labels[label]
        if kind == "counter":
            writer.counter(name, labels, start, values)
        else:
            writer.gauge(name, labels, start, values)


# --- live endpoint ---------------------------------------------------------------------------------------


class ExporterServer:
    """Serve one TiKV's `/metrics` and `/config` on (host, port) from a thread; `config` may be changed live."""

    def __init__(self, host: str, config: dict[str, Any]) -> None:
        self.config = config
        self.metrics_text = 'tikv_store_size_bytes{type="used"} 1\n'
        self.config_requests = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                if self.path.split("?")[0] == "/config":
                    server.config_requests += 1
                    body = json.dumps(server.config).encode()
                    kind = "application/json"
                elif self.path == "/metrics":
                    body = server.metrics_text.encode()
                    kind = "text/plain; version=0.0.4"
                else:
                    self.send_response(404)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer((host, 0), Handler)
        self.host = host
        self.port = int(self._httpd.server_address[1])
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def tikv_config_json(node_config: dict[str, Any], store_address: str, status_address: str) -> dict[str, Any]:
    """Return a TiKV-shaped `/config` document: the node's effective config plus its server addresses."""
    config = json.loads(json.dumps(node_config))
    server = config.setdefault("server", {})
    server.update(
        {
            "addr": "0.0.0.0:20160",
            "advertise-addr": store_address,
            "status-addr": "0.0.0.0:20180",
            "advertise-status-addr": status_address,
        }
    )
    return config


LOOKBACK_SECONDS = 300  # Prometheus's --query.lookback-delta default (5m)


def prometheus_answers(series: Series, statistic: str) -> dict[Any, float]:
    """Map each minute of a simulated series to what a range query over the history answers (gaps left out).

    A rate or a histogram quantile over [1m] has no samples in a missed minute: no answer. A bare selector (a
    gauge, a count of series) answers with the newest sample within the lookback delta (5 minutes). A live
    Prometheus would write staleness markers after a failed scrape and answer nothing; blocks made by
    `promtool tsdb create-blocks-from openmetrics` hold no staleness markers, so the previous sample is taken.
    """
    out: dict[Any, float] = {}
    last: tuple[int, float] | None = None
    for i, v in enumerate(series.values):
        at = series.start + timedelta(seconds=i * series.step_seconds)
        if v is not None:
            out[at] = float(v)
            last = (i, float(v))
        elif (
            statistic in ("gauge", "count")
            and last is not None
            and (i - last[0]) * series.step_seconds < LOOKBACK_SECONDS
        ):
            out[at] = last[1]
    return out
