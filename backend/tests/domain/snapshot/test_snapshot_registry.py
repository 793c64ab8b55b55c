"""The metric registry is the collectors' and the advisor's contract: names must be real and units right."""

from __future__ import annotations

from pathlib import Path

import pytest
from headroom.domain.snapshot.registry import (
    NODE_EXPORTER_STANDARD,
    REGISTRY,
    REGISTRY_LIST,
    CloudWatchSource,
    PrometheusSource,
    UnknownMetric,
    metric_spec,
    metrics_for,
    prometheus_metric_names,
)

# The metric names TiKV's own Grafana dashboard queries (tikv/tikv metrics/grafana/tikv_details.json), kept in the
# repository beside the Prometheus source's tests.
REFERENCE = (
    Path(__file__).resolve().parents[2] / "sources" / "prometheus" / "data" / "tikv-dashboard-metric-names.txt"
)


def _dashboard_names() -> set[str]:
    lines = REFERENCE.read_text().splitlines()
    return {line.strip() for line in lines if line.strip() and not line.startswith("#")}


def test_every_prometheus_name_is_on_the_tikv_dashboard_or_in_node_exporter() -> None:
    known = _dashboard_names() | NODE_EXPORTER_STANDARD
    missing = sorted(prometheus_metric_names() - known)
    assert missing == [], f"not in {REFERENCE.name} nor node_exporter's standard set: {missing}"


def test_every_prometheus_query_mentions_its_metrics() -> None:
    for spec in REGISTRY_LIST:
        if isinstance(spec.source, PrometheusSource):
            for name in spec.source.metrics:
                assert name in spec.source.query, spec.name


def test_node_exporter_names_used_are_the_standard_ones() -> None:
    used = {n for n in prometheus_metric_names() if n.startswith("node_")}
    assert used <= NODE_EXPORTER_STANDARD
    assert (
        "node_disk_io_time_seconds_total" in _dashboard_names()
    )  # the one the TiKV dashboard queries itself


def test_names_are_unique_and_indexed() -> None:
    assert len(REGISTRY) == len(REGISTRY_LIST)
    assert metric_spec("ebs.read_ops").source == CloudWatchSource(
        "AWS/EBS", "VolumeReadOps", "Sum", "VolumeId"
    )
    with pytest.raises(UnknownMetric):
        metric_spec("ebs.nope")


# docs/reference/cloudwatch.md#volume-metrics, docs/reference/cloudwatch.md#instance-ebs-metrics: metric, unit, the statistic to use.
@pytest.mark.parametrize(
    ("name", "namespace", "metric", "unit", "statistic"),
    [
        ("ebs.read_ops", "AWS/EBS", "VolumeReadOps", "Count", "Sum"),
        ("ebs.write_ops", "AWS/EBS", "VolumeWriteOps", "Count", "Sum"),
        ("ebs.read_bytes", "AWS/EBS", "VolumeReadBytes", "Bytes", "Sum"),
        ("ebs.write_bytes", "AWS/EBS", "VolumeWriteBytes", "Bytes", "Sum"),
        ("ebs.total_read_time", "AWS/EBS", "VolumeTotalReadTime", "Seconds", "Sum"),
        ("ebs.total_write_time", "AWS/EBS", "VolumeTotalWriteTime", "Seconds", "Sum"),
        ("ebs.queue_length", "AWS/EBS", "VolumeQueueLength", "Count", "Average"),
        ("ebs.idle_time", "AWS/EBS", "VolumeIdleTime", "Seconds", "Sum"),
        ("ebs.burst_balance", "AWS/EBS", "BurstBalance", "Percent", "Minimum"),
        ("ebs.iops_exceeded_check", "AWS/EBS", "VolumeIOPSExceededCheck", "None", "Maximum"),
        ("ebs.throughput_exceeded_check", "AWS/EBS", "VolumeThroughputExceededCheck", "None", "Maximum"),
        ("ec2.ebs_read_ops", "AWS/EC2", "EBSReadOps", "Count", "Sum"),
        ("ec2.ebs_write_ops", "AWS/EC2", "EBSWriteOps", "Count", "Sum"),
        ("ec2.ebs_read_bytes", "AWS/EC2", "EBSReadBytes", "Bytes", "Sum"),
        ("ec2.ebs_write_bytes", "AWS/EC2", "EBSWriteBytes", "Bytes", "Sum"),
        ("ec2.ebs_io_balance", "AWS/EC2", "EBSIOBalance%", "Percent", "Minimum"),
        ("ec2.ebs_byte_balance", "AWS/EC2", "EBSByteBalance%", "Percent", "Minimum"),
    ],
)
def test_cloudwatch_sources_match_the_reference(
    name: str, namespace: str, metric: str, unit: str, statistic: str
) -> None:
    spec = REGISTRY[name]
    assert isinstance(spec.source, CloudWatchSource)
    assert (spec.source.namespace, spec.source.metric_name, spec.unit, spec.statistic) == (
        namespace,
        metric,
        unit,
        statistic,
    )
    assert spec.entity == ("volume" if namespace == "AWS/EBS" else "instance")


@pytest.mark.parametrize(
    ("pool", "selector"),
    [  # dashboard selectors, docs/reference/tikv-metrics.md#thread-names
        ("scheduler", 'name=~"sched_.*"'),
        ("apply", 'name=~"apply_[0-9]+"'),
        ("raftstore", 'name=~"(raftstore|rs)_.*"'),
        ("store_writer", 'name=~"store_write.*"'),
        ("unified_read_pool", 'name=~"unified_read_po.*"'),
        ("grpc", 'name=~"grpc.*"'),
    ],
)
def test_thread_cpu_selectors_follow_the_dashboard(pool: str, selector: str) -> None:
    spec = REGISTRY[f"tikv.thread_cpu.{pool}"]
    assert isinstance(spec.source, PrometheusSource)
    assert selector in spec.source.query
    assert spec.unit == "cores"


def test_every_entity_kind_has_metrics() -> None:
    assert {s.entity for s in REGISTRY_LIST} == {"volume", "instance", "node"}
    assert len(metrics_for("volume")) == 11
    assert all(s.description for s in REGISTRY_LIST)


def test_docs_list_every_registry_name() -> None:
    docs = (Path(__file__).resolve().parents[4] / "docs" / "snapshot.md").read_text()
    missing = [name for name in REGISTRY if f"`{name}`" not in docs]
    assert missing == [], f"docs/snapshot.md does not list {missing}"
