"""Rollups off the write path: writes queue the hours they change (one queue row per series and run of consecutive
hours), drain_rollups expands the runs it claims and computes those hours' buckets.

The concurrency tests use real, separately committed transactions on the test PostgreSQL (not the rolled-back
test transaction), and remove what they made at the end."""

from __future__ import annotations

import datetime as dt
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from headroom.accounts.models import Organization
from headroom.platform.security import new_external_id
from headroom.timeseries import repository as ts
from sqlalchemy import event, text
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, sessionmaker

T0 = dt.datetime(2026, 11, 2, 0, 0, tzinfo=dt.UTC)
DAY = dt.timedelta(days=1)
HOUR = dt.timedelta(hours=1)
LATER = T0 + 30 * DAY  # the drain's clock, long after every hour these tests write: all of them have settled


def _org(db: Any) -> uuid.UUID:
    org = Organization(name="q", slug=f"q-{uuid.uuid4().hex[:8]}", aws_external_id=new_external_id())
    db.add(org)
    db.flush()
    return org.id


def _series(db: Any, org: uuid.UUID, n: int = 1) -> list[int]:
    keys = [ts.SeriesKey("volume", f"vol-{i:04d}", "aws.ebs.VolumeReadOps", "count") for i in range(n)]
    ids = ts.ensure_series(db, org, keys)
    return [ids[k] for k in keys]


def _queued(db: Any, org: uuid.UUID) -> set[tuple[int, dt.datetime]]:
    """The queued (series, hour) pairs: every hour of every queued run."""
    rows = db.execute(text(
        "SELECT series_id, first_hour_at + h * interval '1 hour' FROM metric_rollup_dirty "
        "CROSS JOIN LATERAL generate_series(0, hours - 1) AS h WHERE org_id = :o"), {"o": org}).all()
    pairs = {(int(s), d) for s, d in rows}
    assert len(pairs) == len(rows), "an hour is queued twice"
    return pairs


def _runs(db: Any, org: uuid.UUID) -> set[tuple[int, dt.datetime, int]]:
    """The queue rows themselves: (series, first hour, hours)."""
    rows = db.execute(text("SELECT series_id, first_hour_at, hours FROM metric_rollup_dirty WHERE org_id = :o"),
                      {"o": org})
    return {(int(s), f, int(n)) for s, f, n in rows}


def test_write_queues_changed_hours_and_drain_computes_them(db: Any) -> None:
    org = _org(db)
    (sid,) = _series(db, org)
    values = np.arange(2 * 1440, dtype=float)  # two whole days, minute m has value m
    ts.write_batches(db, org, [ts.SeriesBatch(sid, T0, 60, values)])
    assert _queued(db, org) == {(sid, T0 + h * HOUR) for h in range(48)}
    assert _runs(db, org) == {(sid, T0, 48)}  # one queue row for the two days
    assert ts.rollups_pending(db, org, now=LATER) == 48
    assert ts.read_rollup(db, org, sid, 3600, T0, T0 + DAY) == []  # not computed on the write path

    assert ts.drain_rollups(db, now=LATER, org_id=org) == 48
    assert ts.rollups_pending(db, org, now=LATER) == 0
    hourly = ts.read_rollup(db, org, sid, 3600, T0, T0 + 2 * DAY)
    assert len(hourly) == 48
    assert hourly[0].avg == pytest.approx(29.5) and hourly[0].max == 59 and hourly[0].min == 0
    assert hourly[0].count == 60
    assert hourly[47].avg == pytest.approx(47 * 60 + 29.5)
    five = ts.read_rollup(db, org, sid, 300, T0 + DAY, T0 + DAY + dt.timedelta(minutes=10))
    assert [(p.avg, p.count) for p in five] == [(1440 + 2.0, 5), (1445 + 2.0, 5)]

    # Re-writing the same window changes nothing: nothing is queued, and the rollups stay.
    ts.write_batches(db, org, [ts.SeriesBatch(sid, T0, 60, values)])
    assert _queued(db, org) == set()
    # A changed value in the overlap queues only its own hour.
    late = ts.SeriesBatch(sid, T0 + DAY + dt.timedelta(hours=5), 60, [1e6])
    ts.write_batches(db, org, [late])
    assert _queued(db, org) == {(sid, T0 + DAY + 5 * HOUR)}
    ts.drain_rollups(db, now=LATER, org_id=org)
    (hour5,) = ts.read_rollup(db, org, sid, 3600, T0 + DAY + dt.timedelta(hours=5), T0 + DAY + dt.timedelta(hours=6))
    assert hour5.max == 1e6 and hour5.count == 60
    assert hour5.avg == pytest.approx((sum(range(1440 + 300, 1440 + 360)) - (1440 + 300) + 1e6) / 60)


