"""TiKV defaults by version and host. Expected values: docs/reference/tikv-config.md#keys-and-defaults (TiKV source at the tags named there)."""

from __future__ import annotations

import pytest
from headroom.domain.tikvconf.defaults import HostFacts, default_value, effective_value, parse_version

GIB = 1024**3
M6I_2XL = HostFacts(cpus=8, memory_bytes=32 * GIB)
M7G_4XL = HostFacts(cpus=16, memory_bytes=64 * GIB)


@pytest.mark.parametrize(
    ("key", "version", "host", "expected"),
    [
        # BLOCK_CACHE_RATE = 0.45 (src/config/mod.rs): 0.45 x 32 GiB = 15,461,882,265.6 -> truncated
        ("storage.block-cache.capacity", "v7.5.1", M6I_2XL, 15_461_882_265),
        # template: "system=32G block-cache=14.4G memory-usage-limit=24G"
        ("memory-usage-limit", "v7.5.1", M6I_2XL, 24 * GIB),
        ("rocksdb.defaultcf.block-size", "v6.5.0", None, "64KB"),  # 64KB until v7.0.0
        ("rocksdb.defaultcf.block-size", "v7.0.0", None, "32KB"),
        ("rocksdb.writecf.block-size", "v6.5.9", None, "64KB"),
        ("rocksdb.writecf.block-size", "v8.5.1", None, "32KB"),
        ("storage.scheduler-worker-pool-size", "v8.5.1", M6I_2XL, 4),  # clamp(8, 1, 4)
        ("storage.scheduler-worker-pool-size", "v8.5.1", M7G_4XL, 8),  # cpus >= 16
        ("storage.scheduler-worker-pool-size", "v8.5.1", HostFacts(cpus=2), 2),
        ("raftstore.apply-pool-size", "v8.5.1", None, 2),
        ("raftstore.store-pool-size", "v8.5.1", None, 2),
        ("raftstore.store-io-pool-size", "v7.6.0", None, 0),  # 0 before v8.0.0
        ("raftstore.store-io-pool-size", "v8.0.0", None, 1),
        ("readpool.unified.max-thread-count", "v8.5.1", M6I_2XL, 6),  # max(4, 8 x 0.8 = 6.4)
        ("readpool.unified.max-thread-count", "v8.5.1", HostFacts(cpus=4), 4),  # max(4, 3.2)
        ("readpool.unified.max-thread-count", "v8.5.1", M7G_4XL, 12),  # 16 x 0.8 = 12.8
        ("rocksdb.rate-bytes-per-sec", "v8.5.1", None, "10GB"),
        ("rocksdb.rate-limiter-auto-tuned", "v8.5.1", None, True),
        ("raft-engine.enable", "v6.1.0", None, True),  # true since v6.1.0
        ("rocksdb.titan.enabled", "v7.5.1", None, False),
        ("rocksdb.titan.enabled", "v7.6.0", None, True),  # for new clusters since v7.6.0
        ("rocksdb.defaultcf.titan.min-blob-size", "v7.5.0", None, "1KB"),
        ("rocksdb.defaultcf.titan.min-blob-size", "v8.1.0", None, "32KB"),
        ("coprocessor.region-split-size", "v8.3.0", None, "96MiB"),  # 96MiB before v8.4.0
        ("coprocessor.region-split-size", "v8.4.0", None, "256MiB"),
        (
            "rocksdb.defaultcf.compression-per-level",
            "v8.5.1",
            None,
            ["no", "no", "lz4", "lz4", "lz4", "zstd", "zstd"],
        ),
        ("rocksdb.lockcf.compression-per-level", "v8.5.1", None, ["no"] * 7),
        ("server.grpc-compression-type", "9.0.0-beta.2", None, "none"),  # HEAD of the template
    ],
)
def test_default_value(key: str, version: str, host: HostFacts | None, expected: object) -> None:
    result = default_value(key, version, host)
    assert (result.value, result.origin) == (expected, "default")
    assert result.source


