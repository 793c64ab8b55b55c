"""Property tests: for random keys of TiKV's template and random values of the right kind, patching any
example file (the hand-written examples, TiKV's templates of five releases and real configs from public
repositories, data/tikv-toml/README.md) changes exactly those keys, twice equals once, the rollback gives back
the original bytes, and the merged and diff artefacts hold everything a user relies on
(toml_artefact_checks.py: tomllib, comments and order, GNU patch, CRLF)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from headroom.domain.model import Change, EntityRef
from headroom.domain.tikvconf.change import Patch
from headroom.domain.tikvconf.keys import KeySpec, template_keys
from headroom.domain.tikvconf.online import online_status
from headroom.domain.tikvconf.parse import flatten, same_value
from headroom.domain.tikvconf.patch import apply_changes, apply_rollback
from headroom.domain.tikvconf.render import artefact
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from toml_artefact_checks import REAL_CONFIGS, check_artefacts, read_exact

ROOT = Path(__file__).resolve().parents[4]
FILES = [
    "",  # an empty tikv.toml: every table is created
    read_exact(ROOT / "examples" / "configs" / "tiup-8vcpu-32gib.toml"),
    read_exact(ROOT / "examples" / "configs" / "operator-16vcpu-64gib.toml"),
    *REAL_CONFIGS.values(),  # includes examples/configs/manual-dotted-keys.toml
]
KEYS: list[KeySpec] = sorted(
    (spec for spec in template_keys().values() if spec.kind != "map"), key=lambda spec: spec.key
)
SIZE_UNITS = ["B", "KB", "KiB", "MB", "MiB", "GB", "GiB"]
DURATION_UNITS = ["ms", "s", "m", "h"]


def value_for(spec: KeySpec) -> st.SearchStrategy[Any]:
    if spec.kind == "bool":
        return st.booleans()
    if spec.kind == "int":
        return st.integers(min_value=0, max_value=1_000_000)
    if spec.kind == "float":
        return st.floats(min_value=0, max_value=100, allow_nan=False).map(lambda x: round(x, 3))
    if spec.kind == "size":
        return st.builds(lambda n, u: f"{n}{u}", st.integers(0, 4096), st.sampled_from(SIZE_UNITS))
    if spec.kind == "duration":
        return st.builds(lambda n, u: f"{n}{u}", st.integers(0, 600), st.sampled_from(DURATION_UNITS))
    if spec.kind == "list":
        return st.lists(st.sampled_from(["no", "lz4", "zstd"]), min_size=7, max_size=7)
    return st.text(alphabet="abcdefghij-/._0123456789", max_size=20)


@st.composite
def changes(draw: st.DrawFn) -> list[Change]:
    specs = draw(st.lists(st.sampled_from(KEYS), min_size=1, max_size=6, unique_by=lambda spec: spec.key))
    return [
        Change(
            target="tikv",
            key=spec.key,
            proposed=draw(value_for(spec)),
            reason="property",
        )
        for spec in specs
    ]


PROPERTY_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY_SETTINGS
@given(text=st.sampled_from(FILES), wanted=changes())
def test_patch_sets_exactly_the_changes(text: str, wanted: list[Change]) -> None:
    result = apply_changes(text, wanted)
    before, after = flatten(tomllib.loads(text)), flatten(tomllib.loads(result.text))
    expected = {**before, **{change.key: change.proposed for change in wanted}}
    assert set(after) == set(expected)
    assert all(same_value(key, after[key], value) for key, value in expected.items())


@PROPERTY_SETTINGS
@given(text=st.sampled_from(FILES), wanted=changes())
def test_patch_twice_equals_once(text: str, wanted: list[Change]) -> None:
    once = apply_changes(text, wanted).text
    assert apply_changes(once, wanted).text == once


@PROPERTY_SETTINGS
@given(text=st.sampled_from(FILES), wanted=changes())
def test_patch_then_rollback_is_the_original(text: str, wanted: list[Change]) -> None:
    result = apply_changes(text, wanted)
    assert apply_rollback(result.text, result.rollback) == text


@PROPERTY_SETTINGS
@given(text=st.sampled_from(FILES), wanted=changes())
def test_merged_and_diff_artefacts_hold_for_any_change_set(text: str, wanted: list[Change]) -> None:
    # tomllib reads the merged file with exactly the proposed keys changed; comments, order and each table's
    # comment block kept; GNU patch turns the original into the merged file; the rollback is the original;
    # CRLF stays CRLF. (GNU patch on the rollback diff: the deterministic tests.)
    check_artefacts(text, wanted, rollback_artefacts=False)


# Characters TOML allows in a comment that str.splitlines() takes for line breaks, then any other allowed one.
COMMENT_TEXT = st.text(
    st.one_of(st.sampled_from(["\u2028", "\u2029", "\x85", "\t"]), st.characters(blacklist_categories=("Cc", "Cs"))),
    max_size=20,
)


@st.composite
def edited_files(draw: st.DrawFn) -> str:
    """A small file of the set as someone edited it: comments of any characters anywhere, LF or CRLF, with
    or without the final newline."""
    small = draw(st.sampled_from([text for text in FILES if len(text) < 20_000]))
    lines = small.replace("\r\n", "\n").split("\n")
    for _ in range(draw(st.integers(1, 3))):
        lines.insert(draw(st.integers(0, len(lines))), "#" + draw(COMMENT_TEXT))
    text = "\n".join(lines)
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    return text.rstrip("\r\n") if draw(st.booleans()) else text


@PROPERTY_SETTINGS
@given(text=edited_files(), wanted=changes())
def test_artefacts_hold_on_edited_files(text: str, wanted: list[Change]) -> None:
    check_artefacts(text, wanted, rollback_artefacts=False)


@PROPERTY_SETTINGS
@given(wanted=changes(), per_node=st.booleans())
def test_sql_never_sets_an_offline_key_and_renders_only_real_keys(
    wanted: list[Change], per_node: bool
) -> None:
    if per_node:
        wanted = [c.model_copy(update={"entity": EntityRef(kind="node", id="tikv-1", status_address="10.0.1.5:20180")}) for c in wanted]
    patch = Patch(cluster="c1", changes=tuple(wanted))
    sql = artefact(patch, "sql").body
    set_keys = re.findall(r"^SET CONFIG \S+ `([^`]+)` = ", sql, flags=re.MULTILINE)
    assert all(online_status(key).online for key in set_keys)
    assert set(set_keys) <= set(template_keys())
    scalar_online = {
        c.key
        for c in wanted
        if online_status(c.key).online
        and not isinstance(c.proposed, list)
        and c.key != "raftstore.store-io-pool-size"
    }
    assert scalar_online <= set(set_keys)
    ctl = artefact(patch, "tikv-ctl").body
    ctl_keys = re.findall(r"modify-tikv-config -n (\S+) -v ", ctl)
    assert set(ctl_keys) == set(set_keys)
    fragment = flatten(tomllib.loads(artefact(patch, "toml").body))
    assert set(fragment) == {c.key for c in wanted} <= set(template_keys())
