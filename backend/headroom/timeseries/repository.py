"""The one time-series repository: every read and write of points and rollups (layout: docs/timeseries.md).

The services ask here: the metrics panels (`choose_resolution`, `read_columns`, `read_points_many`), the
snapshot builder (`cluster_series`, `read_grid`), the collectors (`ensure_series`, `write_batches`), the
maintenance jobs (`drain_rollups`, `apply_retention`). No other module names the points or rollup tables
(tests/timeseries/test_timeseries_boundary.py).

`metric_points`: one row per (series, hour) holding 60 one-minute slots (bytea packed by
headroom.timeseries.codec: a presence bitmap and decimal deltas, ~2.2 bytes a point), in daily range partitions. `metric_rollups`: one row per (series, resolution, day) holding 288 five-minute or 24 hourly
slots of avg/max/min/count, in monthly partitions. Writes merge slot-wise (a new point wins, a slot
it lacks keeps its stored value), so a re-written window is a no-op and late points fill their slots. Rollups are kept off the write path: a write
queues the hours it changed in `metric_rollup_dirty`, one row per series and run of consecutive hours, and
`drain_rollups` (the timeseries.rollups job, every minute) expands the runs it claims and recomputes those hours
once they have settled (15-39 minutes after their end, by series; readers take the newest RAW_TAIL from raw
points).
Callers commit.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import uuid
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import numpy as np
from numpy.typing import NDArray
from psycopg import errors as pg_errors
from psycopg.copy import QueuedLibpqWriter
from sqlalchemy import Exists, exists, select, text
from sqlalchemy.orm import InstrumentedAttribute, Session

from headroom.domain.snapshot.align import Method
from headroom.platform.db import driver_connection, driver_cursor
from headroom.timeseries.copy_binary import HEADER as COPY_HEADER
from headroom.timeseries.copy_binary import TRAILER as COPY_TRAILER
from headroom.timeseries import codec
from headroom.timeseries.copy_binary import (
    decode_int8_array,
    decode_rollup_arrays,
    encode_packed_rows,
    encode_rollup_rows,
)
from headroom.timeseries.models import MetricSeries

SLOTS_PER_HOUR = 60
SLOT_SECONDS = 60
ROLLUP_SLOTS = {300: 288, 3600: 24}
# Hour rows per COPY message group: ~3 MB of binary COPY, so encoding and sending overlap in a few steps per write
# (Headroom choice, from bench/timeseries_bench.py).
COPY_SLICE_ROWS = 4000
# Growth of the first COPY groups of a write: encoding a group takes about a tenth of the time the server takes to
# insert it (bench/README.md, "Rollup queue as runs"), so a group four times the previous one is encoded before
# the server is done with that one (Headroom choice).
COPY_RAMP = 4


def hour_floor(ts: dt.datetime) -> dt.datetime:
    return ts.astimezone(dt.UTC).replace(minute=0, second=0, microsecond=0)


def day_floor(ts: dt.datetime) -> dt.datetime:
    return ts.astimezone(dt.UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def month_floor(ts: dt.datetime) -> dt.datetime:
    return day_floor(ts).replace(day=1)


def _next_month(ts: dt.datetime) -> dt.datetime:
    return (ts.replace(day=28) + dt.timedelta(days=4)).replace(day=1)


# --- partitions and retention ----------------------------------------------------------------------------


def points_partition_name(day: dt.datetime) -> str:
    return f"metric_points_p{day:%Y%m%d}"


def rollups_partition_name(month: dt.datetime) -> str:
    return f"metric_rollups_p{month:%Y%m}"


def ensure_partitions(db: Session, start: dt.datetime, end: dt.datetime) -> int:
    """Create the daily point partitions and monthly rollup partitions covering [start, end]."""
    wanted: list[tuple[str, str, dt.datetime, dt.datetime]] = []
    day = day_floor(start)
    while day <= end:
        nxt = day + dt.timedelta(days=1)
        wanted.append(("metric_points", points_partition_name(day), day, nxt))
        day = nxt
    month = month_floor(start)
    while month <= end:
        nxt = _next_month(month)
        wanted.append(("metric_rollups", rollups_partition_name(month), month, nxt))
        month = nxt
    # One round trip to learn which exist (every write calls this: through the driver's cursor, with the names as
    # one array literal, they are plain identifiers).
    with driver_cursor(db) as cur:
        cur.execute("SELECT relname FROM pg_class WHERE relname = ANY(CAST(%s AS name[])) AND relkind IN ('r', 'p')",
                    ("{" + ",".join(w[1] for w in wanted) + "}",))
        present = {row[0] for row in cur.fetchall()}
    return sum(_create_partition(db, parent, name, lo, hi) for parent, name, lo, hi in wanted if name not in present)


def _create_partition(db: Session, parent: str, name: str, lo: dt.datetime, hi: dt.datetime) -> int:
    # Two workers may race here; IF NOT EXISTS plus a transaction-scoped advisory lock keeps it clean.
    db.execute(text("SELECT pg_advisory_xact_lock(hashtext(:n))"), {"n": name})
    db.execute(
        text(
            f"CREATE TABLE IF NOT EXISTS {name} PARTITION OF {parent} "
            f"FOR VALUES FROM ('{lo.isoformat()}') TO ('{hi.isoformat()}')"
        )
    )
    return 1


def list_partitions(db: Session, parent: str) -> list[str]:
    rows = db.execute(
        text(
            "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
            "JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = :parent ORDER BY c.relname"
        ),
        {"parent": parent},
    )
    return [r[0] for r in rows]


def apply_retention(db: Session, *, now: dt.datetime, raw_days: int, rollup_days: int) -> list[str]:
    """Drop whole partitions older than the retention windows (raw points, then rollups); return their names."""
    dropped: list[str] = []
    raw_cutoff = day_floor(now) - dt.timedelta(days=raw_days)
    for name in list_partitions(db, "metric_points"):
        day = dt.datetime.strptime(name.rsplit("_p", 1)[1], "%Y%m%d").replace(tzinfo=dt.UTC)
        if day + dt.timedelta(days=1) <= raw_cutoff:
            db.execute(text(f"DROP TABLE {name}"))
            dropped.append(name)
    rollup_cutoff = day_floor(now) - dt.timedelta(days=rollup_days)
    for name in list_partitions(db, "metric_rollups"):
        month = dt.datetime.strptime(name.rsplit("_p", 1)[1], "%Y%m").replace(tzinfo=dt.UTC)
        if _next_month(month) <= rollup_cutoff:
            db.execute(text(f"DROP TABLE {name}"))
            dropped.append(name)
    return dropped


# --- series ----------------------------------------------------------------------------------------------


class SeriesKey(NamedTuple):
    """A series' identity, unit and period as a collector asks for it. A named tuple rather than a dataclass: a
    collector builds and hashes hundreds every minute, and a tuple's are done in C."""

    entity_kind: str
    entity_id: str
    metric: str
    unit: str
    labels: tuple[tuple[str, str], ...] = ()
    # The series' own period (CloudWatch: 300 for AWS/EC2 on basic monitoring and the EC2 balances, else 60):
    # readers turn a Sum into a rate with it and snapshots keep it (timeseries/snapshots.py).
    step_seconds: int = 60


CLUSTER_SCOPED_KINDS = ("cluster", "tikv_node")  # unique per cluster; instance/volume series unique per org


def ensure_series(
    db: Session, org_id: uuid.UUID, keys: Sequence[SeriesKey], *, cluster_id: uuid.UUID | None = None
) -> dict[SeriesKey, int]:
    """Return the ids of these series, creating the missing ones (idempotent under concurrency).

    One lookup per scope (see the metric_series indexes): node and cluster series are keyed by
    (org, cluster, ...), instance and volume series by (org, ...) with cluster_id following the latest mapping.
    Only the series that are missing or whose unit, period or cluster changed are then upserted: a collector
    ensures the same series every minute, and rewriting rows that would not change costs both sides CPU and WAL.
    A collector asks for the same keys minute after minute: the answer is kept per process with each row's
    version (xmin) and given again, after one statement checks that none of those rows changed since
    (_ensured_again).
    """
    digest = _keys_digest(keys)
    kept = _ENSURED.get((org_id, cluster_id, digest))
    if kept is not None and _ensured_again(db, org_id, kept):
        return dict(zip(keys, kept.ids, strict=True))
    _ENSURED.pop((org_id, cluster_id, digest), None)

    def identity(k: SeriesKey) -> tuple[str, str, str, tuple[tuple[str, str], ...]]:
        return (k.entity_kind, k.entity_id, k.metric, tuple(sorted(k.labels)))

    found: dict[tuple[str, str, str, tuple[tuple[str, str], ...]], int] = {}
    versions: dict[int, int] = {}
    written_in: int | None = None
    # ON CONFLICT DO UPDATE cannot touch one row twice in a statement: one entry per identity.
    unique = list({identity(k): k for k in keys}.values())
    for scoped in (True, False):
        group = [k for k in unique if (k.entity_kind in CLUSTER_SCOPED_KINDS) == scoped]
        if not group:
            continue
        columns: dict[str, list[Any]] = {
            "kinds": [k.entity_kind for k in group], "eids": [k.entity_id for k in group],
            "metrics": [k.metric for k in group], "units": [k.unit for k in group],
            "labels": [json.dumps(dict(k.labels), sort_keys=True) for k in group],
            "steps": [k.step_seconds for k in group]}
        scope = {"org": org_id, "cluster": cluster_id}
        current: set[int] = set()
        for position, sid, unchanged, xmin, xact in db.execute(text(_LOOKUP_SERIES[scoped]), scope | columns):
            written_in = written_in if xact is None else int(xact)
            if unchanged:  # positions count from 1 (WITH ORDINALITY)
                found[identity(group[position - 1])] = int(sid)
                versions[int(sid)] = int(xmin)
                current.add(position - 1)
        stale = [i for i in range(len(group)) if i not in current]
        if not stale:
            continue
        params = scope | {name: [values[i] for i in stale] for name, values in columns.items()}
        rows = db.execute(text(_UPSERT_SERIES[scoped]), params)
        for sid, kind, eid, metric, labels, xmin, xact in rows:
            found[(kind, eid, metric, tuple(sorted(labels.items())))] = int(sid)
            versions[int(sid)] = int(xmin)
            written_in = int(xact)
    ids = {key: found[identity(key)] for key in keys}
    if keys:
        if len(_ENSURED) >= _ENSURED_KEPT:
            _ENSURED.clear()
        _ENSURED[(org_id, cluster_id, digest)] = _Ensured(
            [ids[k] for k in keys], _id_array(versions), _id_array(versions.values()), len(versions), written_in)
    return ids


@dataclass(frozen=True)
class _Ensured:
    """What ensure_series answered for a list of keys: the ids in the keys' order, and the distinct rows with
    their xmin then (as bigint[] literals). `written_in`: this process's transaction that wrote some of those rows
    (pg_current_xact_id), or None: a row that transaction changes again keeps its xmin, so within it the
    versions prove nothing."""

    ids: list[int]
    rows: str
    xmins: str
    count: int
    written_in: int | None


# The answers kept, by (org, cluster, digest of the keys). Past this many (a process ensures a few lists per
# cluster: the demo's, each Prometheus query's) it starts afresh (Headroom choice: about 10 KB each).
_ENSURED: dict[tuple[uuid.UUID, uuid.UUID | None, bytes], _Ensured] = {}
_ENSURED_KEPT = 4096


def _keys_digest(keys: Sequence[SeriesKey]) -> bytes:
    """A digest of the keys in their order (every field, separated by a character no field holds)."""
    fields: list[str] = []
    for k in keys:
        fields += (k.entity_kind, k.entity_id, k.metric, k.unit, str(k.step_seconds), repr(k.labels))
    return hashlib.blake2b("\x1f".join(fields).encode(), digest_size=20).digest()


def _ensured_again(db: Session, org_id: uuid.UUID, kept: _Ensured) -> bool:
    """Whether every row of a kept answer is still the version it was (so the lookup would answer the same: the
    rows are unique per identity, and theirs, their unit, period and cluster are as they were)."""
    with driver_cursor(db) as cur:
        cur.execute(
            "SELECT (SELECT count(*) FROM unnest(CAST(%(rows)s AS bigint[]), CAST(%(xmins)s AS bigint[])) AS k(id, x) "
            "JOIN metric_series s ON s.id = k.id AND s.org_id = %(org)s AND s.xmin = CAST(CAST(k.x AS text) AS xid)), "
            "CAST(CAST(pg_current_xact_id_if_assigned() AS text) AS int8)",
            {"rows": kept.rows, "xmins": kept.xmins, "org": org_id},
        )
        row = cur.fetchone()
    assert row is not None
    return int(row[0]) == kept.count and (kept.written_in is None or row[1] != kept.written_in)


