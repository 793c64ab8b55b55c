"""A demo volume given the ID of a real EBS volume (PATCH /clusters/{id}/demo-volumes/{volume_id}): the row and its
series take the ID, the demo's refresh keeps it and keeps writing the simulated metrics under it (the physics'
state continues), the tags are what an apply run checks, and a null ID gives the simulated one back."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from headroom.domain.snapshot import metric_ids as mid
from headroom.domain.snapshot.scenario import load_scenario
from headroom.inventory.models import TikvNode, Volume
from headroom.sources.models import CollectionSweep
from headroom.sources.demo import service as demo
from headroom.timeseries import repository as timeseries
from helpers import join_with_role, sign_up
from sqlalchemy import select

NOW = dt.datetime(2026, 11, 2, 12, 0, tzinfo=dt.UTC)
REAL = "vol-0123456789abcdef0"
TAGS = {"headroom-apply": "true", "Name": "tikv-legacy-2 data"}


def _series(db: Any, org_id: uuid.UUID, volume_id: str) -> dict[str, int]:
    return {metric: sid for _k, _e, metric, sid, _c, _s in timeseries.entity_series(db, org_id, [volume_id])}


def _demo(db: Any, owner: Any) -> tuple[Any, Volume]:
    """The owner's org gets the demo cluster with an hour of history; return it and a gp2 data volume."""
    org_id = uuid.UUID(owner.org_id)
    cluster = demo.seed_demo_cluster(db, org_id)
    demo.ingest_window(db, cluster, load_scenario(demo.default_scenario_path()), NOW - dt.timedelta(hours=1), NOW)
    db.commit()
    gp2 = db.scalars(select(Volume).where(Volume.org_id == org_id, Volume.volume_type == "gp2", Volume.role == "data")
                     .order_by(Volume.volume_id)).first()
    assert gp2 is not None
    return cluster, gp2


def test_a_demo_volume_takes_a_real_id_with_its_history_and_keeps_it_through_the_refresh(
        client: Any, make_client: Any, db: Any) -> None:
    owner = sign_up(client)
    org_id = uuid.UUID(owner.org_id)
    cluster, gp2 = _demo(db, owner)
    simulated = gp2.volume_id
    history = _series(db, org_id, simulated)
    assert mid.EBS_BURST_BALANCE in history
    url = f"/api/v1/clusters/{cluster.id}/demo-volumes/{simulated}"

    answer = owner.patch(url, json={"volume_id": REAL, "tags": TAGS})
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"volume_id": REAL, "simulated_volume_id": simulated, "tags": TAGS}
    db.expire_all()
    row = db.get(Volume, gp2.id)
    assert (row.volume_id, row.tags) == (REAL, TAGS)
    assert _series(db, org_id, REAL) == history  # the same series (points, rollups), under the real ID
    assert _series(db, org_id, simulated) == {}

    # The demo's next windows keep the ID: no second row for the simulated ID, the node still refers to the row, and
    # the simulated metrics land in the same series, continuing the burst bucket's state.
    scenario = load_scenario(demo.default_scenario_path())
    state = demo.stored_state(db, cluster, scenario, NOW, seed=demo._seed_for(cluster))
    assert state is not None and simulated in state.volume_balance_pct
    demo.ingest_window(db, cluster, scenario, NOW, NOW + dt.timedelta(minutes=10), state=state)
    db.commit()
    db.expire_all()
    assert db.scalar(select(Volume.id).where(Volume.org_id == org_id, Volume.volume_id == simulated)) is None
    assert db.get(Volume, gp2.id).volume_id == REAL
    assert db.get(Volume, gp2.id).tags == TAGS
    assert db.scalar(select(TikvNode.id).where(TikvNode.data_volume_ref_id == gp2.id)) is not None
    assert _series(db, org_id, REAL) == history
    assert _series(db, org_id, simulated) == {}
    balance = history[mid.EBS_BURST_BALANCE]
    t, _v = timeseries.read_points_many(db, org_id, [balance], NOW, NOW + dt.timedelta(minutes=10))[balance]
    assert len(t) > 0  # written after the rename, under the real ID

    # null: the simulated ID again, without the tags, and the history with it
    back = owner.patch(f"/api/v1/clusters/{cluster.id}/demo-volumes/{REAL}", json={"volume_id": None})
    assert back.status_code == 200, back.text
    assert back.json() == {"volume_id": simulated, "simulated_volume_id": simulated, "tags": {}}
    db.expire_all()
    assert _series(db, org_id, simulated) == history
    assert _series(db, org_id, REAL) == {}
    actions = [e["action"] for e in owner.get("/api/v1/org/audit-log?limit=20").json()]
    assert actions.count("volume.id_given") == 2


