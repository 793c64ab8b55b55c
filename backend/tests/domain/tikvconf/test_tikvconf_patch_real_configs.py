"""The tikv.toml artefacts on TiKV's own config templates of five releases and on real configs from
public repositories (data/tikv-toml/README.md names each file's repository, path, commit and licence), with
the change sets the advisor makes: the merged file parses with tomllib and differs in exactly the proposed
keys, keeps every comment and the order of everything, each table keeps the comment block above its header,
the diff applies with GNU patch, the rollback gives back the original bytes, and a CRLF file stays CRLF
(toml_artefact_checks.py).
"""

from __future__ import annotations

import tomllib

import pytest
from headroom.domain.tikvconf.parse import flatten
from headroom.domain.tikvconf.patch import apply_changes
from toml_artefact_checks import REAL_CONFIGS, check_artefacts, tikv

# What the advisor's rules propose (docs/reference/tikv-config.md#keys-and-defaults keys), values as TiKV writes them: sizes with units (a size
# for raftstore.capacity, "10GB"), thread counts as integers, the per-level compression as a list of
# seven.
ADVISOR_CHANGES = [
    tikv("storage.block-cache.capacity", "14GiB"),
    tikv("storage.scheduler-worker-pool-size", 6),
    tikv("readpool.unified.max-thread-count", 10),
    tikv("raftstore.apply-pool-size", 3),
    tikv("raftstore.store-pool-size", 3),
    tikv("raftstore.store-io-pool-size", 2),
    tikv("rocksdb.rate-bytes-per-sec", "300MiB"),
    tikv("rocksdb.max-background-jobs", 12),
    tikv("rocksdb.defaultcf.block-size", "32KB"),
    tikv("rocksdb.writecf.block-size", "32KB"),
    tikv("rocksdb.defaultcf.compression-per-level", ["no", "no", "lz4", "lz4", "lz4", "zstd", "zstd"]),
    tikv("rocksdb.titan.enabled", True),
    tikv("raftstore.capacity", "10GB"),
    tikv("memory-usage-limit", "24GiB"),
]
# Change sets one finding makes on its own (a grown block cache; the write path's thread pools; titan).
ONE_FINDING = {
    "block-cache": [tikv("storage.block-cache.capacity", "20GiB")],
    "write-pools": [tikv("raftstore.store-io-pool-size", 1), tikv("storage.scheduler-worker-pool-size", 8)],
    "titan": [tikv("rocksdb.titan.enabled", True), tikv("rocksdb.defaultcf.titan.min-blob-size", "32KB")],
}
TEMPLATES = [name for name in REAL_CONFIGS if name.endswith("-config-template.toml")]


def test_the_data_folder_has_what_the_issue_asks_for() -> None:
    # Five template releases, at least four real configs of other shapes, one of them CRLF, one without a
    # final newline, one with an inline table; the hand-written dotted-key file stands in for dotted keys.
    assert len(TEMPLATES) == 5
    others = [text for name, text in REAL_CONFIGS.items() if name not in TEMPLATES]
    assert len(others) >= 5
    assert any("\r\n" in text for text in others)
    assert any(not text.endswith("\n") for text in others)
    assert any("= {" in text for text in others)
    assert all(tomllib.loads(text) is not None for text in REAL_CONFIGS.values())


@pytest.mark.parametrize("name", list(REAL_CONFIGS))
def test_advisor_changes_on_real_configs(name: str) -> None:
    check_artefacts(REAL_CONFIGS[name], ADVISOR_CHANGES)


@pytest.mark.parametrize("finding", list(ONE_FINDING))
@pytest.mark.parametrize("name", list(REAL_CONFIGS))
def test_one_findings_changes_on_real_configs(name: str, finding: str) -> None:
    check_artefacts(REAL_CONFIGS[name], ONE_FINDING[finding], rollback_artefacts=False)


@pytest.mark.parametrize("name", TEMPLATES)
def test_a_key_added_to_a_template_table_lands_above_the_next_tables_comment_block(name: str) -> None:
    # Every template documents [rocksdb.defaultcf] with a comment block right above its header
    # ('## Options for "Default" Column Family, which stores actual user data.'); rocksdb.titan.enabled, added
    # to [rocksdb.titan] just before it, landed between that block and the header, where it reads as the first
    # key of the column family. It belongs at the end of [rocksdb.titan]'s own lines, before the blank line.
    text = REAL_CONFIGS[name]
    merged = check_artefacts(text, [tikv("rocksdb.titan.enabled", True)], rollback_artefacts=False)
    lines = merged.split("\n")
    header = lines.index("[rocksdb.defaultcf]")
    assert lines[header - 1].startswith('## Options for "Default" Column Family')
    added = lines.index("enabled = true")
    assert added < header - 2 and lines[added + 1] == ""  # its own table's last line, then the blank line
    last_header_above = max(i for i, line in enumerate(lines[:added]) if line.startswith("["))
    assert lines[last_header_above] == "[rocksdb.titan]"


def test_a_top_level_key_stays_above_the_first_tables_comment() -> None:
    # pingcap/tidb-docker-compose documents [log] with '# log level: ...' right above the header: a top-level
    # key goes after the file's own leading comment, apart from it, and before that block.
    text = REAL_CONFIGS["pingcap-tidb-docker-compose-tikv.toml"]
    merged = check_artefacts(text, [tikv("memory-usage-limit", "24GiB")], rollback_artefacts=False)
    leading_comment_end = '#    e.g.: 78_000 = "1.3m"\n'
    log_header = "# log level: trace, debug, info, warn, error, off.\n[log]\n"
    assert f'{leading_comment_end}\nmemory-usage-limit = "24GiB"\n\n{log_header}' in merged


def test_raftstore_capacity_is_a_size() -> None:
    # raftstore.capacity is a size ("10GB" in pingcap/br's test config), not an integer.
    text = REAL_CONFIGS["tikv-client-rust-tikv.toml"]
    result = apply_changes(text, [tikv("raftstore.capacity", "10GB")])
    assert flatten(tomllib.loads(result.text))["raftstore.capacity"] == "10GB"
    same = apply_changes(REAL_CONFIGS["pingcap-br-tests-tikv.toml"], [tikv("raftstore.capacity", "10240MiB")])
    assert not same.changed  # 10240 MiB is 10 GB in TiKV's binary units: left as written


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_a_comment_with_a_unicode_line_separator_keeps_the_diff_whole(separator: str) -> None:
    # TOML allows U+2028, U+2029 and U+0085 in comments; str.splitlines() breaks lines there, so the diff said
    # "\ No newline at end of file" in mid-file and GNU patch refused it: "malformed patch". Lines end at LF.
    text = REAL_CONFIGS["pingcap-br-restore-tikv.toml"].replace(
        "[raftstore]\n", f"[raftstore]\n# pasted from the runbook{separator}keep sync-log off in tests\n"
    )
    changes = [tikv("raftstore.apply-pool-size", 3), tikv("storage.scheduler-worker-pool-size", 6)]
    check_artefacts(text, changes)
