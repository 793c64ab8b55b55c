"""The packed time-series store on a real PostgreSQL: idempotent writes, slot merging, rollups, retention."""

from __future__ import annotations

import datetime as dt
import math
import uuid
from typing import Any

import numpy as np
import pytest
from headroom.accounts.models import Organization
from headroom.platform.security import new_external_id
from headroom.timeseries import repository as ts
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

T0 = dt.datetime(2026, 11, 2, 10, 0, tzinfo=dt.UTC)


def _org(db: Any, name: str = "ts") -> uuid.UUID:
    org = Organization(name=name, slug=f"{name}-{uuid.uuid4().hex[:8]}", aws_external_id=new_external_id())
    db.add(org)
    db.flush()
    return org.id


def _series(db: Any, org_id: uuid.UUID, metric: str = "aws.ebs.VolumeReadOps") -> int:
    key = ts.SeriesKey("volume", "vol-0abc", metric, "count")
    return ts.ensure_series(db, org_id, [key])[key]


def _count_rows(db: Any, series_id: int) -> int:
    return int(db.execute(text("SELECT count(*) FROM metric_points WHERE series_id = :s"), {"s": series_id}).scalar_one())


def test_points_round_trip_across_hours(db: Any) -> None:
    org = _org(db)
    sid = _series(db, org)
    points = [(sid, T0 + dt.timedelta(minutes=m), float(m)) for m in range(0, 150)]
    result = ts.write_points(db, org, points)
    assert (result.points, result.rows) == (150, 3)  # 10:00-12:29 spans three hour rows
    assert ts.read_points(db, org, sid, T0, T0 + dt.timedelta(hours=3)) == [(t, v) for _, t, v in points]


def test_rewriting_a_window_is_a_no_op(db: Any) -> None:
    org = _org(db)
    sid = _series(db, org)
    points = [(sid, T0 + dt.timedelta(minutes=m), 1.5 * m) for m in range(90)]
    ts.write_points(db, org, points)
    before = ts.read_points(db, org, sid, T0, T0 + dt.timedelta(hours=2))
    ts.write_points(db, org, points)
    ts.write_points(db, org, points[30:60])
    assert ts.read_points(db, org, sid, T0, T0 + dt.timedelta(hours=2)) == before
    assert _count_rows(db, sid) == 2


def test_late_points_fill_their_slots_without_touching_others(db: Any) -> None:
    org = _org(db)
    sid = _series(db, org)
    ts.write_points(db, org, [(sid, T0 + dt.timedelta(minutes=m), 1.0) for m in range(0, 60, 2)])
    ts.write_points(db, org, [(sid, T0 + dt.timedelta(minutes=m), 2.0) for m in range(1, 60, 2)])
    values = [v for _, v in ts.read_points(db, org, sid, T0, T0 + dt.timedelta(hours=1))]
    assert values == [1.0, 2.0] * 30


def test_nan_and_unaligned_points_are_counted_and_dropped(db: Any) -> None:
    org = _org(db)
    sid = _series(db, org)
    result = ts.write_points(
        db,
        org,
        [(sid, T0, math.nan), (sid, T0 + dt.timedelta(seconds=30), 1.0), (sid, T0 + dt.timedelta(minutes=1), 3.0),
         (sid, T0 + dt.timedelta(minutes=2), math.inf)],
    )
    assert (result.points, result.dropped_nan, result.dropped_unaligned) == (1, 2, 1)
    assert ts.read_points(db, org, sid, T0, T0 + dt.timedelta(hours=1)) == [(T0 + dt.timedelta(minutes=1), 3.0)]


def test_reads_are_scoped_to_the_org(db: Any) -> None:
    org_a, org_b = _org(db, "a"), _org(db, "b")
    sid = _series(db, org_a)
    ts.write_points(db, org_a, [(sid, T0, 42.0)])
    assert ts.read_points(db, org_b, sid, T0, T0 + dt.timedelta(hours=1)) == []
    assert ts.read_rollup(db, org_b, sid, 300, T0, T0 + dt.timedelta(hours=1)) == []


