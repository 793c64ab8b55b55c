"""GET /findings/{id} returns the advisor's evidence, impact and options as the typed models it stored (real
PostgreSQL, the real advisor on the demo cluster's data); what no longer validates is null, not an error."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from advice_support import END, ingest_demo
from headroom.domain.advisor import advise
from headroom.domain.model import Evidence, Impact, Option
from headroom.findings import service as findings_service
from headroom.findings.models import FindingRecord
from helpers import sign_up


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


def test_stored_json_that_no_longer_validates_reads_as_null(client: Any, db: Any) -> None:
    owner = sign_up(client, org="Old Rows Org")
    cid = owner.post("/api/v1/clusters", json={"name": "old", "tikv_version": "v8.5.1"}).json()["id"]
    t0 = dt.datetime(2026, 11, 2, 12, 0, tzinfo=dt.UTC)
    # an evidence without its condition, an impact without its summary, one bad option next to a good one
    good = {"label": "gp3", "changes": [], "impact": {"summary": "ok"}, "notes": []}
    row = FindingRecord(org_id=uuid.UUID(owner.org_id), cluster_id=uuid.UUID(cid), rule="probe", entity_kind="volume",
                  entity_id="vol-old", severity="warning", title="old row", dedup_key="probe:old",
                  evidence={"window_start": t0.isoformat(), "window_end": t0.isoformat(), "step_seconds": 60,
                            "options": [good, {"label": "broken"}], "sources": ["docs/reference/gp2-burst.md#the-credit-bucket"],
                            "retired_field": 1},
                  impact={"headroom_before_pct": 5}, first_seen_at=t0, last_seen_at=t0)
    db.add(row)
    db.commit()
    detail = owner.get(f"/api/v1/findings/{row.id}")
    assert detail.status_code == 200, detail.text
    body = detail.json()
    assert (body["evidence"], body["impact"], body["sources"]) == (None, None, ["docs/reference/gp2-burst.md#the-credit-bucket"])
    assert [o["label"] for o in body["options"]] == ["gp3"]
    assert body["impact_score"] == 0 and body["impact_basis"] == "none"
