"""Tenancy cases for the alert channels: a valid body for each write, and org A's channel with its secrets."""

from __future__ import annotations

from typing import Any

BODIES: dict[tuple[str, str], Any] = {
    ("POST", "/api/v1/alert-channels"): {"name": "b-channel", "kind": "webhook",
                                         "url": "https://hooks.b.example.com/headroom"},
    ("POST", "/api/v1/alert-channels/{channel_id}/test"): {},
}


def seed(owner: Any, make_client: Any, ids: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    channel = owner.post("/api/v1/alert-channels", json={
        "name": "a-channel", "kind": "pagerduty", "url": "https://events.pagerduty.com/v2/enqueue",
        "secret": "a-routing-key-0000000000000000", "min_severity": "critical"}).json()
    return {"channel_id": channel["id"]}, [channel["id"], "a-channel", "a-routing-key-0000000000000000"]