def test_rollups_aggregate_avg_max_min_count(db: Any) -> None:
    org = _org(db)
    sid = _series(db, org)
    # 10:00-10:09: values 0..9; 5-minute buckets hold 0..4 and 5..9.
    ts.write_points(db, org, [(sid, T0 + dt.timedelta(minutes=m), float(m)) for m in range(10)])
    ts.refresh_rollups(db, T0, T0 + dt.timedelta(hours=1))
    five = ts.read_rollup(db, org, sid, 300, T0, T0 + dt.timedelta(hours=1))
    assert [(p.ts, p.avg, p.max, p.min, p.count) for p in five] == [
        (T0, 2.0, 4.0, 0.0, 5),
        (T0 + dt.timedelta(minutes=5), 7.0, 9.0, 5.0, 5),
    ]
    hourly = ts.read_rollup(db, org, sid, 3600, T0 - dt.timedelta(hours=1), T0 + dt.timedelta(hours=2))
    assert [(p.ts, p.avg, p.max, p.min, p.count) for p in hourly] == [(T0, 4.5, 9.0, 0.0, 10)]


def test_rollups_refresh_is_idempotent_and_picks_up_new_points(db: Any) -> None:
    org = _org(db)
    sid = _series(db, org)
    ts.write_points(db, org, [(sid, T0, 10.0)])
    ts.refresh_rollups(db, T0, T0 + dt.timedelta(hours=1))
    ts.refresh_rollups(db, T0, T0 + dt.timedelta(hours=1))
    ts.write_points(db, org, [(sid, T0 + dt.timedelta(minutes=1), 20.0)])
    ts.refresh_rollups(db, T0, T0 + dt.timedelta(hours=1))
    (point,) = ts.read_rollup(db, org, sid, 300, T0, T0 + dt.timedelta(minutes=5))
    assert (point.avg, point.max, point.min, point.count) == (15.0, 20.0, 10.0, 2)
    rows = db.execute(text("SELECT count(*) FROM metric_rollups WHERE series_id = :s"), {"s": sid}).scalar_one()
    assert rows == 2  # one per resolution for the day


def test_retention_drops_whole_old_partitions(db: Any) -> None:
    org = _org(db)
    sid = _series(db, org)
    old = T0 - dt.timedelta(days=40)
    ts.write_points(db, org, [(sid, old, 1.0), (sid, T0, 2.0)])
    dropped = ts.apply_retention(db, now=T0, raw_days=35, rollup_days=400)
    assert ts.points_partition_name(ts.day_floor(old)) in dropped
    assert ts.points_partition_name(ts.day_floor(T0)) not in dropped
    assert [v for _, v in ts.read_points(db, org, sid, old, T0 + dt.timedelta(hours=1))] == [2.0]


def test_ensure_partitions_is_idempotent(db: Any) -> None:
    start = dt.datetime(2031, 1, 30, tzinfo=dt.UTC)
    first = ts.ensure_partitions(db, start, start + dt.timedelta(days=2))
    assert first == 3 + 2  # three days; January and February rollup months
    assert ts.ensure_partitions(db, start, start + dt.timedelta(days=2)) == 0


def test_series_are_unique_per_entity_metric_and_labels(db: Any) -> None:
    org = _org(db)
    a = ts.SeriesKey("tikv_node", "store-1", "tikv.thread_cpu", "cores", (("pool", "apply"),))
    b = ts.SeriesKey("tikv_node", "store-1", "tikv.thread_cpu", "cores", (("pool", "sched"),))
    first = ts.ensure_series(db, org, [a, b])
    again = ts.ensure_series(db, org, [b, a])
    assert first == again and first[a] != first[b]


@pytest.mark.parametrize("resolution", [60, 86400])
def test_unknown_rollup_resolution_is_an_error(db: Any, resolution: int) -> None:
    with pytest.raises(ValueError, match="resolution"):
        ts.read_rollup(db, uuid.uuid4(), 1, resolution, T0, T0)


def test_watermarks_only_move_forward(db: Any) -> None:
    from headroom.timeseries import watermarks as wm

    org = _org(db)
    sid = _series(db, org)
    source = uuid.uuid4()
    assert wm.get_watermarks(db, org, "cloudwatch", source, [sid]) == {}
    wm.advance_watermarks(db, org, "cloudwatch", source, {sid: T0})
    wm.advance_watermarks(db, org, "cloudwatch", source, {sid: T0 - dt.timedelta(hours=1)})
    assert wm.get_watermarks(db, org, "cloudwatch", source, [sid]) == {sid: T0}
    wm.advance_watermarks(db, org, "cloudwatch", source, {sid: T0 + dt.timedelta(minutes=5)})
    assert wm.get_watermarks(db, org, "cloudwatch", source, [sid]) == {sid: T0 + dt.timedelta(minutes=5)}
    assert wm.get_watermarks(db, org, "prometheus", source, [sid]) == {}


