"""The set of valid TiKV config keys, read from TiKV's config template (the authority on which keys exist).

`data/tikv-config-template.toml` is tikv/tikv @8e964719 `etc/config-template.toml`. Every key in it is
commented out
(`# key = value` under a `[section]` header, some headers themselves commented, e.g. `#
[security.encryption.master-key]`);
a few documented keys are written with two hashes (`## ribbon-filter-above-level = 0`). A commented line
counts as
a key when it is `name = <a valid TOML value>`, so prose such as `## value  =>  memory usage` is not mistaken
for one.
`data/tikv-test-custom.toml` (TiKV's tests/integrations/config/test-custom.toml, a full config TiKV
deserializes in
its own tests) widens the set with real keys the template does not document (e.g.
`server.advertise-status-addr`).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Literal

import tomlkit
from tomlkit.exceptions import TOMLKitError

from headroom.domain.tikvconf.errors import InvalidChangeValue, UnknownConfigKey
from headroom.domain.units import is_duration_text, is_size_text

Kind = Literal["bool", "int", "float", "size", "duration", "str", "list", "map"]
KeySource = Literal["template", "test-custom"]

TEMPLATE_FILE = "tikv-config-template.toml"
TEST_CUSTOM_FILE = "tikv-test-custom.toml"

_HEADER_RE = re.compile(r"^\[\[?\s*([A-Za-z0-9_.\-]+)\s*\]\]?$")
_KEY_RE = re.compile(r"^([A-Za-z0-9_\-]+)\s*=\s*(\S.*)$")


@dataclass(frozen=True)
class KeySpec:
    """One valid TiKV key: dotted name, kind of value, the example value and where it was found."""

    key: str
    kind: Kind
    example: object
    source: KeySource
    line: int


def infer_kind(value: object) -> Kind:
    """Classify a template value: sizes and durations are strings TiKV parses specially."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "map"
    if isinstance(value, str):
        if value and not value.isdigit() and is_duration_text(value):
            return "duration"
        if value and is_size_text(value):
            return "size"
    return "str"


# Sizes the template writes as a bare 0 (so they read as integers): TiKV types them ReadableSize and takes "10GB"
# (tikv/tikv: components/raftstore/src/store/config.rs `capacity: ReadableSize`; src/config/mod.rs DbConfig and
# RaftDbConfig `wal_size_limit: ReadableSize`, TitanCfConfig `zstd_dict_size: ReadableSize`).
READABLE_SIZE_KEYS = frozenset(
    {
        "raftstore.capacity",
        "rocksdb.wal-size-limit",
        "raftdb.wal-size-limit",
        "rocksdb.defaultcf.titan.zstd-dict-size",
        "rocksdb.writecf.titan.zstd-dict-size",
        "rocksdb.lockcf.titan.zstd-dict-size",
    }
)


def _toml_value(text: str) -> object | None:
    try:
        parsed = tomlkit.parse(f"v = {text}\n").unwrap()
    except (TOMLKitError, ValueError):
        return None
    return parsed.get("v")


def extract_keys(
    text: str, source: KeySource = "template", map_keys: frozenset[str] = frozenset()
) -> dict[str, KeySpec]:
    """Read every key (commented or not) of a TiKV config file by dotted name; the first occurrence wins."""
    found: dict[str, KeySpec] = {}
    section: tuple[str, ...] = ()
    for number, raw in enumerate(text.splitlines(), start=1):
        body = raw.strip().lstrip("#").strip()
        if not body:
            continue
        header = _HEADER_RE.match(body)
        if header:
            section = tuple(header.group(1).split("."))
            continue
        pair = _KEY_RE.match(body)
        if not pair:
            continue
        value = _toml_value(pair.group(2))
        if value is None:
            continue
        key = ".".join((*section, pair.group(1)))
        for candidate in map_keys:
            if key.startswith(candidate + "."):
                key, value = candidate, {}
                break
        if key not in found:
            kind = "size" if key in READABLE_SIZE_KEYS else infer_kind(value)
            found[key] = KeySpec(key=key, kind=kind, example=value, source=source, line=number)
    return found


