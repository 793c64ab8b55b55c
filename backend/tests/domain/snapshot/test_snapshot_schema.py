"""The snapshot format: published schema up to date, round trips, clear errors, secrets kept out."""

from __future__ import annotations

import gzip
import json
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from headroom.domain.snapshot.errors import SnapshotError
from headroom.domain.snapshot.files import load_snapshot, save_snapshot, snapshot_from_dict, snapshot_to_json
from headroom.domain.snapshot.schema import (
    REDACTED,
    Series,
    Snapshot,
    config_get,
    config_set,
    snapshot_json_schema_text,
)

SCHEMA_FILE = Path(__file__).resolve().parents[4] / "docs" / "snapshot.schema.json"
T0 = "2026-01-05T00:00:00Z"


def minimal() -> dict[str, Any]:
    """Return a small valid snapshot document."""
    return {
        "schema_version": 1,
        "generated_at": "2026-01-05T01:00:00Z",
        "source": {"kind": "collected"},
        "cluster": {"name": "c1", "tikv_version": "v8.5.1", "deployment": "tiup"},
        "window": {"start": T0, "end": "2026-01-05T00:03:00Z", "step_seconds": 60},
        "nodes": [
            {
                "id": "tikv-1",
                "store_id": 1,
                "address": "10.0.1.10:20160",
                "status_address": "10.0.1.10:20180",
                "instance_id": "i-1",
                "instance_type": "m6i.2xlarge",
                "vcpus": 8,
                "memory_gib": 32,
                "tikv_version": "v8.5.1",
                "host": "h1",
                "data_volume_ids": ["vol-1"],
                "config": {
                    "storage": {"block-cache": {"capacity": "14GiB"}},
                    "security": {"ca-path": "/etc/ca.pem"},
                },
            }
        ],
        "instances": [{"id": "i-1", "type": "m6i.2xlarge", "vcpus": 8, "memory_gib": 32}],
        "volumes": [
            {
                "id": "vol-1",
                "type": "gp3",
                "size_gib": 1000,
                "iops": 3000,
                "role": "data",
                "instance_id": "i-1",
            }
        ],
        "series": [
            {
                "entity": {"kind": "volume", "id": "vol-1"},
                "metric": "ebs.read_ops",
                "unit": "Count",
                "statistic": "Sum",
                "start": T0,
                "step_seconds": 60,
                "values": [60000, None, 120000],
            }
        ],
    }


def test_published_schema_is_current() -> None:
    assert SCHEMA_FILE.read_text() == snapshot_json_schema_text(), (
        "docs/snapshot.schema.json is stale: run `uv run headroom snapshot schema > docs/snapshot.schema.json`"
    )


def test_schema_lists_registry_metrics_and_version() -> None:
    schema = json.loads(SCHEMA_FILE.read_text())
    assert schema["properties"]["schema_version"]["const"] == 1
    assert "ebs.burst_balance" in schema["$defs"]["Series"]["properties"]["metric"]["enum"]


def test_round_trip_json_and_gzip(tmp_path: Path) -> None:
    snap = snapshot_from_dict(minimal())
    for name in ("s.json", "s.json.gz"):
        path = save_snapshot(snap, tmp_path / name)
        assert load_snapshot(path) == snap
    assert gzip.decompress((tmp_path / "s.json.gz").read_bytes()) == (tmp_path / "s.json").read_bytes()


def test_series_values_keep_gaps_and_timestamps() -> None:
    snap = snapshot_from_dict(minimal())
    series = snap.series[0]
    assert series.values == [60000, None, 120000]
    assert series.timestamps()[2] == datetime(2026, 1, 5, 0, 2, tzinfo=UTC)
    assert json.loads(snapshot_to_json(snap))["series"][0]["values"][1] is None


