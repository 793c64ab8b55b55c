"""Operator artefacts applied to real manifests: only the proposed keys change, every other key stays.

The manifests are tidb-operator's own examples and PingCAP's Titan snippet (data/operator/README.md). The patch is
applied as kubectl would: a JSON patch with the `jsonpatch` library (RFC 6902), a merge patch as a JSON merge.
"""

from __future__ import annotations

import json
import shlex
import tomllib
from pathlib import Path
from typing import Any

import jsonpatch
import pytest
import yaml
from headroom.domain.model import Change
from headroom.domain.tikvconf.errors import TikvConfError
from headroom.domain.tikvconf.operator import patch_manifest
from headroom.domain.tikvconf.parse import flatten

DATA = Path(__file__).parent / "data" / "operator"
CHANGES = (
    Change(target="tikv", key="storage.block-cache.capacity", current=None, proposed="4GiB", reason="r"),
    Change(target="tikv", key="rocksdb.max-open-files", current=256, proposed=40960, reason="r"),
    Change(target="tikv", key="rocksdb.defaultcf.block-size", current="64KB", proposed="32KB", reason="r"),
)


def _merge(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch, as kubectl patch --type merge applies it."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = _merge(out.get(key), value)
    return out


def _without(config: dict[str, Any], keys: set[str]) -> dict[str, Any]:
    return {k: v for k, v in flatten(config).items() if k not in keys}


def test_map_form_gets_a_json_patch_on_the_exact_paths_and_keeps_every_other_key() -> None:
    text = (DATA / "basic-tidb-cluster.yaml").read_text()
    original = yaml.safe_load(text)
    result = patch_manifest(text, CHANGES)
    assert (result.kind, result.name, result.namespace, result.form) == ("TidbCluster", "basic", None, "map")
    operations = json.loads(result.body)
    # the patch inline, one shell word: `--patch-file <this file>` was a shell redirection, not a file name
    assert shlex.split(result.command) == ["kubectl", "patch", "tc", "basic", "--type", "json", "-p",
                                           json.dumps(operations, separators=(",", ":"))]
    # rocksdb.max-open-files exists: replaced where it is; storage exists: block-cache added under it; defaultcf
    # does not: added as a table under rocksdb
    assert operations == [
        {"op": "add", "path": "/spec/tikv/config/storage/block-cache", "value": {"capacity": "4GiB"}},
        {"op": "replace", "path": "/spec/tikv/config/rocksdb/max-open-files", "value": 40960},
        {"op": "add", "path": "/spec/tikv/config/rocksdb/defaultcf", "value": {"block-size": "32KB"}},
    ]
    patched = jsonpatch.apply_patch(original, operations)
    assert patched == result.document
    config = flatten(patched["spec"]["tikv"]["config"])
    assert config["storage.block-cache.capacity"] == "4GiB" and config["rocksdb.max-open-files"] == 40960
    changed = {c.key for c in CHANGES}
    assert _without(patched["spec"]["tikv"]["config"], changed) == _without(original["spec"]["tikv"]["config"],
                                                                             changed)
    # nothing outside spec.tikv.config moved (raftdb.max-open-files, pd, tidb, ...)
    assert {k: v for k, v in patched["spec"].items() if k != "tikv"} == {
        k: v for k, v in original["spec"].items() if k != "tikv"
    }
    assert patched["spec"]["tikv"]["config"]["raftdb"] == {"max-open-files": 256}


def test_a_dotted_key_in_the_map_is_not_the_setting_so_the_nested_key_is_set() -> None:
    # Was: the dotted spelling replaced in place. TiDB Operator v1 writes the map with BurntSushi/toml, which quotes
    # a key holding dots, so TiKV never read that key as the setting (test_tikvconf_operator_examples.py).
    text = (
        "apiVersion: pingcap.com/v1alpha1\nkind: TidbCluster\nmetadata: {name: prod, namespace: tidb}\n"
        "spec:\n  tikv:\n    config:\n      storage.block-cache.capacity: 16GiB\n      rocksdb: {max-open-files: 256}\n"
    )
    result = patch_manifest(text, CHANGES[:1])
    assert json.loads(result.body) == [
        {"op": "add", "path": "/spec/tikv/config/storage", "value": {"block-cache": {"capacity": "4GiB"}}}
    ]
    assert shlex.split(result.command)[:8] == ["kubectl", "patch", "tc", "prod", "-n", "tidb", "--type", "json"]


@pytest.mark.parametrize(("name", "kind", "resource", "path"), [
    ("titan-tidb-cluster.yaml", "TidbCluster", "tc", ("spec", "tikv", "config")),
    ("basic-02-tikv.yaml", "TiKVGroup", "tikvgroup", ("spec", "template", "spec", "config")),
])
def test_string_form_gets_the_whole_string_updated_in_place(name: str, kind: str, resource: str,
                                                             path: tuple[str, ...]) -> None:
    text = (DATA / name).read_text()
    original = yaml.safe_load(text)
    result = patch_manifest(text, CHANGES)
    assert (result.kind, result.form, result.patch_type) == (kind, "string", "merge")
    assert shlex.split(result.command)[:3] == ["kubectl", "patch", resource]
    assert original["metadata"]["name"] in shlex.split(result.command)
    patched = _merge(original, yaml.safe_load(result.body))
    assert patched == result.document
    before, after = original, patched
    for part in path:
        before, after = before[part], after[part]
    assert isinstance(after, str)
    old, new = flatten(tomllib.loads(before)), flatten(tomllib.loads(after))
    assert {c.key: new[c.key] for c in CHANGES} == {c.key: c.proposed for c in CHANGES}
    assert {k: v for k, v in new.items() if k not in {c.key for c in CHANGES}} == old  # every other key kept
    for line in before.splitlines():  # comments, order and layout kept
        if line.strip().startswith("#"):
            assert line in after
    # nothing outside the config string moved
    strip = json.loads(json.dumps(patched))
    keep = json.loads(json.dumps(original))
    node_a, node_b = strip, keep
    for part in path[:-1]:
        node_a, node_b = node_a[part], node_b[part]
    node_a.pop(path[-1]), node_b.pop(path[-1])
    assert strip == keep


def test_a_manifest_without_a_tidbcluster_is_refused_by_name() -> None:
    with pytest.raises(TikvConfError, match="no TidbCluster"):
        patch_manifest("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", CHANGES)


def test_values_sized_per_node_become_one_value_every_pod_can_take() -> None:
    # Two nodes given 8 and 6 scheduler threads (each within its own vCPUs): every pod gets 6, said in a note.
    per_node = [
        Change(target="tikv", key="storage.scheduler-worker-pool-size", current=4, proposed=v, reason="r")
        for v in (8, 6)
    ]
    result = patch_manifest((DATA / "basic-tidb-cluster.yaml").read_text(), per_node)
    assert json.loads(result.body) == [
        {"op": "add", "path": "/spec/tikv/config/storage/scheduler-worker-pool-size", "value": 6}
    ]
    assert any("every pod gets 6" in n for n in result.notes)
