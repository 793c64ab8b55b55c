"""Operator artefacts applied to tidb-operator's own examples, checked against the CRDs.

Data (data/operator/README.md names each file's source and commit): v1 TidbCluster examples of release-1.6 with
`spec.tikv.config` as a map (basic, istio, podpatch, initialize, Runbooks/EKS) and as a TOML string (advanced, aws,
basic-tls, heterogeneous-tls, multiple-pv-tikv); v2 TiKVGroup examples of the v2 line (examples/*/02-tikv.yaml and
pdms/04-tikv.yaml); the TidbCluster CRD of release-1.6 and the TiKVGroup CRD of the v2 line, as published.

Each artefact is applied as kubectl applies it, from the command it prints: `--type json` with the `jsonpatch`
library (RFC 6902), `--type merge` as an RFC 7386 JSON merge patch. The result must pass the API server's checks
(tests/k8s_crd.py: the CRD's schema with strict field validation, CEL rules, metadata.name), keep every other key of
the object, and hold exactly the proposed values where TiDB Operator reads them: the TOML string parsed with
tomllib, or the map as the Operator turns it into TOML (nested maps; a key holding dots is one quoted TOML key).
"""

from __future__ import annotations

import copy
import json
import shlex
import tomllib
from pathlib import Path
from typing import Any

import jsonpatch
import pytest
import yaml
from headroom.domain.model import Change
from headroom.domain.tikvconf.operator import patch_manifest, rollback_manifest
from headroom.domain.tikvconf.parse import flatten
from k8s_crd import Crd, load_crd

DATA = Path(__file__).parent / "data" / "operator"
CONFIG_PATH = {"TidbCluster": ("spec", "tikv", "config"), "TiKVGroup": ("spec", "template", "spec", "config")}
RESOURCE = {"TidbCluster": "tc", "TiKVGroup": "tikvgroup"}


def _change(key: str, proposed: Any, current: Any = None) -> Change:
    return Change(target="tikv", key=key, current=current, proposed=proposed, reason="r")


# The change set of the issue: sizes, thread pools, a list, on keys none of the examples set
CHANGES = [
    _change("storage.block-cache.capacity", "8GiB"),
    _change("storage.scheduler-worker-pool-size", 6),
    _change("readpool.unified.max-thread-count", 10),
    _change("raftstore.store-io-pool-size", 2),
    _change("rocksdb.defaultcf.block-size", "32KB"),
    _change("rocksdb.defaultcf.compression-per-level", ["no", "no", "lz4", "lz4", "lz4", "zstd", "zstd"]),
]
# (file, a key the example already sets with its value there and a new one); None where its config is empty
EXAMPLES: list[tuple[str, tuple[str, Any, Any] | None]] = [
    ("v1/basic-tidb-cluster.yaml", ("rocksdb.max-open-files", 256, 40960)),
    ("v1/istio-tidb-cluster.yaml", ("storage.reserve-space", "0MB", "2GB")),
    ("v1/podpatch-tidb-cluster.yaml", ("raftdb.max-open-files", 256, 1024)),
    ("v1/initialize-tidb-cluster.yaml", None),
    ("v1/runbooks-eks-tidb-cluster.yaml", None),
    ("v1/advanced-tidb-cluster.yaml", ("log.file.max-days", 30, 14)),
    ("v1/aws-tidb-cluster.yaml", ("log.file.max-backups", 30, 10)),
    ("v1/basic-tls-tidb-cluster.yaml", ("security.cert-allowed-cn", ["TiDB"], ["TiDB", "TiDB-admin"])),
    ("v1/heterogeneous-tls-tidb-cluster.yaml", ("log.file.max-days", 30, 7)),
    ("v1/multiple-pv-tikv-tidb-cluster.yaml", ("rocksdb.wal-dir", "/var/lib/wal", "/var/lib/raft-wal")),
    ("v2/basic-02-tikv.yaml", ("log.level", "info", "warn")),
    ("v2/pdms-04-tikv.yaml", ("log.level", "info", "error")),
    ("v2/tls-02-tikv.yaml", ("security.cert-allowed-cn", ["TiDB"], ["TiDB", "TiProxy"])),
    ("v2/bootstrap-sql-02-tikv.yaml", None),
    ("v2/overlay-02-tikv.yaml", None),
    ("v2/schedule-policy-02-tikv.yaml", None),
]
# Four v2 examples at the pinned commit still put `version` under spec, where the TiKVGroup CRD of the same commit
# has it under spec.template.spec (required there): the API server refuses them as published. The artefact must
# add no error of its own, so for these the errors after the patch are exactly these.
PUBLISHED_ERRORS = {
    name: ["spec.template.spec: 'version' is a required property", 'unknown field "spec.version"']
    for name in (
        "v2/bootstrap-sql-02-tikv.yaml",
        "v2/overlay-02-tikv.yaml",
        "v2/schedule-policy-02-tikv.yaml",
        "v2/tls-02-tikv.yaml",
    )
}


