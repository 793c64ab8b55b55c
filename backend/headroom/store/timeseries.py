"""The packed time-series store (layout: docs/timeseries.md).

`metric_points`: one row per (series, hour) holding 60 one-minute slots (float8[], NULL = no point), in daily
range partitions. `metric_rollups`: one row per (series, resolution, day) holding 288 five-minute or 24 hourly
slots of avg/max/min/count, in monthly partitions. Writes merge slot-wise (headroom_merge_slots), so a
re-written window is a no-op and late points fill their slots. Callers commit.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from psycopg import errors as pg_errors
from sqlalchemy import text
from sqlalchemy.orm import Session

from headroom.store.copy_binary import encode_rollup_rows, encode_rows

SLOTS_PER_HOUR = 60
SLOT_SECONDS = 60
ROLLUP_SLOTS = {300: 288, 3600: 24}


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
    created = 0
    day = day_floor(start)
    while day <= end:
        nxt = day + dt.timedelta(days=1)
        created += _create_partition(db, "metric_points", points_partition_name(day), day, nxt)
        day = nxt
    month = month_floor(start)
    while month <= end:
        nxt = _next_month(month)
        created += _create_partition(db, "metric_rollups", rollups_partition_name(month), month, nxt)
        month = nxt
    return created


def _create_partition(db: Session, parent: str, name: str, lo: dt.datetime, hi: dt.datetime) -> int:
    exists = db.execute(text("SELECT to_regclass(:n) IS NOT NULL"), {"n": name}).scalar_one()
    if exists:
        return 0
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


@dataclass(frozen=True)
class SeriesKey:
    entity_kind: str
    entity_id: str
    metric: str
    unit: str
    labels: tuple[tuple[str, str], ...] = ()


CLUSTER_SCOPED_KINDS = ("cluster", "tikv_node")  # unique per cluster; instance/volume series unique per org


def ensure_series(
    db: Session, org_id: uuid.UUID, keys: Sequence[SeriesKey], *, cluster_id: uuid.UUID | None = None
) -> dict[SeriesKey, int]:
    """Return the ids of these series, creating the missing ones (idempotent under concurrency).

    One statement per scope (see the metric_series indexes): node and cluster series are keyed by
    (org, cluster, ...), instance and volume series by (org, ...) with cluster_id following the latest mapping.
    """
    def identity(k: SeriesKey) -> tuple[str, str, str, tuple[tuple[str, str], ...]]:
        return (k.entity_kind, k.entity_id, k.metric, tuple(sorted(k.labels)))

    found: dict[tuple[str, str, str, tuple[tuple[str, str], ...]], int] = {}
    # ON CONFLICT DO UPDATE cannot touch one row twice in a statement: one entry per identity.
    unique = list({identity(k): k for k in keys}.values())
    for scoped in (True, False):
        group = [k for k in unique if (k.entity_kind in CLUSTER_SCOPED_KINDS) == scoped]
        if not group:
            continue
        if scoped:
            conflict = (
                "ON CONFLICT (org_id, cluster_id, entity_kind, entity_id, metric, labels) "
                "WHERE entity_kind IN ('cluster', 'tikv_node') DO UPDATE SET unit = EXCLUDED.unit"
            )
        else:
            conflict = (
                "ON CONFLICT (org_id, entity_kind, entity_id, metric, labels) "
                "WHERE entity_kind IN ('instance', 'volume') DO UPDATE SET unit = EXCLUDED.unit, "
                "cluster_id = COALESCE(EXCLUDED.cluster_id, metric_series.cluster_id)"
            )
        rows = db.execute(
            text(
                "INSERT INTO metric_series (org_id, cluster_id, entity_kind, entity_id, metric, unit, labels) "
                "SELECT CAST(:org AS uuid), CAST(:cluster AS uuid), k.kind, k.eid, k.metric, k.unit, CAST(k.labels AS jsonb) "
                "FROM unnest(CAST(:kinds AS text[]), CAST(:eids AS text[]), CAST(:metrics AS text[]), "
                "CAST(:units AS text[]), CAST(:labels AS text[])) AS k(kind, eid, metric, unit, labels) "
                f"{conflict} RETURNING id, entity_kind, entity_id, metric, labels"
            ),
            {"org": org_id, "cluster": cluster_id, "kinds": [k.entity_kind for k in group],
             "eids": [k.entity_id for k in group], "metrics": [k.metric for k in group],
             "units": [k.unit for k in group],
             "labels": [json.dumps(dict(k.labels), sort_keys=True) for k in group]},
        )
        by_identity = {
            (kind, eid, metric, tuple(sorted(labels.items()))): int(sid) for sid, kind, eid, metric, labels in rows
        }
        found.update(by_identity)
    return {key: found[identity(key)] for key in keys}


# --- points ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WriteResult:
    points: int
    rows: int
    dropped_nan: int
    dropped_unaligned: int


def pack_points(
    points: Iterable[tuple[int, dt.datetime, float]],
) -> tuple[dict[tuple[int, dt.datetime], list[float | None]], int, int]:
    """Group (series_id, ts, value) into hour rows of 60 slots; drop NaN/inf and off-minute timestamps."""
    rows: dict[tuple[int, dt.datetime], list[float | None]] = defaultdict(lambda: [None] * SLOTS_PER_HOUR)
    nan = unaligned = 0
    for series_id, ts, value in points:
        if value is None or not math.isfinite(value):
            nan += 1
            continue
        ts = ts.astimezone(dt.UTC)
        if ts.second or ts.microsecond:
            unaligned += 1
            continue
        rows[(series_id, hour_floor(ts))][ts.minute] = float(value)
    return dict(rows), nan, unaligned


def write_points(db: Session, org_id: uuid.UUID, points: Iterable[tuple[int, dt.datetime, float]]) -> WriteResult:
    """Write individual (series_id, ts, value) points; see write_batches for whole series at once."""
    packed, nan, unaligned = pack_points(points)
    rows: PackedRows = {key: np.array([np.nan if v is None else v for v in vals]) for key, vals in packed.items()}
    return _write_rows(db, org_id, rows, nan, unaligned)


@dataclass(frozen=True)
class SeriesBatch:
    """A collector's output for one series: values at start, start + step, ... (NaN or None = no point)."""

    series_id: int
    start: dt.datetime
    step_seconds: int
    values: Sequence[float | None] | NDArray[np.float64]


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
PackedRows = dict[tuple[int, dt.datetime], NDArray[np.float64]]


