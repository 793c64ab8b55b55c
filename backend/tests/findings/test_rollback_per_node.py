"""The rollback of a patch whose nodes ran different values before it, through the real API: each node's rollback
restores that node's value (read back by parsing the TOML and by applying the diff with GNU patch); the formats
that address nodes one by one (TiUP's per-instance config, SET CONFIG per instance, tikv-ctl per host) hold every
node in one file; the ones that cannot (a tikv.toml fragment, the Operator's one config string) ask for a node,
naming the field and the nodes."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from advice_support import Advised
from headroom.domain.tikvconf.parse import flatten
from headroom.inventory.models import TikvNode
from helpers import Actor
from sqlalchemy import select

CACHE = "storage.block-cache.capacity"


@pytest.fixture()
def per_node_patch(advised: Advised, db: Any) -> dict[str, Any]:
    """A block-cache patch (every node to 4GiB) made after one node's tikv.toml was uploaded with 8GiB: the
    nodes' old values differ (8GiB there, the default 45% of memory on the others)."""
    owner, demo = advised.owner, advised.demo
    cid = demo.cluster.id
    cache = owner.get(f"/api/v1/clusters/{cid}/findings", params={"rule": "block-cache-size"}).json()["items"][0]
    stores = [p["node"] for p in owner.get(f"/api/v1/findings/{cache['id']}").json()["evidence"]["per_node"]]
    assert len(stores) >= 2, stores
    nodes = {n.store_address: n for n in db.scalars(select(TikvNode).where(TikvNode.cluster_id == cid))}
    uploaded = nodes[stores[0]]
    text = '# our own file\n[storage.block-cache]\ncapacity = "8GiB"\n'
    upload = owner.post(f"/api/v1/clusters/{cid}/nodes/{uploaded.id}/config", json={"format": "toml", "content": text})
    assert upload.status_code == 201, upload.text
    created = owner.post(f"/api/v1/clusters/{cid}/patches", json={"finding_ids": [cache["id"]], "base_config": "latest"})
    assert created.status_code == 201, created.text
    patch = created.json()
    old = {c["entity"]["node"]: c["current"] for c in patch["changes"] if c["key"] == CACHE}
    assert old[uploaded.store_address] == "8GiB" and len(set(old.values())) > 1, old
    return {"owner": owner, "cid": cid, "patch": patch, "old": old, "nodes": nodes, "uploaded": uploaded,
            "text": text, "url": f"/api/v1/clusters/{cid}/patches/{patch['id']}"}


def _get(owner: Actor, url: str, **params: Any) -> Any:
    return owner.get(url, params={"rollback": "true", **params})


def _toml_value(text: str) -> Any:
    return flatten(tomllib.loads(text)).get(CACHE)


def test_each_nodes_rollback_restores_that_nodes_value(per_node_patch: dict[str, Any], tmp_path: Path) -> None:
    w = per_node_patch
    owner, url, nodes = w["owner"], w["url"], w["nodes"]
    for store, was in w["old"].items():
        # the tikv.toml fragment of that node: its own value back
        fragment = _get(owner, url, format="toml", node=store)
        assert fragment.status_code == 200, fragment.text
        assert _toml_value(fragment.text) == was
        assert nodes[store].status_address.replace(":", "-") in fragment.headers["content-disposition"]
        assert f"node {store}" in fragment.text.splitlines()[0]
        # the node's whole file, patched and then rolled back with GNU patch: the file it was, byte for byte
        merged = owner.get(url, params={"format": "merged", "node": store})
        assert merged.status_code == 200, merged.text
        assert _toml_value(merged.text) == "4GiB"
        undo = _get(owner, url, format="diff", node=store)
        assert undo.status_code == 200, undo.text
        target = tmp_path / store.replace(":", "_") / "tikv.toml"
        target.parent.mkdir()
        target.write_text(merged.text)
        subprocess.run(["patch", "--batch", "--forward", str(target)], input=undo.text, text=True, check=True,
                       capture_output=True, timeout=30)
        restored = target.read_text()
        assert _toml_value(restored) == was
        if nodes[store].id == w["uploaded"].id:
            assert restored == w["text"]  # the uploaded file as it was
        # the Operator's config string, for that node
        operator = _get(owner, url, format="operator", node=store)
        assert operator.status_code == 200, operator.text
        config = yaml.safe_load(operator.text)["spec"]["tikv"]["config"]
        assert _toml_value(config) == was


def test_the_formats_that_address_nodes_hold_every_nodes_old_value(per_node_patch: dict[str, Any]) -> None:
    w = per_node_patch
    owner, url, old, nodes = w["owner"], w["url"], w["old"], w["nodes"]
    tiup = _get(owner, url, format="tiup")
    assert tiup.status_code == 200, tiup.text
    servers = yaml.safe_load(tiup.text)["tikv_servers"]
    got = {f"{s['host']}:{s['port']}": s["config"][CACHE] for s in servers}
    assert got == old
    sql = _get(owner, url, format="sql").text
    ctl = _get(owner, url, format="tikv-ctl").text
    for store, was in old.items():
        status = nodes[store].status_address
        assert f'SET CONFIG "{status}" `{CACHE}` = \'{was}\';' in sql
        assert f"tikv-ctl --host {store} modify-tikv-config -n {CACHE} -v {was}" in ctl


def test_a_one_value_file_asks_for_a_node_naming_the_field_and_each_nodes_value(per_node_patch: dict[str, Any]) -> None:
    w = per_node_patch
    owner, url, old = w["owner"], w["url"], w["old"]
    for fmt in ("toml", "operator"):
        refused = _get(owner, url, format=fmt)
        assert refused.status_code == 422, (fmt, refused.text)
        error = refused.json()["error"]
        assert error["details"]["field"] == "node"
        assert error["message"].startswith(f"Node: {CACHE} differs by node (")
        for store, was in old.items():
            assert f"{store}: {was}" in error["message"]
        assert "one node at a time (node=<store address>)" in error["message"]
    unknown = _get(owner, url, format="toml", node="10.9.9.9:20160")
    assert unknown.status_code == 422 and unknown.json()["error"]["details"]["field"] == "node"
    assert "10.9.9.9:20160" in unknown.json()["error"]["message"]
    # the forward patch is one value on every node: one file serves them all
    assert owner.get(url, params={"format": "toml"}).status_code == 200
