"""Fix outcomes through the real API and PostgreSQL, on the demo cluster's data as the collectors store it: a
patch marked applied whose IOPS raise Headroom then sees in the EC2 inventory; the same load under the new ceiling
holds the prediction, a ceiling that went the wrong way misses it; the job stores each outcome once, and the rules
page counts them for the org that owns them only (docs/thresholds/fix-outcomes.md)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from changes_support import CHANGE, OUTCOME_AFTER
from headroom.changes import service as changes_service
from headroom.changes.models import FixOutcomeRecord
from headroom.findings.models import FindingRecord, Recommendation
from headroom.inventory.models import InventoryChange, Volume
from headroom.platform.jobs.context import JobContext
from headroom.platform.settings import Settings
from helpers import sign_up, units_of_work
from sqlalchemy import func, select

AFTER = OUTCOME_AFTER


@pytest.fixture()
def world(outcomes_world: Any, make_client: Any, db: Any) -> dict[str, Any]:
    """The outcomes' demo cluster (built once for the directory, conftest.py) with its owner."""
    return outcomes_world.in_test(make_client, db)


def _job_context(sessions: Any) -> JobContext:
    def queue(name: str, **params: Any) -> str:
        raise AssertionError(f"outcomes queue nothing ({name})")

    return JobContext(settings=Settings(), database_url="unused", units=units_of_work(sessions), queue=queue)


def _apply_throughput_fix(world: dict[str, Any], db: Any, clock: Any, factor: float | None,
                          marked_later: dt.timedelta = dt.timedelta(0)) -> tuple[Any, Volume]:
    """Mark the throughput finding's patch applied (a gp3 data volume at 125 MiB/s); the sweep then sees the volume
    at the patch's MiB/s (factor None) or at `factor` times its old MiB/s (a change that went the other way)."""
    cluster, owner = world["cluster"], world["owner"]
    rec, finding = next((r, f) for r, f in db.execute(
        select(Recommendation, FindingRecord).join(FindingRecord, FindingRecord.id == Recommendation.finding_id)
        .where(FindingRecord.cluster_id == cluster.id)
        .order_by(FindingRecord.rule, FindingRecord.entity_id, Recommendation.position))
        if r.change.key == "volume.throughput" and r.change.current)
    volume_id = rec.change.entity.volume_id or rec.change.entity.id
    # marked applied as the sweep sees the new MiB/s, or `marked_later` (the after window starts at CHANGE)
    clock.now = CHANGE + marked_later
    created = owner.post(f"/api/v1/clusters/{cluster.id}/patches", json={"finding_ids": [str(finding.id)]})
    assert created.status_code == 201, created.text
    assert owner.post(f"/api/v1/clusters/{cluster.id}/patches/{created.json()['id']}/applied").status_code == 200
    vol = db.scalar(select(Volume).where(Volume.cluster_id == cluster.id, Volume.volume_id == volume_id))
    old = vol.throughput_mibps
    vol.throughput_mibps = int(float(rec.change.proposed)) if factor is None else int(old * factor)
    db.add(InventoryChange(org_id=cluster.org_id, entity_kind="volume", entity_id=volume_id,
                           field="throughput_mibps", old_value=old, new_value=vol.throughput_mibps,
                           observed_at=CHANGE))
    db.commit()
    clock.now = CHANGE + AFTER
    return finding, vol


def _rule(actor: Any, rule: str) -> dict[str, Any]:
    response = actor.get("/api/v1/rules")
    assert response.status_code == 200, response.text
    return next(r for r in response.json()["items"] if r["id"] == rule)


