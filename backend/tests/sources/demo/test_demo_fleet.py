"""The demo fleet flows through the same store as collected data: inventory, configs, series, points."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import numpy as np
import pytest
from headroom.accounts.models import Organization
from headroom.domain.snapshot.scenario import Monitoring, load_scenario
from headroom.domain.snapshot.simulate import simulate
from headroom.inventory import service as inventory
from headroom.inventory.models import Instance, TikvConfig, TikvNode, Volume
from headroom.models import import_all_models
from headroom.platform.security import new_external_id
from headroom.sources.demo import service as demo
from headroom.timeseries import repository as timeseries
from sqlalchemy import event, func, select, text

NOW = dt.datetime(2026, 11, 2, 12, 0, tzinfo=dt.UTC)
import_all_models()  # the inventory rows reference aws_connections: every mapped class must be known when run alone


def _org(db: Any) -> uuid.UUID:
    org = Organization(name="d", slug=f"d-{uuid.uuid4().hex[:8]}", aws_external_id=new_external_id())
    db.add(org)
    db.flush()
    return org.id


def _stored_points(db: Any, org_id: uuid.UUID) -> int:
    return int(
        db.execute(
            text(
                # A packed row's bytes 4-11 are its presence bitmap (headroom.timeseries.codec): one bit a point.
                "SELECT coalesce(sum(bit_count(substring(p.vals FROM 4 FOR 8))), 0) FROM metric_points p "
                "WHERE p.org_id = :o"
            ),
            {"o": org_id},
        ).scalar_one()
    )


def test_demo_window_lands_in_the_store_exactly_once(db: Any) -> None:
    org_id = _org(db)
    cluster = demo.seed_demo_cluster(db, org_id)
    assert demo.seed_demo_cluster(db, org_id).id == cluster.id  # once per org
    scenario = load_scenario(demo.default_scenario_path())
    start, end = NOW - dt.timedelta(hours=2), NOW
    first = demo.ingest_window(db, cluster, scenario, start, end)

    expected = simulate(scenario, hours=2, seed=demo._seed_for(cluster), start=start)
    expected_points = sum(v is not None for s in expected.series for v in s.values)
    assert first["points"] == expected_points > 0
    assert _stored_points(db, org_id) == expected_points

    nodes = db.scalars(select(TikvNode).where(TikvNode.cluster_id == cluster.id)).all()
    assert sorted(n.store_address for n in nodes) == sorted(n.address for n in expected.nodes)
    assert db.scalar(select(func.count()).select_from(Instance).where(Instance.org_id == org_id)) == len(expected.instances)
    assert db.scalar(select(func.count()).select_from(Volume).where(Volume.org_id == org_id)) == len(expected.volumes)
    assert db.scalar(select(func.count()).select_from(TikvConfig).where(TikvConfig.org_id == org_id)) == len(nodes)

    again = demo.ingest_window(db, cluster, scenario, start, end)
    assert again["points"] == expected_points
    assert _stored_points(db, org_id) == expected_points  # no duplicates
    assert db.scalar(select(func.count()).select_from(TikvConfig).where(TikvConfig.org_id == org_id)) == len(nodes)
    # Two hours per series queued by the writes; at NOW the newer one has not settled, so it is no backlog yet.
    assert timeseries.rollups_pending(db, org_id, now=NOW) == first["series"]
    settled = NOW + timeseries.SETTLED_ALL
    assert timeseries.rollups_pending(db, org_id, now=settled) == 2 * first["series"]
    timeseries.drain_rollups(db, now=settled, org_id=org_id)
    rollups = db.execute(text("SELECT count(*) FROM metric_rollups WHERE org_id = :o"), {"o": org_id}).scalar_one()
    assert rollups == 2 * first["series"]  # one day, two resolutions per series


def test_incremental_ingest_resumes_from_the_watermark(db: Any) -> None:
    org_id = _org(db)
    cluster = demo.seed_demo_cluster(db, org_id)
    scenario = load_scenario(demo.default_scenario_path())
    demo.ingest_window(db, cluster, scenario, NOW - dt.timedelta(hours=1), NOW)
    later = NOW + dt.timedelta(minutes=30)
    result = demo.ingest_demo(db, cluster, now=later, scenario=scenario)
    assert result["points"] > 0
    newest = db.execute(
        text("SELECT max(watermark_at) FROM ingest_watermarks WHERE source_id = :c"), {"c": cluster.id}
    ).scalar_one()
    assert newest == later - dt.timedelta(minutes=1)
    # The window re-simulated was the 10-minute overlap before the watermark, taken back to the 5-minute boundary
    # where the EC2 periods end (11:59 - 10 min = 11:49 -> 11:45), plus the new 30 minutes, not the 7-day
    # backfill of a first run. (The resume point is the period boundary 11:45, not 11:49.)
    resumed_from = NOW - dt.timedelta(minutes=15)
    expected = simulate(scenario, hours=(later - resumed_from).total_seconds() / 3600,
                        seed=demo._seed_for(cluster), start=resumed_from)
    assert result["points"] == sum(v is not None for s in expected.series for v in s.values)


def test_a_demo_node_pointed_at_a_live_status_port_keeps_its_address_and_the_config_read_there(db: Any) -> None:
    org_id = _org(db)
    cluster = demo.seed_demo_cluster(db, org_id)
    scenario = load_scenario(demo.default_scenario_path())
    demo.ingest_window(db, cluster, scenario, NOW - dt.timedelta(hours=1), NOW)
    nodes = db.scalars(select(TikvNode).where(TikvNode.cluster_id == cluster.id).order_by(TikvNode.store_address)).all()
    node, other = nodes[0], nodes[1]
    simulated_address = node.status_address
    simulated = db.scalars(select(TikvConfig).where(TikvConfig.node_id == node.id)).one()
    # an operator points the node at a live status port, and Headroom reads its config there
    node.status_address = "127.0.0.1:20180"
    live = {"storage": {"block-cache": {"capacity": "8GiB"}}}
    inventory.store_version(db, node, live, source="status_port", raw_text=None, now=NOW)
    db.flush()

    def latest(n: TikvNode) -> TikvConfig:
        return db.scalars(select(TikvConfig).where(TikvConfig.node_id == n.id)
                          .order_by(TikvConfig.version.desc())).first()

    demo.ingest_demo(db, cluster, now=NOW + dt.timedelta(minutes=5), scenario=scenario)
    db.refresh(node)
    assert node.status_address == "127.0.0.1:20180"  # the minute's ingest keeps it
    assert (latest(node).source, latest(node).config) == ("status_port", live)
    assert latest(other).version == 1 and other.status_address.endswith(":20180")  # the rest stay simulated

    # pointed back at its simulated address, the node gets the simulated config again as its newest version
    node.status_address = simulated_address
    db.flush()
    demo.ingest_demo(db, cluster, now=NOW + dt.timedelta(minutes=10), scenario=scenario)
    assert (latest(node).version, latest(node).source) == (3, "simulated")
    assert latest(node).config == simulated.config


@pytest.mark.parametrize("monitoring", ["minute", "basic"])
def test_the_live_stream_continues_the_backfilled_history(db: Any, monitoring: str) -> None:
    """Regression: BurstBalance jumped from 31 % to 66 % in one minute where the history met the live stream (each
    window warmed up afresh, with the nightly spike and growth counted from its own start). The live stream must
    continue the history: the same values a single run over both gives, and no jump between the last stored
    minute and the first live one larger than a minute of drain or refill allows. In basic monitoring too, where
    the instance balances the live stream resumes from are 5-minute datapoints and some minutes are missing."""
    org_id = _org(db)
    cluster = demo.seed_demo_cluster(db, org_id)
    cluster.created_at = NOW - dt.timedelta(hours=1)  # the demo's origin hangs off its creation day
    db.flush()
    scenario = load_scenario(demo.default_scenario_path())
    scenario = scenario.model_copy(update={"monitoring": Monitoring(ec2=monitoring)})
    seed = demo._seed_for(cluster)
    # History: 6 hours up to 08:30 UTC, when the legacy gp2 buckets, refilled overnight, drain again.
    history_end = NOW - dt.timedelta(hours=3, minutes=30)
    history_start = history_end - dt.timedelta(hours=6)
    origin = demo.demo_origin(cluster, history_start)
    assert origin == dt.datetime(2026, 10, 25, tzinfo=dt.UTC)  # Nov 2 midnight - 7 days backfill - 1 day
    demo.ingest_window(db, cluster, scenario, history_start, history_end, origin=origin)
    live_until = history_end + dt.timedelta(minutes=30)
    demo.ingest_demo(db, cluster, now=live_until, scenario=scenario)  # resumes at 08:15 from the stored state

    # One run over history and live stream together: what a continuous history looks like.
    whole = simulate(scenario, hours=6.5, seed=seed, start=history_start, origin=origin)
    legacy = [v.id for v in whole.volumes if v.type == "gp2"]
    assert len(legacy) == 2  # tikv-legacy-1 and -2: 350 GiB gp2 data volumes
    stored = {s.entity_id: s for s in timeseries.cluster_series(db, org_id, cluster.id) if s.metric == "ebs.burst_balance"}
    moved = 0.0
    for vid in legacy:
        ref = next(s for s in whole.series if s.entity.id == vid and s.metric == "ebs.burst_balance")
        points = dict(timeseries.read_points(db, org_id, stored[vid].id, history_start, live_until))
        values = [points.get(history_start + dt.timedelta(minutes=i)) for i in range(len(ref.values))]
        assert values[-1] is not None
        got, want = np.array(values, dtype=float), np.array(ref.values, dtype=float)
        # Stored = continuous run, to the 0.01 % the balance is rounded to (carried once through the state).
        assert np.allclose(got, want, atol=0.02, equal_nan=True), vid
        # gp2 350 GiB: refill 3 IOPS/GiB x 350 = 1,050 credits/s; at the 3,000 IOPS burst the bucket loses
        # 3,000 - 1,050 = 1,950 credits/s, 117,000 per minute = 2.17 % of its 5.4 M credits (AWS gp2 docs,
        # docs/reference/gp2-burst.md#the-credit-bucket). No minute, the seam at 08:15 included, moves by more.
        steps = np.abs(np.diff(got[~np.isnan(got)]))
        assert steps.max() <= 1_950 * 60 / 5_400_000 * 100 + 0.02, vid
        moved = max(moved, float(np.nanmax(got) - np.nanmin(got)))
    assert moved > 5.0  # the buckets do move in this window: the test is not comparing full buckets


def test_demo_account_is_created_once(db: Any, tmp_path: Any) -> None:
    password_file = tmp_path / "demo-password.txt"
    email, password, org_id = demo.ensure_demo_account(db, password_file)
    assert email == demo.DEMO_EMAIL and len(password) >= 16
    assert oct(password_file.stat().st_mode & 0o777) == "0o600"
    again = demo.ensure_demo_account(db, password_file)
    assert again == (email, password, org_id)
    from headroom.accounts.service import authenticate

    assert authenticate(db, email, password).email == email


def test_the_demo_gets_14_days_of_hourly_history_for_its_lookback(db: Any) -> None:
    # The default lookback is 14 days (AWS Compute Optimizer's; docs/reference/lookback.md): the demo's cuts are
    # judged on it from the first minute, so its history before the raw backfill is written as hourly rollups.
    from headroom.timeseries.snapshots import build_snapshot, with_lookback

    org_id = _org(db)
    cluster = demo.seed_demo_cluster(db, org_id)
    scenario = load_scenario(demo.default_scenario_path())
    raw_start = NOW - dt.timedelta(hours=2)
    demo.ingest_window(db, cluster, scenario, raw_start, NOW)
    timeseries.drain_rollups(db, now=NOW + timeseries.SETTLED_ALL, org_id=org_id)
    rows = demo.backfill_hourly_history(db, cluster, scenario, NOW - demo.HOURLY_HISTORY, raw_start)
    assert rows > 0

    # The stored hours read back as the simulated hourly totals (a Sum's hour = its average point × points).
    first = (NOW - demo.HOURLY_HISTORY).replace(hour=0)
    hourly = simulate(scenario, hours=24 * 14, seed=demo._seed_for(cluster), start=first, step_seconds=3600,
                      origin=demo.demo_origin(cluster, first))
    ops = next(s for s in hourly.series if s.metric == "ebs.read_ops")
    stored = timeseries.find_series(db, org_id, [("volume", ops.entity.id, "ebs.read_ops")])
    (row,) = stored.values()
    grid = timeseries.read_hourly_grid(db, org_id, {row.id: ("sum", row.step_seconds)}, first, first + dt.timedelta(days=1))
    assert np.allclose(grid[row.id], np.array(ops.values[:24], dtype=float))

    snap = with_lookback(db, org_id, build_snapshot(db, org_id, cluster.id, start=raw_start, end=NOW), 14)
    assert snap.lookback is not None
    volumes = {v.id for v in snap.volumes}
    peaks = [p for p in snap.lookback.peaks if p.entity.id in volumes]
    assert len(peaks) == len(volumes)
    assert all(p.history_days == 14 for p in peaks)  # not held
    # Each volume's peak is at least its busiest simulated hour's issued IOPS (counted IOPS are never fewer): the
    # demo's day peaks at 15:00 UTC, outside the 10:00-12:00 raw window, so only the hourly history holds that hour
    # (a 5-minute burst in the raw window may still be higher than an hour's average).
    for p in peaks:
        per_hour = [
            np.array(s.values, dtype=float) for s in hourly.series
            if s.entity.id == p.entity.id and s.metric in ("ebs.read_ops", "ebs.write_ops")
        ]
        busiest = float(np.nanmax(sum(per_hour))) / 3600
        assert p.peak_iops is not None and p.peak_iops >= busiest * 0.999


def test_the_fleet_kept_per_process_is_the_one_any_minute_and_seed_simulates() -> None:
    scenario = demo.packaged_scenario()
    kept = demo._fleet(scenario, 1, NOW)
    for seed, at in ((1, NOW), (987_654, NOW + dt.timedelta(days=3, minutes=17))):
        fresh = simulate(scenario, hours=1 / 60, seed=seed, start=at, state=demo.SimState())
        assert (kept.nodes, kept.instances, kept.volumes) == (fresh.nodes, fresh.instances, fresh.volumes)
    assert demo._fleet(scenario, 2, NOW) is kept
    other = load_scenario(demo.default_scenario_path())  # another scenario object: its own fleet
    assert demo._fleet(other, 1, NOW) is not kept


@pytest.fixture()
def committed_org(engine: Any) -> Any:
    """An org whose transactions really commit (a minute's ingest checks what earlier transactions wrote), removed
    at the end."""
    from sqlalchemy.orm import sessionmaker

    sessions = sessionmaker(bind=engine, expire_on_commit=False)
    with sessions() as db:
        org_id = _org(db)
        db.commit()
    try:
        yield sessions, org_id
    finally:
        with sessions() as db:
            for table in ("metric_points", "metric_rollups", "metric_rollup_dirty"):
                db.execute(text(f"DELETE FROM {table} WHERE org_id = :o"), {"o": org_id})
            db.execute(text("DELETE FROM organizations WHERE id = :o"), {"o": org_id})
            db.commit()


def _inventory(db: Any, org_id: uuid.UUID) -> tuple[list[tuple[Any, ...]], set[dt.datetime]]:
    """Every column of the org's instances, volumes and nodes but last_seen_at, and the last_seen_at values."""
    rows: list[tuple[Any, ...]] = []
    seen: set[dt.datetime] = set()
    for model in (Instance, Volume, TikvNode):
        for row in db.scalars(select(model).where(model.org_id == org_id).order_by(model.id)):
            columns = {c.key: getattr(row, c.key) for c in model.__table__.columns}
            seen.add(columns.pop("last_seen_at"))
            rows.append((model.__tablename__, *sorted(columns.items(), key=lambda kv: kv[0])))
    return rows, seen


def test_a_minute_whose_inventory_no_one_changed_moves_only_last_seen_and_a_change_is_rewritten(
        committed_org: Any) -> None:
    sessions, org_id = committed_org
    scenario = demo.packaged_scenario()
    with sessions() as db:
        cluster = demo.seed_demo_cluster(db, org_id)
        demo.seed_demo_source(db, org_id)
        demo.ingest_window(db, cluster, scenario, NOW - dt.timedelta(hours=1), NOW)
        db.commit()
        written, _ = _inventory(db, org_id)
        configs = db.scalar(select(func.count()).select_from(TikvConfig).where(TikvConfig.org_id == org_id))

    def minute(at: int) -> bool:
        """Ingest the minute in its own transaction; return whether it took the full upsert (which looks the demo
        source up by org: the minute whose inventory holds reads it by its kept id)."""
        full: list[str] = []

        def seen(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
            if "AND aws_connections.is_demo" in statement:
                full.append(statement)

        with sessions() as db:
            cluster_row = db.get(demo.Cluster, cluster.id)
            event.listen(db.get_bind(), "before_cursor_execute", seen)
            try:
                demo.ingest_demo(db, cluster_row, now=NOW + dt.timedelta(minutes=at))
            finally:
                event.remove(db.get_bind(), "before_cursor_execute", seen)
            db.commit()
        return bool(full)

    # The next minutes, each its own transaction: the rows are checked by version and only last_seen_at moves.
    for at in (1, 2):
        assert not minute(at)
        with sessions() as db:
            assert _inventory(db, org_id) == (written, {NOW + dt.timedelta(minutes=at)})
            assert db.scalar(select(func.count()).select_from(TikvConfig)
                             .where(TikvConfig.org_id == org_id)) == configs

    # Another transaction points a node at a live status port, then back: each next minute sees the change.
    with sessions() as db:
        node = db.scalars(select(TikvNode).where(TikvNode.cluster_id == cluster.id)
                          .order_by(TikvNode.store_address)).first()
        simulated_address = node.status_address
        node.status_address = "127.0.0.1:20180"
        db.commit()
    assert minute(3)
    with sessions() as db:
        assert db.get(TikvNode, node.id).status_address == "127.0.0.1:20180"
    with sessions() as db:
        db.get(TikvNode, node.id).status_address = simulated_address
        inventory.store_version(db, db.get(TikvNode, node.id), {"storage": {}}, source="status_port", raw_text=None,
                                now=NOW)
        db.commit()
    assert minute(4)
    with sessions() as db:
        newest = db.scalars(select(TikvConfig).where(TikvConfig.node_id == node.id)
                            .order_by(TikvConfig.version.desc())).first()
        assert (newest.version, newest.source) == (3, "simulated")  # the simulated config is its newest again
        assert _inventory(db, org_id) == (written, {NOW + dt.timedelta(minutes=4)})
    assert not minute(5)  # unchanged since: checked again

    def periods_as_planned_afresh() -> list[int]:
        """The periods of the queries the demo's sweeps are recorded with (kept per process), asserted to be those
        an uncached plan gives now; and the newest sweep counts them."""
        from headroom.sources.aws import ingest as aws_ingest
        from headroom.sources.aws import service as aws_sources
        from headroom.sources.models import AwsConnection, CollectionSweep

        with sessions() as db:
            source = db.scalars(select(AwsConnection).where(AwsConnection.org_id == org_id)).one()
            fresh = [q.period for q in aws_ingest.queries_for(db, source, source.regions[0])[0]]
            assert aws_sources._DEMO_PLANS[source.id][1] == fresh
            assert db.scalars(select(CollectionSweep.series).where(CollectionSweep.org_id == org_id)
                              .order_by(CollectionSweep.id.desc())).first() == len(fresh)
            return fresh

    before = periods_as_planned_afresh()
    with sessions() as db:  # another transaction turns on detailed monitoring of an instance: 1-minute EC2 periods
        row = db.scalars(select(Instance).where(Instance.org_id == org_id).order_by(Instance.instance_id)).first()
        row.tags = {**row.tags, "headroom:monitoring": "detailed"}
        db.commit()
    minute(6)
    assert sorted(periods_as_planned_afresh()) != sorted(before)
