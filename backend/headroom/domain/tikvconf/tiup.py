"""Patch a TiUP topology in place: the proposed TiKV values land where TiUP will read them, and nothing else moves.

TiUP's precedence (TiUP topology file reference, server_configs): `server_configs.tikv` applies to every TiKV, and
an instance's own `tikv_servers[].config` wins over it for that instance. So a cluster-wide change goes into
`server_configs.tikv` and also into every instance config that sets the same key (else it would be silently
overridden there); a change for one node goes into its instance's config. A key is changed where the topology
already spells it (dotted `storage.block-cache.capacity` or nested maps), so TiUP never sees two spellings of one
key (it flattens maps in no fixed order). The document is read and written with ruamel.yaml's round trip (YAML
1.2): comments, order and quoting stay. TiUP read topologies with gopkg.in/yaml.v2 (YAML 1.1, where a plain `no`
is false) up to v1.16.2 and with yaml.v3 from v1.16.3 (pingcap/tiup CHANGELOG, #2558), so every string value the
patch writes that either could read as another type is double-quoted (yamlscalar). An instance without `port` is
the one on 20160.
"""

from __future__ import annotations

import difflib
import io
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError
from ruamel.yaml.scalarstring import DoubleQuotedScalarString
from ruamel.yaml.tokens import CommentToken

from headroom.domain.model import Change
from headroom.domain.tikvconf.change import PatchTarget, split_address, target_node
from headroom.domain.tikvconf.errors import ConfigParseError, TikvConfError
from headroom.domain.tikvconf.operator import locate_key
from headroom.domain.tikvconf.parse import TIUP_TIKV_PORT
from headroom.domain.tikvconf.render import tiup_cluster_name, tiup_name_note
from headroom.domain.tikvconf.yamlscalar import needs_quotes


@dataclass(frozen=True)
class TopologyPatch:
    text: str  # the whole topology, changed in place
    notes: tuple[str, ...]
    command: str = ""  # the TiUP steps that apply it, one shell line (see tiup_command)


def tiup_command(cluster: str | None, topology_file: str = "topology.yaml") -> str:
    """Apply a patched topology saved as `topology_file`: `tiup cluster edit-config NAME --topology-file FILE`
    replaces the cluster's topology with the file (TiUP v1.8.0+, pingcap/tiup#1637), then `tiup cluster reload NAME
    -R tikv` writes each TiKV's tikv.toml from it and restarts them one at a time (TiUP docs, Modify the
    configuration), leaders evicted first; a long --transfer-timeout keeps TiUP from restarting a node whose leaders
    have not moved yet (docs/reference/rolling-restart.md#config-changes-that-need-a-restart). Every word is quoted
    for a POSIX shell; `cluster` is the TiUP name (render.tiup_cluster_name decides: none given, or one TiUP could
    not have, is a placeholder)."""
    name = tiup_cluster_name(cluster)
    return (shlex.join(["tiup", "cluster", "edit-config", name, "--topology-file", topology_file]) + " && "
            + shlex.join(["tiup", "cluster", "reload", name, "-R", "tikv", "--transfer-timeout", "3600"]))


def _yaml() -> YAML:
    rt = YAML(typ="rt")
    rt.preserve_quotes = True
    rt.width = 4096
    rt.indent(mapping=2, sequence=4, offset=2)  # "  - host: ..." as TiUP writes and documents topologies
    return rt


def _get(tree: Any, key: str) -> tuple[bool, Any]:
    found, rest = locate_key(tree, key.split("."))
    if rest or not found:
        return False, None
    node = tree
    for part in found:
        node = node[part]
    return True, node


def _written(value: Any) -> Any:
    """A value as the patch writes it: every string a YAML 1.1 or 1.2 reader could take for another type (`no`,
    `0o17`, `1:20`; yamlscalar.needs_quotes) double-quoted, so TiUP's yaml.v2 (up to v1.16.2) and yaml.v3 (from
    v1.16.3) both read the string meant."""
    if isinstance(value, str):
        return DoubleQuotedScalarString(value) if needs_quotes(value) else value
    if isinstance(value, list | tuple):
        return [_written(item) for item in value]
    if isinstance(value, dict):
        return {key: _written(item) for key, item in value.items()}
    return value


