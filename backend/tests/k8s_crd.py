"""Validate an object against a CustomResourceDefinition the way the Kubernetes API server does on create/update.

What the API server checks for a custom resource (Kubernetes docs, "Extend the Kubernetes API with
CustomResourceDefinitions": validation, pruning, defaulting and nullable, validation rules, field validation):

* apiVersion is the CRD's group and a served version, kind is the CRD's kind;
* the served version's `openAPIV3Schema` (a structural OpenAPI v3 schema), here through the `jsonschema` library,
  with the Kubernetes extensions read as the API server reads them:
  - `x-kubernetes-int-or-string: true`: an integer or a string;
  - `x-kubernetes-preserve-unknown-fields: true`: fields the schema does not name are kept at that level;
  - `x-kubernetes-embedded-resource: true`: apiVersion, kind and metadata are implied;
  - `nullable: true`: null is a value; elsewhere a null field is pruned (dropped) before validation;
  - every other field the schema does not name is an error: kubectl's default `--validate=strict` (server-side
    strict field validation, the default since Kubernetes 1.27) answers `unknown field "spec.x"`;
* `x-kubernetes-validations` (CEL rules) with the `cel-python` evaluator; a transition rule (`oldSelf`) only on an
  update, with the object before the patch as `oldSelf` (kubectl patch is an update);
* metadata: name a DNS-1123 subdomain (lower-case alphanumerics, '-' and '.', at most 253 characters), namespace a
  DNS-1123 label (at most 63), labels and annotations maps of strings, no other field than ObjectMeta's.

Errors are sentences with the field's path (`spec.tikv.foo: ...`), so a failing test says what is wrong.
"""

from __future__ import annotations

import copy
import gzip
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import celpy
import jsonschema
import yaml

_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
# ObjectMeta's fields (k8s.io/apimachinery meta/v1 ObjectMeta); metadata.name and namespace are checked apart
_OBJECT_META = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string"},
        "generateName": {"type": "string"},
        "namespace": {"type": "string"},
        "labels": _STRING_MAP,
        "annotations": _STRING_MAP,
        "finalizers": {"type": "array", "items": {"type": "string"}},
        "ownerReferences": {"type": "array"},
        "uid": {"type": "string"},
        "resourceVersion": {"type": "string"},
        "generation": {"type": "integer"},
        "creationTimestamp": {"type": ["string", "null"]},
        "deletionTimestamp": {"type": "string"},
        "deletionGracePeriodSeconds": {"type": "integer"},
        "managedFields": {"type": "array"},
        "selfLink": {"type": "string"},
    },
}
_COMBINATORS = ("anyOf", "allOf", "oneOf", "not")


def _json_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A structural schema node as JSON Schema (draft 4, the base of OpenAPI 3.0) with the extensions applied."""
    out = {
        k: v
        for k, v in schema.items()
        if not k.startswith("x-kubernetes-")
        and k not in ("nullable", "description", "format", "properties", "items", "additionalProperties")
    }
    if schema.get("x-kubernetes-int-or-string"):
        for key in ("type", *_COMBINATORS):
            out.pop(key, None)
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if "properties" in schema:
        out["properties"] = {k: _json_schema(v) for k, v in schema["properties"].items()}
    if isinstance(schema.get("items"), dict):
        out["items"] = _json_schema(schema["items"])
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        out["additionalProperties"] = _json_schema(extra)
    elif isinstance(extra, bool):
        out["additionalProperties"] = extra
    if schema.get("x-kubernetes-embedded-resource"):
        out.setdefault("properties", {}).update(
            {"apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"}}
        )
    if (
        (schema.get("type") == "object" or "properties" in schema)
        and "additionalProperties" not in schema
        and not schema.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = (
            False  # strict field validation: a field the schema does not name is an error
        )
    if schema.get("nullable"):
        if isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
        elif "anyOf" in out:
            out["anyOf"] = [*out["anyOf"], {"type": "null"}]
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
    return out


def _prune_nulls(value: Any, schema: dict[str, Any]) -> Any:
    """Drop the null fields the schema does not make nullable, as the API server does before validating."""
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        out = {}
        for key, item in value.items():
            sub = properties.get(key, extra if isinstance(extra, dict) else None)
            if item is None and sub is not None and not sub.get("nullable"):
                continue
            out[key] = _prune_nulls(item, sub) if sub is not None else item
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_prune_nulls(item, schema["items"]) for item in value]
    return value


def _path(parts: Any) -> str:
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "<root>"


@dataclass
class Crd:
    group: str
    kind: str
    plural: str
    versions: tuple[str, ...]  # served
    schemas: dict[str, dict[str, Any]]  # version -> openAPIV3Schema
    _validators: dict[str, Any] = field(default_factory=dict, repr=False)

    def validate(self, obj: Any, old: Any = None) -> list[str]:
        """The API server's errors for `obj` (an update of `old` when given), [] when it would be accepted."""
        if not isinstance(obj, dict):
            return ["<root>: not an object"]
        group, _, version = str(obj.get("apiVersion") or "").rpartition("/")
        if group != self.group or version not in self.versions:
            return [f"apiVersion: {obj.get('apiVersion')!r} is not {self.group}/{' or '.join(self.versions)}"]
        if obj.get("kind") != self.kind:
            return [f"kind: {obj.get('kind')!r} is not {self.kind}"]
        schema = self.schemas[version]
        if version not in self._validators:
            root = _json_schema(schema)
            root["properties"]["metadata"] = _OBJECT_META
            jsonschema.Draft4Validator.check_schema(root)
            self._validators[version] = jsonschema.Draft4Validator(root)
        pruned = _prune_nulls(copy.deepcopy(obj), schema)
        errors = []
        for error in self._validators[version].iter_errors(pruned):
            where = list(error.absolute_path)
            if error.validator == "additionalProperties" and error.validator_value is False:
                named = set(error.schema.get("properties") or {})
                errors += [f'unknown field "{_path([*where, k])}"' for k in error.instance if k not in named]
            else:
                errors.append(f"{_path(where)}: {error.message}")
        errors += _metadata_errors(pruned.get("metadata"))
        errors += _cel_errors(schema, pruned, _prune_nulls(copy.deepcopy(old), schema) if old else None, [])
        return sorted(errors)