def test_bad_input_is_refused_in_words_and_changes_nothing(client: Any, make_client: Any, db: Any) -> None:
    owner = sign_up(client)
    cluster, gp2 = _demo(db, owner)
    url = f"/api/v1/clusters/{cluster.id}/demo-volumes/{gp2.volume_id}"

    bad = owner.patch(url, json={"volume_id": "vol-XYZ"})
    assert bad.status_code == 422, bad.text
    assert bad.json()["error"]["message"].startswith("Real volume ID: expected an EBS volume ID like")
    reserved = owner.patch(url, json={"volume_id": REAL, "tags": {"aws:cloudformation:stack": "x"}})
    assert reserved.status_code == 422, reserved.text
    assert "aws:" in reserved.json()["error"]["message"]
    missing = owner.patch(f"/api/v1/clusters/{cluster.id}/demo-volumes/vol-0000000000000000a",
                          json={"volume_id": REAL})
    assert missing.status_code == 404, missing.text
    other = db.scalars(select(Volume).where(Volume.org_id == uuid.UUID(owner.org_id), Volume.id != gp2.id,
                                            Volume.role == "data")).first()
    taken = owner.patch(url, json={"volume_id": other.volume_id})
    assert taken.status_code == 409, taken.text
    assert taken.json()["error"]["message"] == f"Real volume ID: your organisation already has a volume {other.volume_id}."

    viewer = join_with_role(owner, make_client(), "viewer")
    assert viewer.patch(url, json={"volume_id": REAL}).status_code == 403
    own = owner.post("/api/v1/clusters", json={"name": "not-a-demo", "tikv_version": "v8.5.1"}).json()
    not_demo = owner.patch(f"/api/v1/clusters/{own['id']}/demo-volumes/{gp2.volume_id}", json={"volume_id": REAL})
    assert not_demo.status_code == 409, not_demo.text
    assert "Only a demo cluster's volumes" in not_demo.json()["error"]["message"]
    db.expire_all()
    assert db.get(Volume, gp2.id).volume_id == gp2.volume_id


def test_the_demo_ingest_asks_nothing_of_aws_whatever_endpoint_is_set(db: Any, settings: Any) -> None:
    """The e2e server sets HEADROOM_AWS_ENDPOINT_URL (the moto server) for apply runs; the demo fleet's simulation
    and its demo source's sweeps must not depend on it: an endpoint nothing answers on changes nothing."""
    from headroom.accounts.models import Organization
    from headroom.platform.jobs.context import JobContext
    from headroom.platform.security import new_external_id
    from helpers import units_of_work

    org = Organization(name="d", slug=f"d-{uuid.uuid4().hex[:8]}", aws_external_id=new_external_id())
    db.add(org)
    db.flush()
    cluster = demo.seed_demo_cluster(db, org.id)
    demo.seed_demo_source(db, org.id)
    demo.ingest_window(db, cluster, load_scenario(demo.default_scenario_path()), NOW - dt.timedelta(hours=1), NOW)
    db.commit()
    settings.aws_endpoint_url = "http://127.0.0.1:9"  # the discard port: any AWS call would fail
    settings.demo_fleet = True
    ctx = JobContext(settings=settings, database_url="unused", units=units_of_work(lambda: db),
                     queue=lambda name, **params: f"test:{name}",
                     sleep=lambda _s: None)
    result = demo.ingest_demo_fleet(ctx, NOW + dt.timedelta(minutes=5), str(cluster.id))
    assert result["clusters"] == 1 and result["points"] > 0


def _modified(db: Any, row_id: uuid.UUID, **values: Any) -> None:
    """What apply/run.py writes on the row once AWS reports a modification in effect (committed)."""
    db.expire_all()  # the row as the API's requests left it
    row = db.get(Volume, row_id)
    for column, value in values.items():
        setattr(row, column, value)
    db.commit()


