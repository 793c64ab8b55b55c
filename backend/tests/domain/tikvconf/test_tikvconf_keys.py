"""The valid-key set read from TiKV's config template (tikv/tikv @8e964719 etc/config-template.toml)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from headroom.domain.tikvconf.errors import InvalidChangeValue, UnknownConfigKey
from headroom.domain.tikvconf.keys import (
    check_value,
    extract_keys,
    is_valid_key,
    known_keys,
    require_valid_key,
    template_keys,
)
from headroom.domain.tikvconf.online import can_change_online, online_status

SHARED_TEMPLATE = (
    Path(__file__).resolve().parents[4].parent / "shared" / "reference" / "tikv-config-template.toml"
)
DATA_TEMPLATE = (
    Path(__file__).resolve().parents[3] / "headroom" / "domain" / "tikvconf" / "data" / "tikv-config-template.toml"
)


def test_data_copy_is_the_shared_template_plus_a_header() -> None:
    data = DATA_TEMPLATE.read_text()
    assert data.startswith("## Source: tikv/tikv @8e964719")
    if SHARED_TEMPLATE.exists():
        assert data.endswith(SHARED_TEMPLATE.read_text())


@pytest.mark.parametrize(
    ("key", "kind", "example"),
    [
        # Each row is a commented line of the template, under the header named in the key.
        ("storage.block-cache.capacity", "size", "0B"),  # [storage.block-cache] # capacity = "0B"
        ("rocksdb.defaultcf.block-size", "size", "32KB"),
        ("rocksdb.defaultcf.titan.min-blob-size", "size", "32KB"),  # [rocksdb.defaultcf.titan]
        ("rocksdb.titan.enabled", "bool", True),
        ("raftstore.store-io-pool-size", "int", 1),
        ("rocksdb.rate-bytes-per-sec", "size", "10GB"),
        (
            "rocksdb.defaultcf.compression-per-level",
            "list",
            ["no", "no", "lz4", "lz4", "lz4", "zstd", "zstd"],
        ),
        ("raftstore.pd-heartbeat-tick-interval", "duration", "60s"),
        ("coprocessor.region-split-size", "size", "256MB"),
        ("server.labels", "map", {}),  # # labels = {}
        (
            "security.encryption.master-key.type",
            "str",
            "plaintext",
        ),  # commented header # [security...master-key]
        (
            "rocksdb.defaultcf.ribbon-filter-above-level",
            "int",
            0,
        ),  # written "## ribbon-filter-above-level = 0"
        ("memory-usage-limit", "size", "0B"),  # a root key, before the first header
        ("gc.max-write-bytes-per-sec", "size", "0"),
    ],
)
def test_template_keys(key: str, kind: str, example: object) -> None:
    spec = template_keys()[key]
    assert (spec.kind, spec.example, spec.source) == (kind, example, "template")


def test_template_key_count_is_stable() -> None:
    # 343 keys at tikv/tikv @8e964719; a different count means the template or the extraction changed.
    assert len(template_keys()) == 343


def test_every_single_hash_key_line_is_extracted() -> None:
    # An independent, cruder reading: every "# name = value" line's name ends some extracted key.
    text = DATA_TEMPLATE.read_text()
    names = set(re.findall(r"^# ([A-Za-z0-9_-]+) = ", text, flags=re.MULTILINE))
    tails = {key.rsplit(".", 1)[-1] for key in template_keys()}
    assert names <= tails
    assert len(names) > 200  # distinct names; many repeat across column families


@pytest.mark.parametrize(
    "not_a_key",
    [
        "rocksdb.defaultcf.value",  # "## value  =>  memory usage (percentage ...)"
        "rocksdb.defaultcf.1",  # "## 1      =>  12.50 %"
        "coprocessor.b",  # "## [b,c), [c,d), [d,e) and the size ..." is prose, not a header
    ],
)
def test_prose_is_not_a_key(not_a_key: str) -> None:
    assert not_a_key not in template_keys()
    assert not any("e.g." in key for key in template_keys())


def test_extract_keys_handles_aot_and_nested_headers() -> None:
    text = '[a]\n# x = 1\n[[a.b]]\n# y = "2s"\n# [c.d]\n# z = [1]\n'
    assert {k: s.kind for k, s in extract_keys(text).items()} == {
        "a.x": "int",
        "a.b.y": "duration",
        "c.d.z": "list",
    }


def test_test_custom_widens_the_set() -> None:
    # tikv-test-custom.toml [server] advertise-status-addr: a real key the template does not list.
    assert "server.advertise-status-addr" not in template_keys()
    assert known_keys()["server.advertise-status-addr"].source == "test-custom"
    assert template_keys().keys() <= known_keys().keys()


def test_unknown_key_is_an_error_with_suggestions() -> None:
    with pytest.raises(UnknownConfigKey) as raised:
        require_valid_key("storage.block-cache.capacty")
    assert raised.value.suggestions[0] == "storage.block-cache.capacity"
    assert "unknown TiKV config key 'storage.block-cache.capacty'" in str(raised.value)
    assert not is_valid_key("rocksdb.defaultcf.blocksize")
    assert is_valid_key("server.labels.zone")  # under the free-form labels table


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("storage.block-cache.capacity", "lots"),
        ("rocksdb.titan.enabled", "true"),
        ("raftstore.apply-pool-size", "4"),
        ("raftstore.pd-heartbeat-tick-interval", "60"),
        ("rocksdb.defaultcf.compression-per-level", "lz4"),
    ],
)
def test_check_value_rejects_wrong_kinds(key: str, value: object) -> None:
    with pytest.raises(InvalidChangeValue):
        check_value(key, value)


@pytest.mark.parametrize(
    ("key", "online", "known"),
    [
        ("storage.block-cache.capacity", True, True),  # docs/reference/tikv-config.md#keys-and-defaults (since v4.0.3)
        ("storage.scheduler-worker-pool-size", True, True),
        ("raftstore.apply-pool-size", True, True),
        ("readpool.unified.max-thread-count", True, True),
        ("rocksdb.rate-bytes-per-sec", True, True),  # docs/reference/tikv-config.md#online-changes: online in code, docs gap
        ("rocksdb.defaultcf.titan.min-blob-size", True, True),
        ("coprocessor.region-split-size", True, True),
        ("rocksdb.writecf.max-write-buffer-number", True, True),  # {db}.{cf} row expanded
        ("rocksdb.defaultcf.block-size", False, True),  # #[online_config(skip)]
        ("rocksdb.writecf.compression-per-level", False, True),
        ("raft-engine.enable", False, True),  # whole raft_engine section skipped
        ("rocksdb.titan.enabled", False, True),
        ("readpool.unified.min-thread-count", False, True),
        ("server.grpc-compression-type", False, True),
        ("server.grpc-concurrency", False, False),  # in no table: treated as restart
    ],
)
def test_online_table(key: str, online: bool, known: bool) -> None:
    status = online_status(key)
    assert (status.online, status.known) == (online, known)
    assert status.source


def test_store_io_pool_size_zero_crossing_needs_restart() -> None:
    # PingCAP, "Modify Configuration Dynamically" (docs/reference/tikv-config.md#keys-and-defaults): "DO NOT modify this value from a non-zero value to 0 or from 0 to a non-zero value".
    assert can_change_online("raftstore.store-io-pool-size", 1, 2)
    assert not can_change_online("raftstore.store-io-pool-size", 0, 1)
    assert not can_change_online("raftstore.store-io-pool-size", 2, 0)


ADVISOR_KEYS = (  # docs/reference/tikv-config.md#keys-and-defaults table: the keys the advisor touches
    "storage.block-cache.capacity",
    "memory-usage-limit",
    "rocksdb.defaultcf.block-size",
    "rocksdb.writecf.block-size",
    "storage.scheduler-worker-pool-size",
    "raftstore.apply-pool-size",
    "raftstore.store-pool-size",
    "raftstore.store-io-pool-size",
    "readpool.unified.max-thread-count",
    "rocksdb.rate-bytes-per-sec",
    "rocksdb.rate-limiter-auto-tuned",
    "rocksdb.rate-limiter-mode",
    "raft-engine.enable",
    "raft-engine.dir",
    "raftstore.raftdb-path",
    "rocksdb.titan.enabled",
    "rocksdb.defaultcf.titan.min-blob-size",
    "rocksdb.defaultcf.compression-per-level",
    "rocksdb.writecf.compression-per-level",
    "server.grpc-compression-type",
    "coprocessor.region-split-size",
    "rocksdb.defaultcf.write-buffer-size",
    "rocksdb.defaultcf.level0-slowdown-writes-trigger",
)


@pytest.mark.parametrize("key", ADVISOR_KEYS)
def test_advisor_keys_are_template_keys_with_a_known_online_status(key: str) -> None:
    assert key in template_keys()
    if key != "memory-usage-limit":  # docs/reference/tikv-config.md#online-changes leaves its online status open ("-")
        assert online_status(key).known


@pytest.mark.parametrize(
    "key", ["raftstore.capacity", "rocksdb.wal-size-limit", "rocksdb.defaultcf.titan.zstd-dict-size"]
)
def test_sizes_the_template_writes_as_zero_take_size_text(key: str) -> None:
    # Regression: the template's "# capacity = 0" made these integers, so "10GB" was refused; TiKV types them
    # ReadableSize (tikv/tikv raftstore config `capacity`, DbConfig `wal_size_limit`, TitanCfConfig `zstd_dict_size`).
    check_value(key, "10GB")
    check_value(key, 0)
    with pytest.raises(InvalidChangeValue):
        check_value(key, "lots")
