"""TiKV nodes and config versions through the API: hand-added nodes, uploads, versions, parse errors."""

from __future__ import annotations

from typing import Any

from helpers import join_with_role, sign_up

TOML = """# tikv.toml kept by the platform team
[storage]
scheduler-worker-pool-size = 4

[storage.block-cache]
capacity = "12GiB"
"""
TOPOLOGY = """global:
  user: tidb
server_configs:
  tikv:
    storage.block-cache.capacity: 10GiB
    raftstore.apply-pool-size: 3
tikv_servers:
  - host: 10.0.1.5
    port: 20160
    config:
      raftstore.apply-pool-size: 4
  - host: 10.0.1.6
"""


def _node(owner: Any) -> tuple[str, str]:
    cluster = owner.post("/api/v1/clusters", json={"name": "prod", "tikv_version": "v8.5.1"}).json()
    made = owner.post(
        f"/api/v1/clusters/{cluster['id']}/nodes",
        json={"store_address": "10.0.1.5:20160", "status_address": "10.0.1.5:20180"},
    )
    assert made.status_code == 201, made.text
    return cluster["id"], made.json()["id"]


def test_upload_stores_versions_only_when_content_changes(client: Any) -> None:
    owner = sign_up(client)
    cluster_id, node_id = _node(owner)
    base = f"/api/v1/clusters/{cluster_id}/nodes/{node_id}/config"
    assert owner.get(base).status_code == 404

    first = owner.post(base, json={"format": "toml", "content": TOML})
    assert first.status_code == 201, first.text
    body = first.json()
    assert body["version"] == 1 and body["source"] == "upload" and body["created"] is True
    # stored nested, as TiKV's GET /config shapes it (what snapshots and config_get read)
    assert body["config"] == {
        "storage": {"scheduler-worker-pool-size": 4, "block-cache": {"capacity": "12GiB"}}
    }
    assert body["raw_text"] == TOML  # comments and layout kept for patching

    # same values, different layout and comments: not a new version
    same = owner.post(
        base,
        json={
            "format": "toml",
            "content": TOML.replace("# tikv.toml", "# moved").replace(
                "[storage]\nscheduler", "[storage]\n\nscheduler"
            ),
        },
    )
    assert same.json()["version"] == 1 and same.json()["created"] is False

    topo = owner.post(base, json={"format": "tiup_topology", "content": TOPOLOGY})
    assert topo.status_code == 201, topo.text
    # server_configs.tikv, then this host:port's own overrides
    assert topo.json()["version"] == 2 and topo.json()["source"] == "tiup"
    assert topo.json()["config"] == {
        "storage": {"block-cache": {"capacity": "10GiB"}},
        "raftstore": {"apply-pool-size": 4},
    }

    assert owner.get(base).json()["version"] == 2
    assert (
        owner.get(base, params={"version": 1}).json()["config"]["storage"]["block-cache"]["capacity"]
        == "12GiB"
    )
    assert owner.get(base, params={"version": 9}).status_code == 404
    listed = owner.get(f"/api/v1/clusters/{cluster_id}/nodes").json()
    assert listed["total"] == 1 and listed["items"][0]["config_versions"] == [1, 2]


def test_malformed_toml_names_line_and_column(client: Any) -> None:
    owner = sign_up(client)
    cluster_id, node_id = _node(owner)
    bad = owner.post(
        f"/api/v1/clusters/{cluster_id}/nodes/{node_id}/config",
        json={"format": "toml", "content": '[storage]\ncapacity = "12GiB\n'},
    )
    assert bad.status_code == 422, bad.text
    error = bad.json()["error"]
    assert error["code"] == "config_parse_error"
    assert error["message"].startswith("tikv.toml line 2, column ")
    assert error["details"][0]["line"] == 2 and error["details"][0]["column"] > 1
    yaml_bad = owner.post(
        f"/api/v1/clusters/{cluster_id}/nodes/{node_id}/config",
        json={"format": "tiup_topology", "content": "server_configs:\n  tikv: [1\n"},
    )
    assert yaml_bad.status_code == 422 and yaml_bad.json()["error"]["details"][0]["line"] >= 2


def test_nodes_by_hand_and_roles(client: Any, make_client: Any) -> None:
    owner = sign_up(client)
    cluster_id, node_id = _node(owner)
    dup = owner.post(f"/api/v1/clusters/{cluster_id}/nodes", json={"store_address": "10.0.1.5:20160"})
    assert dup.status_code == 409
    bad = owner.post(f"/api/v1/clusters/{cluster_id}/nodes", json={"store_address": "not an address"})
    assert bad.status_code == 422
    moved = owner.patch(
        f"/api/v1/clusters/{cluster_id}/nodes/{node_id}", json={"status_address": "10.0.9.9:20180"}
    )
    assert moved.status_code == 200 and moved.json()["status_address"] == "10.0.9.9:20180"

    viewer = join_with_role(owner, make_client(), "viewer")
    assert viewer.get(f"/api/v1/clusters/{cluster_id}/nodes").json()["total"] == 1
    upload = viewer.post(
        f"/api/v1/clusters/{cluster_id}/nodes/{node_id}/config", json={"format": "toml", "content": TOML}
    )
    assert upload.status_code == 403
    assert viewer.post(f"/api/v1/sources/prometheus/{cluster_id}/test").status_code in (403, 404)


def test_refresh_without_a_reachable_status_port_is_503(client: Any) -> None:
    owner = sign_up(client)
    cluster_id, _ = _node(owner)
    made = owner.post(
        f"/api/v1/clusters/{cluster_id}/nodes",
        json={"store_address": "127.0.0.1:20160", "status_address": "127.0.0.1:9"},
    )
    response = owner.post(f"/api/v1/clusters/{cluster_id}/nodes/{made.json()['id']}/config/refresh")
    assert response.status_code == 503 and response.json()["error"]["code"] == "status_port_unreachable"


def test_refresh_from_a_status_port_answering_too_much_is_a_503_naming_the_cap(client: Any) -> None:
    from local_http import huge, serve

    owner = sign_up(client)
    cluster_id, _ = _node(owner)
    with serve(huge(300 * 1024 * 1024)) as status_port:
        made = owner.post(
            f"/api/v1/clusters/{cluster_id}/nodes",
            json={"store_address": "127.0.0.1:20161", "status_address": status_port.url.removeprefix("http://")},
        )
        assert made.status_code == 201, made.text
        response = owner.post(f"/api/v1/clusters/{cluster_id}/nodes/{made.json()['id']}/config/refresh")
    assert response.status_code == 503, response.text
    error = response.json()["error"]
    assert error["code"] == "status_port_unreachable"
    assert error["message"] == f"Could not read the config: {status_port.url}/config answered more than 4 MiB"
    assert len(status_port.hits) == 1  # refused, not retried
