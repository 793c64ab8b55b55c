"""The repository's reads that the services use: raw points of many series, a regular grid by aggregation
(the snapshot builder), columns at a chart's resolution with the raw tail (the metrics panels), series lookups."""

from __future__ import annotations

import datetime as dt
import math
import uuid
from typing import Any

import numpy as np
from headroom.accounts.models import Organization
from headroom.clusters.models import Cluster
from headroom.platform.security import new_external_id
from headroom.timeseries import repository as ts

T0 = dt.datetime(2026, 11, 2, 10, 0, tzinfo=dt.UTC)


def _org(db: Any, name: str = "tsread") -> uuid.UUID:
    org = Organization(name=name, slug=f"{name}-{uuid.uuid4().hex[:8]}", aws_external_id=new_external_id())
    db.add(org)
    db.flush()
    return org.id


def _cluster(db: Any, org: uuid.UUID, name: str = "c") -> uuid.UUID:
    cluster = Cluster(org_id=org, name=name, tikv_version="v8.5.1", deployment_kind="tiup")
    db.add(cluster)
    db.flush()
    return cluster.id


def _write(db: Any, org: uuid.UUID, key: ts.SeriesKey, values: dict[int, float],
           cluster: uuid.UUID | None = None) -> int:
    """Write {minute offset from T0: value}; return the series id."""
    sid = ts.ensure_series(db, org, [key], cluster_id=cluster)[key]
    ts.write_points(db, org, [(sid, T0 + dt.timedelta(minutes=m), v) for m, v in values.items()])
    return sid


def test_aggregate_raw_matches_rollup_semantics() -> None:
    base = int(T0.timestamp())
    # Minutes 0..9 with a gap at minute 3: buckets [0, 5) = 0,1,2,4 and [5, 10) = 5..9.
    t = np.array([base + 60 * i for i in range(10) if i != 3], dtype=np.int64)
    v = np.array([float(i) for i in range(10) if i != 3])
    cols = ts.aggregate_raw(t, v, 300)
    assert cols.t.tolist() == [base, base + 300]
    assert cols.avg.tolist() == [7 / 4, 7.0]
    assert cols.max.tolist() == [4.0, 9.0] and cols.min.tolist() == [0.0, 5.0]
    raw = ts.aggregate_raw(t, v, 60)
    assert raw.avg.tolist() == raw.max.tolist() == v.tolist()


def test_merge_tail_replaces_the_newest_buckets() -> None:
    head = ts.Columns(np.array([0, 300, 600], dtype=np.int64), np.array([1.0, 2.0, 3.0]), np.ones(3), np.ones(3))
    tail = ts.Columns(np.array([600, 900], dtype=np.int64), np.array([30.0, 40.0]), np.ones(2), np.ones(2))
    merged = ts.merge_tail(head, tail, 600)
    assert merged.t.tolist() == [0, 300, 600, 900] and merged.avg.tolist() == [1.0, 2.0, 30.0, 40.0]


def test_points_of_many_series_in_one_read_are_cut_to_the_window_and_the_org(db: Any) -> None:
    org, other = _org(db), _org(db, "other")
    a = _write(db, org, ts.SeriesKey("volume", "vol-a", "ebs.read_ops", "Count"), {m: float(m) for m in range(0, 130)})
    b = _write(db, org, ts.SeriesKey("volume", "vol-b", "ebs.read_ops", "Count"), {5: 1.5, 70: 2.5})
    empty = _write(db, org, ts.SeriesKey("volume", "vol-c", "ebs.read_ops", "Count"), {300: 9.0})
    foreign = _write(db, other, ts.SeriesKey("volume", "vol-x", "ebs.read_ops", "Count"), {10: 1.0})
    start, end = T0 + dt.timedelta(minutes=5), T0 + dt.timedelta(minutes=125)
    got = ts.read_points_many(db, org, [a, b, empty, foreign], start, end)
    t, v = got[a]
    assert v.tolist() == [float(m) for m in range(5, 125)]
    assert t.tolist() == [int((T0 + dt.timedelta(minutes=m)).timestamp()) for m in range(5, 125)]
    assert got[b][1].tolist() == [1.5, 2.5]
    assert got[empty][0].size == 0 and got[foreign][0].size == 0  # outside the window; another org's series
    # The single-series read agrees.
    assert [(int(ts_.timestamp()), val) for ts_, val in ts.read_points(db, org, a, start, end)] == list(
        zip(t.tolist(), v.tolist(), strict=True))


