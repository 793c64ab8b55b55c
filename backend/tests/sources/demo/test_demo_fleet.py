"""The demo fleet flows through the same store as collected data: inventory, configs, series, points."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from headroom.accounts.models import Organization
from headroom.domain.snapshot.scenario import load_scenario
from headroom.domain.snapshot.simulate import simulate
from headroom.inventory.models import Instance, TikvConfig, TikvNode, Volume
from headroom.platform.security import new_external_id
from headroom.sources.demo import service as demo
from headroom.timeseries import repository as timeseries
from sqlalchemy import func, select, text

NOW = dt.datetime(2026, 11, 2, 12, 0, tzinfo=dt.UTC)


def _org(db: Any) -> uuid.UUID:
    org = Organization(name="d", slug=f"d-{uuid.uuid4().hex[:8]}", aws_external_id=new_external_id())
    db.add(org)
    db.flush()
    return org.id


def _stored_points(db: Any, org_id: uuid.UUID) -> int:
    return int(
        db.execute(
            text(
                "SELECT count(*) FROM metric_points p CROSS JOIN LATERAL unnest(p.vals) v "
                "WHERE p.org_id = :o AND v IS NOT NULL"
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
    assert timeseries.rollups_pending(db, org_id) == first["series"]  # one day per series, queued by the writes
    timeseries.drain_rollups(db, org_id=org_id)
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
    # The window re-simulated was the 10-minute overlap before the watermark plus the new 30 minutes, not the
    # 7-day backfill of a first run.
    resumed_from = NOW - dt.timedelta(minutes=1) - demo.OVERLAP
    expected = simulate(scenario, hours=(later - resumed_from).total_seconds() / 3600,
                        seed=demo._seed_for(cluster), start=resumed_from)
    assert result["points"] == sum(v is not None for s in expected.series for v in s.values)


def test_demo_account_is_created_once(db: Any, tmp_path: Any) -> None:
    password_file = tmp_path / "demo-password.txt"
    email, password, org_id = demo.ensure_demo_account(db, password_file)
    assert email == demo.DEMO_EMAIL and len(password) >= 16
    assert oct(password_file.stat().st_mode & 0o777) == "0o600"
    again = demo.ensure_demo_account(db, password_file)
    assert again == (email, password, org_id)
    from headroom.accounts.service import authenticate

    assert authenticate(db, email, password).email == email
