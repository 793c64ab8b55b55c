"""Collection against a real Prometheus holding simulated TiKV history (see conftest.py and exporter.py).

The stored points must equal what the simulator produced: the exporter writes TiKV's raw series so that the
registry's PromQL (rates, sums, p99s) evaluates back to the simulated values.
"""

from __future__ import annotations

import datetime as dt
import math
import uuid
from typing import Any

import pytest
from conftest import PromEnv, SimCluster
from exporter import prometheus_answers
from headroom.domain.snapshot.registry import REGISTRY
from headroom.domain.snapshot.registry import PrometheusSource as PromSpec
from headroom.inventory.models import TikvConfig, TikvNode
from headroom.inventory.service import latest_config, poll_status_port
from headroom.sources.models import PrometheusSource
from headroom.sources.prometheus import ingest
from headroom.sources.prometheus import service as ops
from headroom.sources.prometheus.collector import PrometheusAuth, PrometheusClient, RetryPolicy
from headroom.sources.prometheus.models import PrometheusNodeTarget
from headroom.sources.prometheus.promql import points_in
from headroom.timeseries.models import MetricSeries
from headroom.timeseries.repository import read_points
from headroom.timeseries.watermarks import get_watermarks
from helpers import sign_up
from sqlalchemy import select, text

REL, ABS = 1e-6, 1e-6


def _source(
    client: Any, db: Any, env: PromEnv, cluster: SimCluster, **extra: Any
) -> tuple[Any, PrometheusSource]:
    owner = sign_up(client)
    made = owner.post("/api/v1/clusters", json={"name": cluster.name, "tikv_version": "v8.5.1"})
    assert made.status_code == 201, made.text
    body = {
        "name": f"prom-{cluster.name}",
        "base_url": env.url,
        "label_selector": cluster.selector,
        "cluster_id": made.json()["id"],
        **extra,
    }
    created = owner.post("/api/v1/sources/prometheus", json=body)
    assert created.status_code == 201, created.text
    source = db.get(PrometheusSource, uuid.UUID(created.json()["id"]))
    assert source is not None
    return owner, source


def _client(env: PromEnv) -> PrometheusClient:
    return PrometheusClient(env.url, retry=RetryPolicy(attempts=2, base_seconds=0.01))


def _assert_matches_simulation(db: Any, source: PrometheusSource, cluster: SimCluster) -> int:
    """Compare every Prometheus series of the snapshot with what the store holds; return points compared."""
    compared = 0
    mismatches: list[str] = []
    window = cluster.snapshot.window
    for series in cluster.snapshot.series:
        spec = REGISTRY.get(series.metric)
        if spec is None or not isinstance(spec.source, PromSpec):
            continue
        labels = {k: series.labels[k] for k in ("device", "mountpoint", "fstype") if k in series.labels}
        row = db.scalar(
            select(MetricSeries).where(
                MetricSeries.org_id == source.org_id,
                MetricSeries.entity_kind == "tikv_node",
                MetricSeries.entity_id == cluster.store_address(series.entity.id),
                MetricSeries.metric == series.metric,
                MetricSeries.labels == labels,
            )
        )
        assert row is not None, f"{series.metric} {series.entity.id} {labels} was not collected"
        assert row.cluster_id == source.cluster_id and row.unit == spec.unit
        stored = dict(read_points(db, source.org_id, row.id, window.start, window.end))
        expected = prometheus_answers(series, spec.source.statistic)
        assert set(stored) == set(expected), f"{series.metric} {series.entity.id}: timestamps differ"
        for ts, value in expected.items():
            if not math.isclose(stored[ts], value, rel_tol=REL, abs_tol=ABS):
                mismatches.append(f"{series.metric} {series.entity.id} {ts:%H:%M} {stored[ts]} != {value}")
            compared += 1
    assert mismatches == [], mismatches[:10]
    return compared


def _points_xmin(db: Any, org_id: uuid.UUID) -> list[tuple[int, Any, str]]:
    return list(
        db.execute(
            text(
                "SELECT series_id, bucket_at, xmin::text FROM metric_points WHERE org_id = :o ORDER BY 1, 2"
            ),
            {"o": org_id},
        )
    )