def _set(tree: Any, key: str, value: Any, moves: _Moves | None = None) -> None:
    """Set `key` where the map spells it, else add it as one dotted key at the deepest existing table."""
    value = _written(value)
    found, rest = locate_key(tree, key.split("."))
    parent: Any = tree
    for part in found[:-1] if not rest else found:
        parent = parent[part]
    if not rest:
        if value is None:
            del parent[found[-1]]
        else:
            parent[found[-1]] = value
    elif value is not None:
        if not isinstance(parent, dict):
            raise TikvConfError(f"{key}: {'.'.join(found)} is not a table in the topology")
        if moves is not None:
            _note_append(moves, parent, ".".join(rest))
        parent[".".join(rest)] = value


# Comment lines after a map's last entry are kept by ruamel on that entry (its deepest last node). They mostly
# document what follows (the next instance's "# # The ip address of the TiKV Server.", the next section's heading,
# commented options), so a key appended to the map goes above them: they move to the new last entry.
# id(map) -> (the map, its last key before the patch added to it, the key the comments go to: None for the last)
_Moves = dict[int, tuple[CommentedMap, Any, Any]]


def _note_append(moves: _Moves, mapping: Any, key: str) -> None:
    if isinstance(mapping, CommentedMap) and len(mapping) and key not in mapping and id(mapping) not in moves:
        moves[id(mapping)] = (mapping, list(mapping.keys())[-1], None)


def _deepest(holder: Any, key: Any) -> tuple[Any, Any, int]:
    """The (container, key or index, comment slot) that holds the comments after `holder[key]`."""
    value = holder[key]
    if isinstance(value, list) and not isinstance(value, CommentedSeq) and value:
        holder[key] = value = CommentedSeq(value)  # a new list value: one that can carry comments
    while isinstance(value, CommentedMap | CommentedSeq) and len(value):
        holder, key = value, (list(value.keys())[-1] if isinstance(value, CommentedMap) else len(value) - 1)
        value = holder[key]
        if isinstance(value, list) and not isinstance(value, CommentedSeq) and value:
            holder[key] = value = CommentedSeq(value)
    return holder, key, (0 if isinstance(holder, CommentedSeq) else 2)


def _move_trailing_comments(moves: _Moves) -> None:
    for mapping, before, to in moves.values():
        after = list(mapping.keys())[-1] if to is None else to
        if after == before or before not in mapping:
            continue
        holder, key, slot = _deepest(mapping, before)
        entry = holder.ca.items.get(key)
        token: Any = entry[slot] if entry and len(entry) > slot else None
        value = getattr(token, "value", None)
        if token is None or not isinstance(value, str) or "\n" not in value:
            continue
        own, _, rest = value.partition("\n")  # the rest of the entry's own line (an end-of-line comment) stays
        # comment lines indented deeper than the map's keys are the entry's own (commented options of a section);
        # from the first one at the keys' column or left of it, they document what follows and move
        column = getattr(getattr(mapping, "lc", None), "col", None) or 0
        lines = rest.split("\n")
        cut = next((i for i, line in enumerate(lines)
                    if line.strip() and len(line) - len(line.lstrip()) <= column), len(lines))
        while cut > 0 and not lines[cut - 1].strip():  # blank lines before the moved comments move with them
            cut -= 1
        stay, rest = "\n".join(lines[:cut]), "\n".join(lines[cut:])
        if not rest:  # nothing after the entry's own line (blank lines move too)
            continue
        token.value = own + "\n" + (stay + "\n" if stay else "")
        holder, key, slot = _deepest(mapping, after)
        moved = CommentToken("\n" + rest, token.start_mark, None)
        holder.ca.items[key] = [moved, None] if slot == 0 else [None, None, moved, None]


def _add_server_configs(document: Any, moves: _Moves) -> None:
    """A new `server_configs` goes where TiUP's examples have it, before the first *_servers section; the comment
    lines heading that section stay right above it."""
    keys = list(document.keys())
    at = next((i for i, k in enumerate(keys) if str(k).endswith("_servers")), len(keys))
    if at == 0:
        document.insert(0, "server_configs", CommentedMap())
        return
    document.insert(at, "server_configs", CommentedMap())
    moves[id(document)] = (document, keys[at - 1], "server_configs")


def _instance(servers: Any, host: str, port: int) -> Any:
    for server in servers or []:
        if isinstance(server, dict) and server.get("host") == host and int(server.get("port") or TIUP_TIKV_PORT) == port:
            return server
    return None