def test_a_fix_that_did_what_it_said_held(world: dict[str, Any], db: Any, clock: Any, client: Any,
                                          sessions: Any) -> None:
    finding, _ = _apply_throughput_fix(world, db, clock, None)
    rule = finding.rule
    owner, cluster = world["owner"], world["cluster"]
    # the ledger judges it on read: the same load under the new ceiling, as the finding predicted
    items = owner.get(f"/api/v1/clusters/{cluster.id}/changes").json()["items"]
    patch = next(i for i in items if i["kind"] == "patch_applied")
    (addressed,) = patch["findings"]
    outcome = addressed["outcome"]
    assert addressed["id"] == str(finding.id)
    assert outcome["verdict"] == "held", outcome
    assert outcome["measured_after_percent"] < outcome["measured_before_percent"]
    assert outcome["predicted_after_percent"] < outcome["predicted_before_percent"]
    assert outcome["summary"].startswith("Held: predicted ") and "measured" in outcome["summary"]
    assert "data volume throughput ceiling" in outcome["measure"]

    # before the job has run, the rule has nothing on record
    assert _rule(owner, rule)["accuracy"]["statement"] == "No fix of this rule applied yet in the last 90 days."
    first = changes_service.measure_outcomes(_job_context(sessions), clock.now)
    again = changes_service.measure_outcomes(_job_context(sessions), clock.now + dt.timedelta(hours=1))
    assert first["failed"] == again["failed"] == 0 and first["outcomes"] >= 1
    rows = db.scalar(select(func.count()).select_from(FixOutcomeRecord)
                     .where(FixOutcomeRecord.cluster_id == cluster.id))
    assert rows == first["outcomes"] == again["outcomes"]  # re-running rewrites the same rows
    accuracy = _rule(owner, rule)["accuracy"]
    assert (accuracy["measured"], accuracy["held"], accuracy["held_share"]) == (1, 1, 1.0)
    assert accuracy["statement"] == "The prediction held for 1 of 1 applied fix measured in the last 90 days."

    # another organisation sees none of it
    stranger = sign_up(client, org="Elsewhere")
    theirs = _rule(stranger, rule)["accuracy"]
    assert theirs["measured"] == 0 and theirs["held_share"] is None
    assert theirs["statement"] == "No fix of this rule applied yet in the last 90 days."


def test_a_fix_that_made_it_worse_missed(world: dict[str, Any], db: Any, clock: Any, sessions: Any) -> None:
    finding, _ = _apply_throughput_fix(world, db, clock, 0.5)  # the volume ended at half its MiB/s: the same load uses twice as much
    owner, cluster = world["owner"], world["cluster"]
    items = owner.get(f"/api/v1/clusters/{cluster.id}/changes").json()["items"]
    patch = next(i for i in items if i["kind"] == "patch_applied")
    outcome = patch["findings"][0]["outcome"]
    assert outcome["verdict"] == "missed", outcome
    assert outcome["measured_after_percent"] > outcome["measured_before_percent"]
    assert "wrong way" in outcome["summary"]
    changes_service.measure_outcomes(_job_context(sessions), clock.now)
    accuracy = _rule(owner, finding.rule)["accuracy"]
    assert accuracy["held"] == 0 and accuracy["missed"] == accuracy["measured"] >= 1
    assert accuracy["held_share"] == 0.0
    assert accuracy["statement"].startswith("The prediction held for 0 of ")


def test_too_early_the_day_of_the_change(world: dict[str, Any], db: Any, clock: Any) -> None:
    _apply_throughput_fix(world, db, clock, None)
    clock.now = CHANGE + dt.timedelta(hours=6)
    items = world["owner"].get(f"/api/v1/clusters/{world['cluster'].id}/changes").json()["items"]
    outcome = next(i for i in items if i["kind"] == "patch_applied")["findings"][0]["outcome"]
    assert outcome["verdict"] == "too_early" and outcome["measurable_at"].startswith("2026-11-03T18:00")
    assert "measurable in 18 h" in outcome["summary"]


def test_the_after_window_starts_when_the_change_was_seen_not_when_it_was_marked(
        world: dict[str, Any], db: Any, clock: Any, sessions: Any) -> None:
    """A patch marked applied 20 hours after Headroom saw its change in the EC2 inventory: the after window starts
    at the change (a whole day of it by now, so it is measured), not at the marking (6 hours: too early)."""
    finding, _ = _apply_throughput_fix(world, db, clock, None, marked_later=dt.timedelta(hours=20))
    owner, cluster = world["owner"], world["cluster"]
    patch = next(i for i in owner.get(f"/api/v1/clusters/{cluster.id}/changes").json()["items"]
                 if i["kind"] == "patch_applied")
    assert dt.datetime.fromisoformat(patch["at"]) == CHANGE + dt.timedelta(hours=20)  # listed when marked
    assert dt.datetime.fromisoformat(patch["effect"]["after_start"]) == CHANGE
    assert patch["findings"][0]["outcome"]["verdict"] == "held", patch["findings"][0]["outcome"]
    assert changes_service.measure_outcomes(_job_context(sessions), clock.now)["failed"] == 0
    stored = db.scalar(select(FixOutcomeRecord).where(FixOutcomeRecord.cluster_id == cluster.id,
                                                      FixOutcomeRecord.finding_id == finding.id))
    assert stored is not None and stored.verdict == "held", stored and stored.outcome