def test_tiup_backfill_stores_what_the_simulator_produced(prom_env: PromEnv, client: Any, db: Any) -> None:
    cluster = prom_env.tiup
    # the history has failed scrapes (minutes without samples) for the comparison to face
    assert any(v is None for s in cluster.snapshot.series if s.entity.kind == "node" for v in s.values)
    _, source = _source(client, db, prom_env, cluster)
    with _client(prom_env) as prom:
        # 97-minute chunks: the ~7 h that hold data are split into 5 queries per series, none sharing a timestamp
        row = ops.run_backfill(db, source, prom, now=prom_env.end, chunk_points=97)
    assert row.status == "done", row.last_error
    assert row.steps_total > 0 and row.steps_done == row.steps_total
    # asked for 14 days; Prometheus holds 6 h: the range starts at the hour before the first TiKV sample
    window = cluster.snapshot.window
    assert row.range_end_at == prom_env.end
    assert window.start - dt.timedelta(hours=2) < row.range_start_at <= window.start
    assert row.steps_total == 37 * points_in(row.range_start_at, row.range_end_at)  # 37 registry queries
    assert source.status == "ok" and source.consecutive_failures == 0

    nodes = db.scalars(select(TikvNode).where(TikvNode.cluster_id == source.cluster_id)).all()
    assert sorted(n.store_address for n in nodes) == sorted(n.address for n in cluster.snapshot.nodes)
    assert sorted(n.status_address for n in nodes) == sorted(s.address for s in cluster.servers.values())
    targets = db.scalars(
        select(PrometheusNodeTarget).where(PrometheusNodeTarget.source_id == source.id)
    ).all()
    assert {t.flavour for t in targets} == {"tiup"}
    assert sorted(t.instance for t in targets) == sorted(s.address for s in cluster.servers.values())

    compared = _assert_matches_simulation(db, source, cluster)
    assert compared > 3 * 30 * 6 * 60 * 0.9  # 3 nodes x ~30 series x 6 h of minutes
    assert row.points_written == compared  # the decoys were not selected and nothing else was stored
    # no series of the Operator cluster leaked in
    others = set(prom_env.operator.store_addresses.values())
    ids = set(db.scalars(select(MetricSeries.entity_id).where(MetricSeries.org_id == source.org_id)))
    assert ids == {n.address for n in cluster.snapshot.nodes} and not ids & others

    # a re-run rewrites nothing: every packed hour row keeps its transaction id
    before = _points_xmin(db, source.org_id)
    stats = ops.run_incremental(db, source, _client(prom_env), now=prom_env.end)
    assert stats is not None and stats.points > 0
    assert _points_xmin(db, source.org_id) == before


def test_operator_labels_select_their_cluster_only(prom_env: PromEnv, client: Any, db: Any) -> None:
    cluster = prom_env.operator
    _, source = _source(client, db, prom_env, cluster)
    with _client(prom_env) as prom:
        row = ops.run_backfill(db, source, prom, now=prom_env.end)
    assert row.status == "done", row.last_error
    targets = db.scalars(
        select(PrometheusNodeTarget).where(PrometheusNodeTarget.source_id == source.id)
    ).all()
    assert sorted(t.instance for t in targets) == ["basic-tikv-0", "basic-tikv-1", "basic-tikv-2"]
    assert {t.flavour for t in targets} == {"operator"}
    nodes = db.scalars(select(TikvNode).where(TikvNode.cluster_id == source.cluster_id)).all()
    # the pod name is the instance; the status address comes from the target's scrape URL
    assert sorted(n.status_address for n in nodes) == sorted(s.address for s in cluster.servers.values())
    assert sorted(n.store_address for n in nodes) == sorted(cluster.store_addresses.values())
    assert nodes[0].store_address.endswith(".basic-tikv-peer.tidb.svc:20160")
    _assert_matches_simulation(db, source, cluster)


