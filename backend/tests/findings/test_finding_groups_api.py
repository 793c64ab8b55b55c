"""Findings that share a cause, through the real API and Postgres, on the demo fleet's stored data.

The demo fleet's two legacy nodes each have a 350 GiB gp2 data volume: baseline 3 x 350 = 1,050 IOPS, burst 3,000
(AWS gp2 docs, docs/reference/gp2-burst.md#the-credit-bucket). Their reads drain the bucket, and the block-cache rule sees the reads at the
read-IOPS ceiling and says "shrink" (PingCAP's AWS guide, docs/reference/pingcap-guidance.md#block-cache-on-ebs: a smaller block cache "to avoid read IOPS
from hitting the EBS limit"). Per node the two findings are one group; moving the volume to gp3 (3,000 IOPS
with no bucket) resolves both: "resolves 2 of 2". The hot node's compaction findings are a group of their own.
"""

from __future__ import annotations

from typing import Any

import pytest
from advice_support import END, Advised
from headroom.findings import service as findings_service
from headroom.findings.models import FindingRecord
from helpers import Actor
from sqlalchemy import select


@pytest.fixture()
def owner(advised: Advised) -> tuple[Actor, str, Any]:
    return advised.owner, advised.cid, advised.demo.cluster


def _items(actor: Actor, cid: str) -> list[dict[str, Any]]:
    response = actor.get(f"/api/v1/clusters/{cid}/findings")
    assert response.status_code == 200, response.text
    items: list[dict[str, Any]] = response.json()["items"]
    return items


def test_gp2_burst_and_block_cache_are_one_group_in_the_api(owner: tuple[Actor, str, Any]) -> None:
    actor, cid, _ = owner
    items = _items(actor, cid)
    bursts = [f for f in items if f["rule"] == "gp2-burst-depletion"]
    assert len(bursts) == 2
    by_key = {f["dedup_key"]: f for f in items}
    # The two legacy m5.2xlarge stores' block-cache shrink is one cluster-level finding, so their two
    # gp2 volumes out of burst and that shrink are one group: gp3 on both volumes resolves all three.
    (group_id,) = {b["group"]["id"] for b in bursts}
    group = bursts[0]["group"]
    assert all(b["group"] == group for b in bursts)
    (related_key,) = [k for k in group["related"] if by_key[k]["rule"] == "block-cache-size"]
    cache = by_key[related_key]
    assert cache["dedup_key"].endswith("/cluster:tikv@m5.2xlarge/shrink") and cache["group"] == group
    assert group["measured"] is True and group["primary"] in {b["dedup_key"] for b in bursts}
    assert sorted(group["resolves"]) == sorted([*(b["dedup_key"] for b in bursts), related_key])
    assert group["summary"].startswith("Primary fix: gp3") and group["summary"].endswith("resolves 3 of 3")
    detail = actor.get(f"/api/v1/findings/{cache['id']}").json()
    assert detail["group"] == group
    # Every grouped finding lists its group's members once.
    groups: dict[str, list[dict[str, Any]]] = {}
    for f in items:
        if f["group"] is not None:
            groups.setdefault(f["group"]["id"], []).append(f)
    assert group_id in groups and len(groups) >= 2
    for members in groups.values():
        assert sorted(members[0]["group"]["members"]) == sorted(m["dedup_key"] for m in members)


def test_group_ids_are_stable_across_runs(owner: tuple[Actor, str, Any], db: Any) -> None:
    actor, cid, cluster = owner
    before = {f["dedup_key"]: f["group"] and f["group"]["id"] for f in _items(actor, cid)}
    findings_service.advise_cluster(db, cluster, now=END)
    db.commit()
    after = {f["dedup_key"]: f["group"] and f["group"]["id"] for f in _items(actor, cid)}
    assert before == after and any(before.values())
    stored = db.scalars(select(FindingRecord).where(FindingRecord.cluster_id == cluster.id,
                                                    FindingRecord.group_id.is_not(None))).all()
    assert {r.group_id for r in stored} == {g for g in before.values() if g}
