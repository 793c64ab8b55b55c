"""Tenancy cases for the AWS connection operations (test, backfill, sweeps): bodies for their writes."""

from __future__ import annotations

from typing import Any

BODIES: dict[tuple[str, str], Any] = {
    ("POST", "/api/v1/sources/aws/{connection_id}/test"): None,
    ("POST", "/api/v1/sources/aws/{connection_id}/backfill"): {"days": 1},
}
