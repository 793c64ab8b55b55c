"""Tenancy cases for the Prometheus source operations and the TiKV nodes/config routes (see test_tenancy.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

BODIES: dict[tuple[str, str], Any] = {
    ("POST", "/api/v1/sources/prometheus/{source_id}/test"): None,
    ("POST", "/api/v1/sources/prometheus/{source_id}/backfill"): {"days": 1},
    ("POST", "/api/v1/clusters/{cluster_id}/nodes"): {"store_address": "10.200.0.1:20160"},
    ("PATCH", "/api/v1/clusters/{cluster_id}/nodes/{node_id}"): {"status_address": "10.200.0.1:20180"},
    ("POST", "/api/v1/clusters/{cluster_id}/nodes/{node_id}/config"): {
        "format": "toml",
        "content": "[storage]\n",
    },
    ("POST", "/api/v1/clusters/{cluster_id}/nodes/{node_id}/config/refresh"): None,
}


def seed(owner: Any, make_client: Callable[[], Any], ids: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """A node of org A's cluster with an uploaded config; B must see neither."""
    node = owner.post(
        f"/api/v1/clusters/{ids['cluster_id']}/nodes",
        json={"store_address": "10.77.0.1:20160", "status_address": "10.77.0.1:20180"},
    )
    assert node.status_code == 201, node.text
    node_id = node.json()["id"]
    config = owner.post(
        f"/api/v1/clusters/{ids['cluster_id']}/nodes/{node_id}/config",
        json={"format": "toml", "content": '[server]\nlabels = { host = "a-secret-host" }\n'},
    )
    assert config.status_code == 201, config.text
    return {"node_id": node_id}, [node_id, "10.77.0.1", "a-secret-host", config.json()["id"]]
