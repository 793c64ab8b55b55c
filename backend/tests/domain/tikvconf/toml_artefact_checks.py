"""What a user who downloads the tikv.toml artefacts relies on, checked the way the user would see it.

Shared by test_tikvconf_patch_real_configs.py (the advisor's change sets on every file) and
test_tikvconf_patch_properties.py (hypothesis-drawn change sets). The artefacts come from the product's own
functions (render.artefacts: the file patched once, every artefact and rollback read from it); every check
reads them independently: tomllib for the values, plain line scans for comments and order, GNU patch for the
diff.
"""

from __future__ import annotations

import subprocess
import tempfile
import tomllib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from headroom.domain.model import Change
from headroom.domain.tikvconf.change import Patch
from headroom.domain.tikvconf.parse import flatten, same_value
from headroom.domain.tikvconf.render import artefacts

ROOT = Path(__file__).resolve().parents[4]
DATA = Path(__file__).resolve().parent / "data" / "tikv-toml"  # README.md there names each file's source


def read_exact(path: Path) -> str:
    """The file as written: Path.read_text() would turn CRLF into LF (universal newlines)."""
    return path.read_bytes().decode("utf-8")


# Every tikv.toml of the data folder, plus the hand-written dotted-key file (no public file has dotted keys or
# inline tables for the tables the advisor changes: see data/tikv-toml/README.md).
REAL_CONFIGS: dict[str, str] = {
    **{path.name: read_exact(path) for path in sorted(DATA.glob("*.toml"))},
    "manual-dotted-keys.toml": read_exact(ROOT / "examples" / "configs" / "manual-dotted-keys.toml"),
}


def tikv(key: str, proposed: Any) -> Change:
    return Change(target="tikv", key=key, proposed=proposed, reason=f"test {key}")


def _is_comment(line: str) -> bool:
    return line.lstrip().startswith("#")


def _is_header(line: str) -> bool:
    return line.lstrip().startswith("[")


def lines_of(text: str) -> list[str]:
    """Lines as TOML and GNU patch see them, without their endings: split at LF only (str.splitlines also
    splits at U+2028, U+0085 ..., which a TOML comment may hold)."""
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    return lines[:-1] if lines[-1] == "" else lines


def comment_lines(text: str) -> list[str]:
    return [line.strip() for line in lines_of(text) if _is_comment(line)]


def header_comments(text: str) -> dict[str, list[str]]:
    """For each table header, the comment lines right above it (no blank line between): its documentation."""
    lines = lines_of(text)
    attached: dict[str, list[str]] = {}
    for i, line in enumerate(lines):
        if _is_header(line):
            start = i
            while start > 0 and _is_comment(lines[start - 1]):
                start -= 1
            attached[line.strip()] = [above.strip() for above in lines[start:i]]
    return attached


def is_subsequence(part: Sequence[Any], whole: Iterable[Any]) -> bool:
    remaining = iter(whole)
    return all(item in remaining for item in part)


def _line_key(line: str) -> str | None:
    """The key a `key = value` line sets, unquoted and dotted (None for comments, headers, continuations)."""
    stripped = line.strip()
    if not stripped or _is_comment(stripped) or _is_header(stripped) or "=" not in stripped:
        return None
    return ".".join(part.strip().strip("\"'") for part in stripped.split("=", 1)[0].split("."))


def _touches(line_key: str, changed: Iterable[str]) -> bool:
    """Whether a line setting `line_key` may be a line the patch rewrites in place (a key, or an inline table
    or dotted key on the path to one)."""
    return any(key.endswith(line_key) or f".{line_key}." in f".{key}." for key in changed)


def _untouched_lines(text: str, changed: Sequence[str]) -> list[str]:
    """The lines of `text` a patch of `changed` keys must keep: all but the lines of those keys (with the
    continuation lines of a multi-line array value)."""
    kept: list[str] = []
    open_brackets = 0
    for line in lines_of(text):
        if open_brackets:  # inside a rewritten multi-line value
            open_brackets += line.count("[") - line.count("]")
            continue
        key = _line_key(line)
        if key and _touches(key, changed):
            value = line.split("=", 1)[1]
            open_brackets = max(value.count("[") - value.count("]"), 0)
            continue
        kept.append(line)
    return kept


def changed_values(before: dict[str, Any], changes: Sequence[Change]) -> dict[str, Any]:
    expected = dict(before)
    expected.update({change.key: change.proposed for change in changes})
    return expected


def gnu_patch(target: str, diff: str) -> bytes:
    """Apply `diff` to a file holding `target` as GNU patch does from the directory of tikv.toml (`patch -p1`,
    the diff names a/tikv.toml and b/tikv.toml), no fuzz allowed; return the file's bytes afterwards."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "tikv.toml"
        path.write_bytes(target.encode("utf-8"))
        (Path(directory) / "change.diff").write_bytes(diff.encode("utf-8"))
        done = subprocess.run(
            ["patch", "--batch", "--forward", "--fuzz=0", "-p1", "-i", "change.diff"],
            cwd=directory,
            capture_output=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()
        assert "offset" not in done.stdout.decode(), done.stdout.decode()  # every hunk where the diff says
        return path.read_bytes()


def check_artefacts(text: str, changes: Sequence[Change], *, rollback_artefacts: bool = True) -> str:
    """Render merged and diff for `changes` on `text` and check everything the user relies on; return merged.

    The artefacts come from one patching of the file, as the API's configs download renders them.
    `rollback_artefacts=False` leaves out GNU patch on the rollback diff (a process per call); the merged
    rollback is checked either way."""
    patch = Patch(cluster="prod-east", changes=tuple(changes))
    rendered = artefacts(patch, config_text=text, formats=("merged", "diff"))
    merged, diff = rendered["merged"].body, rendered["diff"].body

    # Values: tomllib reads the merged file; exactly the proposed keys differ from the original.
    before, after = flatten(tomllib.loads(text)), flatten(tomllib.loads(merged))
    expected = changed_values(before, changes)
    assert set(after) == set(expected), sorted(set(after) ^ set(expected))
    for key, value in expected.items():
        assert same_value(key, after[key], value), (key, after[key], value)

    # Comments and order: every comment line, in order; every original key in its order; every original line
    # except those of the keys rewritten in place, in order; each header keeps the comment block above it (a
    # new key lands in its own table, not between the next table's documentation and its header).
    assert is_subsequence(comment_lines(text), comment_lines(merged))
    assert is_subsequence(list(before), list(after))
    changed = [change.key for change in changes]
    assert is_subsequence(_untouched_lines(text, changed), lines_of(merged))
    documented = header_comments(merged)
    for header, block in header_comments(text).items():
        assert documented[header] == block, (header, block, documented[header])

    # The diff: GNU patch applied to the original gives the merged file byte for byte.
    if merged == text:
        assert diff == ""
    else:
        assert diff.startswith("--- a/tikv.toml\n+++ b/tikv.toml\n")
        assert gnu_patch(text, diff) == merged.encode("utf-8")

    # The rollback gives back the original bytes.
    assert rendered["merged.rollback"].body == text
    if rollback_artefacts:
        undo = rendered["diff.rollback"].body
        assert (gnu_patch(merged, undo) if undo else merged.encode("utf-8")) == text.encode("utf-8")

    # Line endings: a CRLF file stays CRLF everywhere (no bare LF), an LF file gets no CR.
    if "\r\n" in text and "\n" not in text.replace("\r\n", ""):
        assert "\n" not in merged.replace("\r\n", "")
    elif "\r" not in text:
        assert "\r" not in merged
    return merged