def pack_batches(batches: Iterable[SeriesBatch]) -> tuple[PackedRows, int, int]:
    """Scatter each batch into 60-slot hour rows (NaN = empty slot), vectorised per series.

    Returns the rows, the count of non-finite values dropped, and of points dropped for not falling on a
    minute boundary (a step that is not a whole number of minutes, or a start with seconds).
    """
    rows: PackedRows = {}
    nan = unaligned = 0
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
        minutes = first_minute + np.arange(values.size, dtype=np.int64) * (batch.step_seconds // SLOT_SECONDS)
        minutes, values = minutes[finite], values[finite]
        if minutes.size == 0:
            continue
        hours = minutes // SLOTS_PER_HOUR
        first_hour = int(hours[0])
        grid = np.full((int(hours[-1]) - first_hour + 1, SLOTS_PER_HOUR), np.nan)
        grid[hours - first_hour, minutes % SLOTS_PER_HOUR] = values
        occupied = np.flatnonzero(~np.isnan(grid).all(axis=1))
        base = _EPOCH + dt.timedelta(hours=first_hour)
        for offset in occupied.tolist():
            key = (batch.series_id, base + dt.timedelta(hours=offset))
            row = grid[offset]
            if key in rows:  # two batches of one series touching the same hour: the later one wins per slot
                row = np.where(np.isnan(row), rows[key], row)
            rows[key] = row
    return rows, nan, unaligned


def write_batches(db: Session, org_id: uuid.UUID, batches: Iterable[SeriesBatch]) -> WriteResult:
    """Write collector output: hour rows that don't exist yet go straight in with binary COPY (the new-data
    fast path); rows that exist (the overlap window) merge slot-wise through a staging table. Idempotent."""
    rows, nan, unaligned = pack_batches(batches)
    return _write_rows(db, org_id, rows, nan, unaligned)


def _write_rows(db: Session, org_id: uuid.UUID, rows: PackedRows, nan: int, unaligned: int) -> WriteResult:
    if not rows:
        return WriteResult(0, 0, nan, unaligned)
    hours = [h for _, h in rows]
    ensure_partitions(db, min(hours), max(hours))
    existing = {
        (int(sid), at)
        for sid, at in db.execute(
            text(
                "SELECT series_id, bucket_at FROM metric_points WHERE series_id = ANY(:sids) "
                "AND bucket_at >= :lo AND bucket_at <= :hi"
            ),
            {"sids": sorted({sid for sid, _ in rows}), "lo": min(hours), "hi": max(hours)},
        )
    }
    fresh = [(key, row) for key, row in rows.items() if key not in existing]
    overlap = {key: row for key, row in rows.items() if key in existing}
    conn = db.connection().connection.driver_connection
    assert conn is not None
    if fresh:
        try:
            # A savepoint: a racing writer's row aborts only this COPY, which then merges instead.
            stream = encode_rows([k for k, _ in fresh], np.vstack([r for _, r in fresh]), org_id)
            with (
                conn.transaction(),
                conn.cursor() as cur,
                cur.copy("COPY metric_points (series_id, bucket_at, org_id, vals) FROM STDIN (FORMAT BINARY)") as copy,
            ):
                copy.write(stream)
        except pg_errors.UniqueViolation:
            overlap.update(dict(fresh))  # another worker wrote some of these hours first: merge them all
    if overlap:
        _merge_rows(db, org_id, overlap)
    # Keep the rollups of every touched (series, day) current, from the merged raw rows.
    _recompute_rollups(db, day_floor(min(hours)), day_floor(max(hours)) + dt.timedelta(days=1),
                       sorted({sid for sid, _ in rows}))
    npoints = int(np.count_nonzero(~np.isnan(np.vstack(list(rows.values())))))
    return WriteResult(npoints, len(rows), nan, unaligned)


def _merge_rows(db: Session, org_id: uuid.UUID, rows: PackedRows) -> None:
    conn = db.connection().connection.driver_connection
    assert conn is not None
    with conn.cursor() as cur:
        cur.execute(
            "CREATE TEMP TABLE IF NOT EXISTS _points_stage (series_id bigint, bucket_at timestamptz, "
            "org_id uuid, vals float8[]) ON COMMIT DELETE ROWS"
        )
        cur.execute("TRUNCATE _points_stage")
        stream = encode_rows(list(rows), np.vstack(list(rows.values())), org_id)
        with cur.copy("COPY _points_stage (series_id, bucket_at, org_id, vals) FROM STDIN (FORMAT BINARY)") as copy:
            copy.write(stream)
        cur.execute(
            "INSERT INTO metric_points (series_id, bucket_at, org_id, vals) "
            "SELECT series_id, bucket_at, org_id, vals FROM _points_stage "
            "ON CONFLICT (series_id, bucket_at) DO UPDATE "
            "SET vals = headroom_merge_slots(metric_points.vals, EXCLUDED.vals) "
            "WHERE metric_points.vals IS DISTINCT FROM headroom_merge_slots(metric_points.vals, EXCLUDED.vals)"
        )


def read_points(
    db: Session, org_id: uuid.UUID, series_id: int, start: dt.datetime, end: dt.datetime
) -> list[tuple[dt.datetime, float]]:
    """Return the raw points of one of the org's series in [start, end)."""
    result = db.execute(
        text(
            "SELECT p.bucket_at + (s.i - 1) * interval '1 minute' AS ts, s.v "
            "FROM metric_points p CROSS JOIN LATERAL unnest(p.vals) WITH ORDINALITY AS s(v, i) "
            "WHERE p.org_id = :org AND p.series_id = :sid AND p.bucket_at >= :hs AND p.bucket_at < :end "
            "AND s.v IS NOT NULL ORDER BY ts"
        ),
        {"org": org_id, "sid": series_id, "hs": hour_floor(start), "end": end},
    )
    return [(ts, float(v)) for ts, v in result if start <= ts < end]


# --- rollups ---------------------------------------------------------------------------------------------


def refresh_rollups(db: Session, start: dt.datetime, end: dt.datetime, series_ids: Sequence[int] | None = None) -> int:
    """Recompute the 5-minute and hourly rollups of the days touching [start, end) from the raw points.

    Writes call this themselves for the (series, day) pairs they touch, so rollups stay current as data lands;
    use it directly to rebuild a window. Returns the number of rollup rows written.
    """
    first_day = day_floor(start)
    last_day = day_floor(end - dt.timedelta(microseconds=1))
    return _recompute_rollups(db, first_day, last_day + dt.timedelta(days=1), series_ids)


def _recompute_rollups(
    db: Session, d0: dt.datetime, d1: dt.datetime, series_ids: Sequence[int] | None
) -> int:
    conn = db.connection().connection.driver_connection
    assert conn is not None
    query = (
        "SELECT series_id, org_id, extract(epoch FROM bucket_at)::bigint, vals FROM metric_points "
        "WHERE bucket_at >= %(d0)s AND bucket_at < %(d1)s"
    )
    params: dict[str, object] = {"d0": d0, "d1": d1}
    if series_ids is not None:
        query += " AND series_id = ANY(%(sids)s)"
        params["sids"] = list(series_ids)
    with conn.cursor(binary=True) as cur:
        cur.execute(query, params)
        rows = cur.fetchall()
    if not rows:
        return 0
    ensure_partitions(db, d0, d1 - dt.timedelta(days=1))
    sids = np.array([r[0] for r in rows], dtype=np.int64)
    epochs = np.array([r[2] for r in rows], dtype=np.int64)
    days = epochs // 86400
    # One (series, day) grid of 1,440 minutes; rows drop into their hour of it.
    pair_keys = sids * 1_000_000 + days
    pairs, pair_index = np.unique(pair_keys, return_inverse=True)
    grid = np.full((pairs.size, 24, SLOTS_PER_HOUR), np.nan)
    grid[pair_index, (epochs % 86400) // 3600] = np.array([r[3] for r in rows], dtype=np.float64)
    org_of_pair: dict[int, uuid.UUID] = {}
    for i, row in zip(pair_index.tolist(), rows, strict=True):
        org_of_pair.setdefault(i, row[1])
    pair_sids = pairs // 1_000_000
    day_micros = (pairs % 1_000_000 - 10957) * 86_400_000_000  # 10957 days from 1970-01-01 to 2000-01-01
    orgs = [org_of_pair[i] for i in range(pairs.size)]
    flat = grid.reshape(pairs.size, 1440)
    written = 0
    for resolution, slots in ROLLUP_SLOTS.items():
        buckets = flat.reshape(pairs.size, slots, 1440 // slots)
        present = ~np.isnan(buckets)
        count = present.sum(axis=2)
        total = np.where(present, buckets, 0.0).sum(axis=2)
        with np.errstate(invalid="ignore", divide="ignore"):
            avg = np.where(count > 0, total / np.maximum(count, 1), np.nan)
        maximum = np.fmax.reduce(buckets, axis=2)  # fmax/fmin skip NaN; an empty bucket stays NaN
        minimum = np.fmin.reduce(buckets, axis=2)
        stream = encode_rollup_rows(pair_sids, resolution, day_micros, orgs, avg, maximum, minimum, count)
        with conn.cursor() as cur:
            cur.execute(
                "CREATE TEMP TABLE IF NOT EXISTS _rollup_stage (LIKE metric_rollups INCLUDING DEFAULTS) "
                "ON COMMIT DELETE ROWS"
            )
            cur.execute("TRUNCATE _rollup_stage")
            with cur.copy(
                "COPY _rollup_stage (series_id, resolution_seconds, day_at, org_id, avg, max, min, cnt) "
                "FROM STDIN (FORMAT BINARY)"
            ) as copy:
                copy.write(stream)
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


def read_rollups(
    db: Session,
    org_id: uuid.UUID,
    series_ids: Sequence[int],
    resolution: int,
    start: dt.datetime,
    end: dt.datetime,
) -> dict[int, RollupColumns]:
    """Read many of the org's series at one resolution in one query (a dashboard chart or a cluster view).

    The packed day rows travel as arrays (a handful of rows instead of thousands) and are unpacked with numpy.
    """
    if resolution not in ROLLUP_SLOTS:
        raise ValueError(f"resolution must be one of {sorted(ROLLUP_SLOTS)}")
    lo, hi = int(start.timestamp()), int(end.timestamp())
    conn = db.connection().connection.driver_connection
    assert conn is not None
    # Binary results: psycopg loads float8[] / int2[] in C, about twice as fast as parsing their text form.
    with conn.cursor(binary=True) as cur:
        cur.execute(
            "SELECT series_id, extract(epoch FROM day_at)::bigint, avg, max, min, cnt FROM metric_rollups "
            "WHERE org_id = %(org)s AND series_id = ANY(%(sids)s) AND resolution_seconds = %(res)s "
            "AND day_at >= %(d0)s AND day_at < %(end)s ORDER BY series_id, day_at",
            {"org": org_id, "sids": list(series_ids), "res": resolution, "d0": day_floor(start), "end": end},
        )
        rows = cur.fetchall()
    out: dict[int, RollupColumns] = {sid: _empty_columns() for sid in series_ids}
    if not rows:
        return out
    # Unpack every day row at once: (rows x slots) matrices, one mask, then one split per series.
    sids = np.array([r[0] for r in rows], dtype=np.int64)
    stamps = np.array([r[1] for r in rows], dtype=np.int64)[:, None] + (
        np.arange(ROLLUP_SLOTS[resolution], dtype=np.int64) * resolution
    )
    avg, mx, mn = (np.array([r[k] for r in rows], dtype=np.float64) for k in (2, 3, 4))  # None -> NaN
    counts = np.array([r[5] for r in rows], dtype=np.int64)
    keep = (counts > 0) & (stamps >= lo) & (stamps < hi)
    owner = np.broadcast_to(sids[:, None], keep.shape)[keep]
    columns = [stamps[keep], avg[keep], mx[keep], mn[keep], counts[keep]]
    starts = np.concatenate([[0], np.flatnonzero(np.diff(owner)) + 1, [owner.size]]).astype(np.int64)
    for first, last in zip(starts[:-1], starts[1:], strict=True):
        if last > first:
            out[int(owner[first])] = RollupColumns(*(c[first:last] for c in columns))  # type: ignore[arg-type]
    return out
