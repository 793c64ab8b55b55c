"""Which string scalars a YAML file must quote so that every reader takes them as strings.

A topology Headroom writes is read by TiUP, which read topologies with gopkg.in/yaml.v2 (YAML 1.1 rules) up to
v1.16.2 and with gopkg.in/yaml.v3 from v1.16.3 (pingcap/tiup CHANGELOG, 1.16.3: "Switch from yaml.v2 to yaml.v3",
#2558), and by people's own tools (PyYAML: 1.1; ruamel.yaml: 1.2). A plain `no` is the string "no" under YAML 1.2
and `false` under YAML 1.1 (https://yaml.org/type/bool.html), so `compression-per-level: [no, no, lz4]` reaches an
older TiUP as `[false, false, "lz4"]` and TiKV refuses the config. A string any of them could read as another type
is written quoted; every other string stays plain, as the user's own file has it.

The union, each part from its public definition:
- YAML 1.1 types (https://yaml.org/type/): bool (y|Y|yes|Yes|YES|n|N|no|No|NO|true|...|on|On|ON|off|Off|OFF), null
  (~, null), int (0b, 0x, leading-0 octal, `_`, sexagesimal 1:20), float (.inf, .nan, sexagesimal), timestamp,
  merge `<<` and value `=`: PyYAML's resolver (1.1) plus the y/n it leaves out;
- YAML 1.2 core schema (https://yaml.org/spec/1.2.2/#1032-tag-resolution): ruamel.yaml's 1.2 resolver (0o octal);
- gopkg.in/yaml.v2 v2.4.0 and gopkg.in/yaml.v3 v3.0.1 resolve.go: after removing `_`, Go's strconv.ParseInt with
  base 0 (0x, 0o, 0b, leading-0 octal), then their float pattern; strconv.ParseFloat for a scalar starting with
  `.`; a timestamp from `YYYY-` on (yaml.v3 also -0o);
- the bool and null words in any letter case (`nO`, `TRUE`), which no reader needs quoted but nobody should have
  to check.
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from ruamel.yaml.nodes import ScalarNode as RuamelScalarNode
from ruamel.yaml.resolver import VersionedResolver

_STR = "tag:yaml.org,2002:str"
_WORDS = frozenset(
    {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~", "", "<<", "=", ".inf", "+.inf", "-.inf",
     ".nan"}
)
# Go's strconv.ParseInt(s, 0, 64) after yaml.v2/v3 removed every `_`: 0x / 0o / 0b prefixes, leading-0 octal
_GO_INT = re.compile(r"[-+]?(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)")
# yaml.v2/v3 yamlStyleFloat
_GO_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
# yaml.v2/v3 parseTimestamp: four digits and '-' first, then time.Parse with date-first layouts
_GO_TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt ].*)?")
_YAML11 = yaml.resolver.Resolver()
_YAML12 = VersionedResolver(version=(1, 2))


def _go_reads_as_other(text: str) -> bool:
    if not text or text[0] not in "0123456789+-.":
        return False  # yaml.v2/v3 try numbers and timestamps only from these first characters
    if text[0] == ".":
        return len(text) > 1 and (text[1].isdigit() or text[1] == "_")  # strconv.ParseFloat(".5"), conservatively
    if _GO_TIMESTAMP.fullmatch(text):
        return True
    plain = text.replace("_", "")
    return bool(_GO_INT.fullmatch(plain) or _GO_FLOAT.fullmatch(plain))


def needs_quotes(text: str) -> bool:
    """Whether the string `text`, written plain, could be read as anything but that string by a YAML 1.1 or 1.2
    reader (see the module docstring)."""
    if text.lower() in _WORDS:
        return True
    if _YAML11.resolve(yaml.ScalarNode, text, (True, False)) != _STR:  # type: ignore[no-untyped-call]
        return True
    if _YAML12.resolve(RuamelScalarNode, text, (True, False)) != _STR:
        return True
    return _go_reads_as_other(text)


def ambiguous_strings(value: Any) -> list[str]:
    """Every string in `value` (lists and maps walked, keys included) that needs quotes."""
    if isinstance(value, str):
        return [value] if needs_quotes(value) else []
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [*ambiguous_strings(k), *ambiguous_strings(v)]]
    if isinstance(value, list | tuple):
        return [s for item in value for s in ambiguous_strings(item)]
    return []


class QuotingSafeDumper(yaml.SafeDumper):
    """PyYAML's safe dumper, with every string `needs_quotes` names double-quoted (PyYAML alone quotes only what
    its YAML 1.1 resolver reads as another type: not `0o17`, `y` or `n`)."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if needs_quotes(value):
        return dumper.represent_scalar(_STR, value, style='"')
    return dumper.represent_str(value)


QuotingSafeDumper.add_representer(str, _represent_str)