def _data_text(name: str) -> str:
    return resources.files("headroom.domain.tikvconf.data").joinpath(name).read_text(encoding="utf-8")


@cache
def template_keys() -> Mapping[str, KeySpec]:
    """Return the keys of TiKV's config template."""
    return extract_keys(_data_text(TEMPLATE_FILE), "template")


@cache
def map_valued_keys() -> frozenset[str]:
    """Return keys whose value is a free-form table (`server.labels = {}`): sub-keys are user data."""
    return frozenset(spec.key for spec in template_keys().values() if spec.kind == "map")


@cache
def known_keys() -> Mapping[str, KeySpec]:
    """Return every valid key: the template's, then TiKV's test-custom.toml for keys the template omits."""
    merged = dict(extract_keys(_data_text(TEST_CUSTOM_FILE), "test-custom", map_valued_keys()))
    merged.update(template_keys())
    return merged


def is_valid_key(key: str) -> bool:
    """Say whether TiKV has this dotted key (or it lies under a free-form table such as server.labels)."""
    if key in known_keys():
        return True
    return any(key.startswith(prefix + ".") for prefix in map_valued_keys())


def require_valid_key(key: str) -> KeySpec:
    """Return the key's spec, or raise UnknownConfigKey naming the closest real keys."""
    spec = known_keys().get(key)
    if spec is not None:
        return spec
    for prefix in map_valued_keys():
        if key.startswith(prefix + "."):
            return KeySpec(key=key, kind="str", example="", source="template", line=0)
    suggestions = tuple(difflib.get_close_matches(key, list(known_keys()), n=3, cutoff=0.75))
    raise UnknownConfigKey(key, suggestions)


# Integer keys TiKV reads as counts, sizes or thread numbers are never negative; the exceptions take -1 for
# "unlimited" (the template: max-open-files "-1 means unlimited" (RocksDB max_open_files), pd.retry-max-count = -1).
_MINUS_ONE_MEANS_UNLIMITED = frozenset({"rocksdb.max-open-files", "raftdb.max-open-files"})


def _negative_ok(spec: KeySpec, value: int) -> bool:
    return value == -1 and (spec.key in _MINUS_ONE_MEANS_UNLIMITED or spec.example == -1)


KIND_WORDS: dict[str, str] = {
    "bool": "true or false",
    "int": "a whole number, 0 or more",
    "float": "a number",
    "size": 'a size such as "4GiB" or "512MB" (or a number of bytes)',
    "duration": 'a duration such as "10s", "5m" or "1h"',
    "list": "a list",
    "map": "a table",
    "str": "text",
}


def check_value(key: str, value: object) -> None:
    """Raise InvalidChangeValue when `value` cannot be a value of `key` (a size given 'lots')."""
    spec = require_valid_key(key)
    ok: bool
    if spec.kind == "bool":
        ok = isinstance(value, bool)
    elif spec.kind == "int":
        ok = isinstance(value, int) and not isinstance(value, bool) and (value >= 0 or _negative_ok(spec, value))
    elif spec.kind == "float":
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    elif spec.kind == "size":
        ok = (isinstance(value, int) and not isinstance(value, bool) and value >= 0) or (
            isinstance(value, str) and is_size_text(value)
        )
    elif spec.kind == "duration":
        # a bare number is milliseconds (TiKV's own test config: wake-up-delay-duration = 100)
        ok = (isinstance(value, str) and is_duration_text(value)) or (
            isinstance(value, int) and not isinstance(value, bool) and value >= 0
        )
    elif spec.kind == "list":
        ok = isinstance(value, list)
    elif spec.kind == "map":
        ok = isinstance(value, dict)
    else:
        ok = isinstance(value, str)
    if not ok:
        raise InvalidChangeValue(
            f"{value!r} is not a valid value for {key}: expected {KIND_WORDS[spec.kind]} (TiKV's config template "
            f"has {spec.example!r})"
        )
