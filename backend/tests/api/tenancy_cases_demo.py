"""Tenancy cases for the demo fleet's volumes (docs/apply.md, Trying it on the demo cluster): giving a demo volume a
real EBS volume's ID addresses the cluster by id, so org B addressing org A's cluster is a 404 before anything else
(org A's cluster is not a demo: that answer, a 409, must never reach org B either)."""

from __future__ import annotations

from typing import Any

BODIES: dict[tuple[str, str], Any] = {
    ("PATCH", "/api/v1/clusters/{cluster_id}/demo-volumes/{volume_id}"): {"volume_id": "vol-0aaaaaaaaaaaaaaaa"},
}


def seed(owner: Any, make_client: Any, ids: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    return {"volume_id": "vol-0123456789abcdef0"}, []
