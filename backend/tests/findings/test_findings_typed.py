"""A stored finding is one typed thing: its evidence, options, sources, notes, impact and group go into PostgreSQL as
the domain's models and come back as the same models, in the JSON shape the advisor has always stored (real
PostgreSQL, the real advisor on the demo cluster's data). A stored blob the current models reject is reported
(logged with its column and the failing field) and read as absent: the finding's page still answers 200."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from typing import Any

from advice_support import END, ingest_demo
from headroom.domain.advisor import advise
from headroom.domain.model import (
    Ceiling,
    Change,
    Evidence,
    FindingGroup,
    Forecast,
    Impact,
    Measure,
    Option,
)
from headroom.findings import service as findings_service
from headroom.findings.models import FindingRecord
from headroom.findings.stored import StoredEvidence
from helpers import sign_up
from sqlalchemy import select, text
from structlog.testing import capture_logs

T0 = dt.datetime(2026, 11, 2, 12, 0, tzinfo=dt.UTC)


def test_every_finding_reads_back_as_the_advisor_made_it(client: Any, db: Any, clock: Any) -> None:
    owner = sign_up(client, org="Typed Org")
    demo = ingest_demo(db, uuid.UUID(owner.org_id))
    made: dict[str, Any] = {}

    def advise_and_keep(snapshot: Any, **kwargs: Any) -> Any:
        found = advise(snapshot, **kwargs)
        made.update({findings_service.stored_dedup_key(f.dedup_key): f for f in found})
        return found

    # what the API answers must equal what the advisor made in this run, model for model
    findings_service.advise_cluster(db, demo.cluster, now=END, advise=advise_and_keep)
    db.commit()
    clock.now = END + dt.timedelta(minutes=5)
    items = owner.get(f"/api/v1/clusters/{demo.cluster.id}/findings").json()["items"]
    assert len(items) == len(made) > 0
    forecasts = 0
    for item in items:
        detail = owner.get(f"/api/v1/findings/{item['id']}").json()
        finding = made[item["dedup_key"]]
        assert Evidence.model_validate(detail["evidence"]) == finding.evidence
        assert Impact.model_validate(detail["impact"]) == finding.impact
        assert [Option.model_validate(o) for o in detail["options"]] == finding.options
        forecasts += len(detail["evidence"]["forecasts"])
    # the demo's gp2 nodes drain their burst bucket: their findings carry a typed burst forecast
    gp2 = [f for f in made.values() if f.rule == "gp2-burst-depletion"]
    assert gp2 and all(f.evidence.forecasts[0].kind == "burst_empty" for f in gp2)
    assert forecasts >= len(gp2)


def _cluster(owner: Any, name: str) -> uuid.UUID:
    return uuid.UUID(owner.post("/api/v1/clusters", json={"name": name, "tikv_version": "v8.5.1"}).json()["id"])


def test_a_stored_finding_round_trips_as_its_typed_models(client: Any, db: Any) -> None:
    owner = sign_up(client, org="Round Trip Org")
    cid = _cluster(owner, "rt")
    evidence = Evidence(
        window_start=T0 - dt.timedelta(hours=24), window_end=T0, step_seconds=60,
        condition="counted IOPS >= 90% of 3,000 IOPS", share_of_window=0.25,
        measures=[Measure(label="p99 IOPS", value=2950.0, unit="IOPS", limit=3000.0, statistic="p99")],
        forecasts=[Forecast(kind="burst_empty", within_seconds=2100.0, unit="IOPS", value=300.0, method="probe")],
    )
    gp3 = Change(target="aws", key="volume.type", current="gp2", proposed="gp3", reason="probe")
    option = Option(label="gp3", changes=[gp3], impact=Impact(summary="3,000 IOPS sustained"), notes=["online"])
    impact = Impact(summary="headroom 2% -> 50%", headroom_before_pct=2.0, headroom_after_pct=50.0,
                    monthly_cost_delta_usd=-1.6)
    group = FindingGroup(id="g1", cause="disk I/O of node tikv-1", primary="rt:1", fix=["rt:1"], fix_label="gp3",
                         members=["rt:1", "rt:2"], related=["rt:2"], resolves=["rt:2"], remaining=[], measured=True,
                         summary="Primary fix: gp3 resolves 1 of 1")
    row = FindingRecord(org_id=uuid.UUID(owner.org_id), cluster_id=cid, rule="probe", entity_kind="volume",
                        entity_id="vol-rt", severity="warning", title="round trip", dedup_key="rt:1",
                        stored_evidence=StoredEvidence(evidence=evidence, options=(option,), sources=("AWS docs",),
                                                       notes=("a note",)),
                        impact=impact, group_id="g1", finding_group=group, first_seen_at=T0, last_seen_at=T0)
    db.add(row)
    db.commit()
    finding_id = row.id
    db.expunge_all()

    # read back from the database, the attributes are the models themselves
    back = db.scalars(select(FindingRecord).where(FindingRecord.id == finding_id)).one()
    assert isinstance(back.evidence, Evidence) and back.evidence == evidence
    assert back.options == (option,) and back.sources == ("AWS docs",) and back.notes == ("a note",)
    assert isinstance(back.impact, Impact) and back.impact == impact
    assert back.group == group
    stored = findings_service.StoredFinding.of(back)
    assert (stored.evidence, stored.impact, stored.group, stored.monthly_saving_usd) == (evidence, impact, group, 1.6)

    # the JSON shape is the one rows have always had: the Evidence's keys with options, sources and notes beside
    raw = db.execute(text("SELECT evidence, impact FROM findings WHERE id = :id"), {"id": finding_id}).one()
    assert raw.evidence == {**evidence.model_dump(mode="json"), "options": [option.model_dump(mode="json")],
                            "sources": ["AWS docs"], "notes": ["a note"]}
    assert raw.impact == impact.model_dump(mode="json")

    # no impact is stored as {} (the column is NOT NULL) and reads back as None
    bare = FindingRecord(org_id=uuid.UUID(owner.org_id), cluster_id=cid, rule="probe", entity_kind="volume",
                         entity_id="vol-rt", severity="info", title="bare", dedup_key="rt:bare",
                         first_seen_at=T0, last_seen_at=T0)
    db.add(bare)
    db.commit()
    assert db.execute(text("SELECT evidence, impact FROM findings WHERE id = :id"), {"id": bare.id}).one() == (
        {"options": [], "sources": [], "notes": []}, {})
    db.expunge_all()
    bare = db.get_one(FindingRecord, bare.id)
    assert (bare.evidence, bare.impact, bare.options, bare.group) == (None, None, (), None)


def test_a_stored_blob_the_models_reject_is_reported_not_a_500(client: Any, db: Any) -> None:
    owner = sign_up(client, org="Old Rows Org")
    cid = _cluster(owner, "old")
    row = FindingRecord(org_id=uuid.UUID(owner.org_id), cluster_id=cid, rule="probe", entity_kind="volume",
                        entity_id="vol-old", severity="warning", title="old row", dedup_key="probe:old",
                        first_seen_at=T0, last_seen_at=T0)
    db.add(row)
    db.commit()
    # As an older version might have left it (written around the typed columns, as a hand-made data fix would):
    # an evidence without its condition, one bad option next to a good one, a key since retired, an impact
    # without its summary.
    good = {"label": "gp3", "changes": [], "impact": {"summary": "ok"}, "notes": []}
    evidence = {"window_start": T0.isoformat(), "window_end": T0.isoformat(), "step_seconds": 60,
                "options": [good, {"label": "broken"}], "sources": ["AWS docs"], "retired_field": 1}
    db.execute(text("UPDATE findings SET evidence = CAST(:e AS jsonb), impact = CAST(:i AS jsonb) WHERE id = :id"),
               {"e": json.dumps(evidence), "i": json.dumps({"headroom_before_pct": 5}), "id": row.id})
    db.commit()

    with capture_logs() as logs:
        detail = owner.get(f"/api/v1/findings/{row.id}")
        listed = owner.get(f"/api/v1/clusters/{cid}/findings")
    assert detail.status_code == 200, detail.text
    body = detail.json()
    assert (body["evidence"], body["impact"], body["sources"]) == (None, None, ["AWS docs"])
    assert [o["label"] for o in body["options"]] == ["gp3"]
    assert body["impact_score"] == 0 and body["impact_basis"] == "none"
    assert listed.status_code == 200 and [i["id"] for i in listed.json()["items"]] == [str(row.id)]
    # each rejected part is logged once per read with its column and the field pydantic names
    invalid = {(e["column"], tuple(e["errors"])) for e in logs if e["event"] == "finding.stored_json_invalid"}
    assert invalid == {
        ("findings.evidence", ("condition: Field required",)),
        ("findings.evidence.options", ("changes: Field required", "impact: Field required")),
        ("findings.impact", ("summary: Field required",)),
    }


def test_a_measure_stored_before_it_had_a_ceiling_reads_back_without_one(client: Any, db: Any) -> None:
    owner = sign_up(client, org="Ceilingless Rows Org")
    cid = _cluster(owner, "ceilingless")
    row = FindingRecord(org_id=uuid.UUID(owner.org_id), cluster_id=cid, rule="probe", entity_kind="volume",
                        entity_id="vol-old", severity="warning", title="old measure", dedup_key="probe:ceilingless",
                        first_seen_at=T0, last_seen_at=T0)
    db.add(row)
    db.commit()
    # a measure as rows stored it before a measure named its ceiling: no `ceiling` key at all
    old_measure = {"label": "p99 counted IOPS", "value": 1049.0, "unit": "IOPS", "limit": 1050.0,
                   "limit_label": "current ceiling", "statistic": "p99", "source": "AWS docs"}
    evidence = {"window_start": T0.isoformat(), "window_end": T0.isoformat(), "step_seconds": 60,
                "condition": "counted IOPS >= 90%", "measures": [old_measure], "options": [], "sources": [],
                "notes": []}
    db.execute(text("UPDATE findings SET evidence = CAST(:e AS jsonb) WHERE id = :id"),
               {"e": json.dumps(evidence), "id": row.id})
    db.commit()
    db.expunge_all()

    back = db.get_one(FindingRecord, row.id)
    assert back.evidence is not None
    [measure] = back.evidence.measures
    assert (measure.limit, measure.ceiling) == (1050.0, None)
    body = owner.get(f"/api/v1/findings/{row.id}").json()
    assert body["evidence"]["measures"][0]["ceiling"] is None
    assert body["evidence"]["measures"][0]["limit"] == 1050.0

    # written now, the measure keeps its ceiling (kind and source) through the database
    ceiling = Ceiling(id="data_baseline_iops", label="gp2 baseline IOPS", value=1050.0, unit="IOPS",
                      kind="sustained", source="gp2 350 GiB: AWS docs")
    with_ceiling = back.evidence.model_copy(update={"measures": [measure.model_copy(update={"ceiling": ceiling})]})
    back.stored_evidence = StoredEvidence(evidence=with_ceiling)
    db.commit()
    db.expunge_all()
    again = db.get_one(FindingRecord, row.id)
    assert again.evidence is not None and again.evidence.measures[0].ceiling == ceiling