def test_incremental_resumes_from_the_watermarks_with_overlap(
    prom_env: PromEnv, client: Any, db: Any
) -> None:
    cluster = prom_env.tiup
    _, source = _source(client, db, prom_env, cluster)
    first = prom_env.end - dt.timedelta(hours=3)
    with _client(prom_env) as prom:
        # no backfill yet: the first pull covers only the overlap window before `now`
        assert ops.run_incremental(db, source, prom, now=first) is not None
        series = db.scalar(
            select(MetricSeries).where(
                MetricSeries.org_id == source.org_id, MetricSeries.metric == "tikv.block_cache_hit"
            )
        )
        assert series is not None
        # the minutes Prometheus answers for this node (a failed scrape in the history is a minute without one)
        node_id = next(n for n in cluster.store_addresses if cluster.store_address(n) == series.entity_id)
        simulated = next(
            s for s in cluster.snapshot.series if s.metric == "tikv.block_cache_hit" and s.entity.id == node_id
        )
        answered = sorted(prometheus_answers(simulated, "rate"))

        def expected(start: dt.datetime, end: dt.datetime) -> list[dt.datetime]:
            return [t for t in answered if start <= t <= end]

        points = read_points(
            db, source.org_id, series.id, first - dt.timedelta(days=1), first + dt.timedelta(days=1)
        )
        assert [p[0] for p in points] == expected(first - dt.timedelta(minutes=10), first)
        marks = get_watermarks(db, source.org_id, "prometheus", source.id, [series.id])
        assert marks == {series.id: expected(first - dt.timedelta(minutes=10), first)[-1]}  # the newest point

        # The second pull starts at the oldest node's newest point minus the overlap: a node whose scrape at `first`
        # failed (the history has such minutes) pulls the start back for every node of the query.
        newest = [max(t for t in prometheus_answers(s, "rate") if t <= first)
                  for s in cluster.snapshot.series if s.metric == "tikv.block_cache_hit"]
        resume = min(first, *newest) - dt.timedelta(minutes=10)
        assert ops.run_incremental(db, source, prom, now=prom_env.end) is not None
    points = read_points(
        db, source.org_id, series.id, first - dt.timedelta(days=1), prom_env.end + dt.timedelta(1)
    )
    minutes = [p[0] for p in points]
    # every answered minute from the first pull's overlap (or the second's) to the end, once: no hole, no duplicate
    assert minutes == expected(resume, prom_env.end)
    assert get_watermarks(db, source.org_id, "prometheus", source.id, [series.id]) == {
        series.id: expected(first, prom_env.end)[-1]
    }


def test_connection_report_and_health(prom_env: PromEnv, client: Any, db: Any, clock: Any) -> None:
    clock.now = prom_env.end  # before signing up: sessions expire relative to the app's clock
    owner, source = _source(client, db, prom_env, prom_env.operator)
    response = owner.post(f"/api/v1/sources/prometheus/{source.id}/test")
    assert response.status_code == 200, response.text
    report = response.json()
    assert report["ok"] is True and report["reachable"] and report["authenticated"] and report["prometheus_api"]
    assert report["flavour"] == "operator"
    assert report["tikv_instances"] == ["basic-tikv-0", "basic-tikv-1", "basic-tikv-2"]
    assert report["node_exporter_hosts"] == 3
    assert report["missing_metrics"] == []
    assert report["prometheus_version"]
    assert owner.get(f"/api/v1/sources/prometheus/{source.id}").json()["health"]["status"] == "ok"

    # a selector that picks nothing: reachable, but not ok, and the message says what to check
    owner.patch(f"/api/v1/sources/prometheus/{source.id}", json={"label_selector": 'tidb_cluster="nope"'})
    report = owner.post(f"/api/v1/sources/prometheus/{source.id}/test").json()
    assert report["ok"] is False and report["reachable"] is True and report["tikv_instances"] == []
    assert "selector" in report["messages"][0]
    health = owner.get(f"/api/v1/sources/prometheus/{source.id}").json()["health"]
    assert health["consecutive_failures"] == 1 and "selector" in health["last_error"]


def test_tiup_report_finds_every_metric(prom_env: PromEnv, client: Any, db: Any) -> None:
    _, source = _source(client, db, prom_env, prom_env.tiup)
    with _client(prom_env) as prom:
        report = ops.check_connection(prom, source, prom_env.end)
    assert report.ok and report.flavour == "tiup"
    assert report.tikv_instances == sorted(s.address for s in prom_env.tiup.servers.values())
    assert report.missing_metrics == []
    # live scrapes are at the wall clock, after the simulated window: up{} there is empty, history is not
    by_name = {m.metric: m.series for m in report.metrics}
    assert by_name["tikv_thread_cpu_seconds_total"] == 3 * (2 + 2 + 2 + 1 + 2 + 2 + 2 + 1)  # pools + a decoy