@pytest.fixture(scope="module")
def crds() -> dict[str, Crd]:
    return {
        "TidbCluster": load_crd(DATA / "crd" / "pingcap.com_tidbclusters.yaml.gz"),
        "TiKVGroup": load_crd(DATA / "crd" / "core.pingcap.com_tikvgroups.yaml.gz"),
    }


def _object(text: str) -> dict[str, Any]:
    found = [d for d in yaml.safe_load_all(text) if isinstance(d, dict) and d.get("kind") in CONFIG_PATH]
    assert len(found) == 1
    return found[0]


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch, as kubectl patch --type merge applies it."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def kubectl_patch(obj: dict[str, Any], command: str) -> dict[str, Any]:
    """What `kubectl patch` as printed does to `obj`: the words a POSIX shell gives it, then the patch applied."""
    words = shlex.split(command)
    assert shlex.join(words) == command, "the command is not quoted the way a shell reads it back"
    assert words[:2] == ["kubectl", "patch"]
    patch_type, payload = words[words.index("--type") + 1], json.loads(words[words.index("-p") + 1])
    if patch_type == "json":
        return jsonpatch.apply_patch(obj, payload)  # type: ignore[no-any-return]
    assert patch_type == "merge"
    return merge_patch(obj, payload)  # type: ignore[no-any-return]


def _pop(obj: dict[str, Any], path: tuple[str, ...]) -> tuple[dict[str, Any], Any]:
    rest = copy.deepcopy(obj)
    node = rest
    for part in path[:-1]:
        node = node[part]
    return rest, node.pop(path[-1], None)


def operator_view(config: Any) -> dict[str, Any]:
    """The tikv.toml keys TiKV gets from spec.tikv.config: a TOML string as tomllib reads it; a map the way TiDB
    Operator encodes it (BurntSushi/toml: nested maps are tables, a key holding dots is written as one quoted key,
    so it is kept here as the key `"a.b"`, which is no TiKV setting)."""
    if config is None:
        return {}
    if isinstance(config, str):
        return flatten(tomllib.loads(config))
    quoted = {
        (json.dumps(k) if "." in k else k): (operator_view(v) if isinstance(v, dict) else v)
        for k, v in config.items()
    }
    return flatten(quoted)


def _changes_for(existing: tuple[str, Any, Any] | None) -> list[Change]:
    extra = [_change(existing[0], existing[2], existing[1])] if existing else []
    return [*CHANGES, *extra, _change("raftstore.apply-pool-size", 3)]


