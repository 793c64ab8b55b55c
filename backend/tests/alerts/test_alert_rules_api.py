"""GET /clusters/{id}/alert-rules on the demo cluster's data as the collectors store it: a rule file that the real
promtool accepts, with each store's own limits."""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from headroom.domain.catalog import volume_limits
from headroom.domain.snapshot.scenario import load_scenario
from headroom.inventory.models import TikvNode, Volume
from headroom.sources.demo import service as demo
from helpers import join_with_role, sign_up
from sqlalchemy import select

END = dt.datetime(2026, 11, 2, 18, 0, tzinfo=dt.UTC)


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool is installed by scripts/bootstrap.sh")
def test_the_rule_file_passes_promtool_with_each_stores_own_limits(client: Any, make_client: Any, db: Any,
                                                                    clock: Any, tmp_path: Path) -> None:
    owner = sign_up(client, org="Rules Org")
    viewer = join_with_role(owner, make_client(), "viewer")
    cluster = demo.seed_demo_cluster(db, uuid.UUID(owner.org_id))
    demo.ingest_window(db, cluster, load_scenario(demo.default_scenario_path()), END - dt.timedelta(hours=1), END)
    db.commit()
    clock.now = END

    response = viewer.get(f"/api/v1/clusters/{cluster.id}/alert-rules")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/yaml")
    assert response.headers["content-disposition"] == 'attachment; filename="headroom-demo-prod-demo.rules.yml"'
    path = tmp_path / "rules.yml"
    path.write_text(response.text)
    checked = subprocess.run(["promtool", "check", "rules", str(path)], capture_output=True, text=True, timeout=120,
                             check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr

    rules = [r for g in yaml.safe_load(response.text)["groups"] for r in g["rules"]]
    nodes = list(db.scalars(select(TikvNode).where(TikvNode.cluster_id == cluster.id)))
    volumes = {v.id: v for v in db.scalars(select(Volume).where(Volume.cluster_id == cluster.id))}
    iops_rules = {r["labels"]["tikv_node"]: r for r in rules if r["alert"] == "HeadroomDataVolumeIopsAtCeiling"}
    assert len(iops_rules) == len(nodes) == 6
    for node in nodes:
        vol = volumes[node.data_volume_ref_id]
        ceiling = volume_limits(vol.volume_type, vol.size_gib, vol.iops, vol.throughput_mibps).baseline_iops
        # the node's own data volume ceiling (gp2 at 3 IOPS/GiB, gp3 provisioned), on the disk under its data dir
        assert iops_rules[node.store_address]["expr"].endswith(f">= 0.9 * {ceiling:g}"), node.store_address
        assert 'mountpoint="/data"' in iops_rules[node.store_address]["expr"]
    assert json_notes(response)  # what Prometheus cannot see (the gp2 burst balance) is said
    # another organisation's cluster is a 404
    assert sign_up(client, org="Not Yours").get(f"/api/v1/clusters/{cluster.id}/alert-rules").status_code == 404


def json_notes(response: Any) -> list[str]:
    import json

    notes: list[str] = json.loads(response.headers["x-headroom-notes"])
    return [n for n in notes if "CloudWatch" in n]