def test_watermarks_of_many_series_each_keep_their_own_time(db: Any) -> None:
    from headroom.timeseries import watermarks as wm

    org = _org(db)
    keys = [ts.SeriesKey("volume", f"vol-{i}", "aws.ebs.VolumeReadOps", "count") for i in range(3)]
    ids = ts.ensure_series(db, org, keys)
    a, b, c = (ids[k] for k in keys)
    source = uuid.uuid4()
    east = dt.timezone(dt.timedelta(hours=2))
    marks = {a: T0, b: T0, c: (T0 + dt.timedelta(minutes=7, microseconds=250)).astimezone(east)}
    wm.advance_watermarks(db, org, "cloudwatch", source, marks)
    assert wm.get_watermarks(db, org, "cloudwatch", source, [a, b, c]) == marks


def test_batches_take_the_copy_fast_path_then_merge_the_overlap(db: Any) -> None:
    org = _org(db)
    sid = _series(db, org)
    day = [float(i) for i in range(24 * 60)]
    first = ts.write_batches(db, org, [ts.SeriesBatch(sid, T0, 60, day)])
    assert (first.points, first.rows) == (1440, 24)
    # A re-read of the last 90 minutes with one revised and one late value: only those change.
    overlap_start = T0 + dt.timedelta(minutes=1440 - 90)
    revised = day[-90:]
    revised[10] = -1.0
    second = ts.write_batches(db, org, [ts.SeriesBatch(sid, overlap_start, 60, revised),
                                        ts.SeriesBatch(sid, T0 + dt.timedelta(days=1), 60, [7.0])])
    assert (second.points, second.rows) == (91, 3)
    stored = ts.read_points(db, org, sid, T0, T0 + dt.timedelta(days=2))
    expected = list(zip([T0 + dt.timedelta(minutes=i) for i in range(1441)], day + [7.0], strict=True))
    expected[1440 - 90 + 10] = (expected[1440 - 90 + 10][0], -1.0)
    assert stored == expected
    assert _count_rows(db, sid) == 25


def test_batches_at_five_minutes_and_with_gaps(db: Any) -> None:
    org = _org(db)
    sid = _series(db, org)
    values = [1.0, None, math.nan, 4.0]
    result = ts.write_batches(db, org, [ts.SeriesBatch(sid, T0 + dt.timedelta(minutes=55), 300, values)])
    assert (result.points, result.dropped_nan) == (2, 2)
    assert ts.read_points(db, org, sid, T0, T0 + dt.timedelta(hours=2)) == [
        (T0 + dt.timedelta(minutes=55), 1.0), (T0 + dt.timedelta(minutes=70), 4.0)]
    unaligned = ts.write_batches(db, org, [ts.SeriesBatch(sid, T0 + dt.timedelta(seconds=30), 60, [1.0, 2.0])])
    assert (unaligned.points, unaligned.dropped_unaligned) == (0, 2)


def test_read_many_rollups_in_one_query_matches_single_reads(db: Any) -> None:
    org = _org(db)
    keys = [ts.SeriesKey("volume", f"vol-{i}", "aws.ebs.VolumeReadOps", "count") for i in range(3)]
    ids = ts.ensure_series(db, org, keys)
    for n, sid in enumerate(ids.values()):
        ts.write_batches(db, org, [ts.SeriesBatch(sid, T0, 60, [float(n * 100 + m) for m in range(120)])])
    ts.refresh_rollups(db, T0, T0 + dt.timedelta(hours=2))
    many = ts.read_rollups(db, org, list(ids.values()), 3600, T0, T0 + dt.timedelta(hours=2))
    for sid in ids.values():
        single = ts.read_rollup(db, org, sid, 3600, T0, T0 + dt.timedelta(hours=2))
        cols = many[sid]
        assert [dt.datetime.fromtimestamp(int(e), dt.UTC) for e in cols.epoch_seconds] == [p.ts for p in single]
        assert cols.avg.tolist() == [p.avg for p in single]
        assert cols.max.tolist() == [p.max for p in single] and cols.min.tolist() == [p.min for p in single]
        assert cols.count.tolist() == [60, 60]
    other = ts.read_rollups(db, _org(db, "other"), list(ids.values()), 3600, T0, T0 + dt.timedelta(hours=2))
    assert all(len(c) == 0 for c in other.values())


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False, width=64)), min_size=1,
                max_size=180), st.integers(min_value=0, max_value=59))