def test_partitioned_raft_kv_block_cache_is_30_percent() -> None:
    # docs/reference/tikv-config.md#keys-and-defaults: 30% for partitioned-raft-kv
    config = {"storage.engine": "partitioned-raft-kv"}
    assert effective_value("storage.block-cache.capacity", config, "v8.5.1", M6I_2XL).value == int(
        0.30 * 32 * GIB
    )


def test_configured_value_wins_and_says_so() -> None:
    config = {"storage.block-cache.capacity": "8GiB"}
    result = effective_value("storage.block-cache.capacity", config, "v8.5.1", M6I_2XL)
    assert (result.value, result.origin) == ("8GiB", "config")
    # ... even when the version is unknown: a configured value does not depend on it.
    assert effective_value("storage.block-cache.capacity", config, "nonsense").value == "8GiB"


@pytest.mark.parametrize("version", ["v5.4.3", "v4.0.16", "v10.0.0", "nightly", "", None])
def test_unknown_version_warns_instead_of_guessing(version: str | None) -> None:
    result = effective_value("raftstore.apply-pool-size", {}, version, M6I_2XL)
    assert (result.value, result.origin) == (None, "unknown")
    assert result.warnings


def test_missing_host_facts_warn() -> None:
    result = effective_value("storage.block-cache.capacity", {}, "v8.5.1", HostFacts())
    assert (result.value, result.origin) == (None, "unknown")
    assert "memory" in result.warnings[0]


def test_titan_follows_the_creation_version_when_known() -> None:
    # docs/reference/tikv-config.md#keys-and-defaults: "true for new clusters since v7.6.0 (earlier clusters unaffected)"
    upgraded = default_value("rocksdb.titan.enabled", "v8.5.1", created_version="v7.1.0")
    assert (upgraded.value, upgraded.warnings) == (False, ())
    unknown_age = default_value("rocksdb.titan.enabled", "v8.5.1")
    assert unknown_age.value is True and unknown_age.warnings


def test_no_row_for_key_is_unknown() -> None:
    result = default_value("rocksdb.defaultcf.level0-slowdown-writes-trigger", "v8.5.1")
    assert result.origin == "unknown" and result.warnings


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("v8.5.1", (8, 5, 1)),
        ("8.5", (8, 5, 0)),
        ("9.0.0-beta.2", (9, 0, 0)),
        ("v7.5.0+abc", (7, 5, 0)),
        ("x", None),
    ],
)
def test_parse_version(text: str, parsed: tuple[int, int, int] | None) -> None:
    assert parse_version(text) == parsed


def test_memory_usage_limit_follows_a_configured_block_cache() -> None:
    # template: "It will be calculated as `5/3 * block-cache.capacity`" -> 5/3 x 6 GiB = 10 GiB
    config = {"storage.block-cache.capacity": "6GiB"}
    assert effective_value("memory-usage-limit", config, "v8.5.1", M6I_2XL).value == 10 * GIB


def test_fill_current_from_each_node_or_all_when_equal() -> None:
    from headroom.domain.model import Change, EntityRef
    from headroom.domain.tikvconf.defaults import fill_current

    configs = {
        "10.0.1.5:20180": {"storage.block-cache.capacity": "8GiB"},
        "10.0.1.6:20180": {"storage.block-cache.capacity": "8GiB"},
        "10.0.1.7:20180": {"storage.block-cache.capacity": "12GiB"},
    }
    hosts = dict.fromkeys(configs, M6I_2XL)
    one = Change(
        target="tikv",
        key="storage.block-cache.capacity",
        proposed="14GiB",
        entity=EntityRef(kind="node", id="tikv-3", status_address="10.0.1.7:20180"),
    )
    everywhere = Change(target="tikv", key="storage.block-cache.capacity", proposed="14GiB")
    pool = Change(target="tikv", key="raftstore.apply-pool-size", proposed=4)
    filled = fill_current([one, everywhere, pool], configs, "v7.5.1", hosts)
    # node-specific: that node's value; cluster-wide: nodes differ (8GiB vs 12GiB) -> unknown;
    # absent everywhere: the version's default, 2 (docs/reference/tikv-config.md#keys-and-defaults).
    assert [c.current for c in filled] == ["12GiB", None, 2]
