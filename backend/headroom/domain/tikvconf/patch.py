"""Apply a Patch's tikv changes to a tikv.toml document, keeping every comment, blank line and key order.

Only the changed keys are touched: an existing key is replaced in place (its trailing comment kept), a
missing key is appended to its table (above the comment block that documents the next table, never between
it and that table's header), a missing table is created after the tables already there. Lines end at LF
only and a CRLF file stays CRLF. The result is checked by reading it back with tomllib: the new document
must equal the old one plus the changes, nothing else. The rollback is built at the same time: it restores
each key's previous item exactly as it was written, removes keys the patch added and the tables it created,
so patch-then-rollback gives back the original bytes.
"""

from __future__ import annotations

import copy
import difflib
import re
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import tomlkit
from tomlkit.container import Container, OutOfOrderTableProxy
from tomlkit.items import AoT, InlineTable, Item, Table
from tomlkit.toml_document import TOMLDocument

from headroom.domain.model import Change
from headroom.domain.tikvconf.errors import ConfigParseError, PatchConflict
from headroom.domain.tikvconf.keys import check_value, require_valid_key
from headroom.domain.tikvconf.parse import ConfigView, flatten, parse_toml, same_value

_Tableish = (Table, InlineTable, OutOfOrderTableProxy, Container)


@dataclass(frozen=True)
class RollbackStep:
    """How to undo one key: put its previous item back (or remove it), then drop a table the patch created."""

    key: str
    prior: Item | None = field(compare=False)
    prior_value: Any
    created_table: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Hunk:
    """A text-level undo: at line `start` (0-based) `patched` goes back to `original` (with context)."""

    start: int
    patched: tuple[str, ...]
    original: tuple[str, ...]


@dataclass(frozen=True)
class Rollback:
    """The inverse of a patch: text hunks (byte-exact on the patched file) and per-key steps (edited file)."""

    hunks: tuple[Hunk, ...]
    steps: tuple[RollbackStep, ...]


@dataclass(frozen=True)
class AppliedPatch:
    """The outcome of patching one document: new text, what was applied, notes, how to roll it back."""

    original: str
    text: str
    applied: tuple[Change, ...]
    notes: tuple[str, ...]
    rollback: Rollback

    @property
    def changed(self) -> bool:
        """Say whether the document changed at all."""
        return self.text != self.original

    def rollback_changes(self) -> tuple[Change, ...]:
        """Return the inverse changes: back to the file's previous value (the file wins over the snapshot)."""
        previous = {step.key: step for step in self.rollback.steps}
        inverse: list[Change] = []
        for change in self.applied:
            step = previous.get(change.key)
            before = step.prior_value if step is not None and step.prior is not None else change.current
            inverse.append(change.model_copy(update={"current": change.proposed, "proposed": before}))
        return tuple(inverse)