@pytest.mark.parametrize("values", [
    [60000.0, float("nan"), 120000.0, -0.0, 0.1 + 0.2, float("nan")],
    [1.5, 2.5],
    [float("nan")] * 3,
    [0.5, -0.0, float("nan"), *range(9)],  # a few gaps among many values
])
def test_a_series_from_an_array_is_the_series_of_its_list(values: list[float]) -> None:
    """Series.from_array (the store's grids) gives what the constructor gives for the same values as a list."""
    fields = minimal()["series"][0] | {"start": datetime(2026, 1, 5, tzinfo=UTC)}
    del fields["values"]
    grid = np.array(values)
    built = Series.from_array(grid, **fields)
    listed = Series(**fields, values=[None if math.isnan(v) else v for v in values])
    assert built == listed
    assert built.values == listed.values
    assert [type(v) for v in built.values] == [type(v) for v in listed.values]
    assert built.array.tobytes() == listed.array.tobytes()  # the same bits: -0.0 and NaN as numpy reads None
    assert not built.array.flags.writeable
    grid[0] = 7.0  # the caller's array stays the caller's
    assert built.array.tobytes() == listed.array.tobytes()
    assert Series.model_validate_json(built.model_dump_json()) == built


def test_secret_like_config_values_are_redacted() -> None:
    snap = snapshot_from_dict(minimal())
    assert snap.nodes[0].config_value("security.ca-path") == REDACTED
    assert snap.nodes[0].config_value("storage.block-cache.capacity") == "14GiB"
    assert "/etc/ca.pem" not in snapshot_to_json(snap)


def test_dotted_config_access() -> None:
    config = config_set({}, "rocksdb.defaultcf.block-size", "32KiB")
    assert config == {"rocksdb": {"defaultcf": {"block-size": "32KiB"}}}
    assert config_get(config, "rocksdb.defaultcf.block-size") == "32KiB"
    assert config_get(config, "rocksdb.writecf.block-size", "absent") == "absent"


def _break(doc: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    cursor: Any = doc
    parts = path.split(".")
    for part in parts[:-1]:
        cursor = cursor[int(part)] if part.isdigit() else cursor[part]
    last = parts[-1]
    cursor[int(last) if last.isdigit() else last] = value
    return doc


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("volumes.0.size_gib", -5, "volumes[0].size_gib: Input should be greater than 0"),
        ("volumes.0.type", "gp9", "volumes[0].type: Input should be"),
        ("nodes.0.memory_gib", "lots", "nodes[0].memory_gib: Input should be a valid number"),
        ("series.0.metric", "ebs.nope", "series[0]: unknown metric 'ebs.nope'"),
        ("series.0.unit", "Bytes", "series[0]: metric 'ebs.read_ops' has unit 'Count', not 'Bytes'"),
        ("series.0.entity.kind", "node", "series[0]: metric 'ebs.read_ops' describes a volume, not a node"),
        ("window.start", "2026-01-05T00:00:00", "window.start: Input should have timezone info"),
        ("nodes.0.instance_id", "i-404", "nodes[0].instance_id: 'i-404' is not in instances"),
    ],
)
def test_errors_name_the_bad_field(path: str, value: Any, message: str) -> None:
    with pytest.raises(SnapshotError) as err:
        snapshot_from_dict(_break(minimal(), path, value))
    assert message in str(err.value)


def test_unknown_version_is_refused() -> None:
    doc = minimal()
    doc["schema_version"] = 2
    with pytest.raises(SnapshotError, match="schema_version: this Headroom reads version 1, the file says 2"):
        snapshot_from_dict(doc)


def test_load_reports_path_and_bad_json(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    with pytest.raises(SnapshotError, match="bad.json: not JSON"):
        load_snapshot(bad)
    with pytest.raises(SnapshotError, match="missing.json"):
        load_snapshot(tmp_path / "missing.json")


def test_extra_fields_are_refused() -> None:
    doc = minimal()
    doc["cluster"]["password"] = "x"
    with pytest.raises(SnapshotError, match="cluster.password: Extra inputs are not permitted"):
        snapshot_from_dict(doc)


def test_model_is_the_public_type() -> None:
    assert isinstance(snapshot_from_dict(minimal()), Snapshot)
