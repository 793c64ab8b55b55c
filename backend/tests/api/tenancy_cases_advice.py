"""Tenancy cases for the advice routes: findings, their actions, the snapshot download and patches.

`seed` gives org A a finding (written by the advice service, as the advice job would) and a patch of it (through
the API), so org B's walk addresses real ids.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

BODIES: dict[tuple[str, str], Any] = {
    ("POST", "/api/v1/clusters/{cluster_id}/advise"): {},
    ("POST", "/api/v1/clusters/{cluster_id}/patches"): {"finding_ids": "all_open", "base_config": "latest"},
    ("POST", "/api/v1/clusters/{cluster_id}/patches/{patch_id}/applied"): {},
    ("POST", "/api/v1/clusters/{cluster_id}/patches/{patch_id}/tiup"): {
        "topology": "tikv_servers:\n  - host: 10.0.1.5\n"
    },
    ("POST", "/api/v1/clusters/{cluster_id}/patches/{patch_id}/operator"): {
        "manifest": "apiVersion: pingcap.com/v1alpha1\nkind: TidbCluster\nmetadata: {name: basic}\nspec: {tikv: {}}\n"
    },
    ("POST", "/api/v1/clusters/{cluster_id}/what-if"): {
        "changes": [{"target": "aws", "key": "volume.type", "proposed": "gp3",
                     "entity": {"kind": "volume", "id": "vol-0aaaaaaaaaaaaaaaa", "volume_id": "vol-0aaaaaaaaaaaaaaaa"}}]
    },
    ("POST", "/api/v1/findings/{finding_id}/acknowledge"): {},
    ("POST", "/api/v1/findings/{finding_id}/snooze"): {"until": "2030-01-01T00:00:00Z"},
    ("POST", "/api/v1/findings/{finding_id}/resolve"): {},
    ("POST", "/api/v1/findings/{finding_id}/reopen"): {},
}

SECRET_TITLE = "a-secret-finding on vol-0aaaaaaaaaaaaaaaa"


def _finding(cluster_name: str) -> Any:
    from headroom.domain.advisor.finding import Finding, make_dedup_key
    from headroom.domain.model import Change, EntityRef, Evidence, Impact

    now = dt.datetime(2026, 11, 2, 12, 0, tzinfo=dt.UTC)
    entity = EntityRef(kind="volume", id="vol-0aaaaaaaaaaaaaaaa")
    return Finding(
        rule="tenancy-probe",
        severity="critical",
        entity=entity,
        title=SECRET_TITLE,
        evidence=Evidence(window_start=now - dt.timedelta(hours=1), window_end=now, step_seconds=60,
                          condition="a-secret-condition"),
        why="a-secret-why",
        changes=[
            Change(target="tikv", key="storage.block-cache.capacity", proposed="4GiB", reason="probe"),
            Change(target="aws", key="volume.iops", proposed=6000, reason="probe"),
        ],
        impact=Impact(summary="a-secret-impact"),
        confidence=0.9,
        dedup_key=make_dedup_key("tenancy-probe", cluster_name, entity),
    )


def seed(owner: Any, make_client: Any, ids: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    from headroom.clusters.models import Cluster
    from headroom.findings import service as findings
    from headroom.findings.models import FindingRecord

    sessions = owner.client.app.state.ctx.sessions
    with sessions() as db:
        cluster = db.get_one(Cluster, uuid.UUID(ids["cluster_id"]))
        findings.record_findings(db, cluster, [_finding(cluster.name)],
                                 now=dt.datetime(2026, 11, 2, 12, 0, tzinfo=dt.UTC))
        db.commit()
        finding_id = str(db.query(FindingRecord.id).filter(FindingRecord.cluster_id == cluster.id).scalar())
    patch = owner.post(f"/api/v1/clusters/{ids['cluster_id']}/patches", json={"finding_ids": [finding_id]})
    assert patch.status_code == 201, patch.text
    return (
        {"finding_id": finding_id, "patch_id": patch.json()["id"]},
        [finding_id, patch.json()["id"], SECRET_TITLE, "a-secret-why", "a-secret-impact", "vol-0aaaaaaaaaaaaaaaa"],
    )
