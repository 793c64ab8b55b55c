"""The Weekly email page's preview (GET /api/v1/org/digest/preview) is rendered once per data version: a second
ask reads a few version rows instead of every finding, chart and projection; a finding that changes, a new advice
round or the next hour renders it again; one org never gets another's preview."""

from __future__ import annotations

import datetime as dt
from typing import Any

from digest_seed import DIGEST_AT, advisor_finding, record
from helpers import sign_up
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
