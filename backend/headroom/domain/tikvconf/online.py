"""Which TiKV keys can change online (`SET CONFIG` / `POST :20180/config` / `tikv-ctl modify-tikv-config`).

Sources:
- PingCAP, "Modify Configuration Dynamically" (docs/reference/tikv-config.md#online-changes: "The following TiKV configuration items can be modified dynamically"), the table
  copied into ONLINE_FROM_DOCS below, with its `{db-name}` / `{db-name}.{cf-name}` rows expanded for
  db = rocksdb (cf = defaultcf, writecf, lockcf, raftcf) and raftdb (cf = defaultcf).
- docs/reference/tikv-config.md#online-changes (TiKV source `#[online_config(skip)]` checks): rocksdb.rate-bytes-per-sec and
  rocksdb.rate-limiter-auto-tuned are online in code (a docs gap); {db}.{cf}.titan.min-blob-size is online;
  block-size, compression-per-level, raft-engine.*, rocksdb.titan.enabled, server.grpc-compression-type,
  readpool.unified.min-thread-count, rocksdb.rate-limiter-mode and raftstore.raftdb-path are not.
- The template's [storage.flow-control] comment: "Support change dynamically".
- ONLINE_SINCE: the release from which a key in those tables is online, read in TiKV's source at each minor tag
  (v4.0.0 .. v8.5.0): where `#[online_config(skip)]` (`#[config(skip)]` before v5.2) left the field, or where the
  server first registered the module's config manager. Before that release the key needs a restart; a key that
  did not exist yet is refused by SET CONFIG.
A key found in none of these is treated as needing a restart: a rolling restart is always safe, a SET CONFIG
that TiKV rejects is a half-applied change (batch changes are not atomic, docs/reference/tikv-config.md#set-config).
"""

from __future__ import annotations

from dataclasses import dataclass

from headroom.domain.tikvconf.defaults import Version, parse_version

_DBS_CFS: dict[str, tuple[str, ...]] = {
    "rocksdb": ("defaultcf", "writecf", "lockcf", "raftcf"),
    "raftdb": ("defaultcf",),
}
_DB_KEYS = (
    "max-total-wal-size",
    "max-background-jobs",
    "max-background-flushes",
    "max-open-files",
    "compaction-readahead-size",
    "bytes-per-sync",
    "wal-bytes-per-sync",
    "writable-file-max-buffer-size",
)
_CF_KEYS = (
    "block-cache-size",
    "write-buffer-size",
    "max-write-buffer-number",
    "max-bytes-for-level-base",
    "target-file-size-base",
    "level0-file-num-compaction-trigger",
    "level0-slowdown-writes-trigger",
    "level0-stop-writes-trigger",
    "max-compaction-bytes",
    "max-bytes-for-level-multiplier",
    "disable-auto-compactions",
    "soft-pending-compaction-bytes-limit",
    "hard-pending-compaction-bytes-limit",
    "titan.blob-run-mode",
)
_PLAIN_ONLINE = (
    "log.level",
    "raftstore.raft-max-inflight-msgs",
    "raftstore.raft-log-gc-tick-interval",
    "raftstore.raft-log-gc-threshold",
    "raftstore.raft-log-gc-count-limit",
    "raftstore.raft-log-gc-size-limit",
    "raftstore.raft-max-size-per-msg",
    "raftstore.raft-entry-max-size",
    "raftstore.raft-entry-cache-life-time",
    "raftstore.split-region-check-tick-interval",
    "raftstore.region-split-check-diff",
    "raftstore.region-compact-check-interval",
    "raftstore.region-compact-check-step",
    "raftstore.region-compact-min-tombstones",
    "raftstore.region-compact-tombstones-percent",
    "raftstore.pd-heartbeat-tick-interval",
    "raftstore.pd-store-heartbeat-tick-interval",
    "raftstore.snap-mgr-gc-tick-interval",
    "raftstore.snap-gc-timeout",
    "raftstore.lock-cf-compact-interval",
    "raftstore.lock-cf-compact-bytes-threshold",
    "raftstore.messages-per-tick",
    "raftstore.max-peer-down-duration",
    "raftstore.max-leader-missing-duration",
    "raftstore.abnormal-leader-missing-duration",
    "raftstore.peer-stale-state-check-interval",
    "raftstore.consistency-check-interval",
    "raftstore.raft-store-max-leader-lease",
    "raftstore.merge-check-tick-interval",
    "raftstore.cleanup-import-sst-interval",
    "raftstore.local-read-batch-size",
    "raftstore.apply-yield-write-size",
    "raftstore.hibernate-timeout",
    "raftstore.apply-pool-size",
    "raftstore.store-pool-size",
    "raftstore.apply-max-batch-size",
    "raftstore.store-max-batch-size",
    "raftstore.store-io-pool-size",
    "readpool.unified.max-thread-count",
    "readpool.unified.auto-adjust-pool-size",
    "coprocessor.split-region-on-table",
    "coprocessor.batch-split-limit",
    "coprocessor.region-max-size",
    "coprocessor.region-split-size",
    "coprocessor.region-max-keys",
    "coprocessor.region-split-keys",
    "pessimistic-txn.wait-for-lock-timeout",
    "pessimistic-txn.wake-up-delay-duration",
    "pessimistic-txn.pipelined",
    "pessimistic-txn.in-memory",
    "quota.foreground-cpu-time",
    "quota.foreground-write-bandwidth",
    "quota.foreground-read-bandwidth",
    "quota.background-cpu-time",
    "quota.background-write-bandwidth",
    "quota.background-read-bandwidth",
    "quota.enable-auto-tune",
    "quota.max-delay-duration",
    "gc.ratio-threshold",
    "gc.batch-keys",
    "gc.max-write-bytes-per-sec",
    "gc.enable-compaction-filter",
    "gc.compaction-filter-skip-version-check",
    "server.grpc-memory-pool-quota",
    "server.max-grpc-send-msg-len",
    "server.raft-msg-max-batch-size",
    "server.simplify-metrics",
    "storage.block-cache.capacity",
    "storage.scheduler-worker-pool-size",
    "backup.num-threads",
    "split.qps-threshold",
    "split.byte-threshold",
    "split.region-cpu-overload-threshold-ratio",
    "split.split-balance-score",
    "split.split-contained-score",
    "cdc.min-ts-interval",
    "cdc.old-value-cache-memory-quota",
    "cdc.sink-memory-quota",
    "cdc.incremental-scan-speed-limit",
    "cdc.incremental-scan-concurrency",
)


