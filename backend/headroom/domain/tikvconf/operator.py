"""Patch a user's TiDB Operator manifest: change only the proposed TiKV keys and keep every other one.

TiDB Operator v1 (`TidbCluster`, pingcap.com/v1alpha1) holds TiKV's config in `spec.tikv.config`, as a TOML string
(`config: |`) or as a YAML map (the form of tidb-operator's examples/basic); v2 (`TiKVGroup`, core.pingcap.com/
v1alpha1) holds a TOML string in `spec.template.spec.config` (docs-tidb-operator, Configure a TiDB Cluster /
component configuration). A merge patch replaces a string whole, so:

* string form: the whole string, updated in place (comments, order and layout kept by the tikv.toml patcher), as a
  merge patch: `kubectl patch --type merge` then changes that one field to a string that still holds every key;
* map form: a JSON patch (RFC 6902) of `replace`/`add`/`remove` operations on the exact paths of the changed keys,
  so `kubectl patch --type json` touches nothing else. Only nested maps spell a key there: TiDB Operator v1 turns
  the map into tikv.toml with a TOML encoder (BurntSushi/toml, pkg/apis/util/config GenericConfig.MarshalTOML) that
  quotes a map key holding dots, so `storage.block-cache.capacity: 16GiB` in the map reaches TiKV as the one
  quoted key `"storage.block-cache.capacity"`, not the setting. Such a spelling is left as it is and named in a
  note; the setting goes into the nested maps.

The command names the object's own `metadata.name` and `metadata.namespace`, carries the patch inline (`-p`) and is
quoted for a POSIX shell, so it runs as printed.
"""

from __future__ import annotations

import copy
import json
import shlex
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import tomlkit
import yaml

from headroom.domain.model import Change
from headroom.domain.tikvconf.errors import ConfigParseError, TikvConfError
from headroom.domain.tikvconf.limits import BoundedSafeLoader
from headroom.domain.tikvconf.parse import config_number, flatten, parse_toml
from headroom.domain.tikvconf.patch import apply_changes
from headroom.domain.tikvconf.yamlscalar import QuotingSafeDumper, needs_quotes

KINDS = {
    ("pingcap.com/v1alpha1", "TidbCluster"): (("spec", "tikv", "config"), "tc"),
    ("core.pingcap.com/v1alpha1", "TiKVGroup"): (("spec", "template", "spec", "config"), "tikvgroup"),
}


@dataclass(frozen=True)
class OperatorPatch:
    kind: str
    name: str
    namespace: str | None
    form: Literal["string", "map"]
    patch_type: Literal["merge", "json"]
    body: str  # the patch file: a YAML merge patch or a JSON patch
    command: str
    document: dict[str, Any]  # the manifest's object with the patch applied (what the API server would hold)
    notes: tuple[str, ...] = ()


def _one_per_key(changes: Sequence[Change]) -> tuple[list[Change], list[str]]:
    """One change per key: the Operator gives every pod the same config. Values sized per node become the smallest
    (each was sized within its own host, so the smallest fits every host), said in a note."""
    by_key: dict[str, list[Change]] = {}
    for change in changes:
        by_key.setdefault(change.key, []).append(change)
    out: list[Change] = []
    notes: list[str] = []
    for key, group in by_key.items():
        values = {json.dumps(c.proposed, sort_keys=True) for c in group}
        if len(values) == 1:
            out.append(group[0])
            continue
        numbers = [config_number(c.proposed) for c in group]
        if any(n is None for n in numbers):
            raise TikvConfError(f"{key}: the nodes need different values ({', '.join(sorted(values))}) and "
                                "spec.tikv.config has one for every pod")
        smallest = min(zip(numbers, group, strict=True), key=lambda p: p[0] or 0.0)[1]
        out.append(smallest)
        notes.append(f"{key} differs by node; every pod gets {smallest.proposed}, the smallest, which every "
                     "node's budget allows")
    return out, notes


def _documents(text: str, source: str) -> Iterator[Any]:
    try:
        loader = BoundedSafeLoader(text, source)
    except yaml.YAMLError as error:  # the reader refuses characters YAML does not allow (control characters)
        raise ConfigParseError(str(error).splitlines()[0], 0, 0, source) from None
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is not None:
                yield loader.construct_document(node)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        raise ConfigParseError(
            str(error).splitlines()[0], (mark.line + 1) if mark else 0, (mark.column + 1) if mark else 0, source
        ) from None
    finally:
        loader.dispose()


class _BlockDumper(QuotingSafeDumper):
    """Write multi-line strings as literal blocks (`config: |`), the way the manifests hold TOML; a one-line string
    any YAML reader could take for another type double-quoted (yamlscalar)."""


def _literal(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else ('"' if needs_quotes(value) else None)
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockDumper.add_representer(str, _literal)


def _pointer(path: Sequence[str]) -> str:
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in path)


