"""The TiKV config the simulator starts from, by version and host size (sizes: headroom.domain.units).

Only the keys the simulator and the advisor look at. The values are tikvconf.defaults.DEFAULTS (the one table
of TiKV defaults, each row citing docs/reference/tikv-config.md#keys-and-defaults / the config template); this module picks the keys, writes
sizes as `GET /config` serves them, and fills the few keys that table does not hold.
"""

from __future__ import annotations

from typing import Any

from headroom.domain.snapshot.schema import config_set
from headroom.domain.tikvconf.defaults import HostFacts, table_defaults
from headroom.domain.tikvconf.defaults import parse_version as tikvconf_parse_version
from headroom.domain.tikvconf.keys import is_valid_key, require_valid_key
from headroom.domain.units import GIB, MIB, format_size, parse_size


def parse_version(text: str) -> tuple[int, int, int]:
    """Parse "v8.5.1" (or "8.5") into (8, 5, 1); ValueError otherwise."""
    parsed = tikvconf_parse_version(text)
    if parsed is None:
        raise ValueError(f"not a TiKV version: {text!r} (expected e.g. v8.5.1)")
    return parsed


# The keys a simulated node's config carries (what the simulator and the advisor look at). Their values come
# from tikvconf.defaults.DEFAULTS (one table, every row cited there); SIMULATOR_ONLY fills what that table
# does not hold.
SIMULATED_KEYS: tuple[str, ...] = (
    "storage.block-cache.capacity",
    "memory-usage-limit",
    "storage.scheduler-worker-pool-size",
    "storage.flow-control.enable",
    "storage.flow-control.soft-pending-compaction-bytes-limit",
    "storage.flow-control.hard-pending-compaction-bytes-limit",
    "raftstore.apply-pool-size",
    "raftstore.store-pool-size",
    "raftstore.store-io-pool-size",
    "raftstore.raftdb-path",
    "readpool.unified.max-thread-count",
    "readpool.unified.min-thread-count",
    "readpool.unified.auto-adjust-pool-size",
    "server.grpc-concurrency",
    "server.grpc-compression-type",
    "rocksdb.max-background-jobs",
    "rocksdb.rate-bytes-per-sec",
    "rocksdb.rate-limiter-auto-tuned",
    "rocksdb.rate-limiter-mode",
    "rocksdb.defaultcf.block-size",
    "rocksdb.writecf.block-size",
    "rocksdb.lockcf.block-size",
    "rocksdb.defaultcf.compression-per-level",
    "rocksdb.defaultcf.soft-pending-compaction-bytes-limit",
    "rocksdb.defaultcf.hard-pending-compaction-bytes-limit",
    "rocksdb.titan.enabled",
    "rocksdb.defaultcf.titan.min-blob-size",
    "raft-engine.enable",
    "raft-engine.dir",
    "coprocessor.region-split-size",
    "coprocessor.region-max-size",
    "storage.data-dir",
)
SIMULATOR_ONLY: dict[str, Any] = {
    # Not a key tikvconf validates (it is absent from the config template); TiKV's UnifiedReadPoolConfig
    # default is false (docs/reference/pingcap-guidance.md#thread-pools advises turning it on since v6.3).
    "readpool.unified.auto-adjust-pool-size": False,
    # docs/reference/pingcap-guidance.md#thread-pools: 5, and since v8.5.4 it adapts to the CPU count with a formula the table lacks; the
    # simulator keeps 5 there.
    "server.grpc-concurrency": 5,
    # Where TiUP deploys TiKV's data (a deployment choice, not a TiKV default: TiKV's own is "./").
    "storage.data-dir": "/data/tikv",
}
# Sizes TiKV computes from memory; the simulator rounds them down to a whole MiB, as TiKV logs them.
_MEMORY_SIZED = ("storage.block-cache.capacity", "memory-usage-limit")


def _as_served(key: str, value: Any) -> Any:
    """Write a size the way `GET /config` serves it (ReadableSize: "32KiB", not the template's "32KB")."""
    if key in _MEMORY_SIZED:
        value = value // MIB * MIB
    sized = is_valid_key(key) and require_valid_key(key).kind == "size"
    if sized and isinstance(value, str | int) and not isinstance(value, bool):
        return format_size(parse_size(value))
    return value


def default_config(tikv_version: str, vcpus: int, memory_gib: float) -> dict[str, Any]:
    """Return the effective config of a TiKV of this version on a host of this size, with nothing set."""
    version = parse_version(tikv_version)
    host = HostFacts(cpus=vcpus, memory_bytes=int(memory_gib * GIB))
    table = table_defaults(SIMULATED_KEYS, version, host)
    config: dict[str, Any] = {}
    for key in SIMULATED_KEYS:
        value = table[key] if key in table else SIMULATOR_ONLY[key]
        config = config_set(config, key, _as_served(key, value))
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
