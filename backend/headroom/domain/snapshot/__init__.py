"""Cluster snapshots: the format (schema), the metric registry, file I/O and the fleet simulator."""

from headroom.domain.snapshot.errors import ScenarioError, SnapshotError
from headroom.domain.snapshot.files import load_snapshot, save_snapshot, snapshot_from_dict, snapshot_to_json
from headroom.domain.snapshot.registry import REGISTRY, MetricSpec, metric_spec
from headroom.domain.snapshot.schema import SCHEMA_VERSION, Snapshot, snapshot_json_schema

__all__ = [
    "REGISTRY",
    "SCHEMA_VERSION",
    "MetricSpec",
    "ScenarioError",
    "Snapshot",
    "SnapshotError",
    "load_snapshot",
    "metric_spec",
    "save_snapshot",
    "snapshot_from_dict",
    "snapshot_json_schema",
    "snapshot_to_json",
]