def test_drain_takes_at_most_its_limit_and_finishes_the_queue(db: Any) -> None:
    org = _org(db)
    sids = _series(db, org, 7)
    # Series k has value 10 * k + d on day d: rows must come back in (series, day) order with their own values.
    ts.write_batches(db, org, [ts.SeriesBatch(s, T0, 60, np.repeat([10.0 * k + d for d in range(3)], 1440))
                               for k, s in enumerate(sids)])
    assert ts.rollups_pending(db, org, now=LATER) == 7 * 72
    done = [ts.drain_rollups(db, now=LATER, limit=100, org_id=org) for _ in range(7)]
    assert done == [100, 100, 100, 100, 100, 4, 0]
    got = ts.read_rollups(db, org, list(reversed(sids)), 3600, T0, T0 + 3 * DAY)
    for k, sid in enumerate(sids):
        cols = got[sid]
        assert len(cols) == 72 and (cols.count == 60).all() and (np.diff(cols.epoch_seconds) == 3600).all()
        assert cols.epoch_seconds[0] == int(T0.timestamp())
        np.testing.assert_array_equal(cols.avg, np.repeat([10.0 * k + d for d in range(3)], 24))


def test_drain_is_scoped_to_an_org_when_asked(db: Any) -> None:
    a, b = _org(db), _org(db)
    (sa,), (sb,) = _series(db, a), _series(db, b)
    ts.write_batches(db, a, [ts.SeriesBatch(sa, T0, 60, [1.0])])
    ts.write_batches(db, b, [ts.SeriesBatch(sb, T0, 60, [2.0])])
    assert ts.drain_rollups(db, now=LATER, org_id=a) == 1
    assert ts.rollups_pending(db, b, now=LATER) == 1 and ts.rollups_pending(db, a, now=LATER) == 0


def test_refresh_rebuilds_without_the_queue(db: Any) -> None:
    org = _org(db)
    (sid,) = _series(db, org)
    ts.write_batches(db, org, [ts.SeriesBatch(sid, T0 + dt.timedelta(minutes=1), 60, [4.0, 6.0])])
    assert ts.refresh_rollups(db, T0, T0 + dt.timedelta(hours=1)) == 2  # one 5-minute row, one hourly row
    (five,) = ts.read_rollup(db, org, sid, 300, T0, T0 + dt.timedelta(minutes=5))
    assert (five.avg, five.max, five.min, five.count) == (5.0, 6.0, 4.0, 2)


def _rollup_arrays(db: Any, sid: int) -> dict[tuple[int, dt.datetime], tuple[list[Any], ...]]:
    """The stored rollup rows of a series, every slot (empty ones too): (resolution, day) -> (avg, max, min, cnt)."""
    rows = db.execute(text("SELECT resolution_seconds, day_at, avg, max, min, cnt FROM metric_rollups "
                           "WHERE series_id = :s"), {"s": sid})
    return {(int(r), d): (list(a), list(x), list(n), list(c)) for r, d, a, x, n, c in rows}


def _same(a: dict[Any, tuple[list[Any], ...]], b: dict[Any, tuple[list[Any], ...]]) -> None:
    assert a.keys() == b.keys()
    for key in a:
        for got, want in zip(a[key], b[key], strict=True):
            np.testing.assert_array_equal(np.array(got, dtype=float), np.array(want, dtype=float), err_msg=str(key))


WRITES = st.lists(
    st.tuples(
        st.integers(0, 2 * 1440 - 1),  # first minute, over two days
        st.integers(1, 150),  # points
        st.sampled_from([60, 60, 300]),  # step
        st.integers(0, 3),  # value seed
        st.booleans(),  # drain after this write
    ),
    min_size=1, max_size=8,
)


