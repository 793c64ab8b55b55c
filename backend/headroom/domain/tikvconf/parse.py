"""Read a TiKV config from any of its sources into one view: dotted keys (as TiKV spells them) -> values.

Sources: a tikv.toml file (tomlkit, so the same parse can be patched without losing comments), TiKV's live
`GET :20180/config` JSON (nested, kebab-case, sizes as "32KiB" strings, docs/reference/tikv-metrics.md#config-json), and a TiUP topology's
`server_configs.tikv` block (dotted keys) with per-host `tikv_servers[].config` overrides.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any

import tomlkit
import yaml
from tomlkit.exceptions import ParseError, TOMLKitError
from tomlkit.items import AoT
from tomlkit.toml_document import TOMLDocument
from yaml.nodes import Node

from headroom.domain.tikvconf.errors import ConfigParseError
from headroom.domain.tikvconf.keys import known_keys, map_valued_keys
from headroom.domain.tikvconf.limits import (
    MAX_TOML_BYTES,
    MAX_TOPOLOGY_BYTES,
    check_document,
    first_unstorable,
    format_path,
    load_bounded,
    node_at,
    position,
)
from headroom.domain.units import parse_duration, parse_size

ConfigView = dict[str, Any]
_POSITION_SUFFIX = re.compile(r"\s+at line \d+ col \d+\s*$")


def parse_toml(text: str, source: str = "tikv.toml", max_bytes: int = MAX_TOML_BYTES) -> TOMLDocument:
    """Parse tikv.toml keeping comments and layout; raise ConfigParseError with line and column (1-based).

    The text is refused before parsing when over `max_bytes` (ConfigTooLarge), and after it when a value is
    nan/inf or holds a NUL (no TiKV setting does, and the JSONB column that stores configs refuses them)."""
    check_document(text, source, max_bytes)
    try:
        document = tomlkit.parse(text)
        tree = document.unwrap()  # surfaces conflicts tomlkit only detects when materialising tables
    except ParseError as error:
        message = _POSITION_SUFFIX.sub("", str(error)).strip().splitlines()[0]
        raise ConfigParseError(message, error.line, error.col + 1, source) from error
    except (TOMLKitError, ValueError) as error:
        raise ConfigParseError(str(error).splitlines()[0] or type(error).__name__, 0, 0, source) from error
    problem = first_unstorable(tree)
    if problem is not None:
        path, reason = problem
        line, column = _toml_position(document, path)
        if not line and "NUL" in reason:  # a key (a [table] header): the first NUL escape in the text
            found = re.search(r"\\(u0000|U00000000)", text)
            line, column = position(text, found.start()) if found else (0, 0)
        raise ConfigParseError(f"{format_path(path)}: {reason}", line, column, source)
    return document


def _toml_position(document: TOMLDocument, path: tuple[str | int, ...]) -> tuple[int, int]:
    """Return where the value at `path` starts in the file (the whole array when inside one); (0, 0) if unsure.

    Only called on a document about to be refused: the value is swapped for a unique marker in place and the
    document rendered again; tomlkit renders everything before it unchanged, so the marker sits where it was."""
    parent: Any = None
    key: str | int | None = None
    node: Any = document
    for segment in path:
        in_table = isinstance(node, MutableMapping) and isinstance(segment, str) and segment in node
        in_aot = isinstance(node, AoT) and isinstance(segment, int) and 0 <= segment < len(node)
        if not (in_table or in_aot):
            break  # inside an array: mark the array
        parent, key, node = node, segment, node[segment]
    if parent is None or isinstance(parent, AoT) or isinstance(node, MutableMapping | AoT):
        return 0, 0
    marker = f"headroom-marker-{uuid.uuid4().hex}"
    try:
        parent[key] = marker
        rendered = document.as_string()
    except (TOMLKitError, ValueError, KeyError, TypeError):
        return 0, 0
    found = rendered.find(marker)
    if found < 1:
        return 0, 0
    return position(rendered, found - 1)  # the opening quote: where the value started


def flatten(tree: Mapping[str, Any], prefix: str = "") -> ConfigView:
    """Flatten nested tables into dotted keys; arrays and free-form tables (server.labels) stay whole."""
    flat: ConfigView = {}
    maps = map_valued_keys()
    for name, value in tree.items():
        key = f"{prefix}{name}"
        if isinstance(value, Mapping) and key not in maps:
            flat.update(flatten(value, key + "."))
        else:
            flat[key] = value
    return flat


def toml_view(text: str, source: str = "tikv.toml") -> ConfigView:
    """Parse tikv.toml text into the dotted-key view."""
    return flatten(parse_toml(text, source).unwrap())


def config_json_view(payload: str | Mapping[str, Any], source: str = "config JSON") -> ConfigView:
    """Parse TiKV's `GET /config` JSON (text or already-decoded) into the dotted-key view."""
    if isinstance(payload, str):
        try:
            decoded = json.loads(payload)
        except json.JSONDecodeError as error:
            raise ConfigParseError(error.msg, error.lineno, error.colno, source) from error
        except RecursionError:
            raise ConfigParseError("nested too deeply", 0, 0, source) from None
    else:
        decoded = payload
    if not isinstance(decoded, Mapping):
        raise ConfigParseError("expected a JSON object of TiKV config sections", 1, 1, source)
    return flatten(decoded)