def split_lines(text: str) -> list[str]:
    """Split text into lines at LF only, each keeping its ending (CRLF or LF; the last line may have none).

    str.splitlines also breaks at U+2028, U+2029, U+0085 and other characters TOML allows in comments and
    strings: a diff built from those "lines" said "No newline at end of file" in mid-file and GNU patch
    refused it as malformed."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def _parts(key: str) -> tuple[str, ...]:
    return tuple(key.split("."))


def _item(value: Any) -> Item:
    made: Item = tomlkit.item(copy.deepcopy(value))
    return made


def _walk(document: TOMLDocument, parts: Sequence[str]) -> tuple[Any, int]:
    """Follow `parts` as far as tables exist; return the deepest container and how many parts it covers."""
    container: Any = document
    for depth, name in enumerate(parts):
        if name not in container:
            return container, depth
        child = container[name]
        if isinstance(child, AoT) or not isinstance(child, _Tableish):
            where = ".".join(parts[: depth + 1])
            raise PatchConflict(f"cannot set {'.'.join(parts)}: {where} is not a table")
        container = child
    return container, len(parts)


def _new_tables(names: Sequence[str], last: str, value: Any, inline: bool) -> Item:
    """Build the missing tables for `names` holding `last = value` (inline when the parent is inline)."""
    if inline:
        leaf: Any = tomlkit.inline_table()
        leaf[last] = _item(value)
        for name in reversed(names[1:]):
            wrapper = tomlkit.inline_table()
            wrapper[name] = leaf
            leaf = wrapper
        built: Item = leaf
        return built
    table = tomlkit.table()
    table.add(last, _item(value))
    for name in reversed(names[1:]):
        outer = tomlkit.table(is_super_table=True)
        outer.add(name, table)
        table = outer
    return table


def _set(document: TOMLDocument, key: str, value: Any) -> RollbackStep:
    parts = _parts(key)
    parent, depth = _walk(document, parts[:-1])
    last = parts[-1]
    if depth == len(parts) - 1:
        if last in parent:
            existing = parent[last]
            if isinstance(existing, _Tableish) and not isinstance(value, dict):
                raise PatchConflict(f"cannot set {key}: it is a table in this file")
            prior = copy.deepcopy(existing)
            prior_value = existing.unwrap() if isinstance(existing, Item) else existing
            parent[last] = _item(value)
            return RollbackStep(key, prior, prior_value)
        parent[last] = _item(value)
        return RollbackStep(key, None, None)
    missing = parts[depth:-1]
    inline = isinstance(parent, InlineTable)
    parent[missing[0]] = _new_tables(missing, last, value, inline)
    return RollbackStep(key, None, None, created_table=parts[: depth + 1])


def _delete(document: TOMLDocument, parts: Sequence[str]) -> None:
    parent, depth = _walk(document, parts[:-1])
    if depth == len(parts) - 1 and parts[-1] in parent:
        del parent[parts[-1]]


def _merge_changes(changes: Iterable[Change]) -> list[Change]:
    merged: dict[str, Change] = {}
    for change in changes:
        if change.target != "tikv":
            continue
        require_valid_key(change.key)
        check_value(change.key, change.proposed)
        earlier = merged.get(change.key)
        if earlier is not None and not same_value(change.key, earlier.proposed, change.proposed):
            raise PatchConflict(
                f"{change.key} is set to both {earlier.proposed!r} and {change.proposed!r}: "
                "patch one node's file at a time"
            )
        merged.setdefault(change.key, change)
    return list(merged.values())


def _expected_view(before: ConfigView, changes: Sequence[Change]) -> ConfigView:
    expected = dict(before)
    for change in changes:
        expected[change.key] = change.proposed
    return expected


def _verify(key_order: Sequence[str], expected: ConfigView, actual: ConfigView) -> None:
    if set(expected) != set(actual):
        extra = sorted(set(actual) ^ set(expected))
        raise PatchConflict(f"patching would change other keys: {', '.join(extra[:5])}")
    for key in key_order or expected:
        if not same_value(key, expected[key], actual[key]):
            raise PatchConflict(f"patching {key} did not produce the intended value")
    for key, value in expected.items():
        if not same_value(key, value, actual[key]):
            raise PatchConflict(f"patching would change {key}")


def _view(text: str, source: str) -> ConfigView:
    """Read patched text back the way TiKV and the user's tools will: with a standard TOML parser (tomllib),
    not the editor that wrote it. tomlkit takes ~0.19 s to parse TiKV's 58 KB template, tomllib ~6 ms."""
    try:
        return flatten(tomllib.loads(text))
    except tomllib.TOMLDecodeError as error:
        raise ConfigParseError(f"the patched file does not parse: {error}", 0, 0, source) from error


def _set_dotted(document: TOMLDocument, key: str, value: Any) -> RollbackStep:
    """Fallback for tables defined by dotted keys: add `a.b.c = v` to the nearest table with a header."""
    parts = _parts(key)
    container: Any = document
    anchor: Any = document
    anchor_depth = 0
    for depth, name in enumerate(parts[:-1]):
        if name not in container:
            break
        container = container[name]
        if not isinstance(container, _Tableish) or isinstance(container, InlineTable):
            raise PatchConflict(f"cannot set {key}: {'.'.join(parts[: depth + 1])} is not a table")
        if isinstance(container, Table) and not container.is_super_table():
            anchor, anchor_depth = container, depth + 1
    rest = parts[anchor_depth:]
    if len(rest) < 2:
        raise PatchConflict(f"cannot set {key} as a dotted key")
    anchor.add(tomlkit.key(list(rest)), _item(value))
    return RollbackStep(key, None, None, created_table=parts[: anchor_depth + 1])