def test_grid_places_points_and_aggregates_steps_by_statistic(db: Any) -> None:
    org = _org(db)
    values = {0: 1.0, 1: 4.0, 2: 2.0, 6: 7.0, 7: 3.0}  # minutes 3-5 and 8-9 have no point
    ids = {how: _write(db, org, ts.SeriesKey("volume", f"vol-{how}", "ebs.read_ops", "Count"), values)
           for how in ("sum", "min", "max", "mean")}
    end = T0 + dt.timedelta(minutes=10)
    raw = ts.read_grid(db, org, {ids["sum"]: "sum"}, T0, end, 60)[ids["sum"]]
    assert [None if math.isnan(x) else x for x in raw.tolist()] == [1.0, 4.0, 2.0, None, None, None, 7.0, 3.0,
                                                                      None, None]
    grids = ts.read_grid(db, org, {sid: how for how, sid in ids.items()}, T0, end, 300)  # type: ignore[misc]
    # Steps [0, 5) = 1, 4, 2 and [5, 10) = 7, 3.
    assert grids[ids["sum"]].tolist() == [7.0, 10.0]
    assert grids[ids["min"]].tolist() == [1.0, 3.0]
    assert grids[ids["max"]].tolist() == [4.0, 7.0]
    assert grids[ids["mean"]].tolist() == [7 / 3, 5.0]
    # A step without a point is NaN; a series without any point in the window is left out.
    later = ts.read_grid(db, org, {ids["sum"]: "sum"}, T0 + dt.timedelta(minutes=5), T0 + dt.timedelta(minutes=15), 300)
    assert later[ids["sum"]][0] == 10.0 and math.isnan(later[ids["sum"]][1])
    assert ts.read_grid(db, org, {ids["sum"]: "sum"}, end, end + dt.timedelta(hours=1), 60) == {}


def _grid_of_each(raw: dict[int, ts.RawColumns], series: dict[int, str], start: dt.datetime, end: dt.datetime,
                  step: int) -> dict[int, np.ndarray]:
    """The grid of each series from its points, one series at a time (what read_grid computes for all at once)."""
    n, origin, out = int((end - start).total_seconds()) // step, int(start.timestamp()), {}
    for sid, (t, v) in raw.items():
        index = (t - origin) // step
        index, v = index[index < n], v[index < n]
        if not index.size:
            continue
        grid = np.full(n, np.nan)
        count = np.bincount(index, minlength=n)
        present = count > 0
        how = series[sid]
        if how in ("sum", "mean"):
            total = np.bincount(index, weights=v, minlength=n)
            grid[present] = total[present] / count[present] if how == "mean" else total[present]
        else:
            acc = np.full(n, np.inf if how == "min" else -np.inf)
            (np.minimum if how == "min" else np.maximum).at(acc, index, v)
            grid[present] = acc[present]
        out[sid] = grid
    return out


def test_the_grid_of_many_series_is_each_series_grid(db: Any, monkeypatch: Any) -> None:
    """Series of every aggregation, with gaps, over several hours and several queries (READ_MANY_SERIES): each
    grid is, bit for bit, the one its own points give, at every step and for windows off the hour."""
    monkeypatch.setattr(ts, "READ_MANY_SERIES", 3)  # several queries' worth of series
    org = _org(db)
    rng = np.random.default_rng(7)
    series: dict[int, str] = {}
    for i in range(8):
        minutes = sorted(rng.choice(300, size=int(rng.integers(1, 250)), replace=False).tolist())
        values = {m: float(np.round(rng.normal(100, 40), int(rng.integers(0, 4)))) + 0.1 for m in minutes}
        sid = _write(db, org, ts.SeriesKey("volume", f"vol-{i}", "ebs.read_ops", "Count"), values)
        series[sid] = ("sum", "mean", "min", "max")[i % 4]
    series[_write(db, org, ts.SeriesKey("volume", "vol-late", "ebs.read_ops", "Count"), {400: 1.0})] = "sum"
    for start_minute, end_minute, step in ((0, 300, 60), (7, 293, 60), (3, 298, 300), (0, 300, 300), (13, 250, 3600),
                                           (0, 360, 3600)):
        start, end = T0 + dt.timedelta(minutes=start_minute), T0 + dt.timedelta(minutes=end_minute)
        got = ts.read_grid(db, org, series, start, end, step)  # type: ignore[arg-type]
        want = _grid_of_each(ts.read_points_many(db, org, list(series), start, end), series, start, end, step)
        assert got.keys() == want.keys() and len(want) == 8, (start_minute, step)
        for sid, grid in want.items():
            assert got[sid].tobytes() == grid.tobytes(), (start_minute, step, series[sid])


