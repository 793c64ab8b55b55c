"""The findings list carries each finding's headline impact and sorts by it (sort=impact), through the real API
on real PostgreSQL: hand-made findings with known impacts, and the findings the advisor makes of the demo data."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import pytest
from advice_support import Advised
from headroom.domain.model import Impact
from headroom.findings import service as findings_service
from headroom.findings.models import FindingRecord
from helpers import Actor, sign_up

T0 = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)


def _finding(db: Any, org: uuid.UUID, cluster: str, key: str, severity: str, impact: dict[str, Any]) -> None:
    db.add(FindingRecord(org_id=org, cluster_id=uuid.UUID(cluster), rule="test-rule", entity_kind="volume",
                   entity_id=f"vol-{key}", severity=severity, title=f"finding {key}",
                   impact=Impact.model_validate(impact) if impact else None,
                   dedup_key=f"test:{key}", first_seen_at=T0, last_seen_at=T0))


@pytest.fixture()
def made(client: Any, db: Any) -> tuple[Actor, str]:
    owner = sign_up(client, org="Impact Org")
    org = uuid.UUID(owner.org_id)
    cid = owner.post("/api/v1/clusters", json={"name": "prod", "tikv_version": "v8.5.1"}).json()["id"]
    # headroom 10 % -> 60 %: +50 points
    _finding(db, org, cid, "gain50", "info", {"summary": "IOPS headroom 10% -> 60%", "headroom_before_pct": 10,
                                              "headroom_after_pct": 60, "monthly_cost_delta_usd": 12.5})
    # no headroom figures: the metric 4,000 -> 5,000 is a 25 % change
    _finding(db, org, cid, "metric25", "critical", {"summary": "4,000 -> 5,000 IOPS", "before": 4000, "after": 5000})
    # a config value cut from 10,240 to 62: a 99.4 % change of the metric, but no measured headroom
    _finding(db, org, cid, "metric99", "warning", {"summary": "rate limit 10,240 -> 62 MiB/s", "before": 10240,
                                                   "after": 62})
    # nothing measurable, but a saving: scores 0, ranked after the measurable ones
    _finding(db, org, cid, "save", "warning", {"summary": "gp2 -> gp3 saves $20/month",
                                               "monthly_cost_delta_usd": -20.0})
    _finding(db, org, cid, "empty", "warning", {})
    db.commit()
    return owner, cid


def test_the_list_carries_the_headline_impact(made: tuple[Actor, str]) -> None:
    owner, cid = made
    body = owner.get(f"/api/v1/clusters/{cid}/findings").json()
    items = {f["dedup_key"]: f for f in body["items"]}
    gain = items["test:gain50"]
    assert gain["impact_summary"] == "IOPS headroom 10% -> 60%"
    assert (gain["headroom_before_pct"], gain["headroom_after_pct"], gain["headroom_gain_pct"]) == (10, 60, 50)
    assert (gain["monthly_cost_delta_usd"], gain["impact_score"], gain["severity_rank"]) == (12.5, 50, 3)
    metric = items["test:metric25"]
    assert metric["headroom_gain_pct"] is None and metric["impact_score"] == pytest.approx(25)
    assert metric["severity_rank"] == 1
    assert items["test:save"]["monthly_cost_delta_usd"] == -20.0 and items["test:save"]["impact_score"] == 0
    empty = items["test:empty"]
    assert (empty["impact_summary"], empty["monthly_cost_delta_usd"], empty["impact_score"]) == (None, None, 0)
    # the default order is still by severity
    assert [f["severity_rank"] for f in body["items"]] == [1, 2, 2, 2, 3]
    assert [items[k]["impact_basis"] for k in ("test:gain50", "test:metric99", "test:save")] == [
        "headroom", "metric", "none"]


def test_sort_by_impact(made: tuple[Actor, str]) -> None:
    owner, cid = made
    body = owner.get(f"/api/v1/clusters/{cid}/findings", params={"sort": "impact"}).json()
    # measured headroom (+50 points) first, then relative metric changes (99.4 %, 25 %), then the two with nothing
    # measurable: same severity, the $20/month saving first
    assert [f["dedup_key"] for f in body["items"]] == [
        "test:gain50", "test:metric99", "test:metric25", "test:save", "test:empty"]
    # filters still apply, and counts ignore the severity filter as before
    warnings = owner.get(f"/api/v1/clusters/{cid}/findings", params={"sort": "impact", "severity": "warning"}).json()
    assert [f["dedup_key"] for f in warnings["items"]] == ["test:metric99", "test:save", "test:empty"]
    assert warnings["counts"] == {"critical": 1, "warning": 3, "info": 1}


def test_bad_sort_names_the_field(made: tuple[Actor, str]) -> None:
    owner, cid = made
    bad = owner.get(f"/api/v1/clusters/{cid}/findings", params={"sort": "loudest"})
    assert bad.status_code == 422 and bad.json()["error"]["message"].startswith("Sort order")


def test_the_detail_and_the_list_agree(made: tuple[Actor, str]) -> None:
    owner, cid = made
    listed = owner.get(f"/api/v1/clusters/{cid}/findings").json()["items"][0]
    detail = owner.get(f"/api/v1/findings/{listed['id']}").json()
    for key in ("impact_summary", "headroom_gain_pct", "monthly_cost_delta_usd", "impact_score", "impact_basis",
                "severity_rank"):
        assert detail[key] == listed[key]
    assert detail["impact"]["summary"] == listed["impact_summary"]


def test_advisor_findings_rank_by_impact(advised: Advised) -> None:
    owner, demo = advised.owner, advised.demo
    items = owner.get(f"/api/v1/clusters/{demo.cluster.id}/findings", params={"sort": "impact"}).json()["items"]
    assert items, "the demo data gives findings"
    basis_rank = {"headroom": 0, "metric": 1, "none": 2}
    keys = [(basis_rank[f["impact_basis"]], -f["impact_score"]) for f in items]
    assert keys == sorted(keys)
    assert items[0]["impact_basis"] == "headroom" and items[0]["impact_score"] > 0
    for f in items:
        detail = owner.get(f"/api/v1/findings/{f['id']}").json()
        assert f["impact_summary"] == detail["impact"].get("summary")
        assert f["impact_score"] == pytest.approx(findings_service.impact_score(Impact.model_validate(detail["impact"])))