def _expand_docs_table() -> frozenset[str]:
    keys = set(_PLAIN_ONLINE)
    for db, cfs in _DBS_CFS.items():
        keys.update(f"{db}.{key}" for key in _DB_KEYS)
        for cf in cfs:
            keys.update(f"{db}.{cf}.{key}" for key in _CF_KEYS)
    return frozenset(keys)


ONLINE_FROM_DOCS = _expand_docs_table()
ONLINE_FROM_CODE: dict[str, str] = {
    "rocksdb.rate-bytes-per-sec": "TiKV source (src/config): DbConfigManger handles it (not in the docs table)",
    "rocksdb.rate-limiter-auto-tuned": "TiKV source (src/config): online in code",
    **{
        f"{db}.{cf}.titan.min-blob-size": "TiKV source (src/config): {db}.{cf}.titan.min-blob-size is not skipped"
        for db, cfs in _DBS_CFS.items()
        for cf in cfs
    },
    **{
        f"storage.flow-control.{key}": "TiKV config template [storage.flow-control]: 'Support change dynamically'"
        for key in (
            "enable",
            "memtables-threshold",
            "l0-files-threshold",
            "soft-pending-compaction-bytes-limit",
            "hard-pending-compaction-bytes-limit",
        )
    },
}
OFFLINE: dict[str, str] = {
    **{
        f"{db}.{cf}.{key}": "TiKV source (src/config): #[online_config(skip)]"
        for db, cfs in _DBS_CFS.items()
        for cf in cfs
        for key in ("block-size", "compression-per-level", "bottommost-level-compression")
    },
    "readpool.unified.min-thread-count": "TiKV source (src/config)",
    "rocksdb.rate-limiter-mode": "TiKV source (src/config)",
    "rocksdb.auto-tuned": "TiKV source (src/config): deprecated and ignored",
    "rocksdb.titan.enabled": "TiKV source (src/config): cannot fall back without the blob-run-mode=fallback procedure",
    "raftstore.raftdb-path": "TiKV source (src/config)",
    "server.grpc-compression-type": "TiKV source (src/config)",
    "log-level": "PingCAP, Modify Configuration Dynamically: 'config log-level can not be changed'",
    "resource-control.enabled": "PingCAP, Use Resource Control: not dynamic, restart TiKV",
    "storage.engine": "TiKV config template: can only be set when creating a cluster",
}
_OFFLINE_PREFIXES: dict[str, str] = {
    "raft-engine.": "TiKV source (src/config): the whole raft_engine section is #[online_config(skip)]",
}


_TIKV_SRC = "https://github.com/tikv/tikv/blob"


def _since(version: Version, path: str, why: str) -> tuple[Version, str]:
    tag = "v" + ".".join(map(str, version))
    return version, f"TiKV {tag} source ({_TIKV_SRC}/{tag}/{path}): {why}"


