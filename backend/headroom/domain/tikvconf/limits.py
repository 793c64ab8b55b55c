"""Bounds on the config documents Headroom reads, checked before and while parsing (docs/upload-limits.md).

* Size: a tikv.toml or TiUP topology is refused before any parsing when its UTF-8 text is over the limit (the
  parsers are pure Python: tomlkit reads ~140 KB/s, PyYAML ~400 KB/s), or holds a NUL or a lone surrogate,
  which no config file has and PostgreSQL's text columns cannot store.
* YAML: `BoundedSafeLoader` composes the document with a budget. Aliases cost nothing to write but are
  materialised later (`_plain`, JSON), so a 382-byte file of nested aliases once cost 300 MB; the loader counts
  every node as it will be once aliases are expanded and stops at `MAX_YAML_NODES`, refuses an alias inside the
  node it names (a recursive alias), caps aliases and nesting, and accepts only the tags JSON can hold (no
  `!!binary`, `!!set`, `!!timestamp`, `!!python/...`). Plain dates stay strings, as TiUP (Go) reads them.
* Values: nan/inf floats and NUL characters are refused in uploads (PostgreSQL's JSONB rejects them, and no
  TiKV setting is nan, inf or holds a NUL) and dropped, with a reason, from a live `/config` answer.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Iterator, Mapping
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from headroom.domain.tikvconf.errors import ConfigParseError, ConfigTooLarge

# A full tikv.toml (TiKV's config template, every key with its comment) is 60 KB; TiKV's own "every key set"
# test config is 20 KB. TiUP's example topologies are 11-16 KB; a 500-instance `tiup cluster edit-config`
# output is a few hundred KB.
MAX_TOML_BYTES = 256 * 1024
MAX_TOPOLOGY_BYTES = 512 * 1024
# Real topologies have a few hundred YAML nodes (TiUP's examples: under 300) and no aliases; one of 500 TiKV
# instances about 15,000. PyYAML spends 40-100 us and ~750 bytes per node it composes (measured on the shared
# 2-core dev machine), so 50,000 nodes bound a refused document to 2-5 s and ~37 MB.
MAX_YAML_NODES = 50_000
MAX_YAML_ALIASES = 1_000
# Anchors (&name) cost a little each to compose and remember; a real topology has none or a handful (shared
# config blocks). 20,000 anchors of one value each fit in 460 KB and cost ~1.7 s of CPU before this cap.
MAX_YAML_ANCHORS = 1_000
# CPU seconds one document may take to compose: real topologies take milliseconds (a 500-instance one ~0.2 s on the
# shared 2-core dev machine); a document that still takes longer within the other bounds is refused, so one upload
# can never hold a parser for long (docs/upload-limits.md).
MAX_PARSE_CPU_SECONDS = 2.0
MAX_YAML_DEPTH = 100  # tomlkit's own nesting limit for TOML
MAX_INT_DIGITS = 64  # TiKV settings are 64-bit; a longer YAML integer is a mistake (and slow to convert)

_CORE = "tag:yaml.org,2002:"
_YAML12_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_ALLOWED_TAGS = frozenset(_CORE + t for t in ("str", "int", "float", "bool", "null", "seq", "map", "merge"))
_NON_FINITE = "{value} is not a finite number; nan and inf are never valid TiKV settings"
_NUL = "contains a NUL character (\\u0000), which no TiKV setting holds and the database cannot store"

Segment = str | int | None  # a mapping key, a list index, or None while composing a mapping's key
Problem = tuple[tuple[str | int, ...], str]  # (path to the value, reason)


def position(text: str, index: int) -> tuple[int, int]:
    """Return the 1-based (line, column) of a character offset."""
    line_start = text.rfind("\n", 0, index) + 1
    return text.count("\n", 0, index) + 1, index - line_start + 1


def check_document(text: str, source: str, max_bytes: int) -> None:
    """Refuse a document before parsing: over `max_bytes` of UTF-8, a NUL character or a lone surrogate."""
    if len(text) > max_bytes:  # every character is at least one byte: too large without encoding it
        raise ConfigTooLarge(len(text), max_bytes, source, at_least=True)
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError as error:
        line, column = position(text, error.start)
        raise ConfigParseError(
            "not valid Unicode text (a lone surrogate character)", line, column, source
        ) from None
    if size > max_bytes:
        raise ConfigTooLarge(size, max_bytes, source)
    nul = text.find("\x00")
    if nul >= 0:
        line, column = position(text, nul)
        raise ConfigParseError("the file contains a NUL character (byte 0x00); a config file is text",
                               line, column, source)


def format_path(path: tuple[Segment, ...] | list[Segment]) -> str:
    """Spell a key path as people write it: `tikv_servers[0].config.storage` (a very deep one shortened)."""
    out = ""
    if len(path) > 12:
        return f"{format_path(list(path[:6]))}...{format_path(list(path[-3:]))}"
    for segment in path:
        if segment is None:
            out += " (a key)"
        elif isinstance(segment, int):
            out += f"[{segment}]"
        else:
            shown = segment.replace("\x00", "\\u0000")
            out += f".{shown}" if out else shown
    return out or "the document"


def _short_tag(tag: str) -> str:
    return "!!" + tag[len(_CORE):] if tag.startswith(_CORE) else tag


class BoundedSafeLoader(yaml.SafeLoader):
    """PyYAML's SafeLoader with a budget (see the module docstring); errors are ConfigParseError with a line.

    Use `load_bounded(text, source)`; the checks run in `compose_node`, before anything is constructed.
    """

    # YAML 1.2 rules, as TiUP reads its topology (gopkg.in/yaml.v3): only true/false are booleans, so
    # `compression-per-level: [no, no, lz4]` and `level: off` stay strings (PyYAML's YAML 1.1 made them False);
    # plain scalars that look like dates stay strings too (TiUP reads them into Go strings).
    yaml_implicit_resolvers = {
        first: [
            (tag, _YAML12_BOOL if tag == _CORE + "bool" else regexp)
            for tag, regexp in resolvers
            if tag != _CORE + "timestamp" and not (tag == _CORE + "bool" and first not in "tTfF")
        ]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def __init__(self, stream: str, source: str = "topology.yaml") -> None:
        super().__init__(stream)
        self.source = source
        self._path: list[Segment] = []
        self._open_anchors: list[str] = []
        self._aliases = 0
        self._anchors = 0
        self._composed = 0
        self._cpu_deadline = time.thread_time() + MAX_PARSE_CPU_SECONDS
        self._expanded: dict[int, int] = {}  # id(node) -> nodes it stands for once aliases are expanded

    def _refuse(self, message: str, node_or_event: Any) -> ConfigParseError:
        mark = node_or_event.start_mark
        where = f"{format_path(self._path)}: " if self._path else ""
        return ConfigParseError(where + message, mark.line + 1, mark.column + 1, self.source)

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        if isinstance(index, ScalarNode):
            segment: Segment = index.value
        elif isinstance(index, int):
            segment = index
        elif index is None and parent is not None:
            segment = None
        else:
            segment = "?"
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if parent is not None:
            self._path.append(segment)
        try:
            if isinstance(event, yaml.AliasEvent):
                self._aliases += 1
                if self._aliases > MAX_YAML_ALIASES:
                    raise self._refuse(f"more than {MAX_YAML_ALIASES:,} aliases (*name) in one document", event)
                if event.anchor in self._open_anchors:
                    raise self._refuse(
                        f"the alias *{event.anchor} is inside the node it names (a recursive alias)", event
                    )
                return super().compose_node(parent, index)
            if len(self._path) > MAX_YAML_DEPTH:
                raise self._refuse(f"nested more than {MAX_YAML_DEPTH} levels deep", event)
            self._composed += 1
            if self._composed % 512 == 0 and time.thread_time() > self._cpu_deadline:
                raise self._refuse(f"the document takes more than {MAX_PARSE_CPU_SECONDS:g} s of CPU to read "
                                   "(real topologies take milliseconds)", event)
            anchor = getattr(event, "anchor", None)
            if anchor is not None:
                self._anchors += 1
                if self._anchors > MAX_YAML_ANCHORS:
                    raise self._refuse(f"more than {MAX_YAML_ANCHORS:,} anchors (&name) in one document", event)
            self._open_anchors.append(anchor or "")
            try:
                node = super().compose_node(parent, index)
            finally:
                self._open_anchors.pop()
            if node is not None:
                self._check(node)
            return node
        finally:
            if parent is not None:
                self._path.pop()

    def _check(self, node: Node) -> None:
        if node.tag not in _ALLOWED_TAGS:
            kind = "key" if self._path and self._path[-1] is None else "value"
            raise self._refuse(
                f"a YAML {_short_tag(node.tag)} {kind} is not allowed (only strings, numbers, booleans, "
                "null, lists and mappings)",
                node,
            )
        if isinstance(node, ScalarNode):
            size = 1
            if "\x00" in node.value:
                raise self._refuse(_NUL, node)
            if node.tag == _CORE + "float" and not math.isfinite(self.construct_yaml_float(node)):
                raise self._refuse(_NON_FINITE.format(value=node.value), node)
            if node.tag == _CORE + "int" and len(node.value) > MAX_INT_DIGITS:
                raise self._refuse(f"the number {node.value[:20]}... is too long for a setting", node)
        elif isinstance(node, SequenceNode):
            size = 1 + sum(self._expanded.get(id(child), 1) for child in node.value)
        elif isinstance(node, MappingNode):
            size = 1 + sum(
                self._expanded.get(id(key), 1) + self._expanded.get(id(value), 1) for key, value in node.value
            )
        else:  # pragma: no cover - PyYAML composes only these three
            size = 1
        if size > MAX_YAML_NODES and not self._aliases:
            raise self._refuse(f"the document has more than {MAX_YAML_NODES:,} values", node)
        if size > MAX_YAML_NODES:
            raise self._refuse(
                f"the document expands to more than {MAX_YAML_NODES:,} values once its aliases are expanded "
                "(aliases of aliases multiply: an alias bomb?)",
                node,
            )
        self._expanded[id(node)] = size


def load_bounded(text: str, source: str = "topology.yaml") -> tuple[Any, Node | None]:
    """Load one YAML document within the bounds; return the data and its composed root node (for marks)."""
    loader = BoundedSafeLoader(text, source)
    try:
        root = loader.get_single_node()
        data = loader.construct_document(root) if root is not None else None
    finally:
        loader.dispose()
    return data, root


def node_at(root: Node | None, path: tuple[str | int, ...]) -> Node | None:
    """Return the composed node at a key path (mapping keys by their text, list items by index), if any."""
    node = root
    for segment in path:
        if isinstance(node, MappingNode) and isinstance(segment, str):
            node = next(
                (v for k, v in node.value if isinstance(k, ScalarNode) and k.value == segment), None
            )
        elif isinstance(node, SequenceNode) and isinstance(segment, int) and 0 <= segment < len(node.value):
            node = node.value[segment]
        else:
            return None
    return node


def _problems(value: Any, path: tuple[str | int, ...]) -> Iterator[Problem]:
    if isinstance(value, float) and not math.isfinite(value):
        yield path, _NON_FINITE.format(value=value)
    elif isinstance(value, str) and "\x00" in value:
        yield path, _NUL
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str) and "\x00" in key:
                yield (*path, key), "the key " + _NUL
            else:
                yield from _problems(item, (*path, str(key)))
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from _problems(item, (*path, i))


def first_unstorable(tree: Mapping[str, Any]) -> Problem | None:
    """Return the first value a JSONB column would refuse (nan, inf, a NUL in a string or key), if any."""
    return next(_problems(tree, ()), None)


def drop_unstorable(tree: Mapping[str, Any]) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """Copy a nested config without the keys a JSONB column would refuse; return it and (dotted key, reason)."""
    dropped: list[tuple[str, str]] = []

    def walk(node: Mapping[str, Any], prefix: tuple[str | int, ...]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in node.items():
            path = (*prefix, str(key))
            if isinstance(value, Mapping) and "\x00" not in str(key):
                out[str(key)] = walk(value, path)
                continue
            problem = next(_problems({str(key): value}, prefix), None)
            if problem is None:
                out[str(key)] = value
            else:
                dropped.append((format_path(path), problem[1]))
        return out

    return walk(tree, ()), dropped
