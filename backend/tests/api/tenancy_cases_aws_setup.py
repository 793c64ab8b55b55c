"""Tenancy case for GET /api/v1/sources/aws/setup: org B's setup (its external ID and the templates filled with it)
must never contain org A's external ID."""

from __future__ import annotations

from typing import Any

BODIES: dict[tuple[str, str], Any] = {}


def seed(owner: Any, make_client: Any, ids: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    external_id = owner.get("/api/v1/org").json()["aws_external_id"]
    setup = owner.get("/api/v1/sources/aws/setup")
    assert setup.status_code == 200 and setup.json()["external_id"] == external_id, setup.text
    return {}, [external_id]