def locate_key(tree: Any, parts: list[str], *, dotted: bool = True) -> tuple[list[str], list[str]]:
    """Return (the path of the key as the map spells it, the parts not found) for a dotted TiKV key.

    At each level a dotted spelling of the remaining parts ("block-cache.capacity") is tried longest first, so a
    key kept flat in a TiUP topology is changed where it is; `dotted=False` follows nested maps only."""
    found: list[str] = []
    node: Any = tree
    rest = list(parts)
    while rest and isinstance(node, dict):
        for take in range(len(rest) if dotted else 1, 0, -1):
            spelled = ".".join(rest[:take])
            if spelled in node:
                found.append(spelled)
                node = node[spelled]
                rest = rest[take:]
                break
        else:
            break
    return found, rest


def _nest(parts: list[str], value: Any) -> Any:
    for part in reversed(parts):
        value = {part: value}
    return value


def _map_operations(config: dict[str, Any], changes: Sequence[Change], base: Sequence[str]
                    ) -> tuple[list[dict[str, Any]], dict[str, Any], list[str]]:
    """JSON patch operations for the changed keys of a map-form config, the config after them, and notes."""
    working = copy.deepcopy(config)
    operations: list[dict[str, Any]] = []
    notes: list[str] = []
    for change in changes:
        spelled, left = locate_key(working, change.key.split("."))
        if not left and any("." in part for part in spelled):
            notes.append(f"{'.'.join(base)} spells {change.key} as {'.'.join(spelled[:-1] + [repr(spelled[-1])])}"
                         ": TiDB Operator writes a map key holding dots as one quoted TOML key, so TiKV does not read "
                         "it as this setting; the patch sets the nested key and leaves that spelling (remove it)")
        found, rest = locate_key(working, change.key.split("."), dotted=False)
        parent: Any = working
        for part in found[:-1] if not rest else found:
            parent = parent[part]
        if change.proposed is None:
            if not rest:
                operations.append({"op": "remove", "path": _pointer([*base, *found])})
                del parent[found[-1]]
            continue
        if not rest:
            operations.append({"op": "replace", "path": _pointer([*base, *found]), "value": change.proposed})
            parent[found[-1]] = change.proposed
        elif isinstance(parent, dict):
            value = _nest(rest[1:], change.proposed)
            operations.append({"op": "add", "path": _pointer([*base, *found, rest[0]]), "value": value})
            parent[rest[0]] = value
        else:
            raise TikvConfError(f"{change.key}: {'.'.join(found)} is not a table in the manifest's config")
    return operations, working, notes


def patch_manifest(manifest: str, changes: Sequence[Change], source: str = "manifest.yaml") -> OperatorPatch:
    """Patch the TidbCluster or TiKVGroup in `manifest` with the tikv changes; other keys stay as they are."""
    tikv, notes = _one_per_key([c for c in changes if c.target == "tikv"])
    if not tikv:
        raise TikvConfError("the patch changes no tikv.toml key: nothing to change in the manifest")
    found = [d for d in _documents(manifest, source) if isinstance(d, dict)
             and (d.get("apiVersion"), d.get("kind")) in KINDS]
    if not found:
        raise TikvConfError(f"{source}: no TidbCluster (pingcap.com/v1alpha1) or TiKVGroup "
                            "(core.pingcap.com/v1alpha1) in the manifest")
    if len(found) > 1:
        raise TikvConfError(f"{source}: {len(found)} TidbCluster/TiKVGroup objects; give one")
    document = found[0]
    path, resource = KINDS[(document["apiVersion"], document["kind"])]
    raw_metadata = document.get("metadata")
    metadata: dict[str, Any] = raw_metadata if isinstance(raw_metadata, dict) else {}
    name, namespace = str(metadata.get("name") or ""), metadata.get("namespace")
    if not name:
        raise TikvConfError(f"{source}: the {document['kind']} has no metadata.name")
    parent: Any = document
    for part in path[:-1]:
        if parent.get(part) is None:
            parent[part] = {}
        elif not isinstance(parent.get(part), dict):
            raise TikvConfError(f"{source}: {part} of the {document['kind']} is not a mapping")
        parent = parent[part]
    current = parent.get(path[-1])
    patched = copy.deepcopy(document)
    target: Any = patched
    for part in path[:-1]:
        target = target.setdefault(part, {})
    if isinstance(current, str) or (current is None and document["kind"] == "TiKVGroup"):
        where = f"{source}: {'.'.join(path)}"
        text = apply_changes(current or "", [c for c in tikv if c.proposed is not None], where).text
        text = _remove_keys(text, [c.key for c in tikv if c.proposed is None], where)
        target[path[-1]] = text
        merge = _nest(list(path), text)
        body = yaml.dump(merge, Dumper=_BlockDumper, sort_keys=False, width=1000)
        return OperatorPatch(document["kind"], name, namespace, "string", "merge", body,
                             _kubectl(resource, name, namespace, "merge", merge), patched, tuple(notes))
    if current is not None and not isinstance(current, dict):
        raise TikvConfError(f"{source}: {'.'.join(path)} is neither a TOML string nor a map")
    if current is None:
        operations = [{"op": "add", "path": _pointer(path), "value": {}}]
        config: dict[str, Any] = {}
    else:
        operations, config = [], current
    more, updated, spelled = _map_operations(config, tikv, path)
    target[path[-1]] = updated
    return OperatorPatch(document["kind"], name, namespace, "map", "json",
                         json.dumps(operations + more, indent=2) + "\n",
                         _kubectl(resource, name, namespace, "json", operations + more), patched,
                         tuple(notes + spelled))