_SERIES_INPUT = (
    "unnest(CAST(:kinds AS text[]), CAST(:eids AS text[]), CAST(:metrics AS text[]), "
    "CAST(:units AS text[]), CAST(:labels AS text[]), CAST(:steps AS integer[])) "
)
# The row's version and this transaction's id if it has one (see _Ensured).
_VERSION_COLUMNS = (
    "CAST(CAST(s.xmin AS text) AS int8), CAST(CAST(pg_current_xact_id_if_assigned() AS text) AS int8)"
)
# (position in the input, id, whether the stored row already holds what the upsert would write, the row's version,
# this transaction's id) per stored series.
_LOOKUP_SERIES = {
    True: (
        f"SELECT k.ord, s.id, s.unit = k.unit AND s.step_seconds = k.step, {_VERSION_COLUMNS} FROM {_SERIES_INPUT}"
        "WITH ORDINALITY AS k(kind, eid, metric, unit, labels, step, ord) JOIN metric_series s "
        "ON s.org_id = :org AND s.cluster_id = CAST(:cluster AS uuid) AND s.entity_kind = k.kind "
        "AND s.entity_id = k.eid AND s.metric = k.metric AND s.labels = CAST(k.labels AS jsonb) "
        "AND s.entity_kind IN ('cluster', 'tikv_node')"
    ),
    False: (
        f"SELECT k.ord, s.id, s.unit = k.unit AND s.step_seconds = k.step "
        f"AND s.cluster_id IS NOT DISTINCT FROM COALESCE(CAST(:cluster AS uuid), s.cluster_id), {_VERSION_COLUMNS} FROM "
        f"{_SERIES_INPUT}WITH ORDINALITY AS k(kind, eid, metric, unit, labels, step, ord) JOIN metric_series s "
        "ON s.org_id = :org AND s.entity_kind = k.kind AND s.entity_id = k.eid AND s.metric = k.metric "
        "AND s.labels = CAST(k.labels AS jsonb) AND s.entity_kind IN ('instance', 'volume')"
    ),
}
_UPSERT_SERIES = {
    scoped: (
        "INSERT INTO metric_series (org_id, cluster_id, entity_kind, entity_id, metric, unit, labels, "
        "step_seconds) "
        "SELECT CAST(:org AS uuid), CAST(:cluster AS uuid), k.kind, k.eid, k.metric, k.unit, "
        "CAST(k.labels AS jsonb), k.step "
        f"FROM {_SERIES_INPUT}AS k(kind, eid, metric, unit, labels, step) "
        f"{conflict} RETURNING id, entity_kind, entity_id, metric, labels, CAST(CAST(xmin AS text) AS int8), "
        "CAST(CAST(pg_current_xact_id() AS text) AS int8)"
    )
    for scoped, conflict in (
        (True, "ON CONFLICT (org_id, cluster_id, entity_kind, entity_id, metric, labels) "
               "WHERE entity_kind IN ('cluster', 'tikv_node') DO UPDATE SET unit = EXCLUDED.unit, "
               "step_seconds = EXCLUDED.step_seconds"),
        (False, "ON CONFLICT (org_id, entity_kind, entity_id, metric, labels) "
                "WHERE entity_kind IN ('instance', 'volume') DO UPDATE SET unit = EXCLUDED.unit, "
                "step_seconds = EXCLUDED.step_seconds, "
                "cluster_id = COALESCE(EXCLUDED.cluster_id, metric_series.cluster_id)"),
    )
}


# --- points ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WriteResult:
    """points and rows: what the write carried (packed into hour rows); rows_written: the hour rows it inserted
    or changed (an unchanged re-written row costs a read, not a write)."""

    points: int
    rows: int
    dropped_nan: int
    dropped_unaligned: int
    rows_written: int = 0


@dataclass(frozen=True)
class HourRows:
    """Packed hour rows, column-wise: row i is series[i]'s hour hours[i] (hours since 1970-01-01 UTC) with its
    60 one-minute slots in values[i] (NaN = no point). Keys are unique."""

    series: NDArray[np.int64]
    hours: NDArray[np.int64]
    values: NDArray[np.float64]

    def __len__(self) -> int:
        return int(self.series.size)

    def take(self, index: NDArray[np.bool_] | NDArray[np.intp]) -> HourRows:
        return HourRows(self.series[index], self.hours[index], self.values[index])

    def keys(self) -> NDArray[np.int64]:
        return _row_keys(self.series, self.hours)

    def bucket_micros(self) -> NDArray[np.int64]:
        """bucket_at as PostgreSQL's binary timestamptz: microseconds since 2000-01-01 UTC."""
        return (self.hours * 3600 - _PG_EPOCH_SECONDS) * 1_000_000


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_PG_EPOCH_SECONDS = 946_684_800  # 2000-01-01 in Unix seconds: PostgreSQL's timestamp epoch
_HOUR_BITS = 24  # hours since 1970 fit in 24 bits until the year 3883


def _id_array(ids: Iterable[int]) -> str:
    """A bigint[] literal for `CAST(%s AS bigint[])`: one string to send instead of a Python dumper call per
    element (hundreds of ids per query on the write and read paths)."""
    return "{" + ",".join(map(str, map(int, ids))) + "}"


def _row_keys(series: NDArray[np.int64], hours: NDArray[np.int64]) -> NDArray[np.int64]:
    return (series.astype(np.int64) << _HOUR_BITS) | hours.astype(np.int64)


def _empty_rows() -> HourRows:
    return HourRows(np.empty(0, np.int64), np.empty(0, np.int64), np.empty((0, SLOTS_PER_HOUR)))


def _combine(series: NDArray[np.int64], hours: NDArray[np.int64], values: NDArray[np.float64]) -> HourRows:
    """Make keys unique: rows of the same (series, hour) merge slot-wise, a later row winning over an earlier one."""
    keys = _row_keys(series, hours)
    uniq, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    if uniq.size == keys.size:
        return HourRows(series, hours, values)
    merged = np.full((uniq.size, SLOTS_PER_HOUR), np.nan)
    for i, target in enumerate(inverse.tolist()):  # only when batches overlap: rare, so a plain loop
        row = values[i]
        merged[target] = np.where(np.isnan(row), merged[target], row)
    return HourRows(series[first], hours[first], merged)


def pack_points(points: Iterable[tuple[int, dt.datetime, float]]) -> tuple[HourRows, int, int]:
    """Group (series_id, ts, value) into hour rows of 60 slots; drop NaN/inf and off-minute timestamps."""
    sids: list[int] = []
    minutes: list[int] = []
    vals: list[float] = []
    nan = unaligned = 0
    for series_id, ts, value in points:
        if value is None or not math.isfinite(value):
            nan += 1
            continue
        if ts.second or ts.microsecond:
            unaligned += 1
            continue
        sids.append(series_id)
        minutes.append(int(ts.timestamp()) // SLOT_SECONDS)
        vals.append(float(value))
    if not sids:
        return _empty_rows(), nan, unaligned
    sid_arr, minute_arr = np.array(sids, dtype=np.int64), np.array(minutes, dtype=np.int64)
    hours = minute_arr // SLOTS_PER_HOUR
    keys = _row_keys(sid_arr, hours)
    uniq, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    grid = np.full((uniq.size, SLOTS_PER_HOUR), np.nan)
    grid[inverse.reshape(-1), minute_arr % SLOTS_PER_HOUR] = vals  # a repeated minute: the later point wins
    return HourRows(sid_arr[first], hours[first], grid), nan, unaligned


def write_points(db: Session, org_id: uuid.UUID, points: Iterable[tuple[int, dt.datetime, float]]) -> WriteResult:
    """Write individual (series_id, ts, value) points; see write_batches for whole series at once."""
    rows, nan, unaligned = pack_points(points)
    return _write_rows(db, org_id, rows, nan, unaligned)


class SeriesBatch(NamedTuple):
    """A collector's output for one series: values at start, start + step, ... (NaN or None = no point). A named
    tuple: hundreds are made every minute."""

    series_id: int
    start: dt.datetime
    step_seconds: int
    values: Sequence[float | None] | NDArray[np.float64]


def pack_batches(batches: Iterable[SeriesBatch]) -> tuple[HourRows, int, int]:
    """Scatter each batch into 60-slot hour rows (NaN = empty slot), vectorised per series.

    Returns the rows, the count of non-finite values dropped, and of points dropped for not falling on a
    minute boundary (a step that is not a whole number of minutes, or a start with seconds).
    """
    parts_sid: list[NDArray[np.int64]] = []
    parts_hour: list[NDArray[np.int64]] = []
    parts_vals: list[NDArray[np.float64]] = []
    nan = unaligned = 0
    batches = list(batches)
    # With one batch per series no two rows share a key (a batch's rows are distinct hours), so the rows need no
    # merging at the end.
    distinct = len({b.series_id for b in batches}) == len(batches)
    if distinct:
        # A collector's usual write: one batch per series, most of them on the same grid (start, period, length).
        # Each such group is placed with one strided copy for all its series at once; the rest go one by one.
        # With one batch per series no two rows share a key, so the order the groups come in does not matter.
        grids: dict[tuple[dt.datetime, int, int], list[SeriesBatch]] = {}
        for batch in batches:
            grids.setdefault((batch.start, batch.step_seconds, len(batch.values)), []).append(batch)
        batches = []
        for (start, step_seconds, size), group in grids.items():
            if len(group) == 1 or not _regular_grid(start, step_seconds, size):
                batches += group
                continue
            values = np.array([np.asarray(b.values, dtype=np.float64) for b in group])
            finite = None if codec.all_finite(values) else np.isfinite(values)  # None: no mask, the usual case
            if finite is not None:
                nan += int(values.size - finite.sum())
            first_minute = int((start.astimezone(dt.UTC) - _EPOCH).total_seconds()) // SLOT_SECONDS
            sids, hours, rows = _scatter_grid(np.array([b.series_id for b in group], dtype=np.int64), values,
                                              finite, first_minute, step_seconds // SLOT_SECONDS)
            parts_sid.append(sids)
            parts_hour.append(hours)
            parts_vals.append(rows)
    for batch in batches:
        values = np.asarray(batch.values, dtype=np.float64)
        if values.size == 0:
            continue
        start = batch.start.astimezone(dt.UTC)
        finite = np.isfinite(values)
        nan += int(values.size - finite.sum())
        if start.second or start.microsecond or batch.step_seconds % SLOT_SECONDS:
            unaligned += int(finite.sum())
            continue
        first_minute = int((start - _EPOCH).total_seconds()) // SLOT_SECONDS
        step = batch.step_seconds // SLOT_SECONDS
        if step > 0:
            packed = _scatter_regular(values, finite, first_minute, step)
            if packed is None:
                continue
            first_hour, grid, every_hour = packed
        else:  # a step of zero or less: never a collector's, kept exact (a repeated minute: the later point wins)
            minutes = first_minute + np.arange(values.size, dtype=np.int64) * step
            minutes, values = minutes[finite], values[finite]
            if minutes.size == 0:
                continue
            hours = minutes // SLOTS_PER_HOUR
            first_hour = int(hours[0])
            grid = np.full((int(hours[-1]) - first_hour + 1, SLOTS_PER_HOUR), np.nan)
            grid[hours - first_hour, minutes % SLOTS_PER_HOUR] = values
            every_hour = False
        if every_hour:
            parts_sid.append(np.full(grid.shape[0], batch.series_id, dtype=np.int64))
            parts_hour.append(first_hour + np.arange(grid.shape[0], dtype=np.int64))
            parts_vals.append(grid)
            continue
        occupied = np.flatnonzero(~np.isnan(grid).all(axis=1))
        parts_sid.append(np.full(occupied.size, batch.series_id, dtype=np.int64))
        parts_hour.append(first_hour + occupied.astype(np.int64))
        parts_vals.append(grid[occupied])
    if not parts_sid:
        return _empty_rows(), nan, unaligned
    if len(parts_sid) == 1:
        hour_rows = HourRows(parts_sid[0], parts_hour[0], parts_vals[0])
    else:
        hour_rows = HourRows(np.concatenate(parts_sid), np.concatenate(parts_hour), np.concatenate(parts_vals))
    return (hour_rows if distinct else _combine(hour_rows.series, hour_rows.hours, hour_rows.values)), nan, unaligned


def _regular_grid(start: dt.datetime, step_seconds: int, size: int) -> bool:
    """Whether batches of this start, period and length land on minute slots (what _scatter_grid places)."""
    at = start.astimezone(dt.UTC)
    return size > 0 and not (at.second or at.microsecond) and step_seconds > 0 and not step_seconds % SLOT_SECONDS


def _scatter_grid(sids: NDArray[np.int64], values: NDArray[np.float64], finite: NDArray[np.bool_] | None,
                  first_minute: int, step: int) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]:
    """Batches sharing one grid (values: one row per series, a point every `step` minutes from `first_minute`; a
    matrix of its own, `finite` None when every value is) as the hour rows that hold a point: the series, hours
    and slots of those rows, each series' in hour order."""
    count, size = values.shape
    first_hour = first_minute // SLOTS_PER_HOUR
    last_hour = (first_minute + (size - 1) * step) // SLOTS_PER_HOUR
    hours = last_hour - first_hour + 1
    offset = first_minute - first_hour * SLOTS_PER_HOUR
    if finite is None and step <= SLOTS_PER_HOUR:
        # No gaps and at most an hour between points: every hour from the first to the last holds a point of
        # every series, so the rows are the minute grid itself, and whole hours of minutes are `values` reshaped.
        if step == 1 and offset == 0 and size == hours * SLOTS_PER_HOUR:
            grid = values.reshape(count * hours, SLOTS_PER_HOUR)
        else:
            flat = np.full((count, hours * SLOTS_PER_HOUR), np.nan)
            flat[:, offset : offset + (size - 1) * step + 1 : step] = values
            grid = flat.reshape(count * hours, SLOTS_PER_HOUR)
        return np.repeat(sids, hours), np.tile(first_hour + np.arange(hours, dtype=np.int64), count), grid
    flat = np.full((count, hours * SLOTS_PER_HOUR), np.nan)
    flat[:, offset : offset + (size - 1) * step + 1 : step] = values if finite is None else \
        np.where(finite, values, np.nan)
    grid3 = flat.reshape(count, hours, SLOTS_PER_HOUR)
    row, hour = np.nonzero(~np.isnan(grid3).all(axis=2))
    return sids[row], first_hour + hour.astype(np.int64), grid3[row, hour]


def _scatter_regular(values: NDArray[np.float64], finite: NDArray[np.bool_], first_minute: int, step: int
                     ) -> tuple[int, NDArray[np.float64], bool] | None:
    """A regular batch (a point every `step` minutes from `first_minute`) as hour rows from its first to its last
    finite point: one strided copy into a flat minute array, no scatter by index. Returns (first hour, the rows,
    whether every row holds a point), or None if no value is finite."""
    if finite.all():
        lo, hi, gaps = 0, values.size - 1, False
    else:
        present = np.flatnonzero(finite)
        if not present.size:
            return None
        lo, hi, gaps = int(present[0]), int(present[-1]), True
    first_at = first_minute + lo * step
    first_hour = first_at // SLOTS_PER_HOUR
    last_hour = (first_minute + hi * step) // SLOTS_PER_HOUR
    flat = np.full((last_hour - first_hour + 1) * SLOTS_PER_HOUR, np.nan)
    offset = first_at - first_hour * SLOTS_PER_HOUR
    span = values[lo : hi + 1]
    flat[offset : offset + (span.size - 1) * step + 1 : step] = np.where(finite[lo : hi + 1], span, np.nan) \
        if gaps else span
    # Without gaps, a step of at most an hour puts a point in every hour from the first to the last.
    return first_hour, flat.reshape(-1, SLOTS_PER_HOUR), not gaps and step <= SLOTS_PER_HOUR


def _batch_hours(batch: SeriesBatch) -> tuple[int, int] | None:
    """The first and last hour (since 1970) a batch can touch, or None if it writes nothing (empty/unaligned)."""
    start = batch.start.astimezone(dt.UTC)
    n = len(batch.values)
    if not n or start.second or start.microsecond or batch.step_seconds % SLOT_SECONDS:
        return None
    first = int((start - _EPOCH).total_seconds()) // SLOT_SECONDS
    return first // SLOTS_PER_HOUR, (first + (n - 1) * (batch.step_seconds // SLOT_SECONDS)) // SLOTS_PER_HOUR


# One result row per query for a set of hour rows: the series ids and bucket times as array_send of aggregated
# arrays, the packed rows concatenated server-side with their lengths: a few frombuffer calls and one vectorised
# decode on the client instead of a Python object per row.
_HOUR_ROWS_AGGREGATE = (
    "array_send(array_agg(series_id ORDER BY series_id, bucket_at)), "
    "array_send(array_agg(bucket_at ORDER BY series_id, bucket_at)), "
    "array_send(array_agg(octet_length(vals)::int8 ORDER BY series_id, bucket_at)), "
    "string_agg(vals, ''::bytea ORDER BY series_id, bucket_at)"
)
HourParts = tuple[bytes, bytes, bytes, bytes]


# The hour rows of some series (`sids`, a bigint[] literal) in [lo, hi], as one result row (as _read_hours: no
# Python object per stored row or slot). One index lookup per series and partition whatever the statistics say:
# OFFSET 0 keeps the lateral subquery a scan of one series. Written as `series_id = ANY(...)`, the planner read
# every partition whole when it had no statistics yet (a backfill filling it), once per write into it, so a
# backfill's cost grew with the square of its rows (bench/README.md, "The existence query in a backfill").
STORED_ROWS_QUERY = (
    f"SELECT {_HOUR_ROWS_AGGREGATE} FROM unnest(CAST(%(sids)s AS bigint[])) AS k(id) CROSS JOIN LATERAL "
    "(SELECT series_id, bucket_at, vals FROM metric_points WHERE series_id = k.id "
    "AND bucket_at >= %(lo)s AND bucket_at <= %(hi)s OFFSET 0) AS p"
)


# STORED_ROWS_QUERY with each row's xmin (the transaction that wrote that version of it), in the same order.
STORED_VERSIONS_QUERY = (
    f"SELECT {_HOUR_ROWS_AGGREGATE}, array_send(array_agg(CAST(CAST(xmin AS text) AS int8) "
    "ORDER BY series_id, bucket_at)) FROM unnest(CAST(%(sids)s AS bigint[])) AS k(id) CROSS JOIN LATERAL "
    "(SELECT series_id, bucket_at, vals, xmin FROM metric_points WHERE series_id = k.id "
    "AND bucket_at >= %(lo)s AND bucket_at <= %(hi)s OFFSET 0) AS p"
)


# Series per query of the overlap read: 500 series x the window's hour rows (a collector's 10-minute overlap: 1-2
# rows, ~500 bytes each) keeps each result small; a re-run of a whole day is 500 x 24 rows = ~6 MB (Headroom
# choice, as READ_BACK_SERIES).
STORED_READ_SERIES = 500


def _stored_rows(db: Session, series: list[int], lo_hour: int, hi_hour: int) -> HourRows:
    """The hour rows of these series in [lo_hour, hi_hour] that exist already (the overlap window), with their
    slots (NaN = empty): the write compares against them so that rows it would not change are never sent."""
    return _stored_versions(db, series, lo_hour, hi_hour, versions=False)[0]


def _stored_versions(db: Session, series: list[int], lo_hour: int, hi_hour: int, *, versions: bool = True
                     ) -> tuple[HourRows, NDArray[np.int64]]:
    """_stored_rows, and each row's version (its xmin: the transaction that wrote it) when `versions`: a write
    that merged a row with what it read updates it only if it is still that version (_update_read_rows)."""
    parts: list[HourParts] = []
    xmins: list[NDArray[np.int64]] = []
    query = STORED_VERSIONS_QUERY if versions else STORED_ROWS_QUERY
    with driver_cursor(db, binary=True) as cur:
        # No JIT compilation for the rest of this (write) transaction: the planner's estimates for a partition
        # without statistics yet (a backfill filling it) put this lookup of a few rows over jit_above_cost, and
        # compiling it took 100-165 ms where the lookup takes 2 (bench/README.md, "The existence query in a
        # backfill"). Nothing a write runs has a use for it.
        cur.execute("SELECT set_config('jit', 'off', true)")
        for i in range(0, len(series), STORED_READ_SERIES):
            cur.execute(
                query,
                {"sids": _id_array(series[i : i + STORED_READ_SERIES]), "lo": _EPOCH + dt.timedelta(hours=lo_hour),
                 "hi": _EPOCH + dt.timedelta(hours=hi_hour)},
            )
            row = cur.fetchone()
            if row is not None and row[0] is not None:
                parts.append(row[:4])
                if versions:
                    xmins.append(decode_int8_array(row[4]))
    return _decode_hour_rows(parts), (np.concatenate(xmins) if xmins else np.empty(0, np.int64))


def _decode_parts(parts: Sequence[HourParts]) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]:
    """Unpack _HOUR_ROWS_AGGREGATE results: series ids, bucket times (microseconds since 2000-01-01) and the
    (rows x 60) slots (NaN = no point)."""
    if not parts:
        return np.empty(0, np.int64), np.empty(0, np.int64), np.empty((0, SLOTS_PER_HOUR))
    sids = [decode_int8_array(p[0]) for p in parts]
    micros = [decode_int8_array(p[1]) for p in parts]
    values = [codec.decode(p[3], decode_int8_array(p[2])) for p in parts]
    return np.concatenate(sids), np.concatenate(micros), np.concatenate(values)