def _with_strategy(text: str, change: Change, strategy: str, source: str) -> tuple[str, RollbackStep] | None:
    """Apply one change one way; return the new text only if it differs from `text` in that key alone."""
    parts = _parts(change.key)
    try:
        if strategy == "header":
            if len(parts) < 2:
                return None
            base = text if not text or text.endswith("\n") else text + "\n"
            separator = "\n" if base.strip() else ""
            section = f"[{'.'.join(parts[:-1])}]\n{parts[-1]} = {_item(change.proposed).as_string()}\n"
            new_text = base + separator + section
            step = RollbackStep(change.key, None, None, created_table=parts[:-1])
        else:
            document = parse_toml(text, source)
            step = (_set if strategy == "tables" else _set_dotted)(document, change.key, change.proposed)
            new_text = tomlkit.dumps(document)
        expected = _view(text, source)
        expected[change.key] = change.proposed
        _verify([change.key], expected, _view(new_text, source))
    except (PatchConflict, ConfigParseError):
        return None
    return new_text, step


def apply_changes(text: str, changes: Iterable[Change], source: str = "tikv.toml") -> AppliedPatch:
    """Apply the tikv changes to tikv.toml text; raise ConfigParseError, UnknownConfigKey or PatchConflict."""
    document = parse_toml(text, source)
    before = flatten(document.unwrap())
    wanted = _merge_changes(changes)
    notes: list[str] = []
    to_apply: list[Change] = []
    for change in wanted:
        in_file = before.get(change.key)
        if change.key in before:
            if change.current is not None and not same_value(change.key, in_file, change.current):
                notes.append(
                    f"{change.key}: the file has {in_file!r} but the snapshot saw {change.current!r}; "
                    "the file's value is the base and the rollback restores it"
                )
            if same_value(change.key, in_file, change.proposed):
                notes.append(f"{change.key}: already {in_file!r} in the file, left as written")
                continue
        to_apply.append(change)
    expected = _expected_view(before, wanted)
    # Fast path: every change through tomlkit's tables on one document, checked once at the end.
    steps = [_set(document, change.key, change.proposed) for change in to_apply]
    new_text = _tidy(tomlkit.dumps(document), text) if to_apply else text
    try:
        _verify([c.key for c in wanted], expected, _view(new_text, source))
    except (PatchConflict, ConfigParseError):
        # Slow path (dotted-key tables and other layouts tomlkit mishandles): one change at a time, each
        # checked, falling back to a dotted key, then to a new [table] at the end of the file.
        new_text, steps = text, []
        for change in to_apply:
            for strategy in ("tables", "dotted", "header"):
                outcome = _with_strategy(new_text, change, strategy, source)
                if outcome is not None:
                    new_text, step = outcome
                    steps.append(step)
                    break
            else:
                raise PatchConflict(
                    f"cannot set {change.key} in this file without touching other keys"
                ) from None
        new_text = _tidy(new_text, text)
        _verify([c.key for c in wanted], expected, _view(new_text, source))
    rollback = Rollback(_hunks(new_text, text), tuple(reversed(steps)))
    return AppliedPatch(text, new_text, tuple(wanted), tuple(notes), rollback)


def _tidy(text: str, original: str) -> str:
    """Put a blank line before a header tomlkit glued to a new key; drop a blank line added at the end."""
    old = [line.rstrip("\r\n") for line in split_lines(original)]
    adjacent = set(zip(old, old[1:], strict=False))
    spaced_headers = {line for before, line in zip(["", *old], old, strict=False) if not before.strip()}
    known = set(old)
    tidy: list[str] = []
    for line in split_lines(text):
        previous = tidy[-1].rstrip("\r\n") if tidy else ""
        current = line.rstrip("\r\n")
        glued = previous.strip() and not previous.lstrip().startswith(("[", "#"))
        wants_space = current not in known or current in spaced_headers
        if current.lstrip().startswith("[") and glued and wants_space and (previous, current) not in adjacent:
            tidy.append("\n")
        tidy.append(line)
    result = "".join(tidy)
    newline = "\n"
    if "\r\n" in original and not re.search(r"(?<!\r)\n", original):
        # A CRLF file: write the lines tomlkit added with CRLF too.
        newline = "\r\n"
        result = re.sub(r"(?<!\r)\n", "\r\n", result)
    while result.endswith(newline * 2) and not original.endswith(newline * 2):
        result = result[: -len(newline)]
    return _documentation_kept(result, original)


