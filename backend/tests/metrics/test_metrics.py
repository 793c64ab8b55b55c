"""Metrics API on real PostgreSQL: numbers exact against written points, the resolution chosen from the window,
ceilings that switch at an inventory change, burst forecasts for a draining gp2 volume, validation, tenancy."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import pytest
from headroom.inventory.models import Instance, InventoryChange, TikvNode, Volume
from headroom.timeseries import repository as timeseries
from helpers import sign_up

NOW = dt.datetime(2026, 11, 2, 12, 0, tzinfo=dt.UTC)  # the conftest Clock's time
KIB = 1024


def _drain(db: Any) -> None:
    """Compute the rollups of every hour written (a clock a day after NOW: they have all settled)."""
    while timeseries.drain_rollups(db, now=NOW + dt.timedelta(days=1)):
        pass


class Fleet:
    """One TiKV node on an instance with a data volume, in an org, with points written through the store."""

    def __init__(self, sessions: Any, org_id: str, cluster_id: str, *, volume_type: str = "gp3",
                 size_gib: int = 1000, iops: int | None = 3000, throughput: int | None = 125,
                 instance_type: str = "m6i.2xlarge", suffix: str = "a", raft_volume_type: str | None = None) -> None:
        self.sessions = sessions
        self.org = uuid.UUID(org_id)
        self.cluster = uuid.UUID(cluster_id)
        self.volume_id = f"vol-0{suffix * 16}"
        self.instance_id = f"i-0{suffix * 16}"
        self.address = f"10.9.0.{ord(suffix) % 250}:20160"
        with sessions() as db:
            inst = Instance(org_id=self.org, cluster_id=self.cluster, instance_id=self.instance_id,
                            instance_type=instance_type, region="us-east-1")
            db.add(inst)
            db.flush()
            vol = Volume(org_id=self.org, cluster_id=self.cluster, volume_id=self.volume_id, volume_type=volume_type,
                         size_gib=size_gib, iops=iops, throughput_mibps=throughput, instance_ref_id=inst.id,
                         role="data")
            db.add(vol)
            db.flush()
            raft = vol
            self.raft_volume_id = f"vol-1{suffix * 16}"
            if raft_volume_type is not None:  # a Raft log on its own volume
                raft = Volume(org_id=self.org, cluster_id=self.cluster, volume_id=self.raft_volume_id,
                              volume_type=raft_volume_type, size_gib=200, iops=None, throughput_mibps=None,
                              instance_ref_id=inst.id, role="raft")
                db.add(raft)
                db.flush()
            node = TikvNode(org_id=self.org, cluster_id=self.cluster, store_address=self.address,
                            instance_ref_id=inst.id, data_volume_ref_id=vol.id, raft_volume_ref_id=raft.id)
            db.add(node)
            db.commit()
            self.node_id = str(node.id)

    def write(self, kind: str, metric: str, unit: str, points: list[tuple[dt.datetime, float]]) -> None:
        eid = {"volume": self.volume_id, "raft_volume": self.raft_volume_id, "instance": self.instance_id,
               "tikv_node": self.address}[kind]
        kind = "volume" if kind == "raft_volume" else kind
        with self.sessions() as db:
            key = timeseries.SeriesKey(kind, eid, metric, unit)
            sid = timeseries.ensure_series(db, self.org, [key], cluster_id=self.cluster)[key]
            timeseries.write_points(db, self.org, [(sid, ts, v) for ts, v in points])
            _drain(db)
            db.commit()

    def change(self, field: str, old: Any, new: Any, at: dt.datetime) -> None:
        with self.sessions() as db:
            db.add(InventoryChange(org_id=self.org, entity_kind="volume", entity_id=self.volume_id, field=field,
                                   old_value=old, new_value=new, observed_at=at))
            db.commit()


def _minutes(start: dt.datetime, n: int) -> list[dt.datetime]:
    return [start + dt.timedelta(minutes=i) for i in range(n)]


@pytest.fixture()
def owner(client: Any) -> Any:
    return sign_up(client, org="Metrics Org")


@pytest.fixture()
def cluster_id(owner: Any) -> str:
    r = owner.post("/api/v1/clusters", json={"name": "metrics-cluster", "tikv_version": "v8.5.1"})
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


def _get(owner: Any, cluster_id: str, **params: Any) -> Any:
    r = owner.get(f"/api/v1/clusters/{cluster_id}/metrics", params=params)
    assert r.status_code == 200, r.text
    return r.json()


def _panel(body: dict[str, Any], pid: str) -> dict[str, Any]:
    return next(p for p in body["panels"] if p["id"] == pid)


def _series(panel: dict[str, Any], sid: str) -> dict[str, Any]:
    return next(s for s in panel["series"] if s["id"] == sid)


def test_raw_window_numbers_are_exact(owner: Any, cluster_id: str, sessions: Any) -> None:
    fleet = Fleet(sessions, owner.org_id, cluster_id)
    start = NOW - dt.timedelta(hours=1)
    times = _minutes(start, 60)
    # CloudWatch sums per minute (docs/reference/cloudwatch.md#volume-metrics): 600 reads of 16 KiB and 1,200 writes of 512 KiB each minute.
    fleet.write("volume", "ebs.read_ops", "Count", [(t, 600.0) for t in times])
    fleet.write("volume", "ebs.write_ops", "Count", [(t, 1200.0) for t in times])
    fleet.write("volume", "ebs.read_bytes", "Bytes", [(t, 600.0 * 16 * KIB) for t in times])
    fleet.write("volume", "ebs.write_bytes", "Bytes", [(t, 1200.0 * 512 * KIB) for t in times])
    fleet.write("volume", "ebs.total_read_time", "Seconds", [(t, 600 * 0.0005) for t in times])
    fleet.write("tikv_node", "tikv.block_cache_hit", "ops/s", [(t, 900.0) for t in times])
    fleet.write("tikv_node", "tikv.block_cache_miss", "ops/s", [(t, 100.0) for t in times])

    body = _get(owner, cluster_id, start=start.isoformat(), end=NOW.isoformat())
    assert body["resolution_seconds"] == 60 and body["resolution_source"] == "raw"
    assert body["node"]["store_address"] == fleet.address and body["node"]["raft_volume"] is None
    # The Raft log shares the data volume: no raft panels, a note on the data panel instead.
    assert [p["id"] for p in body["panels"]][:3] == ["data_iops", "data_throughput", "instance_iops"]
    assert "The Raft log shares this volume." in _panel(body, "data_iops")["notes"]
    iops = _panel(body, "data_iops")
    assert _series(iops, "data_read_iops")["values"] == [10.0] * 60  # 600 / 60 s
    assert _series(iops, "data_write_iops")["values"] == [20.0] * 60
    # Counted in 256 KiB units (docs/reference/ebs-io-accounting.md#io-size-cap): 16 KiB reads count once, 512 KiB writes twice: 10 + 2 × 20 = 50 IOPS.
    counted = _series(iops, "data_counted_iops")
    assert counted["values"] == [50.0] * 60 and counted["statistic"] == "avg" and counted["step_seconds"] == 60
    assert counted["t"][0] == int(start.timestamp()) and counted["t"][-1] == int(NOW.timestamp()) - 60
    tput = _panel(body, "data_throughput")
    # 10.15625 MiB/s, sent to 6 significant digits (metrics.service.SIGNIFICANT_DIGITS)
    assert _series(tput, "data_total_mibps")["values"][0] == pytest.approx((600 * 16 + 1200 * 512) / 1024 / 60,
                                                                          rel=1e-5)
    lat = _series(_panel(body, "latency"), "data_read_latency")
    assert lat["values"] == [pytest.approx(0.5)] * 60  # 0.3 s / 600 ops × 1000
    hit = _series(_panel(body, "block_cache_hit_ratio"), "block_cache_hit_ratio")
    assert hit["values"] == [pytest.approx(90.0)] * 60
    # Each series says what it is of: the volume (named with the store it serves), the store itself.
    assert (counted["entity_kind"], counted["entity_id"]) == ("volume", fleet.volume_id)
    assert counted["entity_name"] == f"{fleet.address} {fleet.volume_id}"
    assert (lat["entity_kind"], lat["entity_id"]) == ("volume", fleet.volume_id)
    assert (hit["entity_kind"], hit["entity_id"], hit["entity_name"]) == ("node", fleet.address, fleet.address)
    # gp3 3,000 IOPS / 125 MiB/s: one ceiling each, over the whole window, with its catalog source.
    [ceiling] = iops["ceilings"]
    assert ceiling["value"] == 3000 and "gp3 provisioned IOPS" in ceiling["label"] and "https://docs.aws.amazon.com/ebs/" in ceiling["source"]  # a public link, not an internal section
    assert [c["value"] for c in tput["ceilings"]] == [125.0]
    inst = _panel(body, "instance_iops")
    assert inst["series"] == []
    # m6i.2xlarge: 12,000 baseline, 40,000 burst IOPS (docs/reference/ec2-ebs-limits.md#limits-table)
    assert sorted(c["value"] for c in inst["ceilings"]) == [12000.0, 40000.0]


def test_resolution_follows_the_window_and_rollups_are_exact(owner: Any, cluster_id: str, sessions: Any) -> None:
    fleet = Fleet(sessions, owner.org_id, cluster_id)
    start = NOW - dt.timedelta(days=2)
    times = _minutes(start, 2 * 24 * 60)
    # Each 5-minute bucket holds 60, 120, 180, 240, 300 reads per minute: avg 3 IOPS, max 5, min 1.
    pattern = [(t, 60.0 * (i % 5 + 1)) for i, t in enumerate(times)]
    fleet.write("volume", "ebs.read_ops", "Count", pattern)
    # The same shape as a stall (µs) and a balance (%): their panels draw the bucket's max and min.
    fleet.write("tikv_node", "tikv.write_stall", "us", pattern)
    fleet.write("volume", "ebs.burst_balance", "Percent", pattern)
    body = _get(owner, cluster_id, start=start.isoformat(), end=NOW.isoformat(), panel="data_iops", points=2000)
    assert body["resolution_seconds"] == 300 and body["resolution_source"] == "rollup" and body["points"] == 2000
    assert [p["id"] for p in body["panels"]] == ["data_iops"]
    reads = _series(body["panels"][0], "data_read_iops")
    assert len(reads["t"]) == 2 * 24 * 12 and reads["step_seconds"] == 300 and reads["span_seconds"] is None
    assert reads["statistic"] == "avg" and set(reads["values"]) == {3.0}
    assert reads["t"][1] - reads["t"][0] == 300
    body = _get(owner, cluster_id, start=start.isoformat(), end=NOW.isoformat(), panel=["write_stall", "burst_balance"],
                points=2000)
    stall = _series(_panel(body, "write_stall"), "write_stall")
    assert stall["statistic"] == "max" and set(stall["values"]) == {0.3}  # 300 µs
    balance = _series(_panel(body, "burst_balance"), "data_burst_balance")
    assert balance["statistic"] == "min" and set(balance["values"]) == {60.0}
    # 6 h and less is raw; beyond 8 days hourly.
    assert _get(owner, cluster_id, start=(NOW - dt.timedelta(hours=6)).isoformat(),
                end=NOW.isoformat(), panel="data_iops")["resolution_seconds"] == 60
    body = _get(owner, cluster_id, start=(NOW - dt.timedelta(days=30)).isoformat(), end=NOW.isoformat(),
                panel="data_iops")
    assert body["resolution_seconds"] == 3600
    hourly = _series(body["panels"][0], "data_read_iops")
    assert len(hourly["t"]) == 48 and set(hourly["values"]) == {3.0} and hourly["statistic"] == "avg"


def test_ceilings_switch_at_an_inventory_change(owner: Any, cluster_id: str, sessions: Any) -> None:
    # Today a gp3 volume with 6,000 IOPS; until 06:00 it was a 500 GiB gp2 (1,500 baseline, 3,000 burst, docs/reference/gp2-burst.md#the-credit-bucket).
    fleet = Fleet(sessions, owner.org_id, cluster_id, volume_type="gp3", size_gib=500, iops=6000, throughput=250)
    switch = NOW - dt.timedelta(hours=6)
    fleet.change("volume_type", "gp2", "gp3", switch)
    fleet.change("iops", 1500, 6000, switch)
    fleet.change("throughput_mibps", None, 250, switch)
    start = NOW - dt.timedelta(hours=12)
    times = _minutes(start, 12 * 60)
    # 2,700 IOPS before the change (90% of gp2's 3,000 burst), 3,000 after (50% of 6,000), 16 KiB I/O.
    ops = [(t, 60.0 * (2700 if t < switch else 3000)) for t in times]
    fleet.write("volume", "ebs.read_ops", "Count", ops)
    fleet.write("volume", "ebs.read_bytes", "Bytes", [(t, v * 16 * KIB) for t, v in ops])

    body = _get(owner, cluster_id, start=start.isoformat(), end=NOW.isoformat(), panel="data_iops")
    ceilings = {(c["id"], c["valid_from"], c["valid_to"]): c["value"] for c in body["panels"][0]["ceilings"]}
    iso = lambda d: d.isoformat().replace("+00:00", "Z")  # noqa: E731
    assert ceilings == {
        ("data_baseline_iops", iso(start), iso(switch)): 1500.0,
        ("data_max_iops", iso(start), iso(switch)): 3000.0,
        ("data_max_iops", iso(switch), iso(NOW)): 6000.0,
    }
    r = owner.get(f"/api/v1/clusters/{cluster_id}/metrics/overview",
                  params={"start": start.isoformat(), "end": NOW.isoformat()})
    assert r.status_code == 200, r.text
    [node] = r.json()["nodes"]
    cell = next(c for c in node["utilisation"] if c["metric"] == "data_iops")
    # Judged against the limit in force at each time: 2,700 / 3,000 before the change (not 2,700 / 6,000).
    assert cell["peak_percent"] == pytest.approx(90.0)
    assert cell["ceiling"]["value"] == 3000.0 and cell["ceiling"]["kind"] == "burst" and cell["peak_at"] < iso(switch)
    assert cell["ceiling_now"]["value"] == 6000.0 and cell["ceiling_now"]["kind"] == "provisioned"
    assert r.json()["resolution_seconds"] == 60  # up to the advisor's 24 h: the 1-minute points it judges


def test_forecast_for_a_draining_gp2_volume(owner: Any, cluster_id: str, sessions: Any) -> None:
    fleet = Fleet(sessions, owner.org_id, cluster_id, volume_type="gp2", size_gib=350, iops=1050, throughput=None,
                  instance_type="m5.2xlarge")
    start = NOW - dt.timedelta(hours=3)
    times = _minutes(start, 180)
    # 3,000 IOPS of 16 KiB against a 1,050 IOPS baseline (350 GiB × 3, docs/reference/gp2-burst.md#the-credit-bucket): the bucket drains 1,950 credits/s,
    # i.e. 1,950 × 60 / 5.4e6 × 100 = 2.1667 % per minute, from 100 % at the start of the window.
    drain_pct = 1950 * 60 / 5.4e6 * 100
    fleet.write("volume", "ebs.read_ops", "Count", [(t, 3000.0 * 60) for t in times])
    fleet.write("volume", "ebs.read_bytes", "Bytes", [(t, 3000.0 * 60 * 16 * KIB) for t in times])
    # No writes: CloudWatch sends Sums of 0 (the forecast is the advisor's, which reads a missing series as a gap)
    fleet.write("volume", "ebs.write_ops", "Count", [(t, 0.0) for t in times])
    fleet.write("volume", "ebs.write_bytes", "Bytes", [(t, 0.0) for t in times])
    # Full until minute 140 of the window (the demand started then, in this story), draining since.
    fleet.write("volume", "ebs.burst_balance", "Percent",
                [(t, 100.0 - drain_pct * max(0, i - 140)) for i, t in enumerate(times)])
    body = _get(owner, cluster_id, start=start.isoformat(), end=NOW.isoformat(), panel="burst_balance")
    panel = body["panels"][0]
    assert [s["id"] for s in panel["series"]] == ["data_burst_balance"]
    [fc] = panel["forecasts"]
    assert fc["entity_id"] == fleet.volume_id and fc["bucket"] == "gp2"
    balance = 100.0 - drain_pct * (179 - 140)
    assert fc["balance_percent"] == pytest.approx(balance)
    expected = balance / 100 * 5.4e6 / 1950  # seconds to empty at constant demand (docs/reference/gp2-burst.md#the-credit-bucket "Burst duration")
    assert fc["seconds_to_empty_low"] <= expected + 60 and fc["seconds_to_empty_high"] >= expected - 60
    assert fc["seconds_to_empty"] == pytest.approx(expected, abs=60)
    assert fc["fallback_iops"] == 1050.0
    assert len(fc["path"]["t"]) == len(fc["path"]["percent"]) == len(fc["path"]["lower"]) > 1
    assert fc["path"]["percent"][0] == pytest.approx(balance)
    iops = _get(owner, cluster_id, start=start.isoformat(), end=NOW.isoformat(), panel="data_iops")["panels"][0]
    assert {c["label"]: c["value"] for c in iops["ceilings"]} == {"gp2 baseline IOPS": 1050.0, "gp2 burst IOPS": 3000.0}
    ov = owner.get(f"/api/v1/clusters/{cluster_id}/metrics/overview",
                   params={"start": start.isoformat(), "end": NOW.isoformat()}).json()
    assert ov["nodes"][0]["burst_seconds_left"] == pytest.approx(fc["seconds_to_empty"])


def test_bad_input_names_the_field(owner: Any, cluster_id: str) -> None:
    url = f"/api/v1/clusters/{cluster_id}/metrics"
    cases = [
        ({"start": NOW.isoformat(), "end": (NOW - dt.timedelta(hours=1)).isoformat()}, "start"),
        ({"panel": "disk_magic"}, "panel"),
        ({"start": "yesterday"}, "start"),
        ({"node_id": "not-a-uuid"}, "node_id"),
        ({"start": "2026-11-02T00:00:00"}, "start"),
        ({"start": (NOW - dt.timedelta(days=500)).isoformat()}, "start"),
    ]
    for params, field in cases:
        r = owner.get(url, params=params)
        assert r.status_code == 422, (params, r.text)
        fields = [d["field"].split(".")[0] for d in r.json()["error"]["details"]]
        assert fields == [field], (params, r.text)


def test_another_orgs_cluster_and_node_are_404(owner: Any, cluster_id: str, sessions: Any, make_client: Any) -> None:
    fleet = Fleet(sessions, owner.org_id, cluster_id)
    other = sign_up(make_client(), org="Other Org")
    own = other.post("/api/v1/clusters", json={"name": "b", "tikv_version": "v8.5.1"}).json()["id"]
    for url in (f"/api/v1/clusters/{cluster_id}/metrics", f"/api/v1/clusters/{cluster_id}/metrics/overview"):
        r = other.get(url)
        assert r.status_code == 404 and fleet.volume_id not in r.text
    r = other.get(f"/api/v1/clusters/{own}/metrics", params={"node_id": fleet.node_id})
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
    # Another cluster of the same org doesn't lend its node either.
    second = owner.post("/api/v1/clusters", json={"name": "second", "tikv_version": "v8.5.1"}).json()["id"]
    assert owner.get(f"/api/v1/clusters/{second}/metrics", params={"node_id": fleet.node_id}).status_code == 404
    empty = owner.get(f"/api/v1/clusters/{second}/metrics").json()
    assert empty["node"] is None and empty["panels"] == []


def test_the_newest_two_hours_come_from_raw_points_when_rollups_lag(owner: Any, cluster_id: str,
                                                                     sessions: Any) -> None:
    from sqlalchemy import text

    fleet = Fleet(sessions, owner.org_id, cluster_id)
    start = NOW - dt.timedelta(hours=24)
    times = _minutes(start, 24 * 60)
    fleet.write("volume", "ebs.queue_length", "Count", [(t, float(i % 5)) for i, t in enumerate(times)])
    with sessions() as db:  # rollups not maintained yet (the drain has not run): none at all
        db.execute(text("DELETE FROM metric_rollups WHERE org_id = :org"), {"org": fleet.org})
        db.commit()
    body = _get(owner, cluster_id, start=start.isoformat(), end=NOW.isoformat(), panel="queue_length")
    q = _series(body["panels"][0], "data_queue_length")
    assert body["resolution_seconds"] == 300
    assert len(q["t"]) == 24 and q["t"][0] == int((NOW - dt.timedelta(hours=2)).timestamp())
    assert set(q["values"]) == {2.0} and q["statistic"] == "avg"


def test_a_minute_at_the_ceiling_survives_the_point_budget(owner: Any, cluster_id: str, sessions: Any) -> None:
    fleet = Fleet(sessions, owner.org_id, cluster_id)  # gp3 at 3,000 IOPS (its ceiling)
    start = NOW - dt.timedelta(hours=6)
    times = _minutes(start, 360)
    hit = times[217]
    # ~1,500 IOPS, one minute at 3,000 (gp3's ceiling): the minute the advisor flags must be on the chart.
    ops = [(t, 60.0 * (3000.0 if t == hit else 1500.0 + 7.0 * (i % 13))) for i, t in enumerate(times)]
    fleet.write("volume", "ebs.read_ops", "Count", ops)
    body = _get(owner, cluster_id, start=start.isoformat(), end=NOW.isoformat(), panel="data_iops", points=60)
    reads = _series(body["panels"][0], "data_read_iops")
    assert len(reads["t"]) <= 60 < 360
    assert max(reads["values"]) == 3000.0 and reads["t"][reads["values"].index(3000.0)] == int(hit.timestamp())
    assert min(reads["values"]) == 1500.0
    assert reads["step_seconds"] == reads["span_seconds"] == 6 * 3600 // 15  # 60 points: 15 M4 spans of 24 min
    assert [c["value"] for c in body["panels"][0]["ceilings"]] == [3000.0]  # ceilings are not downsampled
    # The whole series when the budget holds it; out-of-range budgets are refused, naming the field.
    assert len(_series(_get(owner, cluster_id, start=start.isoformat(), end=NOW.isoformat(), panel="data_iops",
                            points=360)["panels"][0], "data_read_iops")["t"]) == 360
    for bad in (3, 100_000):
        r = owner.get(f"/api/v1/clusters/{cluster_id}/metrics", params={"points": bad})
        assert r.status_code == 422 and r.json()["error"]["details"][0]["field"].startswith("points")


# Every series a node's panels draw (metrics.service.keys_for): 8 per volume, 6 of the instance, 14 of TiKV.
VOLUME_METRICS = ("ebs.read_ops", "ebs.write_ops", "ebs.read_bytes", "ebs.write_bytes", "ebs.total_read_time",
                  "ebs.total_write_time", "ebs.queue_length", "ebs.burst_balance")
INSTANCE_METRICS = ("ec2.ebs_read_ops", "ec2.ebs_write_ops", "ec2.ebs_read_bytes", "ec2.ebs_write_bytes",
                    "ec2.ebs_io_balance", "ec2.ebs_byte_balance")
NODE_METRICS = ("tikv.block_cache_hit", "tikv.block_cache_miss", "tikv.pending_compaction_bytes", "tikv.write_stall",
                "tikv.store_used_bytes", "tikv.store_capacity_bytes", "tikv.store_available_bytes",
                *(f"tikv.thread_cpu.{p}" for p in ("scheduler", "apply", "raftstore", "store_writer",
                                                   "unified_read_pool", "grpc", "rocksdb")))


def test_a_full_node_view_fits_the_page_budget(owner: Any, cluster_id: str, sessions: Any) -> None:
    """The Metrics tab's budget (docs/metrics-downsampling.md): <= 150 KB of API data per node view. 6 hours of every series a node has (1-minute CloudWatch and
    Prometheus points, 5-minute EC2 points), noisy values with many digits, at the page's point budget (MAX_CHART_POINTS, frontend/src/features/metrics/api.ts)."""
    import random

    fleet = Fleet(sessions, owner.org_id, cluster_id, volume_type="gp2", iops=3000, throughput=None,
                  raft_volume_type="gp2", instance_type="m6i.xlarge")
    start = NOW - dt.timedelta(hours=6)
    rng = random.Random(16)
    minutes = _minutes(start, 360)
    for kind, names, times in (("volume", VOLUME_METRICS, minutes), ("raft_volume", VOLUME_METRICS, minutes),
                               ("instance", INSTANCE_METRICS, minutes[::5]), ("tikv_node", NODE_METRICS, minutes)):
        for name in names:
            fleet.write(kind, name, "Count", [(t, rng.uniform(1e3, 1e7)) for t in times])
    whole = owner.get(f"/api/v1/clusters/{cluster_id}/metrics",
                      params={"start": start.isoformat(), "end": NOW.isoformat(), "points": 2000})
    page = owner.get(f"/api/v1/clusters/{cluster_id}/metrics",
                     params={"start": start.isoformat(), "end": NOW.isoformat(), "points": 112})
    series = [s for p in page.json()["panels"] for s in p["series"]]
    assert len(series) >= 40 and max(len(s["t"]) for s in series) <= 112
    assert max(len(s["t"]) for p in whole.json()["panels"] for s in p["series"]) == 360
    overview = owner.get(f"/api/v1/clusters/{cluster_id}/metrics/overview",
                         params={"start": start.isoformat(), "end": NOW.isoformat()})
    assert len(page.content) + len(overview.content) <= 150_000, (len(page.content), len(overview.content))
    assert len(whole.content) > 150_000  # the budget is the downsampling's doing, not a small fixture's