def test_the_buckets_of_many_series_are_each_series_buckets(db: Any, monkeypatch: Any) -> None:
    """aggregate_raw_many (the raw tail of a rollup read, every series at once) gives, bit for bit, aggregate_raw of
    each series' own points, over several queries' worth of series and windows off the bucket."""
    monkeypatch.setattr(ts, "READ_MANY_SERIES", 3)
    org = _org(db)
    rng = np.random.default_rng(11)
    ids = []
    for i in range(7):
        minutes = sorted(rng.choice(200, size=int(rng.integers(1, 180)), replace=False).tolist())
        values = {m: float(np.round(rng.normal(50, 30), int(rng.integers(0, 4)))) + 0.1 for m in minutes}
        ids.append(_write(db, org, ts.SeriesKey("volume", f"vol-{i}", "ebs.read_ops", "Count"), values))
    ids.append(_write(db, org, ts.SeriesKey("volume", "vol-late", "ebs.read_ops", "Count"), {400: 1.0}))
    for start_minute, end_minute, resolution in ((0, 200, 300), (7, 193, 300), (13, 200, 3600), (0, 120, 60)):
        start, end = T0 + dt.timedelta(minutes=start_minute), T0 + dt.timedelta(minutes=end_minute)
        got = ts.aggregate_raw_many(db, org, ids, start, end, resolution)
        want = {sid: ts.aggregate_raw(t, v, resolution)
                for sid, (t, v) in ts.read_points_many(db, org, ids, start, end).items() if t.size}
        assert got.keys() == want.keys() and len(want) == 7, (start_minute, resolution)
        for sid, cols in want.items():
            for name in ("t", "avg", "max", "min"):
                mine, theirs = getattr(got[sid], name), getattr(cols, name)
                assert mine.dtype == theirs.dtype and mine.tobytes() == theirs.tobytes(), (start_minute, name)


def test_columns_take_rollups_and_rebuild_the_newest_two_hours_from_raw(db: Any) -> None:
    org = _org(db)
    sid = _write(db, org, ts.SeriesKey("volume", "vol-r", "ebs.read_ops", "Count"), {m: 10.0 for m in range(0, 300)})
    ts.refresh_rollups(db, T0, T0 + dt.timedelta(hours=5))
    # A late point lands after the rollups were computed: only the raw tail sees it.
    ts.write_points(db, org, [(sid, T0 + dt.timedelta(minutes=290), 70.0)])
    now = T0 + dt.timedelta(hours=5)
    cols = ts.read_columns(db, org, [sid], T0, now, 300, now)[sid]
    assert len(cols) == 60 and cols.t[0] == int(T0.timestamp())
    assert cols.avg[-2] == (4 * 10.0 + 70.0) / 5 and cols.max[-2] == 70.0  # minutes 290-294, from raw
    assert (cols.avg[:-2] == 10.0).all()
    raw = ts.read_columns(db, org, [sid], now - dt.timedelta(minutes=15), now, 60, now)[sid]
    assert raw.avg.tolist() == raw.max.tolist() == [10.0] * 5 + [70.0] + [10.0] * 9


def test_series_lookups_by_identity_and_by_cluster(db: Any) -> None:
    org = _org(db)
    cluster, other_cluster = _cluster(db, org), _cluster(db, org, "d")
    node = ts.SeriesKey("tikv_node", "10.0.0.1:20160", "tikv.block_cache_hit", "ops/s")
    labelled = ts.SeriesKey("tikv_node", "10.0.0.1:20160", "tikv.thread_cpu", "cores", (("pool", "grpc"),))
    volume = ts.SeriesKey("volume", "vol-l", "ebs.read_ops", "Count")
    ids = ts.ensure_series(db, org, [node, labelled, volume], cluster_id=cluster)
    ts.ensure_series(db, org, [ts.SeriesKey("tikv_node", "10.0.0.9:20160", "tikv.block_cache_hit", "ops/s")],
                     cluster_id=other_cluster)
    found = ts.find_series(db, org, [("volume", "vol-l", "ebs.read_ops"), ("tikv_node", "10.0.0.1:20160",
                                                                            "tikv.block_cache_hit"),
                                     ("volume", "vol-missing", "ebs.read_ops")])
    assert {k: s.id for k, s in found.items()} == {("volume", "vol-l", "ebs.read_ops"): ids[volume],
                                                   ("tikv_node", "10.0.0.1:20160", "tikv.block_cache_hit"): ids[node]}
    assert found[("volume", "vol-l", "ebs.read_ops")].unit == "Count"
    listed = {s.id: s for s in ts.cluster_series(db, org, cluster)}
    assert set(listed) == set(ids.values())
    assert listed[ids[labelled]].labels == {"pool": "grpc"} and listed[ids[node]].entity_kind == "tikv_node"
    assert ts.cluster_series(db, _org(db, "x"), cluster) == []