@pytest.mark.parametrize(("name", "existing"), EXAMPLES, ids=[n for n, _ in EXAMPLES])
def test_the_artefact_applied_to_an_official_example_changes_only_the_proposed_keys_and_validates(
    name: str, existing: tuple[str, Any, Any] | None, crds: dict[str, Crd]
) -> None:
    text = (DATA / name).read_text()
    original = _object(text)
    kind = original["kind"]
    crd, path = crds[kind], CONFIG_PATH[kind]
    assert crd.validate(original) == PUBLISHED_ERRORS.get(name, [])
    before = operator_view(_pop(original, path)[1])
    if existing:
        assert before[existing[0]] == existing[1], "the example sets the key with this value"
    changes = _changes_for(existing)
    proposed = {c.key: c.proposed for c in changes}
    assert not (set(proposed) - {existing[0] if existing else ""}) & set(before), "the other keys are new"

    result = patch_manifest(text, changes, name)
    # the command names the object as it is in the manifest, in its namespace, and is what the body says
    words = shlex.split(result.command)
    namespace = original["metadata"].get("namespace")
    assert words[:4] == ["kubectl", "patch", RESOURCE[kind], original["metadata"]["name"]]
    assert words[4:6] == (["-n", namespace] if namespace else words[4:6]) and ("-n" in words) == bool(
        namespace
    )
    body = json.loads(result.body) if result.patch_type == "json" else yaml.safe_load(result.body)
    assert json.loads(words[words.index("-p") + 1]) == body
    assert (result.form, result.patch_type) == (
        ("string", "merge")
        if isinstance(_pop(original, path)[1], str) or kind == "TiKVGroup"
        else ("map", "json")
    )

    patched = kubectl_patch(original, result.command)
    assert patched == result.document
    # the API server takes it (as an update of the example), with no error the example did not have
    assert crd.validate(patched, old=original) == PUBLISHED_ERRORS.get(name, [])
    rest_before, _ = _pop(original, path)
    rest_after, config_after = _pop(patched, path)
    assert rest_after == rest_before  # nothing outside the config moved
    after = operator_view(config_after)
    assert {k: after.get(k) for k in proposed} == proposed
    assert {k: v for k, v in after.items() if k not in proposed} == {
        k: v for k, v in before.items() if k not in proposed
    }
    if isinstance(config_after, str):
        old_text = _pop(original, path)[1] or ""
        assert [ln for ln in old_text.splitlines() if ln.strip().startswith("#")] == [
            ln for ln in config_after.splitlines() if ln.strip().startswith("#")
        ]

    # the rollback artefact, made from the example, applied to the patched object gives back the example itself
    # (key for key: a key the example did not set is removed again, not pinned to a value)
    undone = rollback_manifest(text, changes, name)
    restored = kubectl_patch(patched, undone.command)
    assert crd.validate(restored, old=patched) == PUBLISHED_ERRORS.get(name, [])
    assert restored == original


def test_a_dotted_key_in_the_map_form_is_no_setting_so_the_nested_key_is_set_and_the_spelling_named() -> None:
    # TiDB Operator v1 writes the map with BurntSushi/toml, which quotes a key holding dots (Key.maybeQuoted): the
    # map key `storage.block-cache.capacity` becomes the TOML key "storage.block-cache.capacity", which TiKV does
    # not read as [storage.block-cache] capacity. Replacing it (as before) changed nothing TiKV reads.
    text = (
        "apiVersion: pingcap.com/v1alpha1\nkind: TidbCluster\nmetadata: {name: prod, namespace: tidb}\n"
        "spec:\n  tikv:\n    replicas: 3\n    config:\n      storage.block-cache.capacity: 16GiB\n"
        "      storage: {reserve-space: 0MB}\n"
    )
    result = patch_manifest(text, [_change("storage.block-cache.capacity", "4GiB", "16GiB")])
    assert json.loads(result.body) == [
        {"op": "add", "path": "/spec/tikv/config/storage/block-cache", "value": {"capacity": "4GiB"}}
    ]
    patched = kubectl_patch(_object(text), result.command)
    view = operator_view(patched["spec"]["tikv"]["config"])
    assert view["storage.block-cache.capacity"] == "4GiB"
    assert view['"storage.block-cache.capacity"'] == "16GiB"  # left as it was, and said so
    assert any("quoted TOML key" in n and "storage.block-cache.capacity" in n for n in result.notes)


@pytest.mark.parametrize(("name", "namespace"), [("demo-prod", "tidb-prod"), ("basic", None)])
def test_the_command_quotes_every_word_and_carries_the_patch_inline(name: str, namespace: str | None) -> None:
    meta = f"{{name: {name}{', namespace: ' + namespace if namespace else ''}}}"
    text = (
        f"apiVersion: pingcap.com/v1alpha1\nkind: TidbCluster\nmetadata: {meta}\n"
        'spec:\n  tikv:\n    replicas: 3\n    config: |\n      [log]\n      level = "info"  # it\'s quiet\n'
    )
    result = patch_manifest(text, [_change("storage.block-cache.capacity", "4GiB")])
    # the TOML holds a quote and a newline: one shell word all the same
    words = shlex.split(result.command)
    assert shlex.join(words) == result.command
    assert words == [
        "kubectl",
        "patch",
        "tc",
        name,
        *(["-n", namespace] if namespace else []),
        "--type",
        "merge",
        "-p",
        json.dumps(yaml.safe_load(result.body), separators=(",", ":")),
    ]
    assert "it's quiet" in json.loads(words[-1])["spec"]["tikv"]["config"]