def _object(manifest: str, source: str) -> dict[str, Any]:
    found = [d for d in _documents(manifest, source) if isinstance(d, dict)
             and (d.get("apiVersion"), d.get("kind")) in KINDS]
    if len(found) != 1:
        raise TikvConfError(f"{source}: expected one TidbCluster or TiKVGroup, found {len(found)}")
    return found[0]


def _at(tree: Any, path: Sequence[str]) -> tuple[bool, Any]:
    node = tree
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return False, None
        node = node[part]
    return True, node


def _restore(before: Any, after: Any, path: list[str]) -> list[dict[str, Any]]:
    """JSON patch operations that take the map `after` back to the map `before`, key for key: each value first
    tested (RFC 6902 `test`) to be the one the patch wrote, then a key the patch added removed, a value it replaced
    put back, a key it removed added again. Values that are not maps are replaced whole (a list is one value)."""
    operations: list[dict[str, Any]] = []
    for key in after:
        pointer = _pointer([*path, key])
        if key not in before:
            operations += [{"op": "test", "path": pointer, "value": after[key]}, {"op": "remove", "path": pointer}]
        elif isinstance(before[key], dict) and isinstance(after[key], dict):
            operations += _restore(before[key], after[key], [*path, key])
        elif before[key] != after[key] or type(before[key]) is not type(after[key]):
            operations += [{"op": "test", "path": pointer, "value": after[key]},
                           {"op": "replace", "path": pointer, "value": before[key]}]
    for key in before:
        if key not in after:
            operations.append({"op": "add", "path": _pointer([*path, key]), "value": before[key]})
    return operations


def rollback_manifest(manifest: str, changes: Sequence[Change], source: str = "manifest.yaml") -> OperatorPatch:
    """The rollback of `patch_manifest(manifest, changes)`: applied to the patched object, it gives back the
    manifest's own config exactly (the TOML string byte for byte, the map key for key: a key the patch added is
    removed again, not pinned to the value the node ran). `manifest` is the one the patch was made from.

    Always a JSON patch (kubectl patch --type json) whose `test` operations check that each value is still the one
    the patch wrote: if the object changed since, kubectl applies nothing (RFC 6902 applies a patch whole or not
    at all)."""
    forward = patch_manifest(manifest, changes, source)
    original = _object(manifest, source)
    path, resource = KINDS[(original["apiVersion"], original["kind"])]
    had, before = _at(original, path)
    _, after = _at(forward.document, path)
    if had and before == after and type(before) is type(after):
        raise TikvConfError(f"{source}: the patch changes nothing in this manifest (it already holds the patch's "
                            "values?): give the manifest the patch was made from, the rollback restores it")
    pointer = _pointer(path)
    operations: list[dict[str, Any]]
    if isinstance(before, dict) and isinstance(after, dict):
        operations = _restore(before, after, list(path))
    else:
        operations = [{"op": "test", "path": pointer, "value": after}]
        operations.append({"op": "replace", "path": pointer, "value": before} if had
                          else {"op": "remove", "path": pointer})
    where = ".".join(path)
    notes = (f"The rollback gives {where} back as this manifest has it: "
             + ("the string byte for byte" if not isinstance(before, dict) else
                "every key the patch added is removed again, every value it changed is put back")
             + "; nothing else is touched. Each step first tests that the value is still the one the patch wrote, so "
             "kubectl changes nothing if the object was edited since.",)
    return OperatorPatch(forward.kind, forward.name, forward.namespace, forward.form, "json",
                         json.dumps(operations, indent=2) + "\n",
                         _kubectl(resource, forward.name, forward.namespace, "json", operations),
                         original, notes)


def _remove_keys(text: str, keys: Sequence[str], source: str) -> str:
    """Remove keys from TOML text (a rollback of keys the patch added), comments and layout kept."""
    if not keys:
        return text
    document = tomlkit.parse(text)
    for key in keys:
        found, rest = locate_key(document, key.split("."))
        if rest or not found:
            continue  # not set: nothing to remove
        parent: Any = document
        for part in found[:-1]:
            parent = parent[part]
        del parent[found[-1]]
    out = tomlkit.dumps(document)
    left = [k for k in keys if k in flatten(parse_toml(out, source).unwrap())]
    if left:
        raise TikvConfError(f"{source}: could not remove {', '.join(left)}")
    return out


def _kubectl(resource: str, name: str, namespace: Any, patch_type: str, patch: Any) -> str:
    """`kubectl patch` with the patch inline as one-line JSON, every word quoted for a POSIX shell."""
    where = ["-n", str(namespace)] if namespace else []
    return shlex.join(["kubectl", "patch", resource, name, *where, "--type", patch_type, "-p",
                       json.dumps(patch, separators=(",", ":"))])