@dataclass(frozen=True)
class TopologyConfig:
    """The TiKV config in a TiUP topology: cluster-wide `server_configs.tikv` and per-instance overrides."""

    global_config: ConfigView = field(default_factory=dict)
    per_host: dict[str, ConfigView] = field(default_factory=dict)  # "host:port" -> dotted view

    def for_instance(self, host: str, port: int | None = None) -> ConfigView:
        """Return the config an instance runs with: server_configs.tikv, then its own overrides.

        An instance is its host and port; a topology entry without a port is the instance on TiUP's default TiKV
        port 20160 (TiUP topology reference, tikv_servers.port), never every instance on its host."""
        merged = dict(self.global_config)
        merged.update(self.per_host.get(f"{host}:{port or TIUP_TIKV_PORT}", {}))
        return merged


TIUP_TIKV_PORT = 20160  # tikv_servers[].port's default (TiUP topology file reference)


def tiup_topology_view(
    text: str, source: str = "topology.yaml", max_bytes: int = MAX_TOPOLOGY_BYTES
) -> TopologyConfig:
    """Parse a TiUP topology YAML (`tiup cluster edit-config` / `show-config`) into its TiKV config views.

    Bounded (domain/tikvconf/limits.py): size before parsing, aliases, nesting and expansion while composing, JSON-only
    tags and values; then the sections read here are type-checked. Every refusal is a ConfigParseError naming
    the key path and, where it can, the line."""
    check_document(text, source, max_bytes)
    try:
        decoded, root = load_bounded(text, source)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)
        raise ConfigParseError(str(problem), line, column, source) from error
    return _topology(decoded if decoded is not None else {}, root, source)


def _topology(decoded: Any, root: Node | None, source: str) -> TopologyConfig:
    """Read server_configs.tikv and tikv_servers[].config, checking the type of each part read."""

    def refuse(path: tuple[str | int, ...], message: str) -> ConfigParseError:
        node = node_at(root, path)
        mark = node.start_mark if node is not None else None
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)
        return ConfigParseError(f"{format_path(path)} {message}", line, column, source)

    if not isinstance(decoded, Mapping):
        raise refuse((), "must be a mapping of sections (global, server_configs, tikv_servers, ...)")
    server_configs = decoded.get("server_configs")
    if server_configs is not None and not isinstance(server_configs, Mapping):
        raise refuse(("server_configs",), "must be a mapping of components to their settings")
    tikv_block = (server_configs or {}).get("tikv")
    if tikv_block is not None and not isinstance(tikv_block, Mapping):
        raise refuse(("server_configs", "tikv"), "must be a mapping of TiKV settings")
    global_config = flatten(tikv_block) if tikv_block is not None else {}
    servers = decoded.get("tikv_servers")
    if servers is not None and not isinstance(servers, list):
        raise refuse(("tikv_servers",), "must be a list of hosts (each item `- host: ...`)")
    per_host: dict[str, ConfigView] = {}
    for i, server in enumerate(servers or ()):
        if not isinstance(server, Mapping):
            raise refuse(("tikv_servers", i), "must be a mapping with a host (`- host: 10.0.1.5`)")
        host, port, config = server.get("host"), server.get("port"), server.get("config")
        if not isinstance(host, str) or not host:
            raise refuse(("tikv_servers", i, "host") if "host" in server else ("tikv_servers", i),
                         "must be a host name or IP address" if "host" in server else "has no host")
        if port is not None and (isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536):
            raise refuse(("tikv_servers", i, "port"), "must be a port number (1-65535)")
        if config is not None and not isinstance(config, Mapping):
            raise refuse(("tikv_servers", i, "config"), "must be a mapping of TiKV settings")
        if config is not None:
            per_host[f"{host}:{port or TIUP_TIKV_PORT}"] = flatten(config)
    return TopologyConfig(global_config, per_host)


def unknown_keys(view: Mapping[str, Any]) -> list[str]:
    """Return the keys of a view that TiKV's template and test config do not know (e.g. typos in a file)."""
    known = known_keys()
    maps = map_valued_keys()
    return sorted(k for k in view if k not in known and not any(k.startswith(m + ".") for m in maps))


def canonical(key: str, value: Any) -> Any:
    """Normalise a value for comparison: sizes to bytes, durations to ms ("64KB" == "64KiB" == 65536)."""
    spec = known_keys().get(key)
    kind = spec.kind if spec else None
    try:
        if kind == "size" and isinstance(value, str | int) and not isinstance(value, bool):
            return ("size", parse_size(value))
        if kind == "duration" and isinstance(value, str):
            return ("duration", parse_duration(value))
    except ValueError:
        return value
    if isinstance(value, float) and value.is_integer() and kind in ("int", "float"):
        return int(value)
    return value


def same_value(key: str, left: Any, right: Any) -> bool:
    """Say whether two spellings of a key's value mean the same to TiKV."""
    return bool(canonical(key, left) == canonical(key, right))


def config_number(value: Any) -> float | None:
    """Return a config value as a number (a size as bytes: "4GiB" -> 4294967296), None if it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(parse_size(value))
        except ValueError:
            try:
                return float(value)
            except ValueError:
                return None
    return None
