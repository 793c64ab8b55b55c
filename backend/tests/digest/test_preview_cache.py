"""The Weekly email page's preview (GET /api/v1/org/digest/preview) is rendered once per data version: a second
ask reads a few version rows instead of every finding, chart and projection; a finding that changes, a new advice
round or the next hour renders it again; one org never gets another's preview. The advice round renders it (the
digest.preview job) for an org whose page was opened today and stores it in Redis, where every API process reads
it; without Redis, in the process's memory, which the in-process jobs share. An org nobody looks at costs the
rounds no render."""

from __future__ import annotations

import datetime as dt
import uuid
from pathlib import Path
from typing import Any

from app_support import make_app_context
from digest_seed import DIGEST_AT, advisor_finding, record
from helpers import sign_up, signed_in_again, units_of_work
from sqlalchemy import event


def _preview(owner: Any, connection: Any) -> tuple[dict[str, Any], int]:
    """The preview and how many statements answering it took."""
    statements: list[str] = []

    def count(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        statements.append(statement)

    event.listen(connection, "before_cursor_execute", count)
    try:
        r = owner.get("/api/v1/org/digest/preview")
    finally:
        event.remove(connection, "before_cursor_execute", count)
    assert r.status_code == 200, r.text
    return r.json(), len(statements)


def _org_with_findings(client: Any, sessions: Any, org: str, titles: list[str]) -> tuple[Any, str]:
    owner = sign_up(client, org=org)
    cluster = owner.post("/api/v1/clusters", json={"name": f"{org} cluster", "tikv_version": "v8.5.1"}).json()
    record(sessions, cluster["id"], [advisor_finding(cluster["id"], f"vol-{i:017x}", "warning", title)
                                     for i, title in enumerate(titles)])
    return owner, cluster["id"]


def test_the_preview_is_rendered_once_and_again_when_a_finding_changes(client: Any, sessions: Any, connection: Any,
                                                                      clock: Any) -> None:
    clock.now = DIGEST_AT
    owner, cluster_id = _org_with_findings(client, sessions, "Cached preview", ["Disk one is full", "Disk two is slow"])
    first, rendering = _preview(owner, connection)
    assert "Disk one is full" in first["html"] and "Disk two is slow" in first["text"]
    again, cached = _preview(owner, connection)
    assert again == first
    assert cached < rendering / 2, (cached, rendering)  # the version's reads only

    # a member resolves a finding: the next preview no longer lists it
    found = owner.get(f"/api/v1/clusters/{cluster_id}/findings").json()["items"]
    one = next(f for f in found if f["title"] == "Disk one is full")
    assert owner.post(f"/api/v1/findings/{one['id']}/resolve").status_code == 200
    after, rendered_again = _preview(owner, connection)
    assert "Disk one is full" not in after["text"] and "Disk two is slow" in after["text"]
    assert rendered_again > cached

    # an advice round that sees a finding again (its evidence may have moved) renders it again too
    record(sessions, cluster_id, [advisor_finding(cluster_id, "vol-00000000000000001", "critical", "Disk two is slow")],
           now=DIGEST_AT - dt.timedelta(minutes=1))
    escalated, _ = _preview(owner, connection)
    assert escalated != after and "[critical]" in escalated["text"].lower()

    # the reporting window ends now: the next hour is rendered again
    clock.advance(hours=1)
    later, _ = _preview(owner, connection)
    assert later["text"] != escalated["text"]


def test_one_org_never_sees_another_orgs_cached_preview(client: Any, make_client: Any, sessions: Any,
                                                      connection: Any, clock: Any) -> None:
    clock.now = DIGEST_AT
    first, _ = _org_with_findings(client, sessions, "Tenant one", ["Tenant one's secret disk"])
    second, _ = _org_with_findings(make_client(), sessions, "Tenant two", ["Tenant two's own disk"])
    one, _ = _preview(first, connection)
    two, _ = _preview(second, connection)
    assert "Tenant one's secret disk" in one["html"] and "Tenant one's secret disk" not in two["html"] + two["text"]
    assert "Tenant two's own disk" in two["html"] and "Tenant two's own disk" not in one["html"] + one["text"]
    # and again from the cache, each its own
    assert _preview(first, connection)[0] == one and _preview(second, connection)[0] == two


# --- rendered when its inputs change, stored where every process finds it -----------------------------------

REPO = Path(__file__).resolve().parents[3]
# The demo scenario's afternoon, 2 hours of it: enough for the advisor to find its gp2 and throughput findings.
ADVISED_AT = dt.datetime(2026, 11, 2, 18, 0, tzinfo=dt.UTC)


def _advised_org(client: Any, db: Any, org: str) -> tuple[Any, uuid.UUID]:
    """An org whose demo cluster has 2 hours of data and no advice yet."""
    from headroom.domain.snapshot.scenario import load_scenario
    from headroom.sources.demo import service as demo

    owner = sign_up(client, org=org)
    scenario = load_scenario(REPO / "examples" / "scenarios" / "demo.yaml")
    cluster = demo.seed_demo_cluster(db, uuid.UUID(owner.org_id), scenario=scenario)
    demo.ingest_window(db, cluster, scenario, ADVISED_AT - dt.timedelta(hours=2), ADVISED_AT)
    db.commit()
    return owner, cluster.id


def _job_context(sessions: Any, settings: Any, queued: list[tuple[str, dict[str, Any]]]) -> Any:
    """The context the advice and preview jobs run with: units of work in the test's transaction, a queue that
    records what it is given (the test then runs it, as a worker would)."""
    from headroom.platform.jobs.context import JobContext

    def queue(name: str, **params: Any) -> str:
        queued.append((name, params))
        return f"test:{name}"

    return JobContext(settings=settings, database_url="unused", units=units_of_work(sessions), queue=queue)


def _advice_round(sessions: Any, settings: Any, cluster_id: uuid.UUID) -> list[tuple[str, dict[str, Any]]]:
    """Run the advice job over the cluster as a worker does, then the jobs it queued for the preview; return what
    was queued with each preview job's status."""
    from headroom.digest import service
    from headroom.findings import advice_runs

    queued: list[tuple[str, dict[str, Any]]] = []
    ctx = _job_context(sessions, settings, queued)
    advice_runs.advise_clusters(ctx, ADVISED_AT, str(cluster_id), window_hours=2)
    for name, params in list(queued):
        assert name == "digest.preview"
        params["status"] = service.prepare_preview(ctx, ADVISED_AT, org_id=params["org_id"])["status"]
    return queued


def test_the_advice_round_leaves_the_preview_ready_for_every_api_process(
        client: Any, db: Any, sessions: Any, settings: Any, connection: Any, clock: Any, tmp_path: Path) -> None:
    from fastapi.testclient import TestClient
    from headroom.api.app import create_app

    clock.now = ADVISED_AT
    owner, cluster_id = _advised_org(client, db, "Ready preview")
    before_advice, _ = _preview(owner, connection)  # someone opens the page: the rounds keep it rendered ahead
    queued = _advice_round(sessions, settings, cluster_id)
    assert queued == [("digest.preview", {"org_id": owner.org_id, "status": "ready"})]

    # the page's first ask reads the stored preview: as few statements as a second ask, no render
    first, served = _preview(owner, connection)
    assert "demo" in first["text"].lower() and first["html"].count("data:image/png;base64,") >= 1
    assert first != before_advice  # the advice round's findings, rendered by the job
    again, hit = _preview(owner, connection)
    assert again == first and served == hit

    # a second API process on the same Redis (its own app and state) serves the same stored preview
    second_app = create_app(make_app_context(sessions, settings, clock, tmp_path / "second"))
    with TestClient(second_app, raise_server_exceptions=False) as other:
        elsewhere = signed_in_again(other, owner.session, dict(client.cookies.items()))
        from_second, second_hit = _preview(elsewhere, connection)
    assert from_second == first and second_hit == hit

    # a changed input (a member resolves a finding) is never served stale: the page renders the new version
    found = owner.get(f"/api/v1/clusters/{cluster_id}/findings").json()["items"]
    assert owner.post(f"/api/v1/findings/{found[0]['id']}/resolve").status_code == 200
    after, rendered = _preview(owner, connection)
    assert after != first and rendered > 3 * hit, (rendered, hit)


def test_without_redis_the_job_and_the_page_share_the_process_memory(
        db: Any, sessions: Any, settings: Any, connection: Any, clock: Any, tmp_path: Path) -> None:
    from fastapi.testclient import TestClient
    from headroom.api.app import create_app

    local = settings.model_copy(update={"redis_url": None})
    clock.now = ADVISED_AT
    with TestClient(create_app(make_app_context(sessions, local, clock, tmp_path)),
                    raise_server_exceptions=False) as client:
        owner, cluster_id = _advised_org(client, db, "No Redis preview")
        _preview(owner, connection)
        assert [p["status"] for _, p in _advice_round(sessions, local, cluster_id)] == ["ready"]
        first, served = _preview(owner, connection)
        again, hit = _preview(owner, connection)
        assert again == first and served == hit
        clock.advance(hours=1)  # the next hour: a new reporting window, rendered again
        later, rendered = _preview(owner, connection)
        assert later["text"] != first["text"] and rendered > 3 * hit


def test_an_org_nobody_looks_at_costs_the_rounds_no_render(
        client: Any, db: Any, sessions: Any, settings: Any, connection: Any, clock: Any) -> None:
    from headroom.digest import service

    clock.now = ADVISED_AT
    owner, cluster_id = _advised_org(client, db, "Unwatched preview")
    # nobody opened the page: the round's preview job renders nothing
    assert _advice_round(sessions, settings, cluster_id) == [
        ("digest.preview", {"org_id": owner.org_id, "status": "skipped"})]
    skipped = service.prepare_preview(_job_context(sessions, settings, []), ADVISED_AT, org_id=owner.org_id)
    assert "Weekly email page" in skipped["reason"]
    # the first visit renders it (and the rounds of the day keep it ready from then on)
    first, rendered = _preview(owner, connection)
    assert "demo" in first["text"].lower()
    assert _advice_round(sessions, settings, cluster_id) == [
        ("digest.preview", {"org_id": owner.org_id, "status": "ready"})]
    again, hit = _preview(owner, connection)
    assert rendered > 3 * hit, (rendered, hit)