def _metadata_errors(metadata: Any) -> list[str]:
    if not isinstance(metadata, dict):
        return ["metadata: Required value"]
    errors = []
    name, namespace = metadata.get("name"), metadata.get("namespace")
    if not isinstance(name, str) or not name:
        errors.append("metadata.name: Required value: name or generateName is required")
    elif len(name) > 253 or not _DNS1123_SUBDOMAIN.fullmatch(name):
        errors.append(
            f"metadata.name: Invalid value: {name!r}: a lowercase RFC 1123 subdomain must consist of "
            "lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
            "character (at most 253 characters)"
        )
    if namespace is not None and (
        not isinstance(namespace, str) or len(namespace) > 63 or not _DNS1123_LABEL.fullmatch(namespace)
    ):
        errors.append(f"metadata.namespace: Invalid value: {namespace!r}: a lowercase RFC 1123 label")
    return errors


_CEL = celpy.Environment()


def _cel_errors(schema: dict[str, Any], value: Any, old: Any, path: list[Any]) -> list[str]:
    errors = []
    for rule in schema.get("x-kubernetes-validations") or []:
        transition = "oldSelf" in rule["rule"]
        if transition and old is None:
            continue  # a transition rule applies on update only, where the field existed before
        activation = {"self": celpy.json_to_cel(value)}
        if transition:
            activation["oldSelf"] = celpy.json_to_cel(old)
        try:
            ok = _CEL.program(_CEL.compile(rule["rule"])).evaluate(activation)
        except celpy.CELEvalError as error:
            ok = False
            errors.append(f"{_path(path)}: CEL rule {rule['rule']!r} does not evaluate: {error}")
        if isinstance(ok, celpy.CELEvalError) or not ok:
            errors.append(f"{_path(path)}: Invalid value: {rule.get('message') or rule['rule']}")
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        for key, item in value.items():
            sub = properties.get(key, extra if isinstance(extra, dict) else None)
            if sub is not None:
                before = old.get(key) if isinstance(old, dict) else None
                errors += _cel_errors(sub, item, before, [*path, key])
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        keys = schema.get("x-kubernetes-list-map-keys")
        for index, item in enumerate(value):
            before = None
            if keys and isinstance(old, list) and isinstance(item, dict):  # a list-map correlates by its keys
                before = next(
                    (o for o in old if isinstance(o, dict) and all(o.get(k) == item.get(k) for k in keys)),
                    None,
                )
            errors += _cel_errors(schema["items"], item, before, [*path, index])
    return errors


def load_crd(path: Path) -> Crd:
    """A CRD as published (YAML, gzip-compressed when the name ends in .gz)."""
    raw = gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()
    crd = yaml.load(raw, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # 1.3 MB: libyaml when there
    assert crd["apiVersion"] == "apiextensions.k8s.io/v1" and crd["kind"] == "CustomResourceDefinition", path
    served = [v for v in crd["spec"]["versions"] if v.get("served")]
    return Crd(
        group=crd["spec"]["group"],
        kind=crd["spec"]["names"]["kind"],
        plural=crd["spec"]["names"]["plural"],
        versions=tuple(v["name"] for v in served),
        schemas={v["name"]: v["schema"]["openAPIV3Schema"] for v in served},
    )