def test_status_port_configs_version_only_on_change(prom_env: PromEnv, client: Any, db: Any) -> None:
    cluster = prom_env.tiup
    owner, source = _source(client, db, prom_env, cluster)
    with _client(prom_env) as prom:
        discovery = ingest.discover(db, source, prom, now=prom_env.end)  # reads each /config once
    assert len(discovery.nodes) == 3
    node = db.scalar(
        select(TikvNode).where(TikvNode.cluster_id == source.cluster_id).order_by(TikvNode.store_address)
    )
    first = latest_config(db, node)
    assert first is not None and first.version == 1 and first.source == "status_port"
    assert first.config["server"]["advertise-addr"] == node.store_address
    assert first.config["storage"]["block-cache"]["capacity"] == next(
        n.config["storage"]["block-cache"]["capacity"]
        for n in cluster.snapshot.nodes
        if n.address == node.store_address
    )
    unchanged = poll_status_port(db, node, now=prom_env.end)
    assert unchanged.error is None and unchanged.created is False and unchanged.version == 1

    server = next(s for s in cluster.servers.values() if s.address == node.status_address)
    original = server.config
    try:
        server.config = {**original, "storage": {**original["storage"], "block-cache": {"capacity": "20GiB"}}}
        response = owner.post(f"/api/v1/clusters/{source.cluster_id}/nodes/{node.id}/config/refresh")
        assert response.status_code == 200, response.text
        assert (
            response.json()["version"] == 2
            and response.json()["config"]["storage"]["block-cache"]["capacity"] == "20GiB"
        )
    finally:
        server.config = original
    listed = owner.get(f"/api/v1/clusters/{source.cluster_id}/nodes").json()
    assert listed["total"] == 3
    assert next(n for n in listed["items"] if n["id"] == str(node.id))["config_versions"] == [1, 2]
    old = owner.get(
        f"/api/v1/clusters/{source.cluster_id}/nodes/{node.id}/config", params={"version": 1}
    ).json()
    assert old["config"]["storage"] == first.config["storage"]
    assert (
        db.scalar(select(TikvConfig.raw_text).where(TikvConfig.node_id == node.id, TikvConfig.version == 2))
        is None
    )


def test_backfill_api_reports_progress(prom_env: PromEnv, client: Any, db: Any, clock: Any) -> None:
    clock.now = prom_env.end
    owner, source = _source(client, db, prom_env, prom_env.tiup)
    assert owner.get(f"/api/v1/sources/prometheus/{source.id}/backfill").json()["status"] == "none"
    queued = owner.post(f"/api/v1/sources/prometheus/{source.id}/backfill", json={"days": 1})
    assert queued.status_code == 202, queued.text
    assert queued.json()["status"] == "queued" and queued.json()["queued"] is True
    with _client(prom_env) as prom:
        ops.run_backfill(db, source, prom, now=prom_env.end, checkpoint=db.commit)
    view = owner.get(f"/api/v1/sources/prometheus/{source.id}/backfill").json()
    assert view["status"] == "done" and view["percent"] == 100.0
    start = dt.datetime.fromisoformat(view["range_start_at"])
    assert prom_env.end - dt.timedelta(days=1) < start <= prom_env.tiup.snapshot.window.start
    assert view["steps_done"] == view["steps_total"] == 37 * points_in(start, prom_env.end)  # 37 queries
    assert view["points_written"] > 0 and view["dropped_non_finite"] == 0


@pytest.mark.parametrize("auth", ["bearer", "basic"])
def test_unreachable_source_turns_failing_without_leaking_the_secret(
    client: Any, db: Any, auth: str, prom_env: PromEnv
) -> None:
    extra: dict[str, Any] = {"auth_kind": auth, "secret": "s3cr3t-value-xyz"}
    if auth == "basic":
        extra["username"] = "headroom"
    owner, source = _source(client, db, prom_env, prom_env.tiup, **extra)
    source.base_url = "http://127.0.0.1:9"  # discard port: connection refused
    sleeps: list[float] = []
    for _ in range(3):
        box_client = PrometheusClient(
            source.base_url,
            PrometheusAuth(auth, "headroom", "s3cr3t-value-xyz"),  # type: ignore[arg-type]
            retry=RetryPolicy(attempts=3, base_seconds=0.01),
            sleep=sleeps.append,
        )
        assert ops.run_incremental(db, source, box_client, now=prom_env.end) is None
    assert len(sleeps) == 3 * 2 and all(0 <= s <= 0.02 for s in sleeps)
    assert source.status == "failing" and source.consecutive_failures == 3
    assert source.last_error and "Could not" in source.last_error and "s3cr3t" not in source.last_error
