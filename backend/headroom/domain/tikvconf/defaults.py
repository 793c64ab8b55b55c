"""TiKV defaults by version for the keys the advisor touches, and the effective value of a key on a node.

Every row cites its source; docs/reference/tikv-config.md#keys-and-defaults lists the same defaults (checked against TiKV
source at
the release tags named there), "template" is data/tikv-config-template.toml (tikv/tikv @8e964719).
Outside KNOWN_VERSIONS, or for a version that does not parse, the answer is "unknown" with a warning: a wrong
"current value" is worse than none.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

from headroom.domain.model import Change, ChangeValue
from headroom.domain.tikvconf.change import target_node
from headroom.domain.tikvconf.errors import InvalidChangeValue
from headroom.domain.tikvconf.keys import require_valid_key
from headroom.domain.tikvconf.parse import same_value
from headroom.domain.units import UnitError, parse_size

Version = tuple[int, int, int]
ConfigValue = str | int | float | bool | list[Any] | dict[str, Any]
Origin = Literal["config", "default", "unknown"]

# docs/reference/tikv-config.md checks defaults at tags v6.1.0 .. v8.4.0 and HEAD (9.0.0-beta.2); before v6.1.0 the table is
# silent.
KNOWN_VERSIONS: tuple[Version, Version] = ((6, 1, 0), (9, 1, 0))
_VERSION_RE = re.compile(r"^\s*v?(\d+)\.(\d+)(?:\.(\d+))?(?:[-+].*)?\s*$")


@dataclass(frozen=True)
class HostFacts:
    """What TiKV may use: CPUs (its cgroup quota when limited, as SysQuota reads it) and memory in bytes."""

    cpus: int | None = None
    memory_bytes: int | None = None


@dataclass(frozen=True)
class DefaultRow:
    """A default for `key` on versions in [since, until); `value` may depend on the host and the config."""

    key: str
    since: Version | None
    until: Version | None
    value: ConfigValue | Callable[[HostFacts, Mapping[str, object]], ConfigValue | None]
    source: str
    caveat: str = ""


@dataclass(frozen=True)
class EffectiveValue:
    """A key's value on a node: from its config, the version's default, or unknown (None) with warnings."""

    key: str
    value: ConfigValue | None
    origin: Origin
    source: str
    warnings: tuple[str, ...] = ()


def parse_version(text: str | None) -> Version | None:
    """Parse "v8.5.1", "8.5.1" or "9.0.0-beta.2" into (major, minor, patch); None if it does not parse."""
    if not text:
        return None
    match = _VERSION_RE.match(text)
    if not match:
        return None
    return int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)


def _block_cache(host: HostFacts, config: Mapping[str, object]) -> int | None:
    if host.memory_bytes is None:
        return None
    rate = 0.30 if config.get("storage.engine") == "partitioned-raft-kv" else 0.45
    return math.floor(host.memory_bytes * rate)


def _memory_usage_limit(host: HostFacts, config: Mapping[str, object]) -> int | None:
    # Template: "calculated as `5/3 * block-cache.capacity`", i.e. 75% of memory with the default cache.
    configured = config.get("storage.block-cache.capacity")
    if isinstance(configured, str | int) and not isinstance(configured, bool):
        try:
            return int(Fraction(parse_size(configured)) * 5 / 3)
        except UnitError as exc:
            raise InvalidChangeValue(f"storage.block-cache.capacity: {exc}") from None
    if host.memory_bytes is None:
        return None
    rate = Fraction(30, 100) if config.get("storage.engine") == "partitioned-raft-kv" else Fraction(45, 100)
    return int(host.memory_bytes * rate * 5 / 3)


def _scheduler_pool(host: HostFacts, _config: Mapping[str, object]) -> int | None:
    if host.cpus is None:
        return None
    return 8 if host.cpus >= 16 else min(max(host.cpus, 1), 4)


def _unified_max_threads(host: HostFacts, _config: Mapping[str, object]) -> int | None:
    if host.cpus is None:
        return None
    return max(4, math.floor(host.cpus * 0.8))


def _max_background_jobs(host: HostFacts, _config: Mapping[str, object]) -> int | None:
    if host.cpus is None:
        return None
    return min(8, host.cpus - 1)


_COMPRESSION = ["no", "no", "lz4", "lz4", "lz4", "zstd", "zstd"]
_V = {
    "6.1": (6, 1, 0),
    "7.0": (7, 0, 0),
    "7.6": (7, 6, 0),
    "8.0": (8, 0, 0),
    "8.4": (8, 4, 0),
    "8.5.4": (8, 5, 4),
}

DEFAULTS: tuple[DefaultRow, ...] = (
    DefaultRow(
        "storage.block-cache.capacity",
        None,
        None,
        _block_cache,
        "docs/reference/tikv-config.md#keys-and-defaults: 45% of memory (BLOCK_CACHE_RATE=0.45, src/config/mod.rs); 30% for partitioned-raft-kv",
    ),
    DefaultRow(
        "memory-usage-limit", None, None, _memory_usage_limit, "docs/reference/tikv-config.md#keys-and-defaults / template: 75% of memory"
    ),
    DefaultRow("rocksdb.defaultcf.block-size", None, _V["7.0"], "64KB", "docs/reference/tikv-config.md#keys-and-defaults: 64KB until v7.0.0"),
    DefaultRow("rocksdb.defaultcf.block-size", _V["7.0"], None, "32KB", "docs/reference/tikv-config.md#keys-and-defaults: 32KB since v7.0.0"),
    DefaultRow("rocksdb.writecf.block-size", None, _V["7.0"], "64KB", "docs/reference/tikv-config.md#keys-and-defaults: 64KB until v7.0.0"),
    DefaultRow("rocksdb.writecf.block-size", _V["7.0"], None, "32KB", "docs/reference/tikv-config.md#keys-and-defaults: 32KB since v7.0.0"),
    DefaultRow("rocksdb.lockcf.block-size", None, None, "16KB", "docs/reference/tikv-config.md#keys-and-defaults / template"),
    DefaultRow("raftdb.defaultcf.block-size", None, None, "64KB", "docs/reference/tikv-config.md#keys-and-defaults / template"),
    DefaultRow(
        "storage.scheduler-worker-pool-size",
        None,
        None,
        _scheduler_pool,
        "docs/reference/tikv-config.md#keys-and-defaults: 8 if cpus >= 16 else clamp(cpus, 1, 4) (src/storage/config.rs)",
    ),
    DefaultRow("raftstore.apply-pool-size", None, None, 2, "docs/reference/tikv-config.md#keys-and-defaults"),
    DefaultRow("raftstore.store-pool-size", None, None, 2, "docs/reference/tikv-config.md#keys-and-defaults"),
    DefaultRow("raftstore.store-io-pool-size", None, _V["8.0"], 0, "docs/reference/tikv-config.md#keys-and-defaults: 0 before v8.0.0"),
    DefaultRow("raftstore.store-io-pool-size", _V["8.0"], None, 1, "docs/reference/tikv-config.md#keys-and-defaults: 1 since v8.0.0"),
    DefaultRow(
        "readpool.unified.max-thread-count",
        None,
        None,
        _unified_max_threads,
        "docs/reference/tikv-config.md#keys-and-defaults / template; src/config/mod.rs UnifiedReadPoolConfig::default: "
        "max(UNIFIED_READPOOL_MIN_CONCURRENCY = 4, (cpu_cores_quota * 0.8) as usize), i.e. truncated",
    ),
    DefaultRow("readpool.unified.min-thread-count", None, None, 1, "docs/reference/tikv-config.md#keys-and-defaults / template"),
    DefaultRow("rocksdb.rate-bytes-per-sec", None, None, "10GB", "docs/reference/tikv-config.md#keys-and-defaults / template"),
    DefaultRow("rocksdb.rate-limiter-auto-tuned", None, None, True, "docs/reference/tikv-config.md#keys-and-defaults / template"),
    DefaultRow("rocksdb.rate-limiter-mode", None, None, "write-only", "docs/reference/tikv-config.md#keys-and-defaults / template"),
    DefaultRow("raft-engine.enable", None, _V["6.1"], False, "docs/reference/tikv-config.md#keys-and-defaults: true since v6.1.0 (off before)"),
    DefaultRow("raft-engine.enable", _V["6.1"], None, True, "docs/reference/tikv-config.md#keys-and-defaults: true since v6.1.0"),
    DefaultRow("raft-engine.dir", None, None, "", "docs/reference/tikv-config.md#keys-and-defaults: \"\" means {data-dir}/raft-engine"),
    DefaultRow("raftstore.raftdb-path", None, None, "", "docs/reference/tikv-config.md#keys-and-defaults: \"\" means {data-dir}/raft"),
    DefaultRow("storage.flow-control.enable", None, None, True, "template [storage.flow-control]: enable = true"),
    DefaultRow(
        "storage.flow-control.soft-pending-compaction-bytes-limit", None, None, "192GB", "template: 192GB"
    ),
    DefaultRow(
        "storage.flow-control.hard-pending-compaction-bytes-limit", None, None, "1024GB", "template: 1024GB"
    ),
    DefaultRow(
        "rocksdb.defaultcf.soft-pending-compaction-bytes-limit", None, None, "192GB", "template [rocksdb.defaultcf]"
    ),
    DefaultRow(
        "rocksdb.defaultcf.hard-pending-compaction-bytes-limit", None, None, "1000GB", "template [rocksdb.defaultcf]"
    ),
    DefaultRow(
        "rocksdb.titan.enabled",
        None,
        _V["7.6"],
        False,
        "docs/reference/tikv-config.md#keys-and-defaults: Titan is on by default since v7.6.0",
    ),
    DefaultRow(
        "rocksdb.titan.enabled",
        _V["7.6"],
        None,
        True,
        "docs/reference/tikv-config.md#keys-and-defaults / template: true for clusters created on v7.6.0 or later",
        "clusters created before v7.6.0 keep Titan off after an upgrade",
    ),
    DefaultRow(
        "rocksdb.defaultcf.titan.min-blob-size",
        None,
        _V["7.6"],
        "1KB",
        "docs/reference/tikv-config.md#keys-and-defaults: 1KB before v7.6.0",
    ),
    DefaultRow(
        "rocksdb.defaultcf.titan.min-blob-size",
        _V["7.6"],
        None,
        "32KB",
        "docs/reference/tikv-config.md#keys-and-defaults / template: 32KB since v7.6.0",
        "clusters created before v7.6.0 keep 1KB after an upgrade",
    ),
    DefaultRow(
        "rocksdb.defaultcf.compression-per-level", None, None, _COMPRESSION, "docs/reference/tikv-config.md#keys-and-defaults / template"
    ),
    DefaultRow("rocksdb.writecf.compression-per-level", None, None, _COMPRESSION, "docs/reference/tikv-config.md#keys-and-defaults / template"),
    DefaultRow("rocksdb.lockcf.compression-per-level", None, None, ["no"] * 7, "docs/reference/tikv-config.md#keys-and-defaults / template"),
    DefaultRow(
        "rocksdb.defaultcf.bottommost-level-compression", None, None, "zstd", "docs/reference/tikv-config.md#keys-and-defaults / template"
    ),
    DefaultRow("server.grpc-compression-type", None, None, "none", "docs/reference/tikv-config.md#keys-and-defaults / template"),
    DefaultRow(
        "coprocessor.region-split-size", None, _V["8.4"], "96MiB", "docs/reference/tikv-config.md#keys-and-defaults: 96MiB before v8.4.0"
    ),
    DefaultRow(
        "coprocessor.region-split-size", _V["8.4"], None, "256MiB", "docs/reference/tikv-config.md#keys-and-defaults: 256MiB since v8.4.0"
    ),
    DefaultRow(
        "coprocessor.region-max-size",
        None,
        _V["8.4"],
        "144MiB",
        "region-max-size defaults to region-split-size / 2 * 3 (components/raftstore coprocessor config), "
        "so 144MiB with the 96MiB split size; not in docs/reference/tikv-config.md#keys-and-defaults, which gives 384MiB at v8.4.0 (256MiB * 1.5)",
    ),
    DefaultRow(
        "coprocessor.region-max-size", _V["8.4"], None, "384MiB", "docs/reference/tikv-config.md#keys-and-defaults: 384MiB at HEAD / v8.4.0"
    ),
    DefaultRow(
        "rocksdb.max-background-jobs",
        None,
        None,
        _max_background_jobs,
        "template: 'set to 8 or CPU_NUM - 1, whichever is smaller'",
    ),
    DefaultRow(
        "server.grpc-concurrency",
        None,
        _V["8.5.4"],
        5,
        "template / docs/reference/pingcap-guidance.md#thread-pools: 5; since v8.5.4 it adapts to the CPU count (formula not in the table)",
    ),
)


def _covers(row: DefaultRow, version: Version) -> bool:
    return (row.since is None or version >= row.since) and (row.until is None or version < row.until)


def table_defaults(
    keys: Sequence[str], version: Version, host: HostFacts, config: Mapping[str, object] | None = None
) -> dict[str, ConfigValue]:
    """Return the table's default of each key on this version and host; keys without a row are left out.

    Unlike default_value this does not refuse versions outside KNOWN_VERSIONS: the simulator builds configs for
    any version it is asked for, and rows without a bound apply to every version.
    """
    out: dict[str, ConfigValue] = {}
    for key in keys:
        rows = [row for row in DEFAULTS if row.key == key and _covers(row, version)]
        if not rows:
            continue
        value = rows[0].value
        computed = value(host, config or {}) if callable(value) else value
        if computed is not None:
            out[key] = computed
    return out


def default_value(
    key: str,
    version: str | None,
    host: HostFacts | None = None,
    config: Mapping[str, object] | None = None,
    created_version: str | None = None,
) -> EffectiveValue:
    """Return the version's default for `key`, computed from the host where it depends on it, or unknown."""
    require_valid_key(key)
    parsed = parse_version(version)
    if parsed is None:
        return EffectiveValue(key, None, "unknown", "", (f"TiKV version {version!r} does not parse",))
    low, high = KNOWN_VERSIONS
    if not low <= parsed < high:
        shown = ".".join(map(str, parsed))
        return EffectiveValue(
            key, None, "unknown", "", (f"TiKV v{shown} is outside the defaults table (v6.1.0 to v9.0.x)",)
        )
    # Titan defaults follow the version the cluster was created on, when it is known.
    lookup = parsed
    created = parse_version(created_version)
    if created is not None and key in ("rocksdb.titan.enabled", "rocksdb.defaultcf.titan.min-blob-size"):
        lookup = created
    rows = [row for row in DEFAULTS if row.key == key and _covers(row, lookup)]
    if not rows:
        return EffectiveValue(
            key, None, "unknown", "", (f"no default for {key} in the table for this version",)
        )
    row = rows[0]
    warnings: list[str] = []
    if row.caveat and not (created is not None and lookup == created):
        warnings.append(row.caveat)
    if callable(row.value):
        computed = row.value(host or HostFacts(), config or {})
        if computed is None:
            return EffectiveValue(
                key, None, "unknown", row.source, (f"the default of {key} depends on CPUs/memory, not given",)
            )
        return EffectiveValue(key, computed, "default", row.source, tuple(warnings))
    return EffectiveValue(key, row.value, "default", row.source, tuple(warnings))