def test_a_volume_an_apply_run_modified_is_simulated_as_modified_from_then_on(
        client: Any, make_client: Any, db: Any) -> None:
    """The demo has no AWS account whose sweep would report a volume's new type: once an apply run wrote what AWS
    read back on the row (modified_at), the demo simulates the volume that way, keeps the row as AWS reported it,
    and does not simulate the minutes before the change again with physics they did not have."""
    owner = sign_up(client)
    org_id = uuid.UUID(owner.org_id)
    cluster, gp2 = _demo(db, owner)  # history up to NOW - 1 minute; a gp2 volume with a burst bucket
    assert owner.patch(f"/api/v1/clusters/{cluster.id}/demo-volumes/{gp2.volume_id}",
                       json={"volume_id": REAL, "tags": TAGS}).status_code == 200
    balance = _series(db, org_id, REAL)[mid.EBS_BURST_BALANCE]

    def burst_minutes(lo: dt.datetime, hi: dt.datetime) -> list[int]:
        t, _v = timeseries.read_points_many(db, org_id, [balance], lo, hi)[balance]
        return t.tolist()

    before = burst_minutes(NOW - dt.timedelta(hours=1), NOW)
    assert before  # gp2: AWS publishes BurstBalance
    # What apply/run.py writes once AWS reports the gp2 -> gp3 modification in effect (no IOPS or throughput read
    # back: the type alone, so gp3's baseline), at NOW - 3 minutes: inside the overlap the next ingest rewrites.
    changed_at = NOW - dt.timedelta(minutes=3)
    source = demo.seed_demo_source(db, org_id)
    _modified(db, gp2.id, volume_type="gp3", iops=None, throughput_mibps=None, modified_at=changed_at)

    written = demo.ingest_demo(db, cluster, now=NOW + dt.timedelta(minutes=10))
    db.commit()
    assert written["points"] > 0
    db.expire_all()
    row = db.get(Volume, gp2.id)
    # gp3 with AWS's baseline (3,000 IOPS, 125 MiB/s), not set back to the scenario's gp2 by the demo's refresh
    assert (row.volume_id, row.volume_type, row.iops, row.throughput_mibps) == (REAL, "gp3", 3000, 125)
    # no BurstBalance from the change on (AWS publishes none for gp3); the stored minutes before it are kept
    assert burst_minutes(NOW, NOW + dt.timedelta(minutes=10)) == []
    assert burst_minutes(NOW - dt.timedelta(hours=1), NOW) == before
    # the window began at the change's 5-minute boundary (NOW - 5), not at the overlap's (the watermark NOW - 1
    # less 10 minutes, on a 5-minute boundary: NOW - 15), as the demo source's sweep record says
    sweep = db.scalars(select(CollectionSweep).where(CollectionSweep.source_id == source.id)
                       .order_by(CollectionSweep.window_end_at.desc())).first()
    assert (sweep.window_start_at, sweep.window_end_at) == (NOW - dt.timedelta(minutes=5), NOW + dt.timedelta(minutes=10))

    # set back to gp2 (the undo), later: BurstBalance again from then on
    _modified(db, gp2.id, volume_type="gp2", modified_at=NOW + dt.timedelta(minutes=12))
    demo.ingest_demo(db, cluster, now=NOW + dt.timedelta(minutes=20))
    db.commit()
    db.expire_all()
    assert db.get(Volume, gp2.id).volume_type == "gp2"
    assert burst_minutes(NOW + dt.timedelta(minutes=15), NOW + dt.timedelta(minutes=20))

    # another ID (here the simulated one again): another volume, which no run modified
    _modified(db, gp2.id, volume_type="gp3", modified_at=NOW + dt.timedelta(minutes=22))
    assert owner.patch(f"/api/v1/clusters/{cluster.id}/demo-volumes/{REAL}", json={"volume_id": None}).status_code == 200
    db.expire_all()
    assert db.get(Volume, gp2.id).modified_at is None
    demo.ingest_demo(db, cluster, now=NOW + dt.timedelta(minutes=30))
    db.commit()
    db.expire_all()
    assert db.get(Volume, gp2.id).volume_type == "gp2"
