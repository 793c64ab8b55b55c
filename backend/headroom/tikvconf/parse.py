"""Read a TiKV config from any of its sources into one view: dotted keys (as TiKV spells them) -> values.

Sources: a tikv.toml file (tomlkit, so the same parse can be patched without losing comments), TiKV's live
`GET :20180/config` JSON (nested, kebab-case, sizes as "32KiB" strings, domain.md s4.2), and a TiUP topology's
`server_configs.tikv` block (dotted keys) with per-host `tikv_servers[].config` overrides.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import tomlkit
import yaml
from tomlkit.exceptions import ParseError, TOMLKitError
from tomlkit.toml_document import TOMLDocument

from headroom.tikvconf.errors import ConfigParseError
from headroom.tikvconf.keys import known_keys, map_valued_keys
from headroom.tikvconf.units import parse_duration, parse_size

ConfigView = dict[str, Any]
_POSITION_SUFFIX = re.compile(r"\s+at line \d+ col \d+\s*$")


def parse_toml(text: str, source: str = "tikv.toml") -> TOMLDocument:
    """Parse tikv.toml keeping comments and layout; raise ConfigParseError with line and column (1-based)."""
    try:
        document = tomlkit.parse(text)
        document.unwrap()  # surfaces conflicts tomlkit only detects when materialising tables
    except ParseError as error:
        message = _POSITION_SUFFIX.sub("", str(error)).strip().splitlines()[0]
        raise ConfigParseError(message, error.line, error.col + 1, source) from error
    except (TOMLKitError, ValueError) as error:
        raise ConfigParseError(str(error).splitlines()[0] or type(error).__name__, 0, 0, source) from error
    return document


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
    else:
        decoded = payload
    if not isinstance(decoded, Mapping):
        raise ConfigParseError("expected a JSON object of TiKV config sections", 1, 1, source)
    return flatten(decoded)


@dataclass(frozen=True)
class TopologyConfig:
    """The TiKV config in a TiUP topology: cluster-wide `server_configs.tikv` and per-instance overrides."""

    global_config: ConfigView = field(default_factory=dict)
    per_host: dict[str, ConfigView] = field(default_factory=dict)  # "host" or "host:port" -> dotted view

    def for_instance(self, host: str, port: int | None = None) -> ConfigView:
        """Return the config an instance runs with: server_configs.tikv, then its own overrides."""
        merged = dict(self.global_config)
        merged.update(self.per_host.get(host, {}))
        if port is not None:
            merged.update(self.per_host.get(f"{host}:{port}", {}))
        return merged


def tiup_topology_view(text: str, source: str = "topology.yaml") -> TopologyConfig:
    """Parse a TiUP topology YAML (`tiup cluster edit-config` / `show-config`) into its TiKV config views."""
    try:
        decoded = yaml.safe_load(text) or {}
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)
        raise ConfigParseError(str(problem), line, column, source) from error
    if not isinstance(decoded, Mapping):
        raise ConfigParseError("expected a TiUP topology mapping", 1, 1, source)
    server_configs = decoded.get("server_configs") or {}
    tikv_block = server_configs.get("tikv") if isinstance(server_configs, Mapping) else None
    global_config = flatten(tikv_block) if isinstance(tikv_block, Mapping) else {}
    per_host: dict[str, ConfigView] = {}
    for server in decoded.get("tikv_servers") or ():
        if not isinstance(server, Mapping) or not isinstance(server.get("config"), Mapping):
            continue
        host = str(server.get("host", ""))
        name = f"{host}:{server['port']}" if server.get("port") else host
        per_host[name] = flatten(server["config"])
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