def patch_topology(text: str, changes: Sequence[Change], nodes: Sequence[PatchTarget],
                   source: str = "topology.yaml", *, cluster: str | None = None,
                   topology_file: str = "topology.yaml", display_name: str | None = None) -> TopologyPatch:
    """Apply the tikv changes to a TiUP topology's text (see the module docstring), with the command that applies
    the result saved as `topology_file`: `cluster` is the TiUP name if known, else the command holds a placeholder
    and a note says what to put there (`display_name`: Headroom's name for the cluster)."""
    rt = _yaml()
    try:
        document = rt.load(text)
    except (YAMLError, ValueError) as error:  # ValueError: ruamel's reader on characters YAML forbids
        mark = getattr(error, "problem_mark", None)
        raise ConfigParseError(str(getattr(error, "problem", None) or error).splitlines()[0],
                               (mark.line + 1) if mark else 0, (mark.column + 1) if mark else 0, source) from None
    if not isinstance(document, dict):
        raise TikvConfError(f"{source}: not a TiUP topology (expected a mapping with tikv_servers)")
    servers = document.get("tikv_servers")
    by_status = {n.status_address: n for n in nodes}
    notes: list[str] = []
    moves: _Moves = {}
    for change in (c for c in changes if c.target == "tikv"):
        node = target_node(change)
        if node is None:
            if not isinstance(document.get("server_configs"), dict):
                _add_server_configs(document, moves)
            configs = document["server_configs"]
            if not isinstance(configs.get("tikv"), dict):
                _note_append(moves, configs, "tikv")
                configs["tikv"] = CommentedMap()
            _set(configs["tikv"], change.key, change.proposed, moves)
            for server in servers or []:
                config = server.get("config") if isinstance(server, dict) else None
                has, value = _get(config, change.key) if isinstance(config, dict) else (False, None)
                if has and value != change.proposed:
                    _set(config, change.key, change.proposed, moves)
                    where = f"{server.get('host')}:{server.get('port') or TIUP_TIKV_PORT}"
                    notes.append(f"{where} sets {change.key} = {value} in its own config, which TiUP applies over "
                                 "server_configs.tikv: changed there too; keep the topology you started from, it "
                                 "is the exact rollback (a rollback made from the patch sets one value everywhere)")
            continue
        target = by_status.get(node)
        host, port = split_address(target.server_address()) if target is not None else (None, None)
        server = _instance(servers, host, port or TIUP_TIKV_PORT) if host else None
        if server is None:
            notes.append(f"{change.key}: no tikv_servers entry for {target.server_address() if target else node} "
                         "in the topology; not changed")
            continue
        config = server.get("config")
        if not isinstance(config, dict):
            _note_append(moves, server, "config")
            server["config"] = config = CommentedMap()
        elif any(other is not server and isinstance(other, dict) and other.get("config") is config
                 for other in servers or []):
            # an anchored config shared by several instances (`config: *zone-a`): this one gets its own copy,
            # so the change stays on this node
            own = CommentedMap()
            own.update(config)
            server["config"] = config = own
            notes.append(f"{host}:{port or TIUP_TIKV_PORT} shared its config with other instances through a YAML "
                         f"anchor: it now has its own copy, so {change.key} changes on it only")
        _set(config, change.key, change.proposed, moves)
    _move_trailing_comments(moves)
    out = io.StringIO()
    rt.dump(document, out)
    unchanged = io.StringIO()
    rt.dump(rt.load(text), unchanged)
    replace = tiup_name_note(display_name or "this cluster", cluster)
    return TopologyPatch(keep_untouched_lines(text, unchanged.getvalue(), out.getvalue()),
                         (*notes, *([replace] if replace else [])), tiup_command(cluster, topology_file))


def _key_column(line: str) -> int:
    """Where a line's content starts: past its indentation and any "- " of a sequence item."""
    column = len(line) - len(line.lstrip(" "))
    while line.startswith("- ", column):
        column += 2
    return column


