"""The drain computes an hour's rollups once the hour has settled (15-39 minutes after its end, by series), not
every minute while it is written: readers take the newest RAW_TAIL from raw points, so they never need the open hours' rollups."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import numpy as np
import pytest
from headroom.accounts.models import Organization
from headroom.platform.security import new_external_id
from headroom.sources.aws import ingest as aws_ingest
from headroom.sources.demo import service as demo_service
from headroom.sources.prometheus import ingest as prometheus_ingest
from headroom.timeseries import repository as ts
from sqlalchemy import text

T0 = dt.datetime(2026, 11, 3, 0, 0, tzinfo=dt.UTC)
HOUR = dt.timedelta(hours=1)
MINUTE = dt.timedelta(minutes=1)


def _org(db: Any) -> uuid.UUID:
    org = Organization(name="s", slug=f"s-{uuid.uuid4().hex[:8]}", aws_external_id=new_external_id())
    db.add(org)
    db.flush()
    return org.id


def _series(db: Any, org: uuid.UUID, n: int = 1) -> list[int]:
    keys = [ts.SeriesKey("volume", f"vol-{i:04d}", "aws.ebs.VolumeReadOps", "count") for i in range(n)]
    ids = ts.ensure_series(db, org, keys)
    return [ids[k] for k in keys]


def _runs(db: Any, org: uuid.UUID) -> set[tuple[int, dt.datetime, int]]:
    rows = db.execute(text("SELECT series_id, first_hour_at, hours FROM metric_rollup_dirty WHERE org_id = :o"),
                      {"o": org})
    return {(int(s), f, int(n)) for s, f, n in rows}


def _queue_rows_written(db: Any) -> int:
    """Queue rows this transaction has inserted or updated so far."""
    return int(db.execute(text(
        "SELECT coalesce(sum(n_tup_ins + n_tup_upd), 0) FROM pg_stat_xact_all_tables "
        "WHERE relname = 'metric_rollup_dirty'")).scalar_one())


def _live_minute(db: Any, org: uuid.UUID, sids: list[int], values: np.ndarray, minute: dt.datetime) -> None:
    """What a collector writes at `minute`: the minute just ended and the 10 minutes before it again."""
    first = max(T0, minute - 11 * MINUTE)
    lo, hi = int((first - T0) / MINUTE), int((minute - T0) / MINUTE)
    ts.write_batches(db, org, [ts.SeriesBatch(s, first, 60, values[k, lo:hi]) for k, s in enumerate(sids)])


def test_the_settle_period_outlasts_the_collectors_rewrites_and_ends_inside_the_raw_tail() -> None:
    # Every collector re-reads its last OVERLAP each minute: the hour it rewrites must not be settled yet.
    for overlap in (aws_ingest.OVERLAP, prometheus_ingest.OVERLAP, demo_service.OVERLAP):
        assert overlap < ts.SETTLE
    # The newest hour a read takes from stored rollups ended RAW_TAIL - 1 h ago at the latest and settled at most
    # SETTLED_ALL after its end: the drain has the rest of RAW_TAIL to compute it (21 min; 20 asked: at 1,000
    # clusters a whole hour's roll took the drain 2-5 minutes).
    drain_time = ts.RAW_TAIL - (HOUR + ts.SETTLED_ALL)
    assert drain_time >= dt.timedelta(minutes=20)
    assert max(ts.settle_delay(s) for s in range(100)) == ts.SETTLED_ALL
    assert min(ts.settle_delay(s) for s in range(100)) == ts.SETTLE


@pytest.mark.parametrize(("now", "open_hour"), [
    (T0 + 10 * HOUR + 14 * MINUTE + dt.timedelta(seconds=59), 9),  # hour 9 settles at 10:15
    (T0 + 10 * HOUR + 15 * MINUTE, 10),
    (T0 + 10 * HOUR + 59 * MINUTE, 10),
])
def test_the_first_open_hour(now: dt.datetime, open_hour: int) -> None:
    assert ts.open_from_hour(now) == int((T0 + open_hour * HOUR).timestamp()) // 3600


def test_an_open_hour_is_not_rolled_until_it_settles(db: Any) -> None:
    org = _org(db)
    (sid,) = _series(db, org)
    values = np.arange(60, dtype=float)
    hour = T0 + 10 * HOUR
    ts.write_batches(db, org, [ts.SeriesBatch(sid, hour, 60, values[:30])])
    for now in (hour + 30 * MINUTE, hour + HOUR + ts.SETTLE - dt.timedelta(seconds=1)):
        assert ts.drain_rollups(db, now=now, org_id=org) == 0
        assert ts.rollups_pending(db, org, now=now) == 0  # the open hour is no backlog
    assert _runs(db, org) == {(sid, hour, 1)}  # still queued
    assert ts.read_rollup(db, org, sid, 3600, hour, hour + HOUR) == []

    ts.write_batches(db, org, [ts.SeriesBatch(sid, hour + 30 * MINUTE, 60, values[30:])])
    settled = hour + HOUR + ts.settle_delay(sid)
    assert ts.drain_rollups(db, now=settled - dt.timedelta(seconds=1), org_id=org) == 0
    assert ts.rollups_pending(db, org, now=settled - dt.timedelta(seconds=1)) == 0
    assert ts.rollups_pending(db, org, now=settled) == 1
    assert ts.drain_rollups(db, now=settled, org_id=org) == 1
    assert ts.rollups_pending(db, org, now=settled) == 0 and _runs(db, org) == set()
    (got,) = ts.read_rollup(db, org, sid, 3600, hour, hour + HOUR)
    assert (got.avg, got.max, got.min, got.count) == (29.5, 59.0, 0.0, 60)
    assert len(ts.read_rollup(db, org, sid, 300, hour, hour + HOUR)) == 12


def test_a_run_reaching_into_the_open_hours_is_cut_and_its_settled_hours_rolled(db: Any) -> None:
    org = _org(db)
    sids = _series(db, org, 3)
    # Five hours of every series from 08:00 to 13:00; at 12:39 hours 8-11 have settled, 12 has not.
    ts.write_batches(db, org, [ts.SeriesBatch(s, T0 + 8 * HOUR, 60, np.full(5 * 60, float(k)))
                               for k, s in enumerate(sids)])
    now = T0 + 12 * HOUR + ts.SETTLED_ALL
    assert ts.rollups_pending(db, org, now=now) == 3 * 4  # hours 8-11: 11 settled by 12:39
    assert ts.drain_rollups(db, now=now, org_id=org, limit=5) == 5  # limit first: a cut inside the settled part
    assert ts.drain_rollups(db, now=now, org_id=org) == 3 * 4 - 5
    assert _runs(db, org) == {(s, T0 + 12 * HOUR, 1) for s in sids}
    hourly = ts.read_rollups(db, org, sids, 3600, T0, T0 + 24 * HOUR)
    for k, s in enumerate(sids):
        assert hourly[s].epoch_seconds.tolist() == [int((T0 + h * HOUR).timestamp()) for h in range(8, 12)]
        assert (hourly[s].avg == k).all()


def test_a_fleets_hour_settles_a_25th_at_a_time_over_25_minutes(db: Any) -> None:
    org = _org(db)
    sids = _series(db, org, 100)
    hour = T0 + 10 * HOUR
    ts.write_batches(db, org, [ts.SeriesBatch(s, hour, 60, np.ones(60)) for s in sids])
    end = hour + HOUR
    drained = []
    for minute in range(14, 41):  # the drain at each minute from 11:14 to 11:40
        now = end + minute * MINUTE
        pending = ts.rollups_pending(db, org, now=now)
        took = ts.drain_rollups(db, now=now, org_id=org)
        assert took == pending == sum(1 for s in sids if minute * MINUTE == ts.settle_delay(s)), minute
        drained.append(took)
    # 100 series: 4 a minute from 11:15 to 11:39, none before or after, all of them in the end
    assert drained == [0] + [4] * 25 + [0]
    assert _runs(db, org) == set()


def test_live_minutes_rewrite_no_queue_row_once_their_hour_is_queued(db: Any) -> None:
    org = _org(db)
    sids = _series(db, org, 4)
    values = np.random.default_rng(3).random((len(sids), 3 * 60)).round(3)
    written = []
    for m in range(1, 3 * 60 - 30):
        minute = T0 + m * MINUTE
        before = _queue_rows_written(db)
        _live_minute(db, org, sids, values, minute)
        written.append(_queue_rows_written(db) - before)
        ts.drain_rollups(db, now=minute, org_id=org)
    # The first minute queues each series' hour; the minute that starts an hour extends each series' run by it;
    # every other minute finds its hour queued and writes no queue row.
    starts = {1, 61, 121}
    assert [m for m, n in enumerate(written, start=1) if n] == sorted(starts)
    assert all(written[m - 1] == len(sids) for m in starts)


def test_a_late_point_for_a_settled_hour_requeues_exactly_its_hour(db: Any) -> None:
    org = _org(db)
    (sid,) = _series(db, org)
    ts.write_batches(db, org, [ts.SeriesBatch(sid, T0, 60, np.ones(12 * 60))])
    now = T0 + 12 * HOUR + ts.SETTLED_ALL
    assert ts.drain_rollups(db, now=now, org_id=org) == 12  # hour 11 settled by 12:39
    ts.write_points(db, org, [(sid, T0 + 5 * HOUR + 7 * MINUTE, 9.0)])
    assert _runs(db, org) == {(sid, T0 + 5 * HOUR, 1)}
    assert ts.rollups_pending(db, org, now=now) == 1
    assert ts.drain_rollups(db, now=now, org_id=org) == 1
    hourly = ts.read_rollups(db, org, [sid], 3600, T0, T0 + 12 * HOUR)[sid]
    assert hourly.max.tolist() == [9.0 if h == 5 else 1.0 for h in range(12)]


@pytest.mark.parametrize("resolution", [300, 3600])
def test_a_read_across_the_raw_tail_equals_the_read_of_rolled_hours(db: Any, resolution: int) -> None:
    """Every seventh minute over three hours of live writes, each followed by the drain at that minute: every read
    since the first point (stored rollups, the newest RAW_TAIL from raw points) finds every bucket, with the
    numbers the rollups hold once everything is rolled."""
    org = _org(db)
    sids = _series(db, org, 3)
    rng = np.random.default_rng(7)
    total = 9 * 60
    values = rng.normal(100.0, 20.0, (len(sids), total)).round(3)
    values[1, rng.random(total) < 0.2] = np.nan  # missed scrapes
    ts.write_batches(db, org, [ts.SeriesBatch(s, T0, 60, values[k, : 6 * 60]) for k, s in enumerate(sids)])
    ts.drain_rollups(db, now=T0 + 6 * HOUR, org_id=org)
    reads = {}
    for m in range(6 * 60 + 1, total + 1, 7):
        now = T0 + m * MINUTE
        _live_minute(db, org, sids, values, now)
        ts.drain_rollups(db, now=now, org_id=org)
        reads[now] = ts.read_columns(db, org, sids, T0, now, resolution, now)
    # Everything rolled (a day later): the stored rollups alone, for the same windows.
    ts.drain_rollups(db, now=T0 + 24 * HOUR, org_id=org)
    first = int(T0.timestamp())
    for now, got in reads.items():
        # Only buckets that have ended: the newest one is still filling in the live read.
        closed = int(now.timestamp()) // resolution * resolution
        stored = ts.read_rollups(db, org, sids, resolution, T0, dt.datetime.fromtimestamp(closed, dt.UTC))
        for k, s in enumerate(sids):
            live, rolled = got[s], stored[s]
            keep = live.t < closed
            assert live.t[keep].tolist() == rolled.epoch_seconds.tolist(), (now, k)
            np.testing.assert_allclose(live.avg[keep], rolled.avg, rtol=1e-12)
            assert live.max[keep].tolist() == rolled.max.tolist()
            assert live.min[keep].tolist() == rolled.min.tolist()
            if k != 1:  # series 1 misses scrapes, so a 5-minute bucket of it may hold no point at all
                assert rolled.epoch_seconds.tolist() == list(range(first, closed, resolution))  # none missing
