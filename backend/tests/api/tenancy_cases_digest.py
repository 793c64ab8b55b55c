"""Tenancy cases for the weekly digest routes (/api/v1/org/digest...).

`seed` gives org A digest settings, a verified owner (through the real verify route) and a recorded send with an
error text, and returns A's verification token: org B using it must get a 404, and B's settings, preview and
test send must show nothing of A (its recipients, sends, errors or token)."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

BODIES: dict[tuple[str, str], Any] = {
    ("PATCH", "/api/v1/org/digest"): {"include_viewers": True},
    ("POST", "/api/v1/org/digest/send-test"): {},
    ("POST", "/api/v1/org/digest/verify/{token}"): {},
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
    return {"token": token}, [token, user["email"], SECRET_ERROR]