# ------------------------------------------------------------------------------------------- the validator itself
def _basic(crds: dict[str, Crd]) -> tuple[Crd, dict[str, Any]]:
    return crds["TidbCluster"], _object((DATA / "v1" / "basic-tidb-cluster.yaml").read_text())


def test_the_validator_refuses_an_unknown_field_a_wrong_type_and_a_bad_name(crds: dict[str, Crd]) -> None:
    crd, obj = _basic(crds)
    assert crd.validate(obj) == []
    unknown = copy.deepcopy(obj)
    unknown["spec"]["tikv"]["blockCache"] = "4GiB"
    assert crd.validate(unknown) == ['unknown field "spec.tikv.blockCache"']
    wrong = copy.deepcopy(obj)
    wrong["spec"]["tikv"]["replicas"] = "three"
    assert crd.validate(wrong) == ["spec.tikv.replicas: 'three' is not of type 'integer'"]
    named = copy.deepcopy(obj)
    named["metadata"]["name"] = "demo-prod (demo)"  # the display name the old artefact used
    (error,) = crd.validate(named)
    assert error.startswith(
        "metadata.name: Invalid value: 'demo-prod (demo)': a lowercase RFC 1123 subdomain"
    )
    deep = copy.deepcopy(obj)
    deep["spec"]["tikv"]["tolerations"] = [{"key": "dedicated", "effect": "NoSchedule", "colour": "red"}]
    assert crd.validate(deep) == ['unknown field "spec.tikv.tolerations[0].colour"']
    meta = copy.deepcopy(obj)
    meta["metadata"]["namespace"] = "Prod_NS"
    meta["metadata"]["labels"] = {"tier": 1}
    assert crd.validate(meta) == [
        "metadata.labels.tier: 1 is not of type 'string'",
        "metadata.namespace: Invalid value: 'Prod_NS': a lowercase RFC 1123 label",
    ]


def test_the_validator_reads_the_kubernetes_extensions(crds: dict[str, Crd]) -> None:
    crd, obj = _basic(crds)
    ok = copy.deepcopy(obj)
    ok["spec"]["tikv"]["requests"] = {"cpu": 4, "memory": "8Gi"}  # x-kubernetes-int-or-string: both
    ok["spec"]["tikv"]["config"] = "[log]\nlevel = 'info'\n"  # preserve-unknown-fields, no type: a string too
    ok["status"] = {"conditions": None}  # nullable
    ok["spec"]["tikv"]["storageClassName"] = (
        None  # not nullable: pruned before validation, as the server does
    )
    assert crd.validate(ok) == []
    bad = copy.deepcopy(obj)
    bad["spec"]["tikv"]["requests"] = {"cpu": [4]}
    assert [e.split(":")[0] for e in crd.validate(bad)] == ["spec.tikv.requests.cpu"]
    assert crds["TidbCluster"].validate({**obj, "apiVersion": "pingcap.com/v1"}) == [
        "apiVersion: 'pingcap.com/v1' is not pingcap.com/v1alpha1"
    ]


def test_the_validator_runs_the_crds_cel_rules(crds: dict[str, Crd]) -> None:
    crd = crds["TiKVGroup"]
    obj = _object((DATA / "v2" / "basic-02-tikv.yaml").read_text())
    assert crd.validate(obj) == []
    no_data = copy.deepcopy(obj)
    no_data["spec"]["template"]["spec"]["volumes"][0]["name"] = "logs"
    assert crd.validate(no_data) == ["spec.template.spec: Invalid value: data volume must be configured"]
    long_name = copy.deepcopy(obj)
    long_name["metadata"]["name"] = "t" * 41
    assert crd.validate(long_name) == ["<root>: Invalid value: name must not exceed 40 characters"]
    moved = copy.deepcopy(obj)
    moved["spec"]["cluster"]["name"] = "other"
    assert crd.validate(moved) == []  # a create: no oldSelf
    assert crd.validate(moved, old=obj) == ["spec.cluster.name: Invalid value: cluster name is immutable"]