def test_numpy_copy_encoding_round_trips_any_values(db: Any, values: list[float | None], offset: int) -> None:
    org = _org(db)
    sid = _series(db, org)
    start = T0 + dt.timedelta(minutes=offset)
    ts.write_batches(db, org, [ts.SeriesBatch(sid, start, 60, values)])
    expected = [(start + dt.timedelta(minutes=i), v) for i, v in enumerate(values) if v is not None]
    assert ts.read_points(db, org, sid, T0, T0 + dt.timedelta(hours=5)) == expected


def test_node_series_are_per_cluster_and_volume_series_per_org(db: Any) -> None:
    """Two clusters reusing a store address keep separate series; a volume keeps one series and its cluster
    attribute follows the latest mapping."""
    from headroom.clusters.models import Cluster
    from headroom.timeseries.models import MetricSeries

    org = _org(db, "scopes")
    c1, c2 = (Cluster(org_id=org, name=n, tikv_version="8.5.0", deployment_kind="tiup") for n in ("prod", "staging"))
    db.add_all([c1, c2])
    db.flush()
    node = ts.SeriesKey("tikv_node", "10.0.1.5:20160", "tikv.block_cache_hit_ratio", "ratio")
    in_c1 = ts.ensure_series(db, org, [node], cluster_id=c1.id)[node]
    in_c2 = ts.ensure_series(db, org, [node], cluster_id=c2.id)[node]
    assert in_c1 != in_c2
    assert ts.ensure_series(db, org, [node], cluster_id=c1.id)[node] == in_c1  # idempotent
    unmapped = ts.ensure_series(db, org, [node])[node]  # no cluster yet: its own series, still unique
    assert unmapped not in (in_c1, in_c2) and ts.ensure_series(db, org, [node])[node] == unmapped

    vol = ts.SeriesKey("volume", "vol-0abc", "ebs.read_ops", "count")
    first = ts.ensure_series(db, org, [vol])[vol]
    assert ts.ensure_series(db, org, [vol], cluster_id=c2.id)[vol] == first
    assert db.get(MetricSeries, first).cluster_id == c2.id  # type: ignore[union-attr]
    assert ts.ensure_series(db, org, [vol])[vol] == first
    assert db.get(MetricSeries, first).cluster_id == c2.id  # type: ignore[union-attr]  # None never unmaps

    # One call with the same identity twice (labels in another order) and several kinds at once.
    a = ts.SeriesKey("tikv_node", "n1", "m", "u", (("db", "kv"), ("cf", "default")))
    b = ts.SeriesKey("tikv_node", "n1", "m", "u", (("cf", "default"), ("db", "kv")))
    got = ts.ensure_series(db, org, [a, b, vol], cluster_id=c1.id)
    assert got[a] == got[b] and got[vol] == first


def test_a_series_whose_unit_or_period_changed_is_updated_among_unchanged_and_new_ones(db: Any) -> None:
    """ensure_series upserts only the series that are missing or changed; those still get what they are given."""
    from sqlalchemy import text

    from headroom.clusters.models import Cluster

    org = _org(db, "restep")
    cluster = Cluster(org_id=org, name="prod", tikv_version="8.5.0", deployment_kind="tiup")
    db.add(cluster)
    db.flush()
    kept = ts.SeriesKey("instance", "i-1", "ec2.ebs_read_ops", "count", step_seconds=300)
    restepped = ts.SeriesKey("instance", "i-1", "ec2.ebs_write_ops", "count", step_seconds=300)
    node = ts.SeriesKey("tikv_node", "n1", "tikv.io", "bytes")
    first = ts.ensure_series(db, org, [kept, restepped, node], cluster_id=cluster.id)
    detailed = ts.SeriesKey("instance", "i-1", "ec2.ebs_write_ops", "count", step_seconds=60)  # detailed monitoring
    renamed_unit = ts.SeriesKey("tikv_node", "n1", "tikv.io", "bytes/s")
    new = ts.SeriesKey("instance", "i-1", "ec2.cpu", "percent", step_seconds=300)
    got = ts.ensure_series(db, org, [kept, detailed, renamed_unit, new], cluster_id=cluster.id)
    assert (got[kept], got[detailed], got[renamed_unit]) == (first[kept], first[restepped], first[node])
    assert got[new] not in first.values()
    stored = dict(db.execute(text("SELECT id, unit || '/' || step_seconds FROM metric_series WHERE id = ANY(:ids)"),
                             {"ids": list(got.values())}).all())
    assert stored == {got[kept]: "count/300", got[detailed]: "count/60", got[renamed_unit]: "bytes/s/60",
                      got[new]: "percent/300"}


