"""Tenancy cases for the weekly digest routes (/api/v1/org/digest..., /api/v1/digest/...).

`seed` gives org A digest settings, a verified owner (through the real verify route) and a recorded send with an
error text, and returns A's verification token: org B using it must get a 404, and B's settings, preview and
test send must show nothing of A (its recipients, sends, errors or token). A's owner also chooses A's cluster
for their own email: B's preferences must not show it."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

BODIES: dict[tuple[str, str], Any] = {
    ("PATCH", "/api/v1/org/digest"): {"include_viewers": True},
    ("POST", "/api/v1/org/digest/send-test"): {},
    ("POST", "/api/v1/org/digest/verify/{token}"): {},
    # the caller's own choices; another org's cluster in cluster_ids is a 404 (tests/digest/test_unsubscribe.py)
    ("PUT", "/api/v1/digest/preferences"): {"weekly_email": True, "cluster_ids": None},
}

SECRET_ERROR = "a-secret-digest-error from smtp.a.internal"


def seed(owner: Any, make_client: Any, ids: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    from headroom.digest import service
    from headroom.digest.models import DigestSend

    ctx = owner.client.app.state.ctx
    user = owner.session["user"]
    token = service.verification_token(ctx.settings.secret_key, uuid.UUID(user["id"]), user["email"], now=ctx.clock())
    verified = owner.post(f"/api/v1/org/digest/verify/{token}")
    assert verified.status_code == 200, verified.text
    assert owner.patch("/api/v1/org/digest", json={"include_viewers": True}).status_code == 200
    with ctx.sessions() as db:
        db.add(DigestSend(org_id=uuid.UUID(owner.org_id), week_start=dt.date(2026, 10, 26), status="failed",
                          recipients=0, attempts=1, error=SECRET_ERROR))
        db.commit()
    assert owner.get("/api/v1/org/digest").json()["recipients"] == [user["email"]]
    mine = owner.request("PUT", "/api/v1/digest/preferences", json={"weekly_email": True, "cluster_ids": [ids["cluster_id"]]})
    assert mine.status_code == 200, mine.text
    return {"token": token}, [token, user["email"], SECRET_ERROR]
