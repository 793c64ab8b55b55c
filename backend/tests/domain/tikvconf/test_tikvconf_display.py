"""A tikv.toml value in words: as TiKV's config writes it, an absent value with the version's default when known."""

from __future__ import annotations

from typing import Any

import pytest
from headroom.domain.tikvconf.defaults import HostFacts
from headroom.domain.tikvconf.display import config_value_text, known_default

GIB = 1024**3


@pytest.mark.parametrize(("key", "value", "default", "text"), [
    ("storage.block-cache.capacity", "8GiB", None, "8GiB"),
    # a size held as bytes (a live /config JSON number) in its binary unit, as TiKV's ReadableSize writes it
    ("storage.block-cache.capacity", 8 * GIB, None, "8GiB"),
    ("coprocessor.region-max-size", 384 * 1024**2, None, "384MiB"),
    # from 1 GiB on, also read in GiB (docs/number-formats.json `size_reading`): 14,745 MiB / 1,024 = 14.4 GiB
    ("storage.block-cache.capacity", 14745 * 1024**2, None, "14745MiB (14.4 GiB)"),
    ("storage.block-cache.capacity", "14745MiB", None, "14745MiB (14.4 GiB)"),
    ("raft-engine.enable", True, None, "true"),
    ("readpool.unified.auto-adjust-pool-size", False, None, "false"),
    ("server.grpc-concurrency", 8, None, "8"),
    ("rocksdb.defaultcf.compression-per-level", ["no", "lz4"], None, '["no", "lz4"]'),
    ("storage.block-cache.capacity", None, None, "not set"),
    ("raft-engine.enable", None, True, "not set (TiKV default true)"),
    ("rocksdb.rate-bytes-per-sec", None, "10GB", "not set (TiKV default 10GB (10 GiB))"),
])
def test_config_value_text(key: str, value: Any, default: Any, text: str) -> None:
    assert config_value_text(key, value, default) == text


def test_known_default_is_the_tables_and_only_when_every_host_agrees() -> None:
    # raft-engine.enable is true since v6.1.0 (docs/reference/tikv-config.md#keys-and-defaults)
    assert known_default("raft-engine.enable", "v8.5.1", [None]) is True
    # the block cache defaults to 45% of memory (docs/reference/tikv-config.md#keys-and-defaults): two hosts of
    # different memory have different defaults, so none is said; one host has its own
    small, large = HostFacts(cpus=8, memory_bytes=32 * GIB), HostFacts(cpus=16, memory_bytes=64 * GIB)
    assert known_default("storage.block-cache.capacity", "v8.5.1", [small, large]) is None
    assert known_default("storage.block-cache.capacity", "v8.5.1", [small]) is not None
    assert known_default("storage.block-cache.capacity", "v8.5.1", [None]) is None  # memory unknown
    assert known_default("raft-engine.enable", "not a version", [None]) is None