def test_the_overview_reads_the_inventory_in_a_fixed_number_of_queries(owner: Any, cluster_id: str, sessions: Any,
                                                                        connection: Any) -> None:
    """The overview's queries do not grow with the nodes (one batch per table, not ~15 per node): the same count for
    one node and for four, one of them with a volume resized inside the window."""
    from sqlalchemy import event

    statements: list[str] = []

    def count(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        statements.append(statement)

    start = NOW - dt.timedelta(hours=2)
    Fleet(sessions, owner.org_id, cluster_id, suffix="a").change("size_gib", 500, 1000, NOW - dt.timedelta(hours=1))

    def overview() -> tuple[int, dict[str, Any]]:
        statements.clear()
        event.listen(connection, "before_cursor_execute", count)
        try:
            r = owner.get(f"/api/v1/clusters/{cluster_id}/metrics/overview",
                          params={"start": start.isoformat(), "end": NOW.isoformat()})
        finally:
            event.remove(connection, "before_cursor_execute", count)
        assert r.status_code == 200, r.text
        return len(statements), r.json()

    one, body_one = overview()
    for suffix in "bcd":
        Fleet(sessions, owner.org_id, cluster_id, suffix=suffix, instance_type="m5.2xlarge")
    four, body_four = overview()
    assert len(body_one["nodes"]) == 1 and len(body_four["nodes"]) == 4
    assert four == one, (one, four)
    assert one <= 20, one


@pytest.mark.parametrize(("metric", "stored_unit", "stored", "panel", "series", "shown", "text"), [
    # TiKV's longest write stall in microseconds (registry): 250,000 µs is 250 ms on the chart and in the guard
    ("tikv.write_stall", "microseconds", 250_000.0, "write_stall", "write_stall", 250.0, "250 ms"),
    # pending compaction bytes: 200 GiB, above the 192 GiB soft limit the panel draws
    ("tikv.pending_compaction_bytes", "bytes", 200.0 * 2**30, "compaction_pending", "pending_compaction", 200.0,
     "200 GiB"),
])
def test_a_guard_and_the_chart_of_one_series_say_the_same_number_in_the_same_unit(
        owner: Any, cluster_id: str, sessions: Any, metric: str, stored_unit: str, stored: float, panel: str,
        series: str, shown: float, text: str) -> None:
    """The apply guard on a finding's own series reads it as its Metrics chart draws it: both scale the stored
    unit with the one table (domain.snapshot.labels.STORED_TO_SHOWN)."""
    from headroom.apply import run as apply_run
    from headroom.domain.apply.guards import finding_guard
    from headroom.domain.apply.run import judge, p99

    fleet = Fleet(sessions, owner.org_id, cluster_id)
    start = NOW - dt.timedelta(hours=1)
    fleet.write("tikv_node", metric, stored_unit, [(t, stored) for t in _minutes(start, 60)])
    body = _get(owner, cluster_id, start=start.isoformat(), end=NOW.isoformat(), panel=panel, points=2000)
    chart = _panel(body, panel)
    drawn = _series(chart, series)
    guard = finding_guard(metric)
    with sessions() as db:
        read = apply_run._guard_values(db, uuid.UUID(owner.org_id), guard, [], [fleet.address], start, NOW)
    assert read is not None
    values, entities = read
    assert entities == [fleet.address] and len(values) == 60
    assert guard.unit == chart["unit"]
    assert drawn["values"] == [pytest.approx(shown)] * 60 and values == [pytest.approx(shown)] * 60
    reading = judge(guard, entities, before=p99(values), after=p99(values), last_week=None)
    assert text in reading.verdict and not reading.tripped