@hypothesis_settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(writes=WRITES)
def test_incremental_rollups_equal_a_full_recompute(db: Any, writes: list[tuple[int, int, int, int, bool]]) -> None:
    """Late and revised writes in any order, drained now and then: the rollups equal refresh_rollups' rebuild."""
    org = _org(db)
    sids = _series(db, org, 2)
    for i, (first, n, step, seed, drain) in enumerate(writes):
        rng = np.random.default_rng(seed * 100 + i)
        values = np.round(rng.uniform(-5, 100, n), 1)
        values[rng.random(n) < 0.1] = np.nan  # gaps
        ts.write_batches(db, org, [ts.SeriesBatch(sids[i % 2], T0 + dt.timedelta(minutes=first - first % (step // 60)),
                                                  step, values)])
        if drain:
            ts.drain_rollups(db, now=LATER, org_id=org)
    while ts.drain_rollups(db, now=LATER, org_id=org):
        pass
    incremental = {sid: _rollup_arrays(db, sid) for sid in sids}
    ts.refresh_rollups(db, T0, T0 + 4 * DAY, series_ids=sids)
    for sid in sids:
        _same(incremental[sid], _rollup_arrays(db, sid))


@hypothesis_settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(writes=WRITES, limits=st.lists(st.integers(1, 40), min_size=1, max_size=4))
def test_claims_cutting_runs_anywhere_equal_a_full_recompute(db: Any, writes: list[tuple[int, int, int, int, bool]],
                                                            limits: list[int]) -> None:
    """The same writes drained in small claims (runs cut at any hour, the rest written meanwhile): every hour
    is drained exactly once per queueing and the rollups equal refresh_rollups' rebuild."""
    org = _org(db)
    sids = _series(db, org, 2)
    for i, (first, n, step, seed, drain) in enumerate(writes):
        rng = np.random.default_rng(seed * 100 + i)
        values = np.round(rng.uniform(-5, 100, n), 1)
        ts.write_batches(db, org, [ts.SeriesBatch(sids[i % 2], T0 + dt.timedelta(minutes=first - first % (step // 60)),
                                                  step, values)])
        if drain:
            pending = ts.rollups_pending(db, org, now=LATER)
            limit = limits[i % len(limits)]
            assert ts.drain_rollups(db, now=LATER, org_id=org, limit=limit) == min(limit, pending)
            assert ts.rollups_pending(db, org, now=LATER) == pending - min(limit, pending)
    while ts.drain_rollups(db, now=LATER, org_id=org, limit=limits[0]):
        pass
    incremental = {sid: _rollup_arrays(db, sid) for sid in sids}
    ts.refresh_rollups(db, T0, T0 + 4 * DAY, series_ids=sids)
    for sid in sids:
        _same(incremental[sid], _rollup_arrays(db, sid))


def test_a_late_point_updates_exactly_its_buckets(db: Any) -> None:
    org = _org(db)
    (sid,) = _series(db, org)
    ts.write_batches(db, org, [ts.SeriesBatch(sid, T0, 60, np.arange(1440, dtype=float))])
    ts.drain_rollups(db, now=LATER, org_id=org)
    # A marker in a slot no later write touches: a recompute of the whole day would overwrite it.
    db.execute(text("UPDATE metric_rollups SET avg[1] = -1 WHERE series_id = :s"), {"s": sid})
    before = _rollup_arrays(db, sid)

    result = ts.write_batches(db, org, [ts.SeriesBatch(sid, T0 + dt.timedelta(hours=13, minutes=37), 60, [1e6])])
    assert result.rows_written == 1
    assert _queued(db, org) == {(sid, T0 + 13 * HOUR)}
    assert ts.drain_rollups(db, now=LATER, org_id=org) == 1
    after = _rollup_arrays(db, sid)

    for resolution, changed_slot in ((300, 13 * 12 + 7), (3600, 13)):
        old, new = before[(resolution, T0)], after[(resolution, T0)]
        for column in range(4):
            differs = [i for i, (a, b) in enumerate(zip(old[column], new[column], strict=True)) if a != b]
            # avg and max take the new point; the minimum and the count stay
            assert differs == ([changed_slot] if column < 2 else []), (resolution, column)
        assert new[0][0] == -1  # untouched slot kept as it was
    five_avg = after[(300, T0)][0][13 * 12 + 7]
    assert five_avg == pytest.approx((13 * 60 + 35 + 13 * 60 + 36 + 1e6 + 13 * 60 + 38 + 13 * 60 + 39) / 5)
    assert after[(3600, T0)][1][13] == 1e6


def test_an_unchanged_rewrite_writes_nothing_and_queues_nothing(db: Any) -> None:
    org = _org(db)
    sids = _series(db, org, 3)
    window = [ts.SeriesBatch(s, T0 + dt.timedelta(minutes=50), 60, np.arange(20, dtype=float) + k)
              for k, s in enumerate(sids)]
    ts.write_batches(db, org, window)
    ts.drain_rollups(db, now=LATER, org_id=org)

    def written() -> int:  # rows this transaction inserted or updated in the points partitions and the stage
        return int(db.execute(text(
            "SELECT coalesce(sum(n_tup_ins + n_tup_upd), 0) FROM pg_stat_xact_all_tables "
            "WHERE relname LIKE 'metric_points_p%' OR relname = '_points_stage'")).scalar_one())

    before = written()
    # The collector's overlap: the same 20 minutes again, plus nothing new.
    result = ts.write_batches(db, org, window)
    assert (result.points, result.rows, result.rows_written) == (60, 6, 0)
    assert written() == before
    assert _queued(db, org) == set()
    # A revised value in one series' second hour: one row written, one hour queued.
    revised = ts.SeriesBatch(sids[1], T0 + dt.timedelta(minutes=50), 60, np.r_[np.arange(15.0) + 1, 99.0])
    assert ts.write_batches(db, org, [*window[:1], revised, *window[2:]]).rows_written == 1
    assert written() == before + 1  # the updated row (written over the version read, not staged)
    assert _queued(db, org) == {(sids[1], T0 + HOUR)}



# Series of a backfill in these tests: 42 x 48 hours = 2,016 marks, a bench chunk's order of magnitude.
BACKFILL_SERIES = 42


def _backfill(sids: list[int], value: float) -> list[ts.SeriesBatch]:
    """Two days of every series."""
    return [ts.SeriesBatch(s, T0, 60, np.full(2 * 1440, value)) for s in sids]


def test_a_backfill_queues_every_hour_once_even_with_some_queued_already(db: Any) -> None:
    org = _org(db)
    sids = _series(db, org, BACKFILL_SERIES)
    every = {(s, T0 + h * HOUR) for s in sids for h in range(48)}
    assert ts.write_batches(db, org, _backfill(sids, 1.0)).rows_written == len(every)
    assert _queued(db, org) == every
    assert _runs(db, org) == {(s, T0, 48) for s in sids}  # one queue row per series, not one per hour
    assert ts.rollups_pending(db, org, now=LATER) == len(every)
    # A revision of every hour while one is still queued: each is queued once.
    assert ts.drain_rollups(db, now=LATER, org_id=org, limit=len(every) - 1) == len(every) - 1
    assert len(_queued(db, org)) == 1
    assert ts.write_batches(db, org, _backfill(sids, 2.0)).rows_written == len(every)
    assert _queued(db, org) == every
    assert ts.drain_rollups(db, now=LATER, org_id=org) == len(every)
    assert {p.max for p in ts.read_rollup(db, org, sids[-1], 3600, T0, T0 + 2 * DAY)} == {2.0}

def _hourly(db: Any, org: uuid.UUID, sid: int, start: dt.datetime, hours: int) -> dict[int, float]:
    """Hour index (from start) -> the hourly rollup's max, for the hours that have one."""
    return {int((p.ts - start) / HOUR): p.max for p in ts.read_rollup(db, org, sid, 3600, start,
                                                                       start + hours * HOUR)}


def test_a_run_split_across_claims_is_drained_in_order_without_loss(db: Any) -> None:
    org = _org(db)
    (sid,) = _series(db, org)
    values = np.repeat(np.arange(48, dtype=float), 60)  # hour h holds the value h
    ts.write_batches(db, org, [ts.SeriesBatch(sid, T0, 60, values)])
    assert _runs(db, org) == {(sid, T0, 48)}

    assert ts.drain_rollups(db, now=LATER, org_id=org, limit=30) == 30
    assert _runs(db, org) == {(sid, T0 + 30 * HOUR, 18)}  # the run's row keeps its last 18 hours
    assert _hourly(db, org, sid, T0, 48) == {h: float(h) for h in range(30)}
    assert ts.drain_rollups(db, now=LATER, org_id=org, limit=10) == 10
    assert _runs(db, org) == {(sid, T0 + 40 * HOUR, 8)}
    assert ts.drain_rollups(db, now=LATER, org_id=org, limit=10) == 8
    assert ts.rollups_pending(db, org, now=LATER) == 0
    assert _hourly(db, org, sid, T0, 48) == {h: float(h) for h in range(48)}
    incremental = _rollup_arrays(db, sid)
    ts.refresh_rollups(db, T0, T0 + 2 * DAY, series_ids=[sid])
    _same(incremental, _rollup_arrays(db, sid))


def test_a_claim_takes_whole_runs_of_several_series_and_cuts_only_the_last(db: Any) -> None:
    org = _org(db)
    sids = _series(db, org, 3)
    ts.write_batches(db, org, [ts.SeriesBatch(s, T0, 60, np.full(10 * 60, 1.0)) for s in sids])
    assert ts.drain_rollups(db, now=LATER, org_id=org, limit=25) == 25
    assert _runs(db, org) == {(sids[2], T0 + 5 * HOUR, 5)}
    assert [len(_hourly(db, org, s, T0, 10)) for s in sids] == [10, 10, 5]


def test_overlapping_and_adjoining_runs_merge_into_the_queued_rows(db: Any) -> None:
    org = _org(db)
    (sid,) = _series(db, org)

    def write(first_hour: int, hours: int, value: float) -> None:
        ts.write_batches(db, org, [ts.SeriesBatch(sid, T0 + first_hour * HOUR, 60, np.full(hours * 60, value))])

    write(0, 6, 1.0)
    write(3, 6, 2.0)  # overlaps hours 3-5: the queued row grows over 6-8
    assert _runs(db, org) == {(sid, T0, 9)}
    write(0, 3, 3.0)  # inside the queued row: nothing new
    assert _runs(db, org) == {(sid, T0, 9)}
    write(20, 1, 4.0)  # apart: a row of its own
    write(10, 10, 5.0)  # between two rows, adjoining neither's end: a row of its own
    assert _runs(db, org) == {(sid, T0, 9), (sid, T0 + 10 * HOUR, 10), (sid, T0 + 20 * HOUR, 1)}
    write(9, 1, 6.0)  # the gap right after the first row: that row grows
    write(5, 17, 7.0)  # over all three and one hour past the last: only the last grows
    assert _runs(db, org) == {(sid, T0, 10), (sid, T0 + 10 * HOUR, 10), (sid, T0 + 20 * HOUR, 2)}
    assert _queued(db, org) == {(sid, T0 + h * HOUR) for h in range(22)}  # each hour once
    assert ts.rollups_pending(db, org, now=LATER) == 22
    assert ts.drain_rollups(db, now=LATER, org_id=org) == 22
    assert _hourly(db, org, sid, T0, 22) == {h: (3.0 if h < 3 else 2.0 if h < 5 else 7.0) for h in range(22)}


def test_overlapping_queue_rows_recompute_each_hour_once(db: Any) -> None:
    org = _org(db)
    (sid,) = _series(db, org)
    ts.write_batches(db, org, [ts.SeriesBatch(sid, T0, 60, np.repeat(np.arange(12, dtype=float), 60))])
    # Rows a writer never leaves (the writes merge); the drain still counts and computes each hour once.
    db.execute(text("DELETE FROM metric_rollup_dirty WHERE series_id = :s"), {"s": sid})
    db.execute(text("INSERT INTO metric_rollup_dirty (series_id, first_hour_at, hours, org_id) VALUES "
                    "(:s, :a, 6, :o), (:s, :b, 6, :o), (:s, :c, 2, :o)"),
               {"s": sid, "o": org, "a": T0, "b": T0 + 3 * HOUR, "c": T0 + 10 * HOUR})
    assert ts.drain_rollups(db, now=LATER, org_id=org) == 11
    assert _hourly(db, org, sid, T0, 12) == {h: float(h) for h in range(12) if h != 9}


def test_a_claim_that_would_cut_a_run_onto_another_row_takes_it_whole(db: Any) -> None:
    org = _org(db)
    (sid,) = _series(db, org)
    ts.write_batches(db, org, [ts.SeriesBatch(sid, T0, 60, np.repeat(np.arange(12, dtype=float), 60))])
    db.execute(text("DELETE FROM metric_rollup_dirty WHERE series_id = :s"), {"s": sid})
    db.execute(text("INSERT INTO metric_rollup_dirty (series_id, first_hour_at, hours, org_id) VALUES "
                    "(:s, :a, 6, :o), (:s, :b, 6, :o)"), {"s": sid, "o": org, "a": T0, "b": T0 + 3 * HOUR})
    # Cutting the first run after 3 hours would give it the second row's key: it is taken whole (6 hours).
    assert ts.drain_rollups(db, now=LATER, org_id=org, limit=3) == 6
    assert _runs(db, org) == {(sid, T0 + 3 * HOUR, 6)}
    assert ts.drain_rollups(db, now=LATER, org_id=org) == 6
    assert _hourly(db, org, sid, T0, 12) == {h: float(h) for h in range(9)}


# --- concurrency, with real commits -----------------------------------------------------------------------


@pytest.fixture()
def committed(engine: Engine) -> Iterator[tuple[sessionmaker[Session], uuid.UUID, int]]:
    sessions = sessionmaker(bind=engine, expire_on_commit=False)
    with sessions() as db:
        org = _org(db)
        (sid,) = _series(db, org)
        db.commit()
    try:
        yield sessions, org, sid
    finally:
        with sessions() as db:
            db.execute(text("DELETE FROM metric_points WHERE org_id = :o"), {"o": org})
            db.execute(text("DELETE FROM metric_rollups WHERE org_id = :o"), {"o": org})
            db.execute(text("DELETE FROM organizations WHERE id = :o"), {"o": org})
            db.commit()


def _hour_max(sessions: sessionmaker[Session], org: uuid.UUID, sid: int) -> float | None:
    with sessions() as db:
        got = ts.read_rollup(db, org, sid, 3600, T0, T0 + dt.timedelta(hours=1))
        return got[0].max if got else None


def test_a_drain_skips_a_day_a_writer_has_not_committed(committed: Any) -> None:
    sessions, org, sid = committed
    with sessions() as db:
        ts.write_batches(db, org, [ts.SeriesBatch(sid, T0, 60, [1.0])])
        db.commit()
    writer = sessions()
    try:
        ts.write_batches(writer, org, [ts.SeriesBatch(sid, T0 + dt.timedelta(minutes=1), 60, [9.0])])
        # The writer holds the queue row: a drain now must not take it (it would miss the uncommitted point).
        with sessions() as db:
            assert ts.drain_rollups(db, now=LATER, org_id=org) == 0
            db.commit()
        writer.commit()
    finally:
        writer.close()
    with sessions() as db:
        assert ts.drain_rollups(db, now=LATER, org_id=org) == 1
        db.commit()
    assert _hour_max(sessions, org, sid) == 9.0


def test_a_write_during_a_drain_is_queued_again_not_lost(committed: Any) -> None:
    sessions, org, sid = committed
    with sessions() as db:
        ts.write_batches(db, org, [ts.SeriesBatch(sid, T0, 60, [1.0])])
        db.commit()
    drainer = sessions()
    written = threading.Event()
    try:
        assert ts.drain_rollups(drainer, now=LATER, org_id=org) == 1  # claimed, computed without the point below
        # A writer now blocks on the claimed queue row until the drain commits, then queues the day again.
        def write() -> None:
            with sessions() as db:
                ts.write_batches(db, org, [ts.SeriesBatch(sid, T0 + dt.timedelta(minutes=2), 60, [7.0])])
                db.commit()
            written.set()

        thread = threading.Thread(target=write)
        thread.start()
        assert not written.wait(1.0)  # waiting on the drain's lock
        drainer.commit()
        thread.join(30)
        assert written.is_set()
    finally:
        drainer.close()
    assert _hour_max(sessions, org, sid) == 1.0
    with sessions() as db:
        assert ts.drain_rollups(db, now=LATER, org_id=org) == 1
        db.commit()
    assert _hour_max(sessions, org, sid) == 7.0


def test_a_backfill_during_a_drain_is_queued_again_not_lost(committed: Any) -> None:
    sessions, org, _ = committed
    with sessions() as db:
        sids = _series(db, org, BACKFILL_SERIES)
        ts.write_batches(db, org, _backfill(sids, 1.0))
        db.commit()
    drainer = sessions()
    written = threading.Event()
    try:
        assert ts.drain_rollups(drainer, now=LATER, org_id=org) == len(sids) * 48  # claimed, computed from the 1.0s
        # The backfill's marks wait on the claimed (deleted) queue rows until the drain commits.
        def write() -> None:
            with sessions() as db:
                ts.write_batches(db, org, _backfill(sids, 5.0))
                db.commit()
            written.set()

        thread = threading.Thread(target=write)
        thread.start()
        assert not written.wait(1.0)
        drainer.commit()
        thread.join(60)
        assert written.is_set()
    finally:
        drainer.close()
    with sessions() as db:
        assert ts.rollups_pending(db, org, now=LATER) == len(sids) * 48
        assert ts.drain_rollups(db, now=LATER, org_id=org) == len(sids) * 48
        db.commit()
    assert _hour_max(sessions, org, sids[0]) == 5.0

def test_the_rollups_job_drains_the_queue_in_committed_batches(committed: Any, database_url: str,
                                                                 settings: Any) -> None:
    from headroom.jobs import job

    sessions, org, sid = committed
    with sessions() as db:
        ts.write_batches(db, org, [ts.SeriesBatch(sid, T0, 60, np.full(1440 * 3, 5.0))])
        db.commit()
    entry = job("timeseries.rollups")
    assert entry.queue == "maintenance" and entry.schedule is not None and entry.schedule.minute == "*"
    # At the end of the third day its last hour has not settled: it stays queued and is not a backlog.
    summary = entry.run(database_url, settings, T0 + 3 * DAY)
    assert summary["pairs"] >= 71  # other tests' committed leftovers, if any, are drained too
    assert summary["pending"] == 0
    with sessions() as db:
        assert _runs(db, org) == {(sid, T0 + 71 * HOUR, 1)}
        got = ts.read_rollups(db, org, [sid], 300, T0, T0 + 3 * DAY)[sid]
    assert len(got) == 71 * 12 and (got.avg == 5.0).all()
    summary = entry.run(database_url, settings, T0 + 3 * DAY + ts.SETTLED_ALL)
    assert summary["pairs"] >= 1 and summary["pending"] == 0
    with sessions() as db:
        assert _runs(db, org) == set()
        got = ts.read_rollups(db, org, [sid], 300, T0, T0 + 3 * DAY)[sid]
    assert len(got) == 3 * 288 and (got.avg == 5.0).all()


def test_a_run_that_arrives_while_its_hours_are_drained_is_queued_again(committed: Any) -> None:
    sessions, org, sid = committed
    with sessions() as db:
        ts.write_batches(db, org, [ts.SeriesBatch(sid, T0, 60, np.full(48 * 60, 1.0))])
        db.commit()
    drainer = sessions()
    written = threading.Event()
    try:
        # Claims hours 0-29 (computed from the 1.0s) and cuts the run's row to hours 30-47, both uncommitted.
        assert ts.drain_rollups(drainer, now=LATER, org_id=org, limit=30) == 30

        def write() -> None:  # a revision of hour 10 (claimed) and of hour 40 (still queued)
            with sessions() as db:
                ts.write_batches(db, org, [ts.SeriesBatch(sid, T0 + 10 * HOUR, 60, [8.0]),
                                           ts.SeriesBatch(sid, T0 + 40 * HOUR, 60, [9.0])])
                db.commit()
            written.set()

        thread = threading.Thread(target=write)
        thread.start()
        assert not written.wait(1.0)  # waiting on the drain's lock of the run's row
        drainer.commit()
        thread.join(30)
        assert written.is_set()
    finally:
        drainer.close()
    with sessions() as db:
        # Hour 10 is queued again; hour 40 is in the row's remaining hours already.
        assert _runs(db, org) == {(sid, T0 + 10 * HOUR, 1), (sid, T0 + 30 * HOUR, 18)}
        assert ts.drain_rollups(db, now=LATER, org_id=org) == 19
        db.commit()
        hourly = _hourly(db, org, sid, T0, 48)
    assert hourly == {h: {10: 8.0, 40: 9.0}.get(h, 1.0) for h in range(48)}


def test_a_live_write_while_the_drain_cuts_off_the_settled_hour_stays_queued(committed: Any) -> None:
    sessions, org, sid = committed
    with sessions() as db:  # hour 10 whole and the first minutes of hour 11: one run of two hours
        ts.write_batches(db, org, [ts.SeriesBatch(sid, T0 + 10 * HOUR, 60, np.full(65, 1.0))])
        db.commit()
    drainer = sessions()
    written = threading.Event()
    try:
        # A quarter past 11: hour 10 has settled and is claimed, the run's row is cut to hour 11 (uncommitted).
        assert ts.drain_rollups(drainer, now=T0 + 11 * HOUR + ts.SETTLED_ALL, org_id=org) == 1

        def write() -> None:  # the next live minute of hour 11
            with sessions() as db:
                ts.write_batches(db, org, [ts.SeriesBatch(sid, T0 + 11 * HOUR + 15 * dt.timedelta(minutes=1), 60,
                                                          [6.0])])
                db.commit()
            written.set()

        thread = threading.Thread(target=write)
        thread.start()
        assert not written.wait(1.0)  # waiting on the drain's lock of the run's row
        drainer.commit()
        thread.join(30)
        assert written.is_set()
    finally:
        drainer.close()
    with sessions() as db:
        assert _runs(db, org) == {(sid, T0 + 11 * HOUR, 1)}  # found in the cut row: nothing added, nothing lost
        assert ts.drain_rollups(db, now=T0 + 12 * HOUR, org_id=org) == 0  # hour 11 has not settled yet
        assert ts.drain_rollups(db, now=T0 + 12 * HOUR + ts.SETTLED_ALL, org_id=org) == 1
        db.commit()
        hourly = _hourly(db, org, sid, T0, 12)
    assert hourly == {10: 1.0, 11: 6.0}


def test_two_drainers_split_the_queue_without_losing_or_doubling_an_hour(committed: Any) -> None:
    sessions, org, _ = committed
    with sessions() as db:
        sids = _series(db, org, BACKFILL_SERIES)
        ts.write_batches(db, org, [ts.SeriesBatch(s, T0, 60, np.full(48 * 60, float(k)))
                                   for k, s in enumerate(sids)])
        db.commit()
    total = len(sids) * 48
    first, second = sessions(), sessions()
    try:
        # Both claim while the other holds its claim: the second skips the first's rows (and its cut run).
        assert ts.drain_rollups(first, now=LATER, org_id=org, limit=500) == 500
        assert ts.drain_rollups(second, now=LATER, org_id=org, limit=500) == 500
        second.commit()
        first.commit()
    finally:
        first.close()
        second.close()
    done = 1000
    with sessions() as db:
        assert ts.rollups_pending(db, org, now=LATER) == total - done
        while got := ts.drain_rollups(db, now=LATER, org_id=org, limit=700):
            done += got
            db.commit()
        assert done == total
        got_cols = ts.read_rollups(db, org, sids, 3600, T0, T0 + 2 * DAY)
    for k, s in enumerate(sids):
        assert len(got_cols[s]) == 48 and (got_cols[s].count == 60).all() and (got_cols[s].max == k).all()


@given(st.lists(st.tuples(st.integers(1, 4), st.integers(0, 30)), max_size=40), st.booleans())
def test_hour_runs_are_the_sorted_distinct_pairs_in_runs(pairs: list[tuple[int, int]], in_order: bool) -> None:
    # Rows in key order take the path without a sort; any other order, or a repeated pair, the sort.
    if in_order:
        pairs = sorted(set(pairs))
    series = np.array([p[0] for p in pairs], dtype=np.int64)
    hours = np.array([p[1] for p in pairs], dtype=np.int64)
    sids, firsts, counts = ts._hour_runs(series, hours)
    expanded = [(int(s), int(f) + k) for s, f, n in zip(sids, firsts, counts, strict=True) for k in range(int(n))]
    assert expanded == sorted(set(pairs))
    # Runs are maximal: two runs of one series never touch.
    for i in range(1, sids.size):
        assert sids[i] != sids[i - 1] or firsts[i] > firsts[i - 1] + counts[i - 1]


# A write reads the stored rows of its hours, merges its points into them and writes each merged row back only if
# it is still the version read; these tests change the row between the read and the write back.
def _read_then(sessions: sessionmaker[Session], org: uuid.UUID, sid: int, stored_values: list[float]
               ) -> tuple[Session, ts.HourRows, ts.HourRows, Any]:
    """Commit `stored_values` from T0 on, then open a writer that has read the hour T0's stored row, with its new
    point (7.0 at minute 10) packed."""
    with sessions() as db:
        ts.write_batches(db, org, [ts.SeriesBatch(sid, T0, 60, stored_values)])
        db.commit()
    minute, value = 10, 7.0
    writer = sessions()
    rows, _, _ = ts.pack_batches([ts.SeriesBatch(sid, T0 + dt.timedelta(minutes=minute), 60, [value])])
    hour = int(rows.hours[0])
    stored, versions = ts._stored_versions(writer, [sid], hour, hour)
    assert len(stored) == 1
    return writer, rows, stored, versions


def _slots(sessions: sessionmaker[Session], org: uuid.UUID, sid: int) -> dict[int, float]:
    with sessions() as db:
        return {int((t - T0).total_seconds()) // 60: v for t, v in ts.read_points(db, org, sid, T0, T0 + HOUR)}


def test_a_row_another_writer_changed_since_the_read_is_merged_again_not_overwritten(committed: Any) -> None:
    sessions, org, sid = committed
    writer, rows, stored, versions = _read_then(sessions, org, sid, [1.0, 2.0])
    try:
        with sessions() as other:  # commits a point in the same hour row after the writer's read
            ts.write_batches(other, org, [ts.SeriesBatch(sid, T0 + dt.timedelta(minutes=30), 60, [5.0])])
            other.commit()
        changed = ts._write_back(writer, org, rows, stored, versions)
        assert len(changed) == 1
        writer.commit()
    finally:
        writer.close()
    assert _slots(sessions, org, sid) == {0: 1.0, 1: 2.0, 10: 7.0, 30: 5.0}


def test_a_write_back_waits_for_a_writer_of_the_same_row_then_merges_into_its_version(committed: Any) -> None:
    sessions, org, sid = committed
    writer, rows, stored, versions = _read_then(sessions, org, sid, [1.0])
    other = sessions()
    done = threading.Event()
    try:
        ts.write_batches(other, org, [ts.SeriesBatch(sid, T0 + dt.timedelta(minutes=30), 60, [5.0])])  # not committed

        def write_back() -> None:
            ts._write_back(writer, org, rows, stored, versions)
            writer.commit()
            done.set()

        thread = threading.Thread(target=write_back)
        thread.start()
        assert not done.wait(1.0)  # the row is locked by the other writer
        other.commit()
        thread.join(30)
        assert done.is_set()
    finally:
        other.close()
        writer.close()
    assert _slots(sessions, org, sid) == {0: 1.0, 10: 7.0, 30: 5.0}


def test_a_row_deleted_since_the_read_is_inserted_again_with_the_new_points(committed: Any) -> None:
    sessions, org, sid = committed
    writer, rows, stored, versions = _read_then(sessions, org, sid, [1.0])
    try:
        with sessions() as other:
            other.execute(text("DELETE FROM metric_points WHERE series_id = :s"), {"s": sid})
            other.commit()
        assert len(ts._write_back(writer, org, rows, stored, versions)) == 1
        writer.commit()
    finally:
        writer.close()
    assert _slots(sessions, org, sid) == {10: 7.0}


def test_a_kept_series_answer_is_given_again_only_while_its_rows_are_unchanged(committed: Any) -> None:
    sessions, org, _ = committed
    keys = [ts.SeriesKey("volume", f"vol-k{i}", "aws.ebs.VolumeReadOps", "count") for i in range(3)]

    def ensure(step: int = 60) -> tuple[dict[ts.SeriesKey, int], bool]:
        """ensure_series in its own transaction; whether it looked the series up (a statement through the
        session: the check of a kept answer is not one)."""
        asked = [ts.SeriesKey(k.entity_kind, k.entity_id, k.metric, k.unit, step_seconds=step) for k in keys]
        looked: list[str] = []

        def seen(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
            looked.append(statement)

        with sessions() as db:
            event.listen(db.get_bind(), "before_cursor_execute", seen)
            try:
                ids = ts.ensure_series(db, org, asked)
            finally:
                event.remove(db.get_bind(), "before_cursor_execute", seen)
            db.commit()
        return {k: ids[a] for k, a in zip(keys, asked, strict=True)}, bool(looked)

    first, looked = ensure()
    assert looked
    assert ensure() == (first, False)  # kept, checked by version
    with sessions() as db:  # another transaction renames one entity: its key now names a new series
        ts.rename_entity(db, org, "volume", "vol-k1", "vol-renamed")
        db.commit()
    again, looked = ensure()
    assert looked and again[keys[0]] == first[keys[0]] and again[keys[1]] != first[keys[1]]
    assert ensure() == (again, False)
    with sessions() as db:  # another changes a period: the lookup upserts it back to the one asked
        ts.set_step_seconds(db, [again[keys[2]]], 300)
        db.commit()
    assert ensure() == (again, True)
    with sessions() as db:
        assert db.scalar(text("SELECT step_seconds FROM metric_series WHERE id = :i"), {"i": again[keys[2]]}) == 60
    assert ensure(step=300)[1]  # other keys (another period asked): looked up
    with sessions() as db:  # and the answer kept within a transaction that wrote those rows is not trusted in it
        asked = [ts.SeriesKey(k.entity_kind, k.entity_id, k.metric, k.unit) for k in keys]
        ids = ts.ensure_series(db, org, asked)
        ts.rename_entity(db, org, "volume", "vol-k0", "vol-renamed-0")
        assert ts.ensure_series(db, org, asked)[asked[0]] != ids[asked[0]]
        db.rollback()


@hypothesis_settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 4), st.integers(0, 12)), min_size=1, max_size=20),
       st.lists(st.tuples(st.integers(1, 4), st.integers(0, 12), st.integers(1, 6)), max_size=6))
def test_runs_covered_by_the_queued_rows_queue_nothing_as_the_merge_finds(pairs: list[tuple[int, int]],
                                                                        queued: list[tuple[int, int, int]]) -> None:
    series = np.array([p[0] for p in pairs], dtype=np.int64)
    runs = ts._hour_runs(series, np.array([p[1] for p in pairs], dtype=np.int64))
    mine = [q for q in queued if q[0] in set(series.tolist())]  # the locked rows are those of the runs' series
    if not mine:
        return
    one_per_series = len({q[0] for q in mine}) == len(mine)
    covered = ts._covered(*runs, mine)
    nothing = ts._queue_writes(runs, mine) == ([], [])
    assert not covered or nothing
    if one_per_series and set(series.tolist()) <= {q[0] for q in mine}:
        assert covered == nothing
