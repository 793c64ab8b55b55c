"""The TiKV config defaults the simulator starts from, by version and host size, and size-string parsing.

Only the keys the simulator and the advisor look at. Values and the versions they changed in come from
domain.md §5 (TiKV `src/config/mod.rs`, `src/storage/config.rs`, release tags) and the config template.
"""

from __future__ import annotations

import math
import re
from typing import Any

from headroom.snapshot.schema import config_set

_VERSION = re.compile(r"^\s*v?(\d+)\.(\d+)(?:\.(\d+))?(?:[-+].*)?\s*$")
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGTP]?)(i?)B?\s*$", re.IGNORECASE)
_UNIT = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4, "P": 1024**5}


def parse_version(text: str) -> tuple[int, int, int]:
    """Parse "v8.5.1" (or "8.5") into (8, 5, 1); ValueError otherwise."""
    m = _VERSION.match(text)
    if not m:
        raise ValueError(f"not a TiKV version: {text!r} (expected e.g. v8.5.1)")
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


def parse_size(value: Any) -> int:
    """Parse a TiKV size ("32KiB", "10GB", 1024) into bytes; KB and KiB are both binary (domain.md §4.2)."""
    if isinstance(value, bool):
        raise ValueError(f"not a size: {value!r}")
    if isinstance(value, int | float):
        return int(value)
    if not isinstance(value, str):
        raise ValueError(f"not a size: {value!r}")
    m = _SIZE.match(value)
    if not m:
        raise ValueError(f"not a size: {value!r} (expected e.g. 32KiB, 8GiB, 100MB)")
    return int(float(m.group(1)) * _UNIT[m.group(2).upper()])


def format_size(n_bytes: float) -> str:
    """Render bytes as TiKV's ReadableSize does: the largest exact binary unit ("32KiB", "0KiB")."""
    n = int(n_bytes)
    if n == 0:
        return "0KiB"
    for unit in ("PiB", "TiB", "GiB", "MiB", "KiB"):
        size = _UNIT[unit[0]]
        if n % size == 0:
            return f"{n // size}{unit}"
    return f"{n}B"


def default_config(tikv_version: str, vcpus: int, memory_gib: float) -> dict[str, Any]:
    """Return the effective config of a TiKV of this version on a host of this size, with nothing set."""
    major, minor, _ = parse_version(tikv_version)
    v = (major, minor)
    # §5: block cache 45% of system memory (raft-kv); rounded down to a whole MiB as TiKV logs it.
    block_cache = int(memory_gib * 0.45 * 1024) * 1024**2
    flat: dict[str, Any] = {
        "storage.block-cache.capacity": format_size(block_cache),
        "memory-usage-limit": format_size(int(memory_gib * 0.75 * 1024) * 1024**2),
        # §5: 8 if CPUs >= 16, else clamp(cpus, 1, 4)
        "storage.scheduler-worker-pool-size": 8 if vcpus >= 16 else min(max(vcpus, 1), 4),
        "storage.flow-control.enable": True,
        "storage.flow-control.soft-pending-compaction-bytes-limit": "192GiB",
        "storage.flow-control.hard-pending-compaction-bytes-limit": "1TiB",
        "raftstore.apply-pool-size": 2,
        "raftstore.store-pool-size": 2,
        # §5: 1 since v8.0.0, 0 before
        "raftstore.store-io-pool-size": 1 if v >= (8, 0) else 0,
        "raftstore.raftdb-path": "",
        # §5: max(4, cpus × 0.8)
        "readpool.unified.max-thread-count": max(4, math.floor(vcpus * 0.8)),
        "readpool.unified.min-thread-count": 1,
        "readpool.unified.auto-adjust-pool-size": False,
        "server.grpc-concurrency": 5,
        "server.grpc-compression-type": "none",
        "rocksdb.max-background-jobs": 8,  # config template default
        "rocksdb.rate-bytes-per-sec": "10GiB",
        "rocksdb.rate-limiter-auto-tuned": True,
        "rocksdb.rate-limiter-mode": "write-only",
        # §5: block-size 32KB since v7.0.0 (64KB before)
        "rocksdb.defaultcf.block-size": "32KiB" if v >= (7, 0) else "64KiB",
        "rocksdb.writecf.block-size": "32KiB" if v >= (7, 0) else "64KiB",
        "rocksdb.lockcf.block-size": "16KiB",
        "rocksdb.defaultcf.compression-per-level": ["no", "no", "lz4", "lz4", "lz4", "zstd", "zstd"],
        "rocksdb.defaultcf.soft-pending-compaction-bytes-limit": "192GiB",
        "rocksdb.defaultcf.hard-pending-compaction-bytes-limit": "1000GiB",
        # §5: Titan on for new clusters since v7.6.0; min-blob-size 32KB then (1KB before)
        "rocksdb.titan.enabled": v >= (7, 6),
        "rocksdb.defaultcf.titan.min-blob-size": "32KiB" if v >= (7, 6) else "1KiB",
        # §5: Raft Engine is the default since v6.1.0; dir "" means {data-dir}/raft-engine
        "raft-engine.enable": v >= (6, 1),
        "raft-engine.dir": "",
        "coprocessor.region-split-size": "256MiB" if v >= (8, 4) else "96MiB",
        "coprocessor.region-max-size": "384MiB" if v >= (8, 4) else "144MiB",
        "storage.data-dir": "/data/tikv",
    }
    config: dict[str, Any] = {}
    for key, value in flat.items():
        config = config_set(config, key, value)
    return config


def flatten(config: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Flatten a nested config into dotted keys (lists stay values)."""
    out: dict[str, Any] = {}
    for key, value in config.items():
        dotted = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict):
            out.update(flatten(value, dotted))
        else:
            out[dotted] = value
    return out
