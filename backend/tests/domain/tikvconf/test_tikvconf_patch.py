"""Golden tests: patching real tikv.toml files (TiKV's template, TiKV's test-custom.toml, three
production-style files in examples/configs) changes exactly the intended keys, keeps every comment, is
idempotent, and its rollback gives back the original bytes. Parsed independently with the standard
library's tomllib.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from headroom.domain.model import Change
from headroom.domain.tikvconf.errors import (
    ConfigParseError,
    InvalidChangeValue,
    PatchConflict,
    UnknownConfigKey,
)
from headroom.domain.tikvconf.parse import flatten, same_value
from headroom.domain.tikvconf.patch import apply_changes, apply_rollback

ROOT = Path(__file__).resolve().parents[4]
DATA = ROOT / "backend" / "headroom" / "domain" / "tikvconf" / "data"
CONFIGS = {
    "template": DATA / "tikv-config-template.toml",
    "test-custom": DATA / "tikv-test-custom.toml",
    "tiup": ROOT / "examples" / "configs" / "tiup-8vcpu-32gib.toml",
    "operator": ROOT / "examples" / "configs" / "operator-16vcpu-64gib.toml",
    "manual": ROOT / "examples" / "configs" / "manual-dotted-keys.toml",
}

# The changes the advisor makes (docs/reference/tikv-config.md#keys-and-defaults keys), with values as TiKV writes them.
ADVISOR_CHANGES = (
    ("storage.block-cache.capacity", "14GiB"),
    ("rocksdb.defaultcf.block-size", "32KB"),
    ("rocksdb.writecf.block-size", "32KB"),
    ("storage.scheduler-worker-pool-size", 6),
    ("raftstore.apply-pool-size", 3),
    ("raftstore.store-io-pool-size", 2),
    ("readpool.unified.max-thread-count", 10),
    ("rocksdb.rate-bytes-per-sec", "300MiB"),
    ("rocksdb.rate-limiter-auto-tuned", False),
    ("rocksdb.defaultcf.titan.min-blob-size", "32KB"),
    ("coprocessor.region-split-size", "256MiB"),
    ("rocksdb.defaultcf.compression-per-level", ["no", "no", "lz4", "lz4", "lz4", "zstd", "zstd"]),
    ("memory-usage-limit", "24GiB"),
    ("raftstore.pd-heartbeat-tick-interval", "1m"),
)


def tikv(key: str, proposed: Any, current: Any = None) -> Change:
    return Change(
        target="tikv",
        key=key,
        current=current,
        proposed=proposed,
        reason=f"test {key}",
    )


def parsed(text: str) -> dict[str, Any]:
    return flatten(tomllib.loads(text))


def comments(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip().startswith("#")]


@pytest.mark.parametrize("name", list(CONFIGS))
def test_patch_changes_exactly_the_intended_keys(name: str) -> None:
    original = CONFIGS[name].read_text()
    changes = [tikv(key, value) for key, value in ADVISOR_CHANGES]
    result = apply_changes(original, changes)

    before, after = parsed(original), parsed(result.text)
    expected = dict(before)
    expected.update(dict(ADVISOR_CHANGES))
    assert set(after) == set(expected)
    for key, value in expected.items():
        assert same_value(key, after[key], value), key
    # Every comment line survives, in order.
    old_comments = comments(original)
    new_comments = comments(result.text)
    iterator = iter(new_comments)
    assert all(line in iterator for line in old_comments)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_patch_is_idempotent(name: str) -> None:
    original = CONFIGS[name].read_text()
    changes = [tikv(key, value) for key, value in ADVISOR_CHANGES]
    once = apply_changes(original, changes).text
    twice = apply_changes(once, changes)
    assert twice.text == once
    assert not twice.changed


@pytest.mark.parametrize("name", list(CONFIGS))
def test_patch_then_rollback_is_byte_exact(name: str) -> None:
    original = CONFIGS[name].read_text()
    result = apply_changes(original, [tikv(key, value) for key, value in ADVISOR_CHANGES])
    assert result.changed
    assert apply_rollback(result.text, result.rollback) == original


def test_existing_value_replaced_in_place_with_its_comment() -> None:
    original = CONFIGS["tiup"].read_text()
    result = apply_changes(original, [tikv("raftstore.store-pool-size", 3, current=2)])
    assert "store-pool-size = 3   # keep Raft store CPU under 85% x pool size\n" in result.text
    diff = [(a, b) for a, b in zip(original.splitlines(), result.text.splitlines(), strict=True) if a != b]
    assert diff == [
        (
            "store-pool-size = 2   # keep Raft store CPU under 85% x pool size",
            "store-pool-size = 3   # keep Raft store CPU under 85% x pool size",
        )
    ]


def test_missing_tables_are_created_and_removed_again() -> None:
    original = '# node config\n[server]\naddr = "0.0.0.0:20160"\n'
    result = apply_changes(original, [tikv("rocksdb.defaultcf.titan.min-blob-size", "32KB")])
    assert result.text == (
        '# node config\n[server]\naddr = "0.0.0.0:20160"\n'
        '\n[rocksdb.defaultcf.titan]\nmin-blob-size = "32KB"\n'
    )
    assert apply_rollback(result.text, result.rollback) == original


def test_dotted_and_inline_tables_are_patched_where_they_are() -> None:
    original = CONFIGS["manual"].read_text()
    result = apply_changes(
        original,
        [tikv("storage.block-cache.capacity", "8GB"), tikv("rocksdb.writecf.block-size", "64KB")],
    )
    assert 'block-cache.capacity = "8GB" # dotted key inside [storage]' in result.text
    assert 'writecf = { block-size = "64KB", write-buffer-size = "128MB" }' in result.text
    assert apply_rollback(result.text, result.rollback) == original


def test_file_edited_since_snapshot_is_the_base() -> None:
    # The snapshot saw 4GiB, the file now says 8GiB: patch from the file, note it, roll back to 8GiB.
    original = CONFIGS["tiup"].read_text()
    result = apply_changes(original, [tikv("storage.block-cache.capacity", "14GiB", current="4GiB")])
    assert any("the file has '8GiB' but the snapshot saw '4GiB'" in note for note in result.notes)
    inverse = result.rollback_changes()
    assert [(c.key, c.current, c.proposed) for c in inverse] == [
        ("storage.block-cache.capacity", "14GiB", "8GiB")
    ]
    assert parsed(apply_rollback(result.text, result.rollback))["storage.block-cache.capacity"] == "8GiB"


def test_equal_spelling_is_left_alone() -> None:
    # "64KiB" is "64KB" to TiKV (binary KB): nothing to change, the file keeps its spelling.
    original = CONFIGS["tiup"].read_text()
    result = apply_changes(original, [tikv("rocksdb.defaultcf.block-size", "64KiB")])
    assert result.text == original
    assert result.notes


def test_rollback_of_a_file_edited_after_the_patch_restores_values() -> None:
    original = CONFIGS["tiup"].read_text()
    result = apply_changes(original, [tikv("storage.block-cache.capacity", "14GiB")])
    edited = result.text.replace("# Shared block cache", "# (edited by hand) Shared block cache")
    restored = apply_rollback(edited, result.rollback)
    assert parsed(restored)["storage.block-cache.capacity"] == "8GiB"
    assert "# (edited by hand) Shared block cache" in restored


def test_unknown_key_is_an_error_not_a_write() -> None:
    with pytest.raises(UnknownConfigKey):
        apply_changes(CONFIGS["tiup"].read_text(), [tikv("storage.block-cache.size", "1GiB")])


def test_bad_value_is_an_error() -> None:
    with pytest.raises(InvalidChangeValue):
        apply_changes(CONFIGS["tiup"].read_text(), [tikv("storage.block-cache.capacity", "half")])


def test_conflicting_values_for_one_file_are_an_error() -> None:
    with pytest.raises(PatchConflict):
        apply_changes("", [tikv("raftstore.apply-pool-size", 3), tikv("raftstore.apply-pool-size", 4)])


def test_malformed_file_names_line_and_column() -> None:
    with pytest.raises(ConfigParseError) as raised:
        apply_changes(
            '[storage]\ncapacity = "1GB\n', [tikv("raftstore.apply-pool-size", 3)], source="node1.toml"
        )
    assert str(raised.value).startswith("node1.toml line 2, column 16: ")


def test_a_key_through_a_scalar_is_a_conflict() -> None:
    with pytest.raises(PatchConflict):
        apply_changes('storage = "x"\n', [tikv("storage.block-cache.capacity", "1GiB")])


def test_compact_files_stay_compact() -> None:
    # A file without blank lines between tables: only the changed line differs.
    original = "[storage]\nscheduler-worker-pool-size = 4\n[raftstore]\napply-pool-size = 2\n"
    result = apply_changes(original, [tikv("storage.scheduler-worker-pool-size", 8)])
    assert result.text == "[storage]\nscheduler-worker-pool-size = 8\n[raftstore]\napply-pool-size = 2\n"


def test_crlf_files_keep_crlf() -> None:
    original = (
        '# windows editor\r\n[storage]\r\ndata-dir = "/d"\r\n\r\n[raftstore]\r\napply-pool-size = 2\r\n'
    )
    changes = [tikv("storage.block-cache.capacity", "4GiB"), tikv("raftstore.apply-pool-size", 3)]
    result = apply_changes(original, changes)
    assert "\n" not in result.text.replace("\r\n", "")
    assert '\r\n[storage.block-cache]\r\ncapacity = "4GiB"\r\n' in result.text
    assert apply_rollback(result.text, result.rollback) == original
    assert apply_changes(result.text, changes).text == result.text