def _decode_hour_rows(parts: Sequence[HourParts]) -> HourRows:
    sids, micros, values = _decode_parts(parts)
    return HourRows(sids, micros // 3_600_000_000 + _PG_EPOCH_SECONDS // 3600, values)


def _split_stored(rows: HourRows, stored: HourRows) -> tuple[HourRows, HourRows]:
    """Split rows into (those with no stored row, those with one); keys of `rows` are unique."""
    if not len(stored) or not len(rows):
        return rows, _empty_rows()
    found = np.isin(rows.keys(), stored.keys())
    return rows.take(~found), rows.take(found)


def _changing(overlap: HourRows, stored: HourRows) -> HourRows:
    """The rows of `overlap` (all stored already, unique keys) whose merge would change the stored row (a new
    slot, or a value that differs), with their merged slots: a new point wins, a slot it lacks keeps the stored
    value. The others would be written back as they are, so they are not sent at all."""
    return _changing_at(overlap, stored)[0]


def _changing_at(overlap: HourRows, stored: HourRows) -> tuple[HourRows, NDArray[np.intp]]:
    """_changing, and the index in `stored` of each row it returns."""
    if not len(overlap):
        return overlap, np.empty(0, np.intp)
    stored_keys = stored.keys()
    order = np.argsort(stored_keys)
    at = order[np.searchsorted(stored_keys, overlap.keys(), sorter=order)]
    old, new = stored.values[at], overlap.values
    merged = np.where(np.isnan(new), old, new)
    # Bit for bit, so that a -0.0 replacing a 0.0 is a change and a NaN slot equals a NaN slot.
    same = (merged.view(np.int64) == old.view(np.int64)) | (np.isnan(merged) & np.isnan(old))
    keep = ~same.all(axis=1)
    return HourRows(overlap.series[keep], overlap.hours[keep], merged[keep]), at[keep]


def _write_back(db: Session, org_id: uuid.UUID, overlap: HourRows, stored: HourRows,
                versions: NDArray[np.int64]) -> HourRows:
    """Merge `overlap` (rows all stored already, unique keys) into the stored rows read with their `versions`;
    return the rows that changed, with their merged slots.

    The usual case takes one statement: each row merged with what was read is written if it is still the version
    read. Only the rows another writer changed since (or that vanished) take _merge_rows, which reads them again
    locked and merges the new points into what it finds."""
    changing, at = _changing_at(overlap, stored)
    if not len(changing):
        return changing
    updated = _update_read_rows(db, changing, versions[at])
    if len(updated) == len(changing):
        return changing
    done = np.isin(changing.keys(), updated)
    left = np.isin(overlap.keys(), changing.keys()[~done])
    merged = _merge_rows(db, org_id, overlap.take(left))
    kept = changing.take(done)
    return HourRows(np.concatenate([kept.series, merged.series]), np.concatenate([kept.hours, merged.hours]),
                    np.concatenate([kept.values, merged.values]))


def _update_read_rows(db: Session, rows: HourRows, versions: NDArray[np.int64]) -> NDArray[np.int64]:
    """Write these merged rows over the stored ones whose version (xmin) is still `versions`, in one statement;
    return the keys (_row_keys) of the rows written.

    The rows are locked in key order first, as _locked_rows does (two writers cannot deadlock). A row another
    transaction updated or deleted since it was read no longer has that xmin (a new version is written by a new
    transaction), so it is left alone: when that transaction is still open, the lock waits for its end and then
    checks the row's newest version."""
    blob, lengths = codec.encode(rows.values)
    with driver_cursor(db, binary=True) as cur:
        cur.execute(
            "WITH k AS (SELECT * FROM unnest(CAST(%(sids)s AS bigint[]), CAST(%(hours)s AS bigint[]), "
            "CAST(%(xmins)s AS bigint[]), CAST(%(offsets)s AS int[]), CAST(%(lengths)s AS int[])) "
            "AS k(s, h, x, o, n)), "
            "locked AS (SELECT p.series_id, p.bucket_at, k.o, k.n FROM metric_points p JOIN k "
            "ON p.series_id = k.s AND p.bucket_at = to_timestamp(k.h * 3600) "
            "WHERE p.bucket_at >= %(lo)s AND p.bucket_at <= %(hi)s AND p.xmin = CAST(CAST(k.x AS text) AS xid) "
            "ORDER BY p.series_id, p.bucket_at FOR UPDATE OF p) "
            "UPDATE metric_points p SET vals = substring(%(blob)s FROM l.o + 1 FOR l.n) FROM locked l "
            "WHERE p.series_id = l.series_id AND p.bucket_at = l.bucket_at "
            "AND p.bucket_at >= %(lo)s AND p.bucket_at <= %(hi)s "
            "RETURNING p.series_id, CAST(extract(epoch FROM p.bucket_at) / 3600 AS int8)",
            {"sids": _id_array(rows.series.tolist()), "hours": _id_array(rows.hours.tolist()),
             "xmins": _id_array(versions.tolist()), "offsets": _id_array((np.cumsum(lengths) - lengths).tolist()),
             "lengths": _id_array(lengths.tolist()), "blob": blob,
             "lo": _EPOCH + dt.timedelta(hours=int(rows.hours.min())),
             "hi": _EPOCH + dt.timedelta(hours=int(rows.hours.max()))},
        )
        written = cur.fetchall()
    if not written:
        return np.empty(0, np.int64)
    return _row_keys(np.array([r[0] for r in written], np.int64), np.array([r[1] for r in written], np.int64))


def write_batches(
    db: Session, org_id: uuid.UUID, batches: Iterable[SeriesBatch], *, slice_rows: int = COPY_SLICE_ROWS
) -> WriteResult:
    """Write collector output: hour rows that don't exist yet go straight in with binary COPY (the new-data
    fast path); rows that exist (the overlap window) merge slot-wise through a staging table. Idempotent.

    The batches are packed and encoded a group at a time *inside* one COPY: while the server inserts a group, a
    writer thread sends it and this thread packs the next, so packing and encoding overlap the COPY instead of
    preceding it (bench/timeseries_bench.py). Any surprise (two batches of one series touching the same hour in
    different groups, or a racing writer) aborts the COPY's savepoint and takes the exact slower path.
    `slice_rows`: hour rows per group (and per COPY slice of that path).
    """
    batches = list(batches)
    # The hours a batch touches follow from its start, period and length: one computation per distinct grid.
    spans = [span for span in map(_batch_hours, {(b.start, b.step_seconds, len(b.values)): b for b in batches}.values())
             if span is not None]
    if not spans:
        rows, nan, unaligned = pack_batches(batches)
        return _write_rows(db, org_id, rows, nan, unaligned, slice_rows=slice_rows)
    lo_hour, hi_hour = min(s[0] for s in spans), max(s[1] for s in spans)
    ensure_partitions(db, _EPOCH + dt.timedelta(hours=lo_hour), _EPOCH + dt.timedelta(hours=hi_hour))
    stored, versions = _stored_versions(db, sorted({b.series_id for b in batches}), lo_hour, hi_hour)
    groups: list[list[SeriesBatch]] = [[]]
    size = 0
    # The server inserts nothing until the first group is packed and encoded, and then inserts each group while
    # the next one is encoded: the first groups are small (1/16 and 1/4 of slice_rows) so that it starts early.
    limit = max(1, slice_rows // COPY_RAMP**2)
    for batch in batches:
        if size >= limit * SLOTS_PER_HOUR:
            groups.append([])
            size = 0
            limit = min(slice_rows, limit * COPY_RAMP)
        groups[-1].append(batch)
        size += len(batch.values) * max(1, batch.step_seconds // SLOT_SECONDS)
    conn = driver_connection(db)
    nan = unaligned = npoints = nrows = 0
    fresh_parts: list[HourRows] = []
    overlap_parts: list[HourRows] = []

    def split(group: list[SeriesBatch]) -> HourRows:
        """Pack a group and count its points; keep the rows stored already for the merge, return the others."""
        nonlocal nan, unaligned, npoints, nrows
        rows, group_nan, group_unaligned = pack_batches(group)
        nan, unaligned = nan + group_nan, unaligned + group_unaligned
        if not len(rows):
            return rows
        fresh, overlap = _split_stored(rows, stored)
        if len(overlap):
            overlap_parts.append(overlap)
        # Packed slots are finite or NaN, so all finite means every slot holds a point.
        full = codec.all_finite(rows.values)
        npoints += rows.values.size if full else int(rows.values.size - np.count_nonzero(np.isnan(rows.values)))
        nrows += len(rows)
        return fresh

    # The first group is packed before the COPY opens: a write of one group that only rewrites stored hours (a
    # collector's minute, its new points landing in the open hour's rows) needs no COPY and no savepoint.
    first = split(groups[0])
    fresh_runs = None
    try:
        if len(groups) > 1 or len(first):
            with (
                conn.transaction(),  # a savepoint: only this COPY is undone on a conflict
                conn.cursor() as cur,
                cur.copy("COPY metric_points (series_id, bucket_at, org_id, vals) FROM STDIN (FORMAT BINARY)",
                         writer=QueuedLibpqWriter(cur)) as copy,
            ):
                copy.write(COPY_HEADER)
                for index, group in enumerate(groups):
                    # Each group is packed while the server inserts the previous one.
                    fresh = first if index == 0 else split(group)
                    if len(fresh):
                        copy.write(encode_packed_rows(fresh.series, fresh.bucket_micros(),
                                                      codec.encode_groups(fresh.values), org_id,
                                                      header=False, trailer=False))
                        fresh_parts.append(fresh)
                copy.write(COPY_TRAILER)
                # The queue runs of the new rows, while the server is still inserting them and checking their keys.
                fresh_runs = _hour_runs(*(np.concatenate(cols) for cols in zip(
                    *((p.series, p.hours) for p in fresh_parts), strict=True))) if fresh_parts else None
    except pg_errors.UniqueViolation:
        rows, nan, unaligned = pack_batches(batches)
        return _write_rows(db, org_id, rows, nan, unaligned, slice_rows=slice_rows)
    changed = list(fresh_parts)
    if overlap_parts:
        overlap = _combine(*(np.concatenate(cols) for cols in zip(
            *((p.series, p.hours, p.values) for p in overlap_parts), strict=True)))
        merged = _write_back(db, org_id, overlap, stored, versions)
        if len(merged):
            changed.append(merged)
            fresh_runs = None  # the merged rows' hours join the runs
    _mark_dirty(db, org_id, changed, runs=fresh_runs)
    return WriteResult(npoints, nrows, nan, unaligned, sum(len(c) for c in changed))


def _write_rows(db: Session, org_id: uuid.UUID, rows: HourRows, nan: int, unaligned: int, *,
                slice_rows: int = COPY_SLICE_ROWS) -> WriteResult:
    """Write packed rows (unique keys): the exact path, for point lists and for write_batches' fallback."""
    if not len(rows):
        return WriteResult(0, 0, nan, unaligned)
    lo_hour, hi_hour = int(rows.hours.min()), int(rows.hours.max())
    ensure_partitions(db, _EPOCH + dt.timedelta(hours=lo_hour), _EPOCH + dt.timedelta(hours=hi_hour))
    conn = driver_connection(db)
    # Which of these hour rows exist already (the overlap window)? Only those need conflict handling, and only
    # those the merge would change are sent.
    stored, versions = _stored_versions(db, np.unique(rows.series).tolist(), lo_hour, hi_hour)
    fresh, overlap = _split_stored(rows, stored)
    changed: list[HourRows] = []
    raced = False
    if len(fresh):
        try:
            # A savepoint: a racing writer's row aborts only this COPY, which then merges instead.
            with (
                conn.transaction(),
                conn.cursor() as cur,
                cur.copy("COPY metric_points (series_id, bucket_at, org_id, vals) FROM STDIN (FORMAT BINARY)",
                         writer=QueuedLibpqWriter(cur)) as copy,
            ):
                # Encode slice k+1 while a writer thread sends slice k and the server inserts it: the encoding
                # overlaps the COPY instead of preceding it.
                micros = fresh.bucket_micros()
                for lo_row in range(0, len(fresh), slice_rows):
                    part = slice(lo_row, lo_row + slice_rows)
                    copy.write(encode_packed_rows(fresh.series[part], micros[part],
                                                  codec.encode_groups(fresh.values[part]), org_id,
                                                  header=lo_row == 0, trailer=lo_row + slice_rows >= len(fresh)))
            changed.append(fresh)
        except pg_errors.UniqueViolation:
            raced = True
    if raced:  # another worker wrote some of these hours first: merge them all
        changed.append(_merge_rows(db, org_id, rows))
    elif len(overlap):
        changed.append(_write_back(db, org_id, overlap, stored, versions))
    # Rollups are recomputed off the write path: record which (series, hour) changed, in this transaction.
    _mark_dirty(db, org_id, changed)
    npoints = int(np.count_nonzero(~np.isnan(rows.values)))
    return WriteResult(npoints, len(rows), nan, unaligned, sum(len(c) for c in changed))


def _hour_runs(series: NDArray[np.int64], hours: NDArray[np.int64]
               ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """The (series, hour) pairs as runs of consecutive hours: each run's series, first hour and length, in
    (series, hour) order (repeated pairs count once)."""
    keys = _row_keys(series, hours)
    # A write's rows usually come in key order already (each series' hours in order, series in the batches'
    # order): one comparison pass instead of a sort.
    if keys.size > 1 and not bool((keys[1:] > keys[:-1]).all()):
        keys = np.unique(keys)
    sids, hrs = keys >> _HOUR_BITS, keys & ((1 << _HOUR_BITS) - 1)
    starts = np.ones(keys.size, dtype=bool)
    starts[1:] = (sids[1:] != sids[:-1]) | (hrs[1:] != hrs[:-1] + 1)
    first = np.flatnonzero(starts)
    return sids[first], hrs[first], np.diff(np.append(first, keys.size))


def _run_hours(sids: NDArray[np.int64], firsts: NDArray[np.int64], counts: NDArray[np.int64]
               ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Expand runs (series, first hour, length) into their (series, hour) pairs."""
    total = int(counts.sum())
    offset = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    return np.repeat(sids, counts), np.repeat(firsts, counts) + offset


def _queue_writes(runs: tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]],
                  queued: Sequence[tuple[int, int, int]]
                  ) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]]:
    """What a write's runs add to the queue rows it holds locked (`queued`: (series, first hour, hours) of the
    rows that overlap or adjoin the runs). Returns (rows to insert, rows to extend to a new length), both as
    (series, first hour, hours): the hours a queued row covers already add nothing; a gap right after a queued
    row extends it; any other gap is a new row. Existing rows are never deleted or moved (docs/timeseries.md:
    a writer waiting on a row must find its hours in the row's next version)."""
    by_series: dict[int, list[list[int]]] = {}
    for sid, first, n in sorted(set(queued)):
        by_series.setdefault(sid, []).append([first, first + n - 1])  # [first hour, last hour]
    inserts: list[tuple[int, int, int]] = []
    extended: dict[tuple[int, int], int] = {}

    def fill(sid: int, lo: int, hi: int, before: list[int] | None) -> None:
        if before is not None and before[1] == lo - 1:
            before[1] = hi  # the row's range in `by_series` grows too: a later run sees it
            extended[(sid, before[0])] = hi - before[0] + 1
        else:
            inserts.append((sid, lo, hi - lo + 1))

    for sid, lo, n in zip(*(a.tolist() for a in runs), strict=True):
        hi = lo + n - 1
        at, before = lo, None  # the first hour not covered yet, and the row that ends right before it
        for row in by_series.get(sid, ()):  # sorted by first hour
            if row[1] < at - 1:
                continue
            if row[0] > hi:
                break
            if row[0] > at:
                fill(sid, at, row[0] - 1, before)
            if row[1] >= at - 1:
                at, before = row[1] + 1, row
        if at <= hi:
            fill(sid, at, hi, before)
    return inserts, [(sid, first, n) for (sid, first), n in extended.items()]


def _covered(sids: NDArray[np.int64], firsts: NDArray[np.int64], counts: NDArray[np.int64],
             queued: Sequence[tuple[Any, Any, Any]]) -> bool:
    """Whether each run lies within a queued row of its series, with one queued row per series (a live write's
    usual case: its series' open hour is queued already until it settles); then the write queues nothing new."""
    q = np.array(queued, dtype=np.int64).reshape(-1, 3)
    order = np.argsort(q[:, 0], kind="stable")
    q_sids = q[order, 0]
    if q_sids.size > 1 and not bool((q_sids[1:] != q_sids[:-1]).all()):
        return False
    at = np.searchsorted(q_sids, sids)
    if bool((at >= q_sids.size).any()):
        return False
    row = order[at]
    return bool(((q[row, 0] == sids) & (q[row, 1] <= firsts) & (q[row, 1] + q[row, 2] >= firsts + counts)).all())


def _mark_dirty(db: Session, org_id: uuid.UUID, changed: Sequence[HourRows], *,
                runs: tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]] | None = None) -> None:
    """Queue the rollups of these rows' hours for drain_rollups: one queue row per series and run of
    consecutive hours, merged with the runs queued already.

    First the queued rows that overlap or adjoin the runs are locked (FOR UPDATE, in key order, so two writers
    cannot deadlock): until this transaction commits a drain skips them (SKIP LOCKED) instead of computing their
    hours without these points, and a row a drain has claimed makes this write wait for the drain's commit, after
    which the hours are queued again. Hours those rows cover add nothing; the others extend the row they follow
    or become a new row. `runs`: _hour_runs of the changed rows, when the caller has them already.
    """
    if not changed or not sum(len(c) for c in changed):
        return
    if runs is None:
        runs = _hour_runs(np.concatenate([c.series for c in changed]), np.concatenate([c.hours for c in changed]))
    sids, firsts, counts = runs
    with driver_cursor(db) as cur:
        # One round trip for the usual write (no queued row near its runs: a backfill, or live ingest with the
        # queue drained): the runs of series with no such row are inserted by the same statement that locks and
        # returns the rows near the others, which are then merged below.
        cur.execute(
            "WITH r AS (SELECT * FROM unnest(CAST(%(sids)s AS bigint[]), CAST(%(los)s AS bigint[]), "
            "CAST(%(ns)s AS int[])) AS r(s, lo, n)), "
            "locked AS (SELECT d.series_id, d.first_hour_at, d.hours FROM metric_rollup_dirty d JOIN r "
            "ON d.series_id = r.s AND d.first_hour_at <= to_timestamp((r.lo + r.n) * 3600) "
            "AND d.first_hour_at + d.hours * interval '1 hour' >= to_timestamp(r.lo * 3600) "
            "ORDER BY d.series_id, d.first_hour_at FOR UPDATE OF d), "
            "fresh AS (INSERT INTO metric_rollup_dirty (series_id, first_hour_at, hours, org_id) "
            "SELECT r.s, to_timestamp(r.lo * 3600), r.n, %(org)s FROM r "
            "WHERE NOT EXISTS (SELECT 1 FROM locked l WHERE l.series_id = r.s) ORDER BY r.s, r.lo "
            "ON CONFLICT (series_id, first_hour_at) DO UPDATE "
            "SET hours = greatest(metric_rollup_dirty.hours, EXCLUDED.hours), marked_at = now()) "
            "SELECT series_id, (extract(epoch FROM first_hour_at) / 3600)::bigint, hours FROM locked",
            {"sids": _id_array(sids.tolist()), "los": _id_array(firsts.tolist()), "ns": _id_array(counts.tolist()),
             "org": org_id},
        )
        queued = cur.fetchall()
        if not queued or _covered(sids, firsts, counts, queued):
            return
        queued = [(int(s), int(f), int(n)) for s, f, n in queued]
        near = np.isin(sids, np.array([q[0] for q in queued], dtype=np.int64))
        runs = (sids[near], firsts[near], counts[near])
        inserts, extended = _queue_writes(runs, queued)
        if extended:
            cur.execute(
                "UPDATE metric_rollup_dirty d SET hours = u.n, marked_at = now() "
                "FROM unnest(CAST(%(sids)s AS bigint[]), CAST(%(firsts)s AS bigint[]), CAST(%(ns)s AS int[])) "
                "AS u(s, f, n) WHERE d.series_id = u.s AND d.first_hour_at = to_timestamp(u.f * 3600)",
                {"sids": _id_array(e[0] for e in extended), "firsts": _id_array(e[1] for e in extended),
                 "ns": _id_array(e[2] for e in extended)},
            )
        if inserts:
            # A row starting at the same hour cannot be queued unseen (its writer changed that hour too, so the
            # two writes are serialised on the points row); the conflict clause keeps the insert total anyway.
            cur.execute(
                "INSERT INTO metric_rollup_dirty (series_id, first_hour_at, hours, org_id) "
                "SELECT s, to_timestamp(f * 3600), n, %(org)s FROM unnest(CAST(%(sids)s AS bigint[]), "
                "CAST(%(firsts)s AS bigint[]), CAST(%(ns)s AS int[])) AS p(s, f, n) ORDER BY s, f "
                "ON CONFLICT (series_id, first_hour_at) DO UPDATE "
                "SET hours = greatest(metric_rollup_dirty.hours, EXCLUDED.hours), marked_at = now()",
                {"org": org_id, "sids": _id_array(i[0] for i in inserts), "firsts": _id_array(i[1] for i in inserts),
                 "ns": _id_array(i[2] for i in inserts)},
            )


# Rounds of _merge_rows: a round only repeats for rows another writer inserted between its read and its insert,
# which the next round finds stored and locked (Headroom choice).
MERGE_ROUNDS = 3


def _merge_rows(db: Session, org_id: uuid.UUID, rows: HourRows) -> HourRows:
    """Merge rows slot-wise into the stored ones (inserting those not stored); return the rows that changed.

    The stored rows are read locked (FOR UPDATE, in key order), merged here and written back, so a concurrent
    writer of the same hours waits instead of being overwritten."""
    changed: list[HourRows] = []
    pending = rows
    for _ in range(MERGE_ROUNDS):
        stored = _locked_rows(db, pending)
        new, overlap = _split_stored(pending, stored)
        update = _changing(overlap, stored)
        if len(update):
            _stage(db, org_id, update)
            db.execute(text(
                "UPDATE metric_points p SET vals = s.vals FROM _points_stage s "
                "WHERE p.series_id = s.series_id AND p.bucket_at = s.bucket_at"))
            changed.append(update)
        if not len(new):
            break
        _stage(db, org_id, new)
        inserted = db.execute(text(
            "INSERT INTO metric_points (series_id, bucket_at, org_id, vals) "
            "SELECT series_id, bucket_at, org_id, vals FROM _points_stage "
            "ON CONFLICT (series_id, bucket_at) DO NOTHING "
            "RETURNING series_id, (extract(epoch FROM bucket_at) / 3600)::bigint")).all()
        done = np.isin(new.keys(), _row_keys(np.array([r[0] for r in inserted], np.int64),
                                             np.array([r[1] for r in inserted], np.int64)))
        changed.append(new.take(done))
        pending = new.take(~done)  # another writer inserted these meanwhile: merge them next round
        if not len(pending):
            break
    else:
        raise RuntimeError(f"{len(pending)} hour rows kept being inserted concurrently")
    if not changed:
        return _empty_rows()
    return HourRows(*(np.concatenate(cols) for cols in zip(*((c.series, c.hours, c.values) for c in changed),
                                                              strict=True)))


def _locked_rows(db: Session, rows: HourRows) -> HourRows:
    """The stored hour rows with these keys, locked until the transaction ends (in key order: no deadlock)."""
    with driver_cursor(db, binary=True) as cur:
        cur.execute(
            "WITH locked AS (SELECT p.series_id, p.bucket_at, p.vals FROM metric_points p "
            "JOIN unnest(CAST(%(sids)s AS bigint[]), CAST(%(hours)s AS bigint[])) AS k(s, h) "
            "ON p.series_id = k.s AND p.bucket_at = to_timestamp(k.h * 3600) "
            "WHERE p.bucket_at >= %(lo)s AND p.bucket_at <= %(hi)s "
            "ORDER BY p.series_id, p.bucket_at FOR UPDATE OF p) "
            f"SELECT {_HOUR_ROWS_AGGREGATE} FROM locked",
            {"sids": _id_array(rows.series.tolist()), "hours": _id_array(rows.hours.tolist()),
             "lo": _EPOCH + dt.timedelta(hours=int(rows.hours.min())),
             "hi": _EPOCH + dt.timedelta(hours=int(rows.hours.max()))},
        )
        row = cur.fetchone()
    return _decode_hour_rows([row] if row is not None and row[0] is not None else [])


def _stage(db: Session, org_id: uuid.UUID, rows: HourRows) -> None:
    """Put packed rows into the transaction's staging table (emptied first)."""
    with driver_cursor(db) as cur:
        cur.execute(
            "CREATE TEMP TABLE IF NOT EXISTS _points_stage (series_id bigint, bucket_at timestamptz, "
            "org_id uuid, vals bytea) ON COMMIT DELETE ROWS"
        )
        cur.execute("TRUNCATE _points_stage")
        stream = encode_packed_rows(rows.series, rows.bucket_micros(), codec.encode_groups(rows.values), org_id)
        with cur.copy("COPY _points_stage (series_id, bucket_at, org_id, vals) FROM STDIN (FORMAT BINARY)") as copy:
            copy.write(stream)


def read_points(
    db: Session, org_id: uuid.UUID, series_id: int, start: dt.datetime, end: dt.datetime
) -> list[tuple[dt.datetime, float]]:
    """Return the raw points of one of the org's series in [start, end)."""
    t, v = read_points_many(db, org_id, [series_id], start, end)[series_id]
    return [(_EPOCH + dt.timedelta(seconds=int(ts)), float(x)) for ts, x in zip(t.tolist(), v.tolist(), strict=True)]


# --- rollups ---------------------------------------------------------------------------------------------


def refresh_rollups(db: Session, start: dt.datetime, end: dt.datetime, series_ids: Sequence[int] | None = None) -> int:
    """Recompute the 5-minute and hourly rollups of the days touching [start, end) from the raw points.

    Writes only queue the (series, hour) pairs they change (drain_rollups computes those); use this to rebuild a
    window directly. Returns the number of rollup rows written.
    """
    first_day = day_floor(start)
    last_day = day_floor(end - dt.timedelta(microseconds=1))
    days = []
    day = first_day
    while day <= last_day:
        days.append(day)
        day += dt.timedelta(days=1)
    return _recompute_rollups(db, {d: (list(series_ids) if series_ids is not None else None) for d in days})


# Hours one drain transaction takes: 10,000 (series, hour) marks read at most 10,000 hour rows (~5 MB) and patch
# one 5-minute and one hourly row per (series, day) among them (an hour of live ingest settles one hour per
# series: ~25 demo clusters per batch); small enough to keep a transaction short, large enough to amortise the
# round trips. (Headroom choice, measured with bench/ingest_cost_bench.py.)
DRAIN_BATCH = 10_000
# Queue rows the claim's cursor fetches first; later fetches ask for about as many rows as the hours still wanted
# need at the mean run length seen so far, so a claim locks at most a row or two it does not take (Headroom
# choice: a backfill's runs are days long, a live series' one or two hours).
_CLAIM_FIRST_FETCH = 16
# How long after its end an hour is left to the collectors before its rollups are computed. Every collector
# re-reads the last 10 minutes each minute (their OVERLAP: late scrapes and CloudWatch's late points fill in), so
# an hour keeps changing until 10 minutes after its end; 5 minutes more covers a sweep that runs late. Until then
# every reader takes the hour from raw points (RAW_TAIL), so computing it earlier would be work nobody reads.
# Headroom choice; backend/tests/timeseries/test_rollup_settle.py checks it against the collectors' overlap and
# RAW_TAIL.
SETTLE = dt.timedelta(minutes=15)
# Each series waits SETTLE plus its own minute of SETTLE_SPREAD_MINUTES (series id mod 25): a fleet's hour then
# settles a 25th at a time over 25 minutes instead of all at a quarter past, when the 15-minute advice round also
# starts. At 1,000 clusters the whole hour's roll at once (380,000 hours, 2-3 minutes of the 2 cores' database)
# held the minute's ingest past its expiry (docs/scaling.md, "1,000 clusters"). Headroom choice: the last series
# settles 39 minutes after the hour's end, which leaves the drain 21 minutes before a reader takes the hour from
# stored rollups (RAW_TAIL; test_rollup_settle.py checks it).
SETTLE_SPREAD_MINUTES = 25
SETTLED_ALL = SETTLE + dt.timedelta(minutes=SETTLE_SPREAD_MINUTES - 1)  # every series' hour has settled by then


def settle_delay(series_id: int) -> dt.timedelta:
    """How long after its end an hour of this series settles."""
    return SETTLE + dt.timedelta(minutes=series_id % SETTLE_SPREAD_MINUTES)


def open_from_hour(now: dt.datetime) -> int:
    """The first hour (hours since 1970) that has not settled at `now` for the series that settle first: the
    drain takes only earlier hours (and of each series, those before its own open hour, `_open_hour_sql`)."""
    return int((now - SETTLE).timestamp()) // 3600


def _open_hour_sql(now_seconds: str) -> str:
    """SQL for a queue row's first open hour (hours since 1970) at `now_seconds` (a bound parameter, seconds since
    1970): settle_delay, per row."""
    return (f"((CAST({now_seconds} AS bigint) - 60 * ({int(SETTLE.total_seconds()) // 60} "
            f"+ mod(series_id, {SETTLE_SPREAD_MINUTES}))) / 3600)")


def drain_rollups(db: Session, *, now: dt.datetime, limit: int = DRAIN_BATCH,
                  org_id: uuid.UUID | None = None) -> int:
    """Recompute the rollup buckets of up to `limit` queued hours that have settled at `now` and take them off
    the queue; return how many.

    An hour settles settle_delay(series) after its end (15-39 minutes, spread over the series): until then the
    collectors may still rewrite it and every reader takes
    it from raw points, so the open hour is computed once when it settles rather than once a minute. The queue
    holds runs of consecutive hours; the claim takes whole settled runs in key order (series, first hour) and the
    settled first hours of a run that reaches into the open hours or crosses the limit, whose row keeps the rest.
    An hour's raw row holds its twelve 5-minute buckets and its hourly bucket whole, so each hour is recomputed
    from that one row and only those slots of the day's rollup rows change. Safe to run in parallel (SKIP
    LOCKED: each run goes to one drainer; runs a writer is still writing are left for the next drain). The caller
    commits; a rollback leaves the runs queued.
    """
    sids, firsts, counts = _claim_runs(db, limit, org_id, open_from_hour(now), int(now.timestamp()))
    if not sids.size:
        return 0
    # Runs never overlap when written by _mark_dirty; np.unique keeps an hour once even if they did.
    keys = np.unique(_row_keys(*_run_hours(sids, firsts, counts)))
    _patch_rollups(db, keys >> _HOUR_BITS, keys & ((1 << _HOUR_BITS) - 1))
    return int(keys.size)


def _claim_runs(db: Session, limit: int, org_id: uuid.UUID | None, open_from: int, now_seconds: int
                ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Take up to `limit` settled hours off the queue (each series' hours before its open hour at `now_seconds`,
    all of them before `open_from`, the earliest series' open hour): (series, first hour, hours) of the claimed
    runs.

    A cursor locks queue rows as it fetches them (FOR UPDATE SKIP LOCKED, in key order), so rows beyond the
    limit stay free for other drainers and writers; rows starting at or after
    `open_from` are not fetched (nor locked) at all. Whole runs are deleted; a run that reaches into the open
    hours or crosses the limit is cut, keeping its row (same series, later first hour) for the rest: a writer
    waiting on that row finds the remaining hours in its next version.
    """
    conn = driver_connection(db)
    scope = "AND org_id = %(org)s " if org_id is not None else ""
    claimed: list[tuple[int, int, int]] = []
    cuts: list[tuple[int, int, int]] = []  # (series, first hour, hours taken) of runs whose row keeps the rest
    wanted, fetched_rows, fetched_hours, fetch = limit, 0, 0, _CLAIM_FIRST_FETCH
    opens = _open_hour_sql("%(now)s")
    with conn.cursor(name="rollup_claim") as cur:
        cur.execute(
            f"SELECT series_id, (extract(epoch FROM first_hour_at) / 3600)::bigint, hours, {opens} "
            "FROM metric_rollup_dirty "
            f"WHERE first_hour_at < to_timestamp(%(open)s * 3600) {scope}"
            f"AND first_hour_at < to_timestamp({opens} * 3600) "
            "ORDER BY series_id, first_hour_at FOR UPDATE SKIP LOCKED",
            {"org": org_id, "open": open_from, "now": now_seconds},
        )
        while wanted > 0:
            rows = cur.fetchmany(fetch)
            for sid, first, n, opened in rows:
                if wanted <= 0:
                    break  # locked by this fetch but not taken: free again when the drain commits
                settled = min(int(n), int(opened) - int(first))
                take = min(settled, wanted)
                if take < n:
                    cuts.append((int(sid), int(first), take))
                else:
                    claimed.append((int(sid), int(first), int(n)))
                wanted -= take
            if len(rows) < fetch:
                break
            fetched_rows = fetched_rows + len(rows)
            fetched_hours = fetched_hours + sum(min(int(r[2]), int(r[3]) - int(r[1])) for r in rows)
            fetch = max(1, math.ceil(wanted * fetched_rows / fetched_hours))
    with conn.cursor() as cur:
        if claimed:
            cur.execute(
                "DELETE FROM metric_rollup_dirty d USING unnest(CAST(%(sids)s AS bigint[]), "
                "CAST(%(firsts)s AS bigint[])) AS k(s, f) "
                "WHERE d.series_id = k.s AND d.first_hour_at = to_timestamp(k.f * 3600)",
                {"sids": _id_array(c[0] for c in claimed), "firsts": _id_array(c[1] for c in claimed)},
            )
        if cuts:
            # Runs a writer queues never overlap, so no other row starts inside a cut one; should one (written by
            # hand), that run is taken whole instead of failing on the key.
            cur.execute(
                "UPDATE metric_rollup_dirty d SET first_hour_at = d.first_hour_at + c.n * interval '1 hour', "
                "hours = d.hours - c.n FROM unnest(CAST(%(sids)s AS bigint[]), CAST(%(firsts)s AS bigint[]), "
                "CAST(%(ns)s AS int[])) AS c(s, f, n) "
                "WHERE d.series_id = c.s AND d.first_hour_at = to_timestamp(c.f * 3600) "
                "AND NOT EXISTS (SELECT 1 FROM metric_rollup_dirty o WHERE o.series_id = c.s "
                "AND o.first_hour_at = to_timestamp((c.f + c.n) * 3600)) RETURNING c.s, c.f",
                {"sids": _id_array(c[0] for c in cuts), "firsts": _id_array(c[1] for c in cuts),
                 "ns": _id_array(c[2] for c in cuts)},
            )
            kept = {(int(s), int(f)) for s, f in cur.fetchall()}
            for sid, first, take in cuts:
                if (sid, first) in kept:
                    claimed.append((sid, first, take))
                    continue
                cur.execute(
                    "DELETE FROM metric_rollup_dirty WHERE series_id = %(s)s "
                    "AND first_hour_at = to_timestamp(%(f)s * 3600) RETURNING hours",
                    {"s": sid, "f": first},
                )
                whole = cur.fetchone()
                claimed.append((sid, first, int(whole[0]) if whole is not None else take))
    if not claimed:
        empty = np.empty(0, np.int64)
        return empty, empty, empty
    out = np.array(claimed, dtype=np.int64)
    return out[:, 0], out[:, 1], out[:, 2]


def _patch_rollups(db: Session, sids: NDArray[np.int64], hours: NDArray[np.int64]) -> None:
    """Recompute the rollup slots of these (series, hour) pairs from their raw hour rows.

    Each (series, day)'s marked hours are grouped into runs of consecutive hours; a run is one staged row per
    resolution holding its slots, and the day's rollup row takes exactly the run's slice (`avg[lo:hi]`). A day with
    several runs (a late point far from the live edge) takes them one round per run, since one UPDATE changes a
    row once. An hour with no raw row (its partition dropped by retention) keeps its rollups.
    """
    marked = _row_keys(sids, hours)
    days = hours // 24
    parts: list[HourRows] = []
    for day in np.unique(days).tolist():
        on_day = days == day
        rows = _stored_rows(db, np.unique(sids[on_day]).tolist(), int(hours[on_day].min()), int(hours[on_day].max()))
        parts.append(rows.take(np.isin(rows.keys(), marked[on_day])))
    rows = HourRows(*(np.concatenate(cols) for cols in zip(*((p.series, p.hours, p.values) for p in parts),
                                                            strict=True)))
    if not len(rows):
        return
    order = np.lexsort((rows.hours, rows.series))
    rows = rows.take(order)
    day_of = rows.hours // 24
    group_start = np.ones(len(rows), dtype=bool)
    group_start[1:] = (rows.series[1:] != rows.series[:-1]) | (day_of[1:] != day_of[:-1])
    run_start = group_start.copy()
    run_start[1:] |= rows.hours[1:] != rows.hours[:-1] + 1
    run_id = np.cumsum(run_start) - 1
    group_id = np.cumsum(group_start) - 1
    first_run_of_group = run_id[group_start]
    round_of = run_id - first_run_of_group[group_id]  # 0 for each day's first run, 1 for its second, ...
    five = _aggregate(rows.values.reshape(len(rows), 12, 5))
    hourly = _aggregate(rows.values.reshape(len(rows), 1, SLOTS_PER_HOUR))
    org_of = {int(sid): org for sid, org in db.execute(
        text("SELECT id, org_id FROM metric_series WHERE id = ANY(:ids)"),
        {"ids": np.unique(rows.series).tolist()})}
    ensure_partitions(db, _EPOCH + dt.timedelta(days=int(day_of.min())), _EPOCH + dt.timedelta(days=int(day_of.max())))
    for k in range(int(round_of.max()) + 1):
        take = round_of == k
        runs, slot_run = np.unique(run_id[take], return_inverse=True)
        first = np.flatnonzero(run_start)[runs]  # each run's first row
        run_series, run_days = rows.series[first], day_of[first]
        run_lo = rows.hours[first] % 24
        run_hi = run_lo + np.bincount(slot_run, minlength=runs.size) - 1
        hour_in_day = rows.hours[take] % 24
        stage = []
        for resolution, per_hour, (avg, mx, mn, cnt) in ((300, 12, five), (3600, 1, hourly)):
            slots = ROLLUP_SLOTS[resolution]
            # Whole-day arrays, empty outside the run: a day row that does not exist yet is inserted as it is.
            day_avg, day_max, day_min = (np.full((runs.size, slots), np.nan) for _ in range(3))
            day_cnt = np.zeros((runs.size, slots), np.int64)
            at = hour_in_day[:, None] * per_hour + np.arange(per_hour)
            for target, source in ((day_avg, avg), (day_max, mx), (day_min, mn), (day_cnt, cnt)):
                target[slot_run[:, None], at] = source[take]
            stage.append(encode_rollup_rows(
                run_series, resolution, (run_days * 86_400 - _PG_EPOCH_SECONDS) * 1_000_000,
                [org_of[s] for s in run_series.tolist()], day_avg, day_max, day_min, day_cnt,
                spans=(run_lo * per_hour + 1, (run_hi + 1) * per_hour)))
        _apply_patches(db, stage, _EPOCH + dt.timedelta(days=int(run_days.min())),
                       _EPOCH + dt.timedelta(days=int(run_days.max())))


def _apply_patches(db: Session, streams: Sequence[bytes], first_day: dt.datetime, last_day: dt.datetime) -> None:
    """Write staged rollup slices: a missing day row is inserted as staged (empty outside its slice), an existing
    one takes only its slice.

    The insert runs in key order with ON CONFLICT DO UPDATE ... WHERE false, which inserts the missing rows and
    locks the existing ones without writing them, so two drainers patching the same day (different hours) wait
    for each other in one order (no deadlock) and the second applies its slice to the first's committed row
    (no lost update).
    """
    with driver_cursor(db) as cur:
        cur.execute(
            "CREATE TEMP TABLE IF NOT EXISTS _rollup_patch (LIKE metric_rollups INCLUDING DEFAULTS, lo int, hi int) "
            "ON COMMIT DELETE ROWS"
        )
        cur.execute("TRUNCATE _rollup_patch")
        for stream in streams:
            with cur.copy(
                "COPY _rollup_patch (series_id, resolution_seconds, day_at, org_id, avg, max, min, cnt, lo, hi) "
                "FROM STDIN (FORMAT BINARY)"
            ) as copy:
                copy.write(stream)
        cur.execute(
            "WITH inserted AS (INSERT INTO metric_rollups "
            "(series_id, resolution_seconds, day_at, org_id, avg, max, min, cnt) "
            "SELECT series_id, resolution_seconds, day_at, org_id, avg, max, min, cnt FROM _rollup_patch "
            "ORDER BY series_id, resolution_seconds, day_at "
            "ON CONFLICT (series_id, resolution_seconds, day_at) DO UPDATE SET cnt = EXCLUDED.cnt WHERE false "
            "RETURNING series_id, resolution_seconds, day_at) "
            "DELETE FROM _rollup_patch p USING inserted i WHERE p.series_id = i.series_id "
            "AND p.resolution_seconds = i.resolution_seconds AND p.day_at = i.day_at"
        )
        cur.execute(
            "UPDATE metric_rollups r SET avg[p.lo:p.hi] = p.avg[p.lo:p.hi], max[p.lo:p.hi] = p.max[p.lo:p.hi], "
            "min[p.lo:p.hi] = p.min[p.lo:p.hi], cnt[p.lo:p.hi] = p.cnt[p.lo:p.hi] FROM _rollup_patch p "
            "WHERE r.series_id = p.series_id AND r.resolution_seconds = p.resolution_seconds "
            "AND r.day_at = p.day_at AND r.day_at >= %(d0)s AND r.day_at <= %(d1)s",
            {"d0": first_day, "d1": last_day},
        )


def rollups_pending(db: Session, org_id: uuid.UUID | None = None, *, now: dt.datetime) -> int:
    """How many (series, hour) marks of settled hours wait for drain_rollups at `now` (0 = every rollup a reader
    uses is current): the queued runs' hours before open_from_hour(now). The open hours, which every reader takes
    from raw points until they settle, are not a backlog."""
    opens = _open_hour_sql(":now")
    query = (f"SELECT coalesce(sum(least(hours, {opens} - extract(epoch FROM first_hour_at)::bigint / 3600)), 0) "
             "FROM metric_rollup_dirty WHERE first_hour_at < to_timestamp(:open * 3600) "
             f"AND first_hour_at < to_timestamp({opens} * 3600)"
             + (" AND org_id = :org" if org_id else ""))
    return int(db.execute(text(query), {"org": org_id, "open": open_from_hour(now),
                                        "now": int(now.timestamp())}).scalar_one())


# Series per read-back query: 500 series x 24 hour rows x 740 bytes = ~9 MB aggregated server-side per query
# (Headroom choice: bounded memory on both ends).
READ_BACK_SERIES = 500


def _read_days(
    db: Session, days: dict[dt.datetime, list[int] | None]
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]:
    """The raw hour rows of these days (all series, or the listed ones): series ids, bucket times (microseconds
    since 2000-01-01) and the (rows x 60) values (NaN = empty slot).

    Each query returns one row: ids and times as array_send of an aggregated array, and the slot arrays
    concatenated server-side (array_send; NULL slots as NaN so every row has one size). The client then does a
    few frombuffer calls instead of handling a message or a Python object per row.
    """
    parts: list[HourParts] = []
    with driver_cursor(db, binary=True) as cur:
        for day, sids in sorted(days.items()):
            groups: list[list[int] | None] = [None] if sids is None else [
                sorted(sids)[i : i + READ_BACK_SERIES] for i in range(0, len(sids), READ_BACK_SERIES)]
            for group in groups:
                # One day = one partition (static pruning).
                where = "bucket_at >= %(d0)s AND bucket_at < %(d1)s"
                params: dict[str, object] = {"d0": day, "d1": day + dt.timedelta(days=1)}
                if group is not None:
                    where += " AND series_id = ANY(CAST(%(sids)s AS bigint[]))"
                    params["sids"] = _id_array(group)
                cur.execute(
                    f"SELECT {_HOUR_ROWS_AGGREGATE} FROM metric_points WHERE {where}",
                    params,
                )
                row = cur.fetchone()
                if row is not None and row[0] is not None:
                    parts.append(row)
    return _decode_parts(parts)


def _aggregate(buckets: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64],
                                                     NDArray[np.float64], NDArray[np.int64]]:
    """avg, max, min and count of the present (non-NaN) minutes of each bucket: (..., minutes) -> (...)."""
    present = ~np.isnan(buckets)
    count = present.sum(axis=-1)
    total = np.where(present, buckets, 0.0).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        avg = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    maximum = np.fmax.reduce(buckets, axis=-1)  # fmax/fmin skip NaN; an empty bucket stays NaN
    minimum = np.fmin.reduce(buckets, axis=-1)
    return avg, maximum, minimum, count.astype(np.int64)


def _recompute_rollups(db: Session, days: dict[dt.datetime, list[int] | None]) -> int:
    if not days:
        return 0
    sids, micros, values = _read_days(db, days)
    if sids.size == 0:
        return 0
    ensure_partitions(db, min(days), max(days))
    pg_days = micros // 86_400_000_000  # days since 2000-01-01
    # One (series, day) grid of 1,440 minutes; each hour row drops into its hour of it.
    pair_keys = sids * 100_000 + pg_days
    pairs, pair_index = np.unique(pair_keys, return_inverse=True)
    grid = np.full((pairs.size, 24, SLOTS_PER_HOUR), np.nan)
    grid[pair_index, (micros % 86_400_000_000) // 3_600_000_000] = values
    pair_sids = pairs // 100_000
    day_micros = (pairs % 100_000) * 86_400_000_000
    org_of = {int(sid): org for sid, org in db.execute(
        text("SELECT id, org_id FROM metric_series WHERE id = ANY(:ids)"), {"ids": np.unique(pair_sids).tolist()})}
    orgs = [org_of[s] for s in pair_sids.tolist()]
    flat = grid.reshape(pairs.size, 1440)
    written = 0
    for resolution, slots in ROLLUP_SLOTS.items():
        avg, maximum, minimum, count = _aggregate(flat.reshape(pairs.size, slots, 1440 // slots))
        out = encode_rollup_rows(pair_sids, resolution, day_micros, orgs, avg, maximum, minimum, count)
        with driver_cursor(db) as cur:
            cur.execute(
                "CREATE TEMP TABLE IF NOT EXISTS _rollup_stage (LIKE metric_rollups INCLUDING DEFAULTS) "
                "ON COMMIT DELETE ROWS"
            )
            cur.execute("TRUNCATE _rollup_stage")
            with cur.copy(
                "COPY _rollup_stage (series_id, resolution_seconds, day_at, org_id, avg, max, min, cnt) "
                "FROM STDIN (FORMAT BINARY)"
            ) as copy:
                copy.write(out)
            cur.execute(
                "INSERT INTO metric_rollups (series_id, resolution_seconds, day_at, org_id, avg, max, min, cnt) "
                "SELECT series_id, resolution_seconds, day_at, org_id, avg, max, min, cnt FROM _rollup_stage "
                "ON CONFLICT (series_id, resolution_seconds, day_at) DO UPDATE "
                "SET avg = EXCLUDED.avg, max = EXCLUDED.max, min = EXCLUDED.min, cnt = EXCLUDED.cnt"
            )
            written += cur.rowcount
    return written


@dataclass(frozen=True)
class RollupPoint:
    ts: dt.datetime
    avg: float
    max: float
    min: float
    count: int


def read_rollup(
    db: Session, org_id: uuid.UUID, series_id: int, resolution: int, start: dt.datetime, end: dt.datetime
) -> list[RollupPoint]:
    """Return one of the org's series at 5-minute (300) or hourly (3600) resolution in [start, end)."""
    if resolution not in ROLLUP_SLOTS:
        raise ValueError(f"resolution must be one of {sorted(ROLLUP_SLOTS)}")
    result = db.execute(
        text(
            "SELECT r.day_at + (s.i - 1) * make_interval(secs => :res) AS ts, s.a, s.mx, s.mn, s.c "
            "FROM metric_rollups r CROSS JOIN LATERAL unnest(r.avg, r.max, r.min, r.cnt) WITH ORDINALITY "
            "AS s(a, mx, mn, c, i) "
            "WHERE r.org_id = :org AND r.series_id = :sid AND r.resolution_seconds = :res "
            "AND r.day_at >= :d0 AND r.day_at < :end AND s.c > 0 ORDER BY ts"
        ),
        {"org": org_id, "sid": series_id, "res": resolution, "d0": day_floor(start), "end": end},
    )
    return [RollupPoint(ts, float(a), float(mx), float(mn), int(c)) for ts, a, mx, mn, c in result if start <= ts < end]


@dataclass(frozen=True)
class RollupColumns:
    """One series at one resolution, column-wise: epoch seconds and the aggregates (empty buckets left out)."""

    epoch_seconds: NDArray[np.int64]
    avg: NDArray[np.float64]
    max: NDArray[np.float64]
    min: NDArray[np.float64]
    count: NDArray[np.int64]

    def __len__(self) -> int:
        return int(self.epoch_seconds.size)


def _empty_columns() -> RollupColumns:
    return RollupColumns(np.empty(0, np.int64), np.empty(0), np.empty(0), np.empty(0), np.empty(0, np.int64))


_EMPTY_COLUMNS = _empty_columns()  # shared by every series without data in a read (size 0: nothing to mutate)


def read_rollups(
    db: Session,
    org_id: uuid.UUID,
    series_ids: Sequence[int],
    resolution: int,
    start: dt.datetime,
    end: dt.datetime,
) -> dict[int, RollupColumns]:
    """Read many of the org's series at one resolution in one query (a dashboard chart or a cluster view).

    The packed day rows (a handful of rows instead of thousands of points) travel as one binary COPY and are
    unpacked with numpy.
    """
    if resolution not in ROLLUP_SLOTS:
        raise ValueError(f"resolution must be one of {sorted(ROLLUP_SLOTS)}")
    lo, hi = int(start.timestamp()), int(end.timestamp())
    slots = ROLLUP_SLOTS[resolution]
    # One result row: the day rows' arrays in their binary send format, concatenated server-side into one bytea
    # (array_send is what binary results use), so the client unpacks them with one numpy frombuffer instead of
    # building a Python object per element (or receiving one COPY message per row).
    with driver_cursor(db, binary=True) as cur:
        cur.execute(
            # No ORDER BY in the aggregates (a sort of the wide rows costs the server more than numpy's
            # argsort below): every aggregate of one Agg node sees the rows in the same order.
            "SELECT array_agg(series_id), array_agg(extract(epoch FROM day_at)::bigint), "
            "string_agg(array_send(avg) || array_send(max) || array_send(min) || array_send(cnt), ''::bytea) "
            "FROM metric_rollups "
            "WHERE org_id = %(org)s AND series_id = ANY(CAST(%(sids)s AS bigint[])) AND resolution_seconds = %(res)s "
            "AND day_at >= %(d0)s AND day_at < %(end)s",
            {"org": org_id, "sids": _id_array(series_ids), "res": resolution,
             "d0": day_floor(start), "end": end},
        )
        row_sids, row_days, packed = cur.fetchone() or (None, None, None)
    out: dict[int, RollupColumns] = dict.fromkeys(series_ids, _EMPTY_COLUMNS)
    if not row_sids or packed is None:
        return out
    sids, days = np.array(row_sids, dtype=np.int64), np.array(row_days, dtype=np.int64)
    avg, mx, mn, counts = decode_rollup_arrays(packed, sids.size, slots)
    order = np.lexsort((days, sids))  # by series, then day
    sids, days, avg, mx, mn, counts = sids[order], days[order], avg[order], mx[order], mn[order], counts[order]
    stamps = days[:, None] + np.arange(slots, dtype=np.int64) * resolution
    # Unpack every day row at once: (rows x slots) matrices, one mask, then one split per series.
    keep = (counts > 0) & (stamps >= lo) & (stamps < hi)
    owner = np.broadcast_to(sids[:, None], keep.shape)[keep]
    if not owner.size:
        return out
    cuts = np.flatnonzero(np.diff(owner)) + 1
    owners = owner[np.concatenate([[0], cuts])].tolist()
    bounds = [0, *cuts.tolist(), int(owner.size)]
    t, a, x, n, c = stamps[keep], avg[keep], mx[keep], mn[keep], counts[keep]
    for i, sid in enumerate(owners):
        lo_i, hi_i = bounds[i], bounds[i + 1]
        out[sid] = RollupColumns(t[lo_i:hi_i], a[lo_i:hi_i], x[lo_i:hi_i], n[lo_i:hi_i], c[lo_i:hi_i])
    return out


def backfill_hourly_rollups(
    db: Session, org_id: uuid.UUID, batches: Iterable[SeriesBatch], native_steps: Mapping[int, int],
    sums: Collection[int],
) -> int:
    """Write hourly rollup rows for history that has no raw points (batches at a 3600 s step): a Sum's hour is
    stored as the average of its native-step points (hour total × native step / 3600, as read_rollup_grid reads
    it back), other series as the hour's value. Existing rows are kept (ON CONFLICT DO NOTHING): a day computed
    from raw points wins. Returns the day rows offered."""
    rows: dict[tuple[int, dt.datetime], list[float | None]] = {}
    for batch in batches:
        if batch.step_seconds != 3600:
            raise ValueError("backfill_hourly_rollups takes hourly batches")
        native = native_steps[batch.series_id]
        scale = native / 3600.0 if batch.series_id in sums else 1.0
        for i, value in enumerate(batch.values):
            if value is None or not math.isfinite(float(value)):
                continue
            at = batch.start + dt.timedelta(hours=i)
            slots = rows.setdefault((batch.series_id, day_floor(at)), [None] * 24)
            slots[at.hour] = float(value) * scale
    if not rows:
        return 0
    ensure_partitions(db, min(d for _, d in rows), max(d for _, d in rows) + dt.timedelta(days=1))
    # The packed rollup arrays hold no NULL (their readers unpack fixed-size elements): an empty hour is a 0 with
    # a count of 0, as the rollup job writes it.
    params = [
        {"sid": sid, "day": day, "org": org_id, "vals": [0.0 if v is None else v for v in vals],
         "cnt": [0 if v is None else 3600 // native_steps[sid] for v in vals]}
        for (sid, day), vals in rows.items()
    ]
    db.execute(
        text(
            "INSERT INTO metric_rollups (series_id, resolution_seconds, day_at, org_id, avg, max, min, cnt) "
            "VALUES (:sid, 3600, :day, :org, :vals, :vals, :vals, CAST(:cnt AS smallint[])) "
            "ON CONFLICT DO NOTHING"
        ),
        params,
    )
    return len(params)


# --- series lookups and window reads: the services (snapshots, metrics) ask here ---------------------------


@dataclass(frozen=True)
class StoredSeries:
    """One stored series: its id and what it is (the metric_series row)."""

    id: int
    entity_kind: str
    entity_id: str
    metric: str
    unit: str
    labels: dict[str, str]
    step_seconds: int


SeriesIdentity = tuple[str, str, str]  # (entity_kind, entity_id, metric) of an unlabelled series


def cluster_series(db: Session, org_id: uuid.UUID, cluster_id: uuid.UUID) -> list[StoredSeries]:
    """Return every series the org stores for one cluster (its nodes', instances' and volumes')."""
    rows = db.execute(
        text(
            "SELECT id, entity_kind::text, entity_id, metric, unit, labels, step_seconds FROM metric_series "
            "WHERE org_id = :org AND cluster_id = :cluster"
        ),
        {"org": org_id, "cluster": cluster_id},
    )
    return [StoredSeries(int(sid), kind, eid, metric, unit, dict(labels or {}), int(step or 60))
            for sid, kind, eid, metric, unit, labels, step in rows]


def find_series(db: Session, org_id: uuid.UUID, identities: Sequence[SeriesIdentity]) -> dict[SeriesIdentity, StoredSeries]:
    """Return the org's unlabelled series with these (entity_kind, entity_id, metric); missing ones are absent."""
    if not identities:
        return {}
    rows = db.execute(
        text("SELECT id, entity_kind::text, entity_id, metric, unit, step_seconds FROM metric_series "
             "WHERE org_id = :org AND entity_id = ANY(:eids) AND metric = ANY(:metrics) AND labels = '{}'::jsonb"),
        {"org": org_id, "eids": sorted({i[1] for i in identities}), "metrics": sorted({i[2] for i in identities})},
    )
    wanted = set(identities)
    out: dict[SeriesIdentity, StoredSeries] = {}
    for sid, kind, eid, metric, unit, step in rows:
        if (kind, eid, metric) in wanted:
            out[(kind, eid, metric)] = StoredSeries(int(sid), kind, eid, metric, str(unit), {}, int(step or 60))
    return out


def series_ids(
    db: Session, org_id: uuid.UUID, entity_kind: str, metric: str, entity_ids: Iterable[str]
) -> list[int]:
    """Return the ids of the org's series of one metric on these entities (any labels)."""
    return list(
        db.scalars(
            select(MetricSeries.id).where(
                MetricSeries.org_id == org_id,
                MetricSeries.entity_kind == entity_kind,
                MetricSeries.metric == metric,
                MetricSeries.entity_id.in_(list(entity_ids)),
            )
        )
    )


def entity_series(
    db: Session, org_id: uuid.UUID, entity_ids: Iterable[str]
) -> list[tuple[str, str, str, int, uuid.UUID | None, int]]:
    """Return (entity_kind, entity_id, metric, id, cluster_id, step_seconds) of the org's unlabelled series on these
    entities."""
    rows = db.execute(text(
        "SELECT entity_kind, entity_id, metric, id, cluster_id, step_seconds FROM metric_series WHERE org_id = :org "
        "AND labels = '{}'::jsonb AND entity_id = ANY(:eids)"), {"org": org_id, "eids": sorted(set(entity_ids))})
    return [(k, e, m, int(i), c, int(step)) for k, e, m, i, c, step in rows]


def rename_entity(db: Session, org_id: uuid.UUID, entity_kind: str, old_id: str, new_id: str) -> int:
    """Give an org's instance or volume series another entity ID (their points and rollups stay theirs); return how
    many series were renamed."""
    if entity_kind in CLUSTER_SCOPED_KINDS:
        raise ValueError("only instance and volume series are renamed")
    moved = db.execute(text("UPDATE metric_series SET entity_id = :new WHERE org_id = :org AND entity_kind = "
                            ":kind AND entity_id = :old"),
                       {"new": new_id, "org": org_id, "kind": entity_kind, "old": old_id})
    return int(moved.rowcount or 0)  # type: ignore[attr-defined]


def move_series(db: Session, series: Sequence[int], cluster_id: uuid.UUID) -> None:
    """Attach these (instance or volume) series to the cluster their entity now serves."""
    db.execute(text("UPDATE metric_series SET cluster_id = :c WHERE id = ANY(:ids)"), {"c": cluster_id, "ids": list(series)})


def set_step_seconds(db: Session, series: Sequence[int], step_seconds: int) -> None:
    """Record that these series are sampled every `step_seconds` (e.g. 300: EC2 basic monitoring)."""
    db.execute(text("UPDATE metric_series SET step_seconds = :step WHERE id = ANY(:ids)"),
               {"step": step_seconds, "ids": list(series)})


def has_series(cluster_id: InstrumentedAttribute[uuid.UUID]) -> Exists:
    """A condition for the caller's query: the cluster (its id column) has a stored series."""
    return exists().where(MetricSeries.cluster_id == cluster_id)


RawColumns = tuple[NDArray[np.int64], NDArray[np.float64]]  # (epoch seconds, values) of the present points


# Series per query of read_points_many: 200 series x 168 hour rows (a 7-day snapshot window) x ~490 bytes = ~16 MB
# aggregated server-side per query (Headroom choice: bounded memory on both ends, as READ_BACK_SERIES).
READ_MANY_SERIES = 200


def read_points_many(
    db: Session, org_id: uuid.UUID, series_ids: Sequence[int], start: dt.datetime, end: dt.datetime
) -> dict[int, RawColumns]:
    """Return the raw 1-minute points of many of the org's series in [start, end), column-wise.

    Every requested series is in the result (empty arrays when it has no point in the window). Like the rollup
    drain's read-back, each query returns one row: the series ids and hour times as array_send of aggregated
    arrays and the hour rows' slots concatenated server-side (NULL slots as NaN), unpacked with a few numpy
    frombuffer calls instead of a Python object per row or per point.
    """
    out: dict[int, RawColumns] = {sid: (np.empty(0, np.int64), np.empty(0)) for sid in series_ids}
    for sids, stamps, vals, keep in _points_in_window(db, org_id, series_ids, start, end):
        owner = np.broadcast_to(sids[:, None], keep.shape)[keep]  # sorted: rows come by series, then hour
        t, v = stamps[keep], vals[keep]
        cuts = np.flatnonzero(np.diff(owner)) + 1
        for part_t, part_v, part_owner in zip(np.split(t, cuts), np.split(v, cuts), np.split(owner, cuts),
                                              strict=True):
            if part_owner.size:
                out[int(part_owner[0])] = (part_t, part_v)
    return out


def _points_in_window(
    db: Session, org_id: uuid.UUID, series_ids: Sequence[int], start: dt.datetime, end: dt.datetime
) -> Iterator[tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64], NDArray[np.bool_]]]:
    """The hour rows of the series over [start, end), a query's worth at a time (READ_MANY_SERIES series): each
    row's series id, its slots' epoch seconds and values (rows x 60, by series then hour) and which slots hold a
    point inside the window."""
    if not series_ids:
        return
    ids = sorted(set(series_ids))
    parts: list[HourParts] = []
    with driver_cursor(db, binary=True) as cur:
        for i in range(0, len(ids), READ_MANY_SERIES):
            cur.execute(
                f"SELECT {_HOUR_ROWS_AGGREGATE} FROM metric_points "
                "WHERE org_id = %(org)s AND series_id = ANY(CAST(%(sids)s AS bigint[])) "
                "AND bucket_at >= %(lo)s AND bucket_at < %(hi)s",
                {"org": org_id, "sids": _id_array(ids[i : i + READ_MANY_SERIES]), "lo": hour_floor(start), "hi": end},
            )
            row = cur.fetchone()
            if row is not None and row[0] is not None:
                parts.append(row)
    lo, hi = int(start.timestamp()), int(end.timestamp())
    for part in parts:
        sids, micros, vals = _decode_parts([part])
        hours = micros // 1_000_000 + _PG_EPOCH_SECONDS  # timestamptz: micros since 2000
        stamps = hours[:, None] + np.arange(SLOTS_PER_HOUR, dtype=np.int64) * SLOT_SECONDS
        yield sids, stamps, vals, np.isfinite(vals) & (stamps >= lo) & (stamps < hi)


Aggregation = Method  # how a coarser step combines raw points: align.method_of(statistic)


def read_grid(
    db: Session,
    org_id: uuid.UUID,
    series: Mapping[int, Aggregation],
    start: dt.datetime,
    end: dt.datetime,
    step_seconds: int,
) -> dict[int, NDArray[np.float64]]:
    """Return series on the regular grid start, start + step, ... < end (NaN = no point in that step).

    Raw 1-minute points, never rollups (a snapshot's rules look at minutes at a ceiling, which 5-minute
    averages would smooth away); a step above 60 s aggregates each step's points with the series' aggregation.
    Series without a point in the window are left out. `start` must be on a minute, `step_seconds` a multiple
    of 60.
    """
    n = int((end - start).total_seconds()) // step_seconds
    origin = int(start.timestamp())
    out: dict[int, NDArray[np.float64]] = {}
    # Every series of a query at once: its points placed on one (series x steps) matrix by flat index, which
    # keeps each step's points in time order (a sum adds them in the order the per-series loop did).
    for sids, stamps, vals, keep in _points_in_window(db, org_id, list(series), start, end):
        owners, row_of = np.unique(sids, return_inverse=True)
        point_row = np.broadcast_to(row_of.reshape(-1, 1), keep.shape)[keep]
        index, v = (stamps[keep] - origin) // step_seconds, vals[keep]
        inside = index < n
        point_row, index, v = point_row[inside], index[inside], v[inside]
        flat = point_row * n + index
        size = owners.size * n
        grid = np.full(size, np.nan)
        if step_seconds == 60:
            grid[flat] = v
        else:
            count = np.bincount(flat, minlength=size)
            how = np.array([series[int(sid)] for sid in owners.tolist()])
            by_step = np.repeat(how, n)  # each matrix cell's aggregation
            present = count > 0
            total = np.bincount(flat, weights=v, minlength=size)
            mean = present & (by_step == "mean")
            grid[mean] = total[mean] / count[mean]
            summed = present & (by_step == "sum")
            grid[summed] = total[summed]
            for extreme, ufunc, initial in (("min", np.minimum, np.inf), ("max", np.maximum, -np.inf)):
                chosen = present & (by_step == extreme)
                if chosen.any():
                    acc = np.full(size, initial)
                    ufunc.at(acc, flat, v)
                    grid[chosen] = acc[chosen]
        rows = grid.reshape(owners.size, n)
        seen = np.bincount(point_row, minlength=owners.size) > 0  # a series without a point in the window is left out
        for r in np.flatnonzero(seen).tolist():
            out[int(owners[r])] = rows[r]
    return out


# Resolution bands of a chart (the metrics brief): raw 1-minute points up to 6 h (360 points), 5-minute rollups
# up to 8 days (2,304 points), hourly beyond (30 days = 720 points): a chart never carries more than ~2,300 points.
RAW_MAX_WINDOW = dt.timedelta(hours=6)
FIVE_MINUTE_MAX_WINDOW = dt.timedelta(days=8)
# The newest 2 hours of a rollup window are rebuilt from raw points: drain_rollups computes an hour only once it
# has settled (15-39 minutes after its end by series, SETTLE and SETTLE_SPREAD_MINUTES; at most 1 h 39 min after
# its start), so the stored rollups a read takes (buckets more than RAW_TAIL old) were computable at least 21
# minutes earlier, which leaves the drain that long to catch up.
RAW_TAIL = dt.timedelta(hours=2)

Resolution = Literal[60, 300, 3600]


def choose_resolution(start: dt.datetime, end: dt.datetime) -> Resolution:
    """Return the step for a window: 60 s (raw) up to 6 h, 300 s up to 8 days, else 3600 s."""
    window = end - start
    if window <= RAW_MAX_WINDOW:
        return 60
    if window <= FIVE_MINUTE_MAX_WINDOW:
        return 300
    return 3600


@dataclass(frozen=True)
class Columns:
    """One series on a time grid: epoch seconds and avg/max/min (NaN where unknown)."""

    t: NDArray[np.int64]
    avg: NDArray[np.float64]
    max: NDArray[np.float64]
    min: NDArray[np.float64]

    def __len__(self) -> int:
        return int(self.t.size)


def empty_columns() -> Columns:
    return Columns(np.empty(0, np.int64), np.empty(0), np.empty(0), np.empty(0))


def from_rollup(cols: RollupColumns) -> Columns:
    return Columns(cols.epoch_seconds.astype(np.int64), cols.avg, cols.max, cols.min)


def aggregate_raw(t: NDArray[np.int64], v: NDArray[np.float64], resolution: int) -> Columns:
    """Aggregate raw points into buckets of `resolution` seconds (as the rollups do: avg/max/min of present)."""
    if resolution == 60 or t.size == 0:
        return Columns(t, v, v.copy(), v.copy())
    keys, avg, mx, mn = _bucket_stats(t - t % resolution, v)
    return Columns(keys.astype(np.int64), avg, mx, mn)


def _bucket_stats(keys: NDArray[np.int64], v: NDArray[np.float64]) -> tuple[
        NDArray[np.int64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """The distinct bucket keys in order, and each bucket's avg, max and min of its values (as the rollups
    aggregate: avg/max/min of the points present). A bucket's values are added in the order given."""
    uniq, index = np.unique(keys, return_inverse=True)
    count = np.bincount(index, minlength=uniq.size)
    total = np.bincount(index, weights=v, minlength=uniq.size)
    mx = np.full(uniq.size, -np.inf)
    mn = np.full(uniq.size, np.inf)
    np.maximum.at(mx, index, v)
    np.minimum.at(mn, index, v)
    return uniq, total / count, mx, mn


def merge_tail(head: Columns, tail: Columns, tail_from: int) -> Columns:
    """Keep `head` before `tail_from` (epoch s) and `tail` from it on."""
    keep = head.t < tail_from
    use = tail.t >= tail_from
    return Columns(
        np.concatenate([head.t[keep], tail.t[use]]),
        np.concatenate([head.avg[keep], tail.avg[use]]),
        np.concatenate([head.max[keep], tail.max[use]]),
        np.concatenate([head.min[keep], tail.min[use]]),
    )


def read_columns(db: Session, org_id: uuid.UUID, series_ids: Sequence[int], start: dt.datetime, end: dt.datetime,
                 resolution: int, now: dt.datetime) -> dict[int, Columns]:
    """Every series at the resolution: raw points, or one read_rollups call with its newest 2 h from raw."""
    if resolution == 60:
        raw = read_points_many(db, org_id, series_ids, start, end)
        return {sid: aggregate_raw(t, v, 60) for sid, (t, v) in raw.items()}
    rolled = read_rollups(db, org_id, series_ids, resolution, start, end)
    out = {sid: from_rollup(c) for sid, c in rolled.items()}
    tail_from = max(start, now - RAW_TAIL)
    tail_from = tail_from - dt.timedelta(seconds=int(tail_from.timestamp()) % resolution)  # whole buckets
    if tail_from < end:
        for sid, tail in aggregate_raw_many(db, org_id, series_ids, max(tail_from, start), end, resolution).items():
            out[sid] = merge_tail(out.get(sid, empty_columns()), tail, int(tail_from.timestamp()))
    return out


def aggregate_raw_many(db: Session, org_id: uuid.UUID, series_ids: Sequence[int], start: dt.datetime,
                       end: dt.datetime, resolution: int) -> dict[int, Columns]:
    """The raw points of each series in [start, end) in buckets of `resolution` seconds (aggregate_raw), every
    series of a query at once; a series without a point is left out. Each bucket's points are added in time order,
    as aggregate_raw adds them, so the averages are the same to the bit."""
    out: dict[int, Columns] = {}
    for sids, stamps, vals, keep in _points_in_window(db, org_id, series_ids, start, end):
        owners, row_of = np.unique(sids, return_inverse=True)
        point_row = np.broadcast_to(row_of.reshape(-1, 1), keep.shape)[keep]
        t, v = stamps[keep], vals[keep]
        if not t.size:
            continue
        buckets = t - t % resolution
        first = int(buckets.min())
        per_row = (int(buckets.max()) - first) // resolution + 1
        keys, avg, mx, mn = _bucket_stats(point_row * per_row + (buckets - first) // resolution, v)
        key_row = keys // per_row
        stamp = (first + (keys % per_row) * resolution).astype(np.int64)
        cuts = np.flatnonzero(np.diff(key_row)) + 1
        for lo, hi in zip([0, *cuts.tolist()], [*cuts.tolist(), int(keys.size)], strict=True):
            out[int(owners[key_row[lo]])] = Columns(stamp[lo:hi], avg[lo:hi], mx[lo:hi], mn[lo:hi])
    return out


def read_hourly_grid(
    db: Session,
    org_id: uuid.UUID,
    series: Mapping[int, tuple[Aggregation, int]],
    start: dt.datetime,
    end: dt.datetime,
) -> dict[int, NDArray[np.float64]]:
    """Return series on the hourly grid start, start + 1 h, ... < end from the hourly rollups (weeks of history in
    a few rows per series; the newest 2 hours from raw points, as read_columns does), NaN for an hour without data.

    `series` maps a series id to (its aggregation, its own step in seconds). An hour of a Sum series is its
    average point times the points an hour holds (60 one-minute or 12 five-minute sums): the hour's sum with a
    missed minute filled at the hour's rate, which keeps per-second rates right where read_grid's plain sum
    would read a gap as no I/O. Mean, max and min are the rollups' own. `start` must be on an hour.
    """
    return read_rollup_grid(db, org_id, series, start, end, 3600)


def read_rollup_grid(
    db: Session,
    org_id: uuid.UUID,
    series: Mapping[int, tuple[Aggregation, int]],
    start: dt.datetime,
    end: dt.datetime,
    resolution: int,
) -> dict[int, NDArray[np.float64]]:
    """Return series on the grid start, start + resolution, ... < end from the 5-minute (300) or hourly (3600)
    rollups, as read_hourly_grid describes (a Sum bucket is its average point times the points it holds)."""
    if start.timestamp() % resolution:
        raise ValueError(f"start must be on a multiple of {resolution} s")
    n = int((end - start).total_seconds()) // resolution
    cols = read_columns(db, org_id, list(series), start, end, resolution, end)
    origin = int(start.timestamp())
    out: dict[int, NDArray[np.float64]] = {}
    for sid, c in cols.items():
        if not len(c):
            continue
        index = (c.t - origin) // resolution
        inside = (index >= 0) & (index < n)
        if not inside.any():
            continue
        how, native_step = series[sid]
        values = {"max": c.max, "min": c.min}.get(how, c.avg)
        if how == "sum":
            values = c.avg * (resolution / native_step)
        grid = np.full(n, np.nan)
        grid[index[inside]] = values[inside]
        out[sid] = grid
    return out


def cluster_series_of_metrics(db: Session, org_id: uuid.UUID, cluster_id: uuid.UUID,
                              metrics: Collection[str]) -> list[StoredSeries]:
    """Return the series of one cluster (as cluster_series) whose metric is one of `metrics`, narrowed in SQL."""
    rows = db.execute(
        text(
            "SELECT id, entity_kind::text, entity_id, metric, unit, labels, step_seconds FROM metric_series "
            "WHERE org_id = :org AND cluster_id = :cluster AND metric = ANY(:metrics)"
        ),
        {"org": org_id, "cluster": cluster_id, "metrics": sorted(metrics)},
    )
    return [StoredSeries(int(sid), kind, eid, metric, unit, dict(labels or {}), int(step or 60))
            for sid, kind, eid, metric, unit, labels, step in rows]
