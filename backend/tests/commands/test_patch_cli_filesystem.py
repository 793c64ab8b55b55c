"""`headroom patch --format aws` on a snapshot carries each node's data mount and its filesystem type, as
node_exporter labels node_filesystem_size_bytes (mountpoint, fstype), to the script's filesystem step after a size
change (docs/reference/filesystem-grow.md#where-the-filesystem-type-comes-from)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from headroom.domain.snapshot.files import snapshot_from_dict
from headroom.domain.snapshot.views import disk_view
from test_patch_cli import run, snapshot_document  # type: ignore[import-not-found]

GIB = 1024**3


def _fs_series(labels: dict[str, str]) -> dict[str, Any]:
    return {"entity": {"kind": "node", "id": "tikv-1"}, "metric": "node.fs_size_bytes", "unit": "bytes",
            "statistic": "gauge", "labels": labels, "start": "2026-11-13T00:00:00Z", "step_seconds": 3600,
            "values": [1000.0 * GIB] * 168}


def _document(*series: dict[str, Any]) -> dict[str, Any]:
    document = snapshot_document()
    document["nodes"][0]["config"]["storage"]["data-dir"] = "/data1/tikv"
    document["series"] = list(series)
    return document


def test_the_data_mount_and_its_type_reach_the_filesystem_step(tmp_path: Path) -> None:
    document = _document(_fs_series({"mountpoint": "/", "fstype": "ext4"}),
                         _fs_series({"mountpoint": "/data1", "fstype": "xfs"}))
    disk = disk_view(snapshot_from_dict(document), "tikv-1")
    assert (disk.mountpoint, disk.fstype) == ("/data1", "xfs")
    snapshot = tmp_path / "snapshot.json"
    snapshot.write_text(json.dumps(document))
    volume = "vol-0a1b2c3d4e5f60001"
    findings = {"findings": [{"rule": "low-space", "dedup_key": "low-space:tikv-1", "changes": [{
        "target": "aws", "key": "volume.size", "current": 1024, "proposed": 1536,
        "entity": {"kind": "volume", "id": volume, "volume_id": volume, "instance_id": "i-0a1b2c3d4e5f60001"}}]}]}
    path = tmp_path / "findings.json"
    path.write_text(json.dumps(findings))
    result = run(str(snapshot), "--findings", str(path), "--format", "aws")
    assert result.exit_code == 0, result.stderr
    assert f"grow_filesystem {volume} 10.0.1.5:20160 xfs /data1\n" in result.stdout
    assert "TIUP_CLUSTER=prod-east" in result.stdout


def test_a_series_stored_before_fstype_was_collected_gives_way_to_one_with_it() -> None:
    old = _fs_series({"mountpoint": "/data1"})
    new = _fs_series({"mountpoint": "/data1", "fstype": "ext4"})
    for order in ((old, new), (new, old)):
        assert disk_view(snapshot_from_dict(_document(*order)), "tikv-1").fstype == "ext4"
    assert disk_view(snapshot_from_dict(_document(old)), "tikv-1").fstype is None