def keep_untouched_lines(original: str, before: str, after: str) -> str:
    """Carry the edit from `before` to `after` (ruamel's dumps of the topology as read and as edited) over to the
    user's own text, so every line the edit does not touch stays byte for byte.

    ruamel writes the whole document again: it re-indents every line to one style, re-spaces flow maps and lists
    (`{ zone: a }` -> `{zone: a}`) and drops lines of only spaces. Only the lines that differ between its two dumps
    are the edit; each lands where the line it replaces or follows sits in the original, indented as its siblings
    there are. The result must read as the same YAML as `after`, else `after` is returned as it is."""
    lines = original.splitlines(keepends=True)
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    newline = "\r\n" if "\r\n" in original else "\n"
    # which original line each line of `before` is (the same text, whitespace aside)
    where: dict[int, int] = {}
    matcher = difflib.SequenceMatcher(None, ["".join(x.split()) for x in lines], ["".join(x.split()) for x in old],
                                      autojunk=False)
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            where[block.b + k] = block.a + k
    out: list[str] = []
    history: list[tuple[int, int]] = []  # (column in ruamel's dump, column in the output) of each key line so far
    at = 0  # the next original line not yet written

    def remember(dumped: str, written: str) -> None:
        if dumped.strip() and not dumped.lstrip().startswith("#"):
            history.append((_key_column(dumped), _key_column(written)))

    def placed(line: str) -> str:
        """A line of `after` indented as the original would have it: as its nearest sibling, else under its parent."""
        if not line.strip():
            return line
        column = _key_column(line)
        target = column
        for dumped, written in reversed(history):
            if dumped == column:
                target = written
                break
            if dumped < column:
                target = written + (column - dumped)
                break
        indent = len(line) - len(line.lstrip(" "))
        body = line[indent:].rstrip("\r\n") + newline
        return " " * max(0, target - (column - indent)) + body

    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            for i in range(i1, i2):
                o = where.get(i)
                if o is None or o < at:
                    return after  # a line of ruamel's that is not the user's: nothing to keep it against
                out.extend(lines[at:o + 1])
                remember(old[i], lines[o])
                at = o + 1
            continue
        mapped = [where[i] for i in range(i1, i2) if i in where and where[i] >= at]
        if tag in ("replace", "delete") and len(mapped) != i2 - i1:
            return after
        if mapped:
            out.extend(lines[at:mapped[0]])
            for k, o in enumerate(mapped[: j2 - j1]):  # a changed line takes its own line's indentation
                remember(old[i1 + k], lines[o])
            at = mapped[-1] + 1
        for line in new[j1:j2]:
            written = placed(line)
            remember(line, written)
            if out and not out[-1].endswith("\n"):  # the original's last line had no line break
                out[-1] += newline
            out.append(written)
    out.extend(lines[at:])
    text = "".join(out)
    safe = YAML(typ="safe", pure=True)
    try:
        if safe.load(text) != safe.load(after):
            return after
    except (YAMLError, ValueError):
        return after
    return text


def rollback_topology(text: str, changes: Sequence[Change], nodes: Sequence[PatchTarget],
                      source: str = "topology.yaml", *, cluster: str | None = None,
                      topology_file: str = "topology.yaml", display_name: str | None = None) -> TopologyPatch:
    """The rollback of `patch_topology(text, changes, ...)`: the topology the patch was made from, byte for byte.

    `tiup cluster edit-config NAME --topology-file FILE` replaces the whole topology (tiup_command), so the file
    itself is the exact rollback: a key the patch added to server_configs.tikv or to an instance's config is gone
    again and every value it changed is back where it was, with no value pinned per instance (writing the values
    the nodes ran as explicit keys would hide later server_configs edits, and a default that follows the host, such
    as the block cache's share of memory, would stop following it). TiUP refuses a new topology whose instances
    differ from the cluster's (edit-config: "immutable field changed", pkg/utils/diff.go ValidateSpecDiff), so a
    topology older than a scale-out is refused rather than applied."""
    forward = patch_topology(text, changes, nodes, source, cluster=cluster, topology_file=topology_file,
                             display_name=display_name)
    safe = YAML(typ="safe", pure=True)
    if safe.load(forward.text) == safe.load(text):
        raise TikvConfError(f"{source}: the patch changes nothing in this topology (it already holds the patch's "
                            "values?): give the topology the patch was made from, the rollback gives it back")
    notes = ("This is the topology you gave, byte for byte: applied with edit-config --topology-file it replaces the "
             "patched one, so every key the patch added is removed again and every value it changed is back; "
             "nothing is pinned per instance. Edits made to the topology since the patch are undone too: if there "
             "were any, make them again in this file first.",)
    replace = tiup_name_note(display_name or "this cluster", cluster)
    return TopologyPatch(text, (*notes, *([replace] if replace else [])), tiup_command(cluster, topology_file))