def test_batches_of_one_series_in_different_copy_groups_merge_exactly(db: Any) -> None:
    """write_batches packs a group of batches at a time inside its COPY; with one batch per group, two batches
    touching the same hour collide mid-COPY (new rows) or in the overlap (existing rows): both must come out as
    if the later batch had been written after the earlier one."""
    org = _org(db)
    sid = _series(db, org)
    first = ts.SeriesBatch(sid, T0, 60, [1.0] * 10)  # minutes 0-9
    later = ts.SeriesBatch(sid, T0 + dt.timedelta(minutes=5), 60, [2.0] * 10)  # minutes 5-14
    result = ts.write_batches(db, org, [first, later], slice_rows=1)  # every batch its own group
    assert result.points == 15 and result.rows == 1  # 15 distinct minutes
    got = dict(ts.read_points(db, org, sid, T0, T0 + dt.timedelta(hours=1)))
    assert [got[T0 + dt.timedelta(minutes=m)] for m in range(15)] == [1.0] * 5 + [2.0] * 10
    # Now the hour exists: both batches go to the overlap merge, duplicates combined before the upsert.
    again = [ts.SeriesBatch(sid, T0 + dt.timedelta(minutes=14), 60, [3.0, 3.0]),
             ts.SeriesBatch(sid, T0 + dt.timedelta(minutes=15), 60, [4.0]),
             ts.SeriesBatch(sid, T0 + dt.timedelta(hours=1), 60, [5.0])]  # and a fresh hour in its own group
    ts.write_batches(db, org, again, slice_rows=1)
    got = dict(ts.read_points(db, org, sid, T0, T0 + dt.timedelta(hours=2)))
    assert got[T0 + dt.timedelta(minutes=14)] == 3.0 and got[T0 + dt.timedelta(minutes=15)] == 4.0
    assert got[T0 + dt.timedelta(hours=1)] == 5.0 and len(got) == 17
    assert _count_rows(db, sid) == 2


def _plan_nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    return [plan, *(node for child in plan.get("Plans", []) for node in _plan_nodes(child))]


def test_a_write_looks_up_its_stored_rows_by_index_while_a_backfill_fills_its_partitions(db: Any) -> None:
    # A backfill: 250 series written over 2 days, their partitions analysed then (as autovacuum does while a
    # backfill fills them), then the next 50 series' lookup (as bench/timeseries_bench.py writes). Read as
    # `series_id = ANY(...)`, the planner took those series for a fifth of the rows and scanned every partition.
    org = _org(db)
    keys = [ts.SeriesKey("volume", f"vol-{i:04d}", "aws.ebs.VolumeReadOps", "count") for i in range(300)]
    ids = ts.ensure_series(db, org, keys)
    sids = [ids[k] for k in keys]
    start = dt.datetime(2031, 3, 1, tzinfo=dt.UTC)
    values = np.arange(2 * 1440, dtype=np.float64)
    ts.write_batches(db, org, [ts.SeriesBatch(s, start, 60, values) for s in sids[:250]])
    for day in (start, start + dt.timedelta(days=1)):
        db.execute(text(f"ANALYZE {ts.points_partition_name(day)}"))
    # JIT compilation is off for the rest of the write's transaction (the lookup's estimates used to cross
    # jit_above_cost on a partition without statistics).
    assert db.execute(text("SHOW jit")).scalar_one() == "off"
    conn = db.connection().connection.driver_connection
    with conn.cursor() as cur:
        cur.execute("EXPLAIN (FORMAT JSON) " + ts.STORED_ROWS_QUERY,
                    {"sids": "{" + ",".join(map(str, sids[250:])) + "}", "lo": start,
                     "hi": start + dt.timedelta(days=2)})
        nodes = _plan_nodes(cur.fetchone()[0][0]["Plan"])
    scanned = [n for n in nodes if n.get("Relation Name", "").startswith("metric_points")]
    assert len(scanned) >= 2  # the two days' partitions
    assert {n["Node Type"] for n in scanned} <= {"Index Scan", "Index Only Scan", "Bitmap Heap Scan"}
    # The lookup itself finds the written series' rows and none of the others'.
    first_hour = int(start.timestamp()) // 3600
    stored = ts._stored_rows(db, sids[240:], first_hour, first_hour + 47)
    assert sorted(set(stored.series.tolist())) == sorted(sids[240:250])
    assert len(stored) == 10 * 48