_RAFTSTORE = "components/raftstore/src/store/config.rs"
_TITAN_SINCE = _since((8, 0, 0), "src/config/mod.rs", "titan min-blob-size is no longer #[online_config(skip)]")
ONLINE_SINCE: dict[str, tuple[Version, str]] = {
    # v4.0.0's server registered no config manager for the storage module; v4.0.3's does (cmd/src/server.rs).
    "storage.block-cache.capacity": _since((4, 0, 3), "cmd/src/server.rs", "the storage module is changeable online"),
    "storage.scheduler-worker-pool-size": _since(
        (6, 0, 0), "src/storage/config.rs", "no longer #[online_config(skip)] (v5.x needs a restart)"
    ),
    # The readpool config manager is registered from v6.0.0 on (components/server/src/server.rs).
    **{
        key: _since((6, 0, 0), "components/server/src/server.rs", "the readpool module is changeable online")
        for key in ("readpool.unified.max-thread-count", "readpool.unified.auto-adjust-pool-size")
    },
    **{
        key: _since((5, 4, 0), _RAFTSTORE, "the apply/store batch systems became #[online_config(submodule)]")
        for key in (
            "raftstore.apply-pool-size",
            "raftstore.store-pool-size",
            "raftstore.apply-max-batch-size",
            "raftstore.store-max-batch-size",
        )
    },
    "raftstore.store-io-pool-size": _since(
        (6, 6, 0), _RAFTSTORE, "no longer #[online_config(skip)] (v5.3 to v6.5 need a restart)"
    ),
    **{
        key: _since((5, 0, 0), "src/config.rs", "the rate limiter is changeable online")
        for key in ("rocksdb.rate-bytes-per-sec", "rocksdb.rate-limiter-auto-tuned")
    },
    **{f"{db}.{cf}.titan.min-blob-size": _TITAN_SINCE for db, cfs in _DBS_CFS.items() for cf in cfs},
    **{
        f"storage.flow-control.{key}": _since((5, 2, 0), "src/storage/config.rs", "flow control was added")
        for key in (
            "enable",
            "memtables-threshold",
            "l0-files-threshold",
            "soft-pending-compaction-bytes-limit",
            "hard-pending-compaction-bytes-limit",
        )
    },
}


@dataclass(frozen=True)
class OnlineStatus:
    """Whether a key can change without a restart, whether that is known, and the source that says so."""

    online: bool
    known: bool
    source: str


def online_status(key: str, version: str | None = None) -> OnlineStatus:
    """Look up whether `key` can be changed online on TiKV `version`, and cite the source.

    An unknown or unparsable version is judged as the newest release: the SQL artefact says which keys that
    assumption covers (`version_assumptions`)."""
    parsed = parse_version(version)
    if parsed is not None and key in ONLINE_SINCE:
        since, source = ONLINE_SINCE[key]
        if parsed < since:
            tag = ".".join(map(str, parsed))
            return OnlineStatus(False, True, f"not online on TiKV v{tag}: {source}")
    if key in ONLINE_FROM_DOCS:
        return OnlineStatus(True, True, "PingCAP, Modify Configuration Dynamically")
    if key in ONLINE_FROM_CODE:
        return OnlineStatus(True, True, ONLINE_FROM_CODE[key])
    if key in OFFLINE:
        return OnlineStatus(False, True, OFFLINE[key])
    for prefix, source in _OFFLINE_PREFIXES.items():
        if key.startswith(prefix):
            return OnlineStatus(False, True, source)
    return OnlineStatus(False, False, "not in the online tables: treated as needing a rolling restart")


def version_assumptions(keys: list[str] | tuple[str, ...] | set[str], version: str | None) -> list[str]:
    """Name the keys judged online only because the TiKV version is unknown, with the release they need."""
    if parse_version(version) is not None:
        return []
    return [
        f"{key} is online only from TiKV v{'.'.join(map(str, ONLINE_SINCE[key][0]))}"
        for key in sorted(set(keys))
        if key in ONLINE_SINCE
    ]


def can_change_online(key: str, current: object, proposed: object, version: str | None = None) -> bool:
    """Say whether this particular change can go through SET CONFIG / tikv-ctl rather than a restart on TiKV
    `version` (None: the newest release)."""
    if isinstance(proposed, list | dict):
        # POST /config takes scalar values only (docs/reference/tikv-metrics.md#status-port: arrays are rejected).
        return False
    if key == "raftstore.store-io-pool-size" and (current == 0) != (proposed == 0):
        # PingCAP, "Modify Configuration Dynamically" (docs/reference/tikv-config.md#keys-and-defaults): "DO NOT modify this value from a non-zero value to 0 or from 0 to non-
        # zero".
        return False
    return online_status(key, version).online