def _is_comment(line: str) -> bool:
    return line.lstrip().startswith("#")


def _is_blank(line: str) -> bool:
    return not line.strip()


def _documentation_kept(text: str, original: str) -> str:
    """Move lines the patch added between a table header and the comment block right above it to the end of
    their own table: above that block and the blank lines before it.

    A comment block directly above a header documents that table: TiKV's template introduces most tables so
    (`## Options for "Default" Column Family, ...` above `[rocksdb.defaultcf]`). tomlkit keeps those comments
    in the previous table's body and appends a new key (or a new table) after them, so `enabled = true` for
    [rocksdb.titan] read as the first key of [rocksdb.defaultcf], a real template's layout. Only comment and blank lines are
    passed over, so every key stays in the table it was written to. Lines moved right below the file's own
    leading comment get a blank line before them; lines moved to the very top of the file, one after them."""
    old = split_lines(original)
    new = split_lines(text)
    leading = next((i for i, line in enumerate(old) if not (_is_comment(line) or _is_blank(line))), len(old))
    opcodes = difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes()
    out: list[str] = []
    for n, (tag, i1, _i2, j1, j2) in enumerate(opcodes):
        added = new[j1:j2]
        documented = 0 < i1 < len(old) and old[i1].lstrip().startswith("[") and _is_comment(old[i1 - 1])
        if tag != "insert" or not documented or n == 0 or opcodes[n - 1][0] != "equal":
            out += added
            continue
        floor = opcodes[n - 1][1]  # old[floor:i1] is the end of `out`, unchanged
        spot = i1
        while spot > floor and _is_comment(old[spot - 1]):
            spot -= 1
        while spot > floor and _is_blank(old[spot - 1]):
            spot -= 1
        block = added[:]
        while block and _is_blank(block[0]):
            block.pop(0)
        while block and _is_blank(block[-1]):
            block.pop()
        if not block:  # only blank lines: nothing to move
            out += added
            continue
        newline = "\r\n" if old[i1].endswith("\r\n") else "\n"
        tail = out[len(out) - (i1 - spot) :]
        del out[len(out) - (i1 - spot) :]
        previous = out[-1] if out else ""
        starts_table = bool(block) and block[0].lstrip().startswith("[")
        if previous and not _is_blank(previous) and (starts_table or 0 < spot <= leading):
            block.insert(0, newline)
        if spot == 0:
            block.append(newline)
        out += block + tail
    return "".join(out)


_CONTEXT = 2


def _hunks(patched: str, original: str) -> tuple[Hunk, ...]:
    """Diff the patched text back to the original, in groups with context, like a unified diff's hunks."""
    new_lines = split_lines(patched)
    old_lines = split_lines(original)
    matcher = difflib.SequenceMatcher(a=new_lines, b=old_lines, autojunk=False)
    hunks: list[Hunk] = []
    for group in matcher.get_grouped_opcodes(_CONTEXT):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        hunks.append(Hunk(i1, tuple(new_lines[i1:i2]), tuple(old_lines[j1:j2])))
    return tuple(hunks)


def _apply_hunks(text: str, hunks: Sequence[Hunk]) -> str | None:
    """Apply the hunks bottom-up like `patch -R`: each block at its place or its nearest copy, else None."""
    lines = split_lines(text)
    for hunk in reversed(hunks):
        block = list(hunk.patched)
        positions = [i for i in range(len(lines) - len(block) + 1) if lines[i : i + len(block)] == block]
        if not positions:
            return None
        position = min(positions, key=lambda i: abs(i - hunk.start))
        lines[position : position + len(block)] = list(hunk.original)
    return "".join(lines)


def apply_rollback(text: str, rollback: Rollback, source: str = "tikv.toml") -> str:
    """Undo a patch: byte-exact on the patched text; on an edited file, restore each key's previous item."""
    exact = _apply_hunks(text, rollback.hunks)
    if exact is not None:
        return exact
    document = parse_toml(text, source)
    for step in rollback.steps:
        parts = _parts(step.key)
        if step.prior is not None:
            parent, depth = _walk(document, parts[:-1])
            if depth == len(parts) - 1:
                parent[parts[-1]] = copy.deepcopy(step.prior)
                continue
        _delete(document, parts)
        if step.created_table is not None:
            _delete(document, step.created_table)
    return tomlkit.dumps(document)