def effective_value(
    key: str,
    config: Mapping[str, object],
    version: str | None,
    host_facts: HostFacts | None = None,
    created_version: str | None = None,
) -> EffectiveValue:
    """Return the configured value of `key`, else the version's default, saying which (or unknown)."""
    require_valid_key(key)
    if key in config:
        value = config[key]
        return EffectiveValue(key, value, "config", "configuration")  # type: ignore[arg-type]
    return default_value(key, version, host_facts, config, created_version)


def fill_current(
    changes: Sequence[Change],
    node_configs: Mapping[str, Mapping[str, object]],
    version: str | None,
    host_facts: Mapping[str, HostFacts] | None = None,
    *,
    rebase: bool = False,
) -> tuple[Change, ...]:
    """Give tikv changes without a `current` the effective value on their node (or on every node, when equal).

    `node_configs` maps status addresses to dotted-key views (e.g. config_json_view of each node's /config).
    A value that is unknown, or differs between nodes for a cluster-wide change, stays None. With
    `rebase=True` every tikv change takes its `current` from these configs (the ones a patch is made against,
    whose values its rollback restores), whatever the advisor saw.
    """
    filled: list[Change] = []
    for change in changes:
        if change.target != "tikv" or (change.current is not None and not rebase):
            filled.append(change)
            continue
        scope = target_node(change)
        nodes = [scope] if scope else list(node_configs)
        values = [
            effective_value(
                change.key, node_configs.get(node, {}), version, (host_facts or {}).get(node)
            ).value
            for node in nodes
        ]
        known = [value for value in values if value is not None]
        current: ChangeValue | None = None if rebase else change.current
        if known and len(known) == len(values) and all(same_value(change.key, known[0], v) for v in known):
            current = known[0]
        filled.append(change if current == change.current else change.model_copy(update={"current": current}))
    return tuple(filled)
