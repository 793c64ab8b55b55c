"""The advice run's upsert: new, repeat, acknowledge, snooze, resolve, reopen, idempotence, and the real engine.

A tiny rule defined here (injected with `rules=`) fires on the cluster's first volume while `FIRE["on"]` is set,
so each step of the table controls exactly what the advisor says.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import pytest
from advice_support import DemoCluster, make_org
from headroom.accounts.models import AuditLog
from headroom.accounts.service import Principal
from headroom.clusters.models import Cluster
from headroom.domain.advisor.finding import Finding, make_dedup_key
from headroom.domain.advisor.rule import Rule
from headroom.domain.model import Change, EntityRef, Evidence, Impact
from headroom.findings import service
from headroom.findings.models import FindingRecord as FindingRow
from headroom.findings.models import Recommendation
from sqlalchemy import func, select, text

T0 = dt.datetime(2026, 11, 2, 18, 0, tzinfo=dt.UTC)
FIRE: dict[str, Any] = {"on": True, "severity": "warning", "proposed": "8GiB"}


def _tiny_rule_findings(ctx: Any) -> list[Finding]:
    if not FIRE["on"]:
        return []
    volume = ctx.volumes[0]
    node = ctx.nodes[0]
    entity = EntityRef(kind="volume", id=volume.id, node=node.id)
    return [
        Finding(
            rule="test-tiny",
            severity=FIRE["severity"],
            entity=entity,
            title=f"tiny finding at {FIRE['severity']}",
            evidence=Evidence(window_start=ctx.window.start, window_end=ctx.window.end,
                              step_seconds=ctx.step_seconds, condition="always"),
            why="because the test says so",
            changes=[
                Change(target="tikv", key="storage.block-cache.capacity", proposed=FIRE["proposed"],
                               reason="tiny", entity=EntityRef(kind="node", id=node.id)),
                Change(target="aws", key="volume.iops", proposed=4000, reason="tiny"),
            ],
            impact=Impact(summary="none"),
            confidence=0.5,
            dedup_key=make_dedup_key("test-tiny", ctx.cluster.name, entity),
        )
    ]


TINY = Rule(id="test-tiny", description="fires when the test says so", evaluate=_tiny_rule_findings)


@pytest.fixture(autouse=True)
def _reset_fire() -> None:
    FIRE.update(on=True, severity="warning", proposed="8GiB")


def _rows(db: Any, cluster: Cluster) -> list[FindingRow]:
    db.expire_all()
    return list(db.scalars(select(FindingRow).where(FindingRow.cluster_id == cluster.id)))


def _one(db: Any, cluster: Cluster) -> FindingRow:
    rows = _rows(db, cluster)
    assert len(rows) == 1
    return rows[0]


def _run(db: Any, demo: DemoCluster, minutes: int) -> service.RunSummary:
    return service.advise_cluster(db, demo.cluster, now=T0 + dt.timedelta(minutes=minutes), rules=[TINY])


def _admin(org_id: uuid.UUID) -> Principal:
    return Principal(user_id=None, org_id=org_id, role="admin", via="token")


def _state(row: FindingRow) -> tuple[str, dt.datetime, dt.datetime, dt.datetime | None, dt.datetime | None]:
    return row.status, row.first_seen_at, row.last_seen_at, row.resolved_at, row.snoozed_until


def at(minutes: int) -> dt.datetime:
    return T0 + dt.timedelta(minutes=minutes)


def test_lifecycle_table(db: Any, demo_cluster: DemoCluster) -> None:
    demo, who = demo_cluster, _admin(demo_cluster.org_id)
    # (step, what happens, expected (status, first_seen, last_seen, resolved_at, snoozed_until))
    _run(db, demo, 0)
    assert _state(_one(db, demo.cluster)) == ("open", at(0), at(0), None, None)  # new

    FIRE["severity"] = "critical"
    summary = _run(db, demo, 15)
    row = _one(db, demo.cluster)
    assert (summary.opened, summary.updated) == (0, 1)
    assert _state(row) == ("open", at(0), at(15), None, None)  # repeat: last seen moves, first seen stays
    assert (row.severity, row.title) == ("critical", "tiny finding at critical")  # refreshed

    service.acknowledge(db, who, row.id)
    _run(db, demo, 30)
    assert _state(_one(db, demo.cluster)) == ("acknowledged", at(0), at(30), None, None)

    FIRE["on"] = False
    summary = _run(db, demo, 45)
    assert summary.resolved == 1
    assert _state(_one(db, demo.cluster)) == ("resolved", at(0), at(30), at(45), None)  # vanished -> resolved

    FIRE["on"] = True
    summary = _run(db, demo, 60)
    assert summary.reopened == 1
    assert _state(_one(db, demo.cluster)) == ("open", at(0), at(60), None, None)  # fires again -> reopens

    service.snooze(db, who, row.id, until=at(120), now=at(61))
    FIRE["on"] = False
    _run(db, demo, 75)
    assert _state(_one(db, demo.cluster)) == ("snoozed", at(0), at(60), None, at(120))  # snoozed: not resolved
    FIRE["on"] = True
    _run(db, demo, 90)
    assert _state(_one(db, demo.cluster)) == ("snoozed", at(0), at(90), None, at(120))  # still snoozed
    _run(db, demo, 120)
    assert _state(_one(db, demo.cluster)) == ("open", at(0), at(120), None, None)  # snooze over -> open

    service.resolve(db, who, row.id, now=at(121))
    assert _state(_one(db, demo.cluster)) == ("resolved", at(0), at(120), at(121), None)
    service.reopen(db, who, row.id)
    assert _state(_one(db, demo.cluster)) == ("open", at(0), at(120), None, None)

    actions = [e.action for e in service.history(db, _one(db, demo.cluster))]
    # the severity rising from warning to critical at 15 minutes is an event of its own (alerts and the weekly
    # email's "worse this week" read it)
    assert actions == ["finding.opened", "finding.escalated", "finding.acknowledged", "finding.resolved",
                       "finding.reopened", "finding.snoozed", "finding.unsnoozed", "finding.resolved",
                       "finding.reopened"]
    users = db.scalars(select(AuditLog.details).where(AuditLog.target_id == str(row.id))).all()
    assert sum(1 for d in users if d.get("by") == "advisor") == 5
    escalated = db.scalar(select(AuditLog.details).where(AuditLog.target_id == str(row.id),
                                                         AuditLog.action == "finding.escalated"))
    assert escalated == {"by": "advisor", "from": "warning", "to": "critical", "at": at(15).isoformat()}


def test_recommendations_follow_the_current_changes(db: Any, demo_cluster: DemoCluster) -> None:
    _run(db, demo_cluster, 0)
    row = _one(db, demo_cluster.cluster)
    recs = service.recommendations(db, row)
    node = demo_cluster.simulated.nodes[0]
    volume = sorted(v.id for v in demo_cluster.simulated.volumes)[0]
    assert [(r.position, r.change.target, r.change.key, r.change.applies_to(), r.change.proposed) for r in recs] == [
        (0, "tikv", "storage.block-cache.capacity", node.address, "8GiB"),
        (1, "aws", "volume.iops", volume, 4000),
    ]
    assert recs[1].change.online is True  # modify-volume is online
    ids = [r.id for r in recs]
    FIRE["proposed"] = "6GiB"
    _run(db, demo_cluster, 15)
    recs = service.recommendations(db, row)
    assert [r.change.proposed for r in recs] == ["6GiB", 4000]
    assert [r.id for r in recs] == ids  # replaced in place, not re-created


def _recommendation_writes(db: Any) -> int:
    """Rows of the recommendations table this transaction inserted, updated or deleted so far."""
    db.flush()
    return int(db.scalar(text("SELECT n_tup_ins + n_tup_upd + n_tup_del FROM pg_stat_xact_user_tables "
                              "WHERE relname = 'recommendations'")))


def test_a_finding_seen_again_with_the_same_changes_rewrites_none(db: Any, demo_cluster: DemoCluster) -> None:
    """A finding seen again is updated (last seen), its recommendations are written only when they changed."""
    _run(db, demo_cluster, 0)
    row = _one(db, demo_cluster.cluster)
    before = _recommendation_writes(db)
    _run(db, demo_cluster, 15)
    assert _recommendation_writes(db) == before
    assert _one(db, demo_cluster.cluster).last_seen_at == T0 + dt.timedelta(minutes=15)
    FIRE["proposed"] = "6GiB"
    _run(db, demo_cluster, 30)
    assert _recommendation_writes(db) > before
    assert [r.change.proposed for r in service.recommendations(db, row)] == ["6GiB", 4000]
    FIRE["proposed"] = 4
    _run(db, demo_cluster, 45)
    written = _recommendation_writes(db)
    FIRE["proposed"] = 4.0  # equal in Python, another value in the JSON stored: written
    _run(db, demo_cluster, 60)
    assert _recommendation_writes(db) > written
    assert [r.change.proposed for r in service.recommendations(db, row)] == [4.0, 4000]


def test_the_same_run_twice_gives_the_same_rows(db: Any, demo_cluster: DemoCluster) -> None:
    def dump() -> list[tuple[Any, ...]]:
        db.expire_all()
        findings = [(f.id, *_state(f), f.severity, f.title, f.evidence, f.impact, f.confidence)
                    for f in _rows(db, demo_cluster.cluster)]
        recs = [(r.id, r.position, r.change.proposed) for r in
                db.scalars(select(Recommendation).where(Recommendation.org_id == demo_cluster.org_id)
                           .order_by(Recommendation.id))]  # no ORDER BY = heap order, which an UPDATE moves
        events = db.scalar(select(func.count()).select_from(AuditLog).where(AuditLog.org_id == demo_cluster.org_id))
        return [*findings, *recs, events]

    _run(db, demo_cluster, 0)
    first = dump()
    _run(db, demo_cluster, 0)
    assert dump() == first
    # An older run arriving late (a slow worker) does not move anything back.
    FIRE["on"] = False
    _run(db, demo_cluster, -15)
    assert dump() == first


def test_no_data_is_not_all_clear(db: Any, demo_cluster: DemoCluster) -> None:
    _run(db, demo_cluster, 0)
    # Two days later the window holds no point at all: the run is skipped and the finding stays open.
    summary = service.advise_cluster(db, demo_cluster.cluster, now=T0 + dt.timedelta(days=2), rules=[TINY])
    assert summary.skipped == "no data in the window"
    assert _one(db, demo_cluster.cluster).status == "open"


def test_the_real_engine_on_the_demo_cluster(db: Any, demo_cluster: DemoCluster) -> None:
    summary = service.advise_cluster(db, demo_cluster.cluster, now=T0)
    rows = _rows(db, demo_cluster.cluster)
    assert summary.opened == len(rows) > 0
    rules = {r.rule for r in rows}
    # demo.yaml: the legacy nodes' gp2 volumes drain their burst bucket every afternoon (docs/reference/gp2-burst.md#the-credit-bucket).
    assert "gp2-burst-depletion" in rules
    gp2 = {v.id for v in demo_cluster.simulated.volumes if v.type == "gp2" and v.role == "data"}
    burst = [r for r in rows if r.rule == "gp2-burst-depletion"]
    assert {r.entity_id for r in burst} == gp2 and all(r.entity_kind == "volume" for r in burst)
    # The demo's config findings are cluster-level, one per group of like stores, with each store's
    # own evidence; stores are known by store address.
    config_rows = [r for r in rows if r.entity_kind == "cluster" and "/cluster:tikv@" in r.dedup_key]
    addresses = {n.address for n in demo_cluster.simulated.nodes}
    stores = {n.node for r in config_rows if r.evidence is not None for n in r.evidence.per_node}
    assert config_rows and stores and stores <= addresses
    again = service.advise_cluster(db, demo_cluster.cluster, now=T0)
    assert (again.opened, again.resolved, again.updated) == (0, 0, len(rows))


def test_another_orgs_principal_cannot_act(db: Any, demo_cluster: DemoCluster) -> None:
    from headroom.platform.errors import NotFound

    _run(db, demo_cluster, 0)
    row = _one(db, demo_cluster.cluster)
    other = _admin(make_org(db, "other"))
    with pytest.raises(NotFound):
        service.acknowledge(db, other, row.id)
    assert _one(db, demo_cluster.cluster).status == "open"


def test_a_new_demo_cluster_awaits_its_first_advice_until_it_has_findings(db: Any, demo_cluster: DemoCluster) -> None:
    from headroom.findings.advice_runs import demo_clusters_awaiting_advice

    now = dt.datetime.now(dt.UTC)
    assert demo_cluster.cluster.id in demo_clusters_awaiting_advice(db, now)
    # only in its first day: an older demo cluster waits for the 15-minute schedule like any other
    assert demo_cluster.cluster.id not in demo_clusters_awaiting_advice(db, now + dt.timedelta(days=2))
    _run(db, demo_cluster, 0)
    assert demo_cluster.cluster.id not in demo_clusters_awaiting_advice(db, now)
