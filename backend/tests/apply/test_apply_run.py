"""Running an approved plan (docs/apply.md "Running a plan"), through the API on real PostgreSQL, with TiKV status
port stand-ins (tikv_status_server: TiKV's POST/GET /config and its online-key table) and the moto server for
STS and EC2. The job is run as the worker runs it (apply.run.advance with units of work), with the test's clock.

- a TiKV key is set node by node, read back, watched; a guard fed worse latency trips it and every node the run
  changed gets its old value again (the stand-in reports it), the rest are skipped;
- a gp2 -> gp3 change goes through the write role (STS AssumeRole with the org's external ID) to ModifyVolume,
  is followed until AWS reports it in effect, verified and recorded; a volume without the tag is refused;
- the kill switch leaves every step in a recorded state, including one a lost worker left half done;
- nothing runs for an organisation not opted in, a viewer, or outside the maintenance window.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import json

import boto3
import pytest
from headroom.apply import run as apply_run
from headroom.domain.model import Change, EntityRef
from headroom.domain.snapshot import metric_ids as mid
from headroom.inventory.models import TikvNode, Volume
from sqlalchemy import select
from headroom.platform.jobs.context import JobContext
from headroom.timeseries import repository as ts
from helpers import join_with_role, sign_up, units_of_work
from moto.iam.access_control import IAMPolicy, PermissionResult
from sources.aws.test_apply_role import _role_documents
from tikv_status_server import TikvStatus, tikv_status_server

from test_apply_plans import ROLE, _finding

KEY = "storage.block-cache.capacity"
BLOCK_CACHE = Change(target="tikv", key=KEY, current="8GiB", proposed="12GiB", online=True)


@pytest.fixture()
def job(sessions: Any, settings: Any) -> JobContext:
    def queue(name: str, **params: Any) -> str:
        return f"test:{name}"

    return JobContext(settings=settings, database_url="unused", units=units_of_work(sessions), queue=queue,
                      sleep=lambda _s: None)


@pytest.fixture()
def stand_ins() -> Iterator[list[TikvStatus]]:
    with ExitStack() as stack:
        # in the order the plan takes them (status addresses in order)
        yield sorted((stack.enter_context(tikv_status_server("v8.5.1")) for _ in range(3)), key=lambda s: s.url)


def _cluster(owner: Any, nodes: list[TikvStatus]) -> str:
    response = owner.post("/api/v1/clusters", json={"name": f"c-{uuid.uuid4().hex[:6]}", "tikv_version": "v8.5.1"})
    cid = str(response.json()["id"])
    for i, node in enumerate(nodes, start=1):
        made = owner.post(f"/api/v1/clusters/{cid}/nodes", json={
            "store_address": f"10.0.1.{i}:20160", "status_address": node.url, "version": "v8.5.1"})
        assert made.status_code == 201, made.text
    return cid


def _opt_in(owner: Any, cid: str, tag: tuple[str, str] = ("headroom-apply", "yes")) -> None:
    assert owner.put("/api/v1/org/apply-settings", json={"enabled": True, "role_arn": ROLE, "volume_tag_key": tag[0],
                                                         "volume_tag_value": tag[1]}).status_code == 200
    assert owner.put(f"/api/v1/clusters/{cid}/apply-settings", json={"enabled": True}).status_code == 200


def _approved(owner: Any, admin: Any, cid: str, fid: str, **extra: Any) -> str:
    plan = admin.post(f"/api/v1/clusters/{cid}/apply-plans", json={"finding_id": fid, **extra})
    assert plan.status_code == 201, plan.text
    approved = owner.post(f"/api/v1/apply-plans/{plan.json()['id']}/approve", json={})
    assert approved.status_code == 200, approved.text
    return str(plan.json()["id"])


def _volume(db: Any, org: str, cid: str, volume_id: str, store: str, tags: dict[str, str]) -> None:
    row = Volume(org_id=uuid.UUID(org), cluster_id=uuid.UUID(cid), volume_id=volume_id, volume_type="gp2",
                 size_gib=500, iops=1500, role="data", availability_zone="us-east-1a", tags=tags)
    db.add(row)
    db.flush()
    node = db.query(TikvNode).filter_by(org_id=uuid.UUID(org), store_address=store).one()
    node.data_volume_ref_id = row.id
    db.commit()


def _feed(db: Any, org: str, cid: str, at: dt.datetime, volume_id: str, store: str, *, after_latency_ms: float,
          before_latency_ms: float = 2.0, minutes: range = range(-20, 20)) -> None:
    """A minute per point from 20 minutes before `at` to 20 after (or over `minutes`): the volume's read and write
    time and ops (latency = time / ops), and the store's scheduler latch wait p99 (seconds, as stored)."""
    keys = [ts.SeriesKey("volume", volume_id, m, u) for m, u in (
        (mid.EBS_TOTAL_READ_TIME, "Seconds"), (mid.EBS_READ_OPS, "Count"), (mid.EBS_TOTAL_WRITE_TIME, "Seconds"),
        (mid.EBS_WRITE_OPS, "Count"))] + [ts.SeriesKey("tikv_node", store, mid.TIKV_WAIT_SCHEDULER_LATCH, "seconds")]
    ids = ts.ensure_series(db, uuid.UUID(org), keys, cluster_id=uuid.UUID(cid))
    points = []
    for minute in minutes:
        t = at + dt.timedelta(minutes=minute)
        latency = before_latency_ms if minute < 0 else after_latency_ms
        for key in keys[:4]:
            ops = key.metric in (mid.EBS_READ_OPS, mid.EBS_WRITE_OPS)
            points.append((ids[key], t, 600.0 if ops else 600.0 * latency / 1000.0))
        points.append((ids[keys[4]], t, 0.001))
    ts.write_points(db, uuid.UUID(org), points)
    db.commit()


def _plan(actor: Any, pid: str) -> dict[str, Any]:
    return dict(actor.get(f"/api/v1/apply-plans/{pid}").json())


def _actions(owner: Any) -> list[str]:
    return [e["action"] for e in owner.get("/api/v1/org/audit-log?limit=200").json()]


def test_a_tikv_key_whose_guard_trips_is_rolled_back_on_every_node_it_changed(
        client: Any, make_client: Any, db: Any, clock: Any, job: JobContext, stand_ins: list[TikvStatus]) -> None:
    owner = sign_up(client)
    admin = join_with_role(owner, make_client(), "admin")
    nodes = stand_ins[:2]
    cid = _cluster(owner, nodes)
    _opt_in(owner, cid)
    for i in (1, 2):
        _volume(db, owner.org_id, cid, f"vol-0data{i}", f"10.0.1.{i}:20160", {})
    # the first node's volume gets ten times slower after the step; the second would be fine
    _feed(db, owner.org_id, cid, clock(), "vol-0data1", "10.0.1.1:20160", after_latency_ms=30.0)
    _feed(db, owner.org_id, cid, clock(), "vol-0data2", "10.0.1.2:20160", after_latency_ms=2.0)
    pid = _approved(owner, admin, cid, _finding(db, owner, cid, [BLOCK_CACHE]))

    started = owner.post(f"/api/v1/apply-plans/{pid}/run")
    assert started.status_code == 202, started.text
    assert started.json()["status"] == "running"
    assert apply_run.advance(job, uuid.UUID(pid), clock=clock)["state"] == "wait"  # watching step 1
    plan = _plan(owner, pid)
    first = plan["step_runs"][0]
    assert (first["status"], first["before"], first["read_back"]) == ("verifying", "8GiB", "12GiB")
    assert nodes[0].value(KEY) == "12GiB" and nodes[1].value(KEY) == "8GiB"  # one node at a time
    assert first["watch_until"] is not None

    clock.advance(minutes=16)
    apply_run.advance(job, uuid.UUID(pid), clock=clock)
    plan = _plan(owner, pid)
    assert plan["status"] == "rolled_back", plan["outcome"]
    first, second = plan["step_runs"]
    assert (first["status"], first["restored"], second["status"]) == ("undone", "8GiB", "skipped")
    assert nodes[0].value(KEY) == "8GiB"  # the old value again, read from the stand-in
    assert [body for _, body in nodes[0].posts] == ['{"storage.block-cache.capacity": "12GiB"}',
                                                    '{"storage.block-cache.capacity": "8GiB"}']
    assert nodes[1].posts == []  # never touched
    read = next(g for g in first["guard_readings"] if g["metric"] == "derived.read_latency_ms")
    assert read["tripped"] is True
    assert (round(read["before"], 1), round(read["after"], 1)) == (2.0, 30.0)
    assert "Read latency got worse" in plan["outcome"] and "30 ms" in plan["outcome"]
    assert "None" not in plan["outcome"]
    # the change ledger: the step applied and the rollback, each credited to the plan's finding, in TiKV's units
    ledger = owner.get(f"/api/v1/clusters/{cid}/changes?days=7").json()["items"]
    mine = [(e["kind"], e["entity_id"], [(c["key"], c["before_text"], c["after_text"]) for c in e["changes"]],
             [f["id"] for f in e["findings"]]) for e in ledger if e["kind"].startswith("apply")]
    assert sorted(mine) == [("apply", "10.0.1.1:20160", [(KEY, "8GiB", "12GiB")], [plan["finding_id"]]),
                            ("apply_undo", "10.0.1.1:20160", [(KEY, "12GiB", "8GiB")], [plan["finding_id"]])]
    actions = _actions(owner)
    for action in ("apply.run_started", "apply.step_applied", "apply.guard_tripped", "apply.step_rolled_back",
                   "apply.step_skipped", "apply.run_rolled_back"):
        assert action in actions, action
    # re-running the job repeats nothing
    apply_run.advance(job, uuid.UUID(pid), clock=clock)
    assert len(nodes[0].posts) == 2


def test_a_refused_rollback_alerts_once_and_the_persons_undo_resolves_it_once(
        client: Any, make_client: Any, db: Any, clock: Any, job: JobContext, stand_ins: list[TikvStatus]) -> None:
    """A guard trips and the node refuses to take its old value back: the run stops, the org's channels get one
    stop alert, and the setting is offered for a person's undo. A retry the node refuses again changes nothing and
    tells nobody again; the retry it accepts sets the value back, read back, and resolves the alert, once."""
    from headroom.alerts.models import AlertDelivery

    clock.now = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
    owner = sign_up(client)
    admin = join_with_role(owner, make_client(), "admin")
    node = stand_ins[0]
    cid = _cluster(owner, [node])
    _opt_in(owner, cid)
    assert owner.post("/api/v1/alert-channels", json={"name": "ops", "kind": "webhook",
                                                      "url": "http://127.0.0.1:9/hook"}).status_code == 201
    _volume(db, owner.org_id, cid, "vol-0data1", "10.0.1.1:20160", {})
    _feed(db, owner.org_id, cid, clock(), "vol-0data1", "10.0.1.1:20160", after_latency_ms=30.0)
    pid = _approved(owner, admin, cid, _finding(db, owner, cid, [BLOCK_CACHE]))

    def deliveries() -> list[tuple[str, str]]:
        db.expire_all()
        rows = (db.query(AlertDelivery).filter(AlertDelivery.org_id == uuid.UUID(owner.org_id))
                .order_by(AlertDelivery.id).all())
        return [(d.event["kind"], d.event["dedup_key"]) for d in rows]

    assert owner.post(f"/api/v1/apply-plans/{pid}/run").status_code == 202
    apply_run.advance(job, uuid.UUID(pid), clock=clock)  # step 1 set and read back: watching
    assert node.value(KEY) == "12GiB"
    node.refuse = 'failed to update, error: "the block cache is busy"'
    clock.advance(minutes=16)
    apply_run.advance(job, uuid.UUID(pid), clock=clock)  # the guard trips; the rollback's POST is refused
    plan = _plan(owner, pid)
    assert plan["status"] == "failed", plan["outcome"]
    assert plan["step_runs"][0]["status"] == "failed"
    assert "Undo setting changes" in plan["outcome"]
    assert node.value(KEY) == "12GiB"  # still the run's value
    assert deliveries() == [("apply", f"headroom-apply/{pid}")]

    # the person's undo while the node still refuses: nothing changes, nobody is told again, it can be retried
    assert owner.post(f"/api/v1/apply-plans/{pid}/undo").status_code == 200
    apply_run.advance(job, uuid.UUID(pid), clock=clock)
    plan = _plan(owner, pid)
    assert (plan["step_runs"][0]["status"], plan["step_runs"][0]["undo_confirmed_at"]) == ("failed", None)
    assert "Undo failed on" in plan["outcome"]
    assert node.value(KEY) == "12GiB"
    assert deliveries() == [("apply", f"headroom-apply/{pid}")]

    # the node takes it now: the person's retry sets the value back and ends the alert
    node.refuse = None
    clock.advance(minutes=5)
    assert owner.post(f"/api/v1/apply-plans/{pid}/undo").status_code == 200
    apply_run.advance(job, uuid.UUID(pid), clock=clock)
    plan = _plan(owner, pid)
    assert (plan["step_runs"][0]["status"], plan["step_runs"][0]["restored"]) == ("undone", "8GiB")
    assert node.value(KEY) == "8GiB"
    assert [body for _, body in node.posts] == ['{"storage.block-cache.capacity": "12GiB"}'] + \
        ['{"storage.block-cache.capacity": "8GiB"}'] * 3  # the rollback, the refused retry, the accepted one
    resolved_at = clock().isoformat()
    # whatever runs again (the job, the minute tick, another undo), the alert is resolved once, and never re-sent
    clock.advance(minutes=5)
    apply_run.advance(job, uuid.UUID(pid), clock=clock)
    apply_run.advance_all(job, clock=clock)
    assert owner.post(f"/api/v1/apply-plans/{pid}/undo").status_code == 409
    assert deliveries() == [("apply", f"headroom-apply/{pid}"), ("resolved", f"headroom-apply/{pid}")]
    db.expire_all()
    resolution = db.query(AlertDelivery).filter(AlertDelivery.org_id == uuid.UUID(owner.org_id),
                                                AlertDelivery.event["kind"].astext == "resolved").one()
    assert resolution.event["at"] == resolved_at


def test_a_step_whose_guards_hold_goes_on_and_the_run_succeeds(
        client: Any, make_client: Any, db: Any, clock: Any, job: JobContext, stand_ins: list[TikvStatus]) -> None:
    owner = sign_up(client)
    admin = join_with_role(owner, make_client(), "admin")
    nodes = stand_ins[:2]
    cid = _cluster(owner, nodes)
    _opt_in(owner, cid)
    for i in (1, 2):
        _volume(db, owner.org_id, cid, f"vol-0data{i}", f"10.0.1.{i}:20160", {})
        _feed(db, owner.org_id, cid, clock(), f"vol-0data{i}", f"10.0.1.{i}:20160", after_latency_ms=1.5)
    pid = _approved(owner, admin, cid, _finding(db, owner, cid, [BLOCK_CACHE]))
    owner.post(f"/api/v1/apply-plans/{pid}/run")
    apply_run.advance(job, uuid.UUID(pid), clock=clock)
    clock.advance(minutes=16)
    apply_run.advance(job, uuid.UUID(pid), clock=clock)  # step 1 judged, step 2 applied and watched
    assert [s["status"] for s in _plan(owner, pid)["step_runs"]] == ["done", "verifying"]
    clock.advance(minutes=16)
    # step 2's after window is later: feed it too (still fine)
    _feed(db, owner.org_id, cid, clock() - dt.timedelta(minutes=16), "vol-0data2", "10.0.1.2:20160",
          after_latency_ms=1.5)
    apply_run.advance(job, uuid.UUID(pid), clock=clock)
    plan = _plan(owner, pid)
    assert plan["status"] == "succeeded", plan["outcome"]
    assert [n.value(KEY) for n in nodes] == ["12GiB", "12GiB"]
    verdicts = [g["verdict"] for g in plan["step_runs"][0]["guard_readings"]]
    assert any(v.startswith("Read latency improved") for v in verdicts), verdicts
    assert "apply.step_verified" in _actions(owner)

    # the plan said a TiKV setting can be undone at once: the undo sets each node back and reads it back
    assert admin.post(f"/api/v1/apply-plans/{pid}/undo").status_code == 200
    apply_run.advance(job, uuid.UUID(pid), clock=clock)
    plan = _plan(owner, pid)
    assert [n.value(KEY) for n in nodes] == ["8GiB", "8GiB"]
    assert [(s["status"], s["restored"]) for s in plan["step_runs"]] == [("undone", "8GiB"), ("undone", "8GiB")]
    assert "each node reports its previous value again" in plan["outcome"], plan["outcome"]
    assert [body for _, body in nodes[1].posts][-1] == '{"storage.block-cache.capacity": "8GiB"}'
    assert {"apply.undo_confirmed", "apply.step_rolled_back"} <= set(_actions(owner))
    again = owner.post(f"/api/v1/apply-plans/{pid}/undo")
    assert again.status_code == 409 and "no applied change waiting" in again.json()["error"]["message"], again.text


def test_the_kill_switch_leaves_every_step_in_a_recorded_state(
        client: Any, make_client: Any, db: Any, clock: Any, job: JobContext, sessions: Any,
        settings: Any, stand_ins: list[TikvStatus]) -> None:
    owner = sign_up(client)
    admin = join_with_role(owner, make_client(), "admin")
    viewer = join_with_role(owner, make_client(), "viewer")
    cid = _cluster(owner, stand_ins)
    _opt_in(owner, cid)
    settings.apply_watch_seconds = 0
    for i in (1, 2, 3):
        _volume(db, owner.org_id, cid, f"vol-0data{i}", f"10.0.1.{i}:20160", {})
        _feed(db, owner.org_id, cid, clock(), f"vol-0data{i}", f"10.0.1.{i}:20160", after_latency_ms=2.0)
    pid = _approved(owner, admin, cid, _finding(db, owner, cid, [BLOCK_CACHE]))
    owner.post(f"/api/v1/apply-plans/{pid}/run")

    real = apply_run.default_effects(job)

    def lost_on_the_second_node(address: str, key: str, value: Any) -> Any:
        if address == stand_ins[1].url:
            raise RuntimeError("worker lost")  # the process dies before it sends anything
        return real.set_key(address, key, value)

    effects = apply_run.Effects(set_key=lost_on_the_second_node, read_key=real.read_key, ec2=real.ec2)
    with pytest.raises(RuntimeError):
        apply_run.advance(job, uuid.UUID(pid), clock=clock, effects=effects)
    assert [s["status"] for s in _plan(owner, pid)["step_runs"]] == ["done", "running", "pending"]

    assert viewer.post(f"/api/v1/apply-plans/{pid}/stop").status_code == 403
    stopped = admin.post(f"/api/v1/apply-plans/{pid}/stop")
    assert stopped.status_code == 200, stopped.text
    plan = stopped.json()
    assert plan["status"] == "stopped"
    runs = plan["step_runs"]
    assert [s["status"] for s in runs] == ["done", "unknown", "stopped"]
    assert "the value before was read; nothing was sent" in runs[1]["error"]
    assert [n.value(KEY) for n in stand_ins] == ["12GiB", "8GiB", "8GiB"]
    assert plan["outcome"].startswith("Stopped by ")
    # nothing runs after a stop, whatever the job does
    apply_run.advance(job, uuid.UUID(pid), clock=clock)
    assert [n.value(KEY) for n in stand_ins] == ["12GiB", "8GiB", "8GiB"]
    assert admin.post(f"/api/v1/apply-plans/{pid}/stop").status_code == 409
    assert _actions(owner).count("apply.step_stopped") == 2


def test_stop_during_a_watch_keeps_the_applied_step_and_starts_no_other(
        client: Any, make_client: Any, db: Any, clock: Any, job: JobContext, stand_ins: list[TikvStatus]) -> None:
    owner = sign_up(client)
    admin = join_with_role(owner, make_client(), "admin")
    cid = _cluster(owner, stand_ins[:2])
    _opt_in(owner, cid)
    pid = _approved(owner, admin, cid, _finding(db, owner, cid, [BLOCK_CACHE]))
    owner.post(f"/api/v1/apply-plans/{pid}/run")
    apply_run.advance(job, uuid.UUID(pid), clock=clock)
    all_stopped = owner.post("/api/v1/org/apply-stop")
    assert all_stopped.status_code == 200 and all_stopped.json()["stopped"] == [pid]
    plan = _plan(owner, pid)
    assert [s["status"] for s in plan["step_runs"]] == ["done", "stopped"]
    assert "not judged" in plan["step_runs"][0]["note"]
    clock.advance(minutes=30)
    apply_run.advance(job, uuid.UUID(pid), clock=clock)
    assert [n.value(KEY) for n in stand_ins[:2]] == ["12GiB", "8GiB"]


def test_a_watch_waits_past_its_period_for_the_guards_first_points_after_the_step(
        client: Any, make_client: Any, db: Any, clock: Any, job: JobContext, stand_ins: list[TikvStatus]) -> None:
    # docs/thresholds/apply-guards.md#late-data: the source's points after the step arrive late
    owner = sign_up(client)
    admin = join_with_role(owner, make_client(), "admin")
    cid = _cluster(owner, stand_ins[:1])
    _opt_in(owner, cid)
    _volume(db, owner.org_id, cid, "vol-0data1", "10.0.1.1:20160", {})
    step_at = clock()
    _feed(db, owner.org_id, cid, step_at, "vol-0data1", "10.0.1.1:20160", after_latency_ms=1.5,
          minutes=range(-20, 0))  # nothing after the step yet
    pid = _approved(owner, admin, cid, _finding(db, owner, cid, [BLOCK_CACHE]))
    owner.post(f"/api/v1/apply-plans/{pid}/run")
    assert apply_run.advance(job, uuid.UUID(pid), clock=clock)["state"] == "wait"
    clock.advance(minutes=16)  # the period is over, the data is not there
    assert apply_run.advance(job, uuid.UUID(pid), clock=clock)["state"] == "wait"
    plan = _plan(owner, pid)
    assert (plan["status"], plan["step_runs"][0]["status"]) == ("running", "verifying")
    assert plan["step_runs"][0]["guard_readings"] == []
    assert "waiting for the first data after the step of read latency, write latency, scheduler latch wait" in \
        plan["outcome"], plan["outcome"]
    assert "12:30 UTC at the latest" in plan["outcome"]  # the set period (15 min) + the grace (15 min)
    # the first minute after the step arrives: judged at the next advance, and it held
    _feed(db, owner.org_id, cid, step_at, "vol-0data1", "10.0.1.1:20160", after_latency_ms=1.5, minutes=range(0, 2))
    clock.advance(minutes=1)
    apply_run.advance(job, uuid.UUID(pid), clock=clock)
    plan = _plan(owner, pid)
    assert plan["status"] == "succeeded", plan["outcome"]
    verdicts = [g["verdict"] for g in plan["step_runs"][0]["guard_readings"]]
    assert any(v.startswith("Read latency improved: 2 ms before, 1.5 ms after") for v in verdicts), verdicts


def test_a_watch_whose_guard_gets_no_data_after_the_step_within_the_grace_stops_the_run(
        client: Any, make_client: Any, db: Any, clock: Any, job: JobContext, stand_ins: list[TikvStatus]) -> None:
    owner = sign_up(client)
    admin = join_with_role(owner, make_client(), "admin")
    cid = _cluster(owner, stand_ins[:1])
    _opt_in(owner, cid)
    _volume(db, owner.org_id, cid, "vol-0data1", "10.0.1.1:20160", {})
    _feed(db, owner.org_id, cid, clock(), "vol-0data1", "10.0.1.1:20160", after_latency_ms=1.5,
          minutes=range(-20, 0))
    pid = _approved(owner, admin, cid, _finding(db, owner, cid, [BLOCK_CACHE]))
    owner.post(f"/api/v1/apply-plans/{pid}/run")
    apply_run.advance(job, uuid.UUID(pid), clock=clock)
    clock.advance(minutes=29)  # 15 min period + 14 of the grace: still waiting
    assert apply_run.advance(job, uuid.UUID(pid), clock=clock)["state"] == "wait"
    clock.advance(minutes=1)  # the grace is over: judged as it is, never blind
    apply_run.advance(job, uuid.UUID(pid), clock=clock)
    plan = _plan(owner, pid)
    assert plan["status"] == "rolled_back", plan["outcome"]
    assert "Read latency: no data after the step; a step is not judged blind" in plan["outcome"]
    assert stand_ins[0].value(KEY) == "8GiB"


def test_nothing_runs_not_opted_in_for_a_viewer_or_outside_the_window(
        client: Any, make_client: Any, db: Any, clock: Any, job: JobContext, stand_ins: list[TikvStatus]) -> None:
    owner = sign_up(client)
    admin = join_with_role(owner, make_client(), "admin")
    viewer = join_with_role(owner, make_client(), "viewer")
    cid = _cluster(owner, stand_ins[:1])
    _opt_in(owner, cid)
    # the test clock is a Monday, 12:00 UTC: a window on weekends only is closed
    window = {"start": "22:00", "end": "02:00", "weekdays": ["sat", "sun"]}
    pid = _approved(owner, admin, cid, _finding(db, owner, cid, [BLOCK_CACHE]), maintenance_window=window)
    assert viewer.post(f"/api/v1/apply-plans/{pid}/run").status_code == 403
    closed = owner.post(f"/api/v1/apply-plans/{pid}/run")
    assert closed.status_code == 409 and "maintenance window" in closed.json()["error"]["message"]
    assert "Mon 12:00 UTC" in closed.json()["error"]["message"]

    other = _approved(owner, admin, cid, _finding(db, owner, cid, [BLOCK_CACHE]))
    assert owner.put(f"/api/v1/clusters/{cid}/apply-settings", json={"enabled": False}).status_code == 200
    off = owner.post(f"/api/v1/apply-plans/{other}/run")
    assert off.status_code == 403 and "turned off for the cluster" in off.json()["error"]["message"]
    # turned off while running: the next step does not start
    assert owner.put(f"/api/v1/clusters/{cid}/apply-settings", json={"enabled": True}).status_code == 200
    assert owner.post(f"/api/v1/apply-plans/{other}/run").status_code == 202
    assert owner.put("/api/v1/org/apply-settings", json={"enabled": False}).status_code == 200
    apply_run.advance(job, uuid.UUID(other), clock=clock)
    plan = _plan(owner, other)
    assert plan["status"] == "stopped" and "turned off for the organisation" in plan["outcome"]
    assert plan["step_runs"][0]["status"] == "stopped"
    assert stand_ins[0].posts == []
    # a plan not approved is not run
    assert owner.post(f"/api/v1/apply-plans/{pid}/run").status_code in (403, 409)


def _moto_volume(ec2: Any, tags: dict[str, str]) -> str:
    spec = [{"ResourceType": "volume", "Tags": [{"Key": k, "Value": v} for k, v in tags.items()]}] if tags else []
    return str(ec2.create_volume(AvailabilityZone="us-east-1a", Size=500, VolumeType="gp2",
                                 TagSpecifications=spec)["VolumeId"])


def _assert_the_write_role_refuses_untagged(owner: Any, volume_id: str) -> None:
    """AWS would refuse it too: the write role's own policy (the template the organisation deploys), evaluated by
    moto's IAM policy evaluator with the request context AWS builds (moto's EC2 evaluates no tag condition; see the
    write role's test), refuses the volume under another tag value and allows one carrying the tag."""
    templates = {t["kind"]: t["text"] for t in owner.get("/api/v1/sources/aws/apply-setup").json()["templates"]}
    _, _, policy = _role_documents(templates["cloudformation"])
    evaluator = IAMPolicy(json.dumps(policy))

    def aws_allows(vid: str, tags: dict[str, str]) -> bool:
        context = {f"aws:ResourceTag/{k}": v for k, v in tags.items()}
        arn = f"arn:aws:ec2:us-east-1:123456789012:volume/{vid}"
        return bool(evaluator.is_action_permitted("ec2:ModifyVolume", arn, None, context)
                    == PermissionResult.PERMITTED)

    assert aws_allows(volume_id, {"headroom-apply": "someone-else"}) is False
    assert aws_allows("vol-0tagged", {"headroom-apply": "yes"}) is True


def _inventory(db: Any, org_id: str, volume_id: str) -> tuple[Any, ...]:
    """The volume's inventory row: type, IOPS, throughput and when Headroom last modified it."""
    db.expire_all()
    row = db.scalars(select(Volume).where(Volume.org_id == uuid.UUID(org_id), Volume.volume_id == volume_id)).one()
    return row.volume_type, row.iops, row.throughput_mibps, row.modified_at


def test_a_gp2_volume_becomes_gp3_through_the_write_role_and_its_undo_waits_six_hours(
        client: Any, make_client: Any, db: Any, clock: Any, job: JobContext, aws_endpoint_url: str,
        stand_ins: list[TikvStatus]) -> None:
    clock.now = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)  # AWS (moto) times the modification
    owner = sign_up(client)
    admin = join_with_role(owner, make_client(), "admin")
    cid = _cluster(owner, stand_ins[:1])
    _opt_in(owner, cid)
    ec2 = boto3.client("ec2", endpoint_url=aws_endpoint_url, region_name="us-east-1")
    volume_id = _moto_volume(ec2, {"headroom-apply": "yes"})
    _volume(db, owner.org_id, cid, volume_id, "10.0.1.1:20160", {"headroom-apply": "yes"})
    _feed(db, owner.org_id, cid, clock(), volume_id, "10.0.1.1:20160", after_latency_ms=1.0)
    ref = EntityRef(kind="volume", id=volume_id)
    gp3 = Change(target="aws", key="volume.type", entity=ref, current="gp2", proposed="gp3", online=True)
    iops = Change(target="aws", key="volume.iops", entity=ref, current=1500, proposed=6000, online=True)
    # 250.0, a float, as the advisor's gp2 fixes carry it: ModifyVolume takes an integer
    mibps = Change(target="aws", key="volume.throughput", entity=ref, current=None, proposed=250.0, online=True)
    pid = _approved(owner, admin, cid, _finding(db, owner, cid, [gp3, iops, mibps]))
    assert owner.post(f"/api/v1/apply-plans/{pid}/run").status_code == 202
    apply_run.advance(job, uuid.UUID(pid), clock=clock)
    # three steps on one volume, one ModifyVolume: AWS allows one modification every six hours
    steps = _plan(owner, pid)["step_runs"]
    assert [(s["status"], s["read_back"]) for s in steps] == [
        ("verifying", "gp3"), ("verifying", 6000), ("verifying", 250)], steps
    assert steps[0]["before"] == "gp2"
    assert steps[0]["modification_state"] in ("optimizing", "completed")
    assert "Modified together with step 1" in steps[1]["note"]
    assert len(ec2.describe_volumes_modifications(VolumeIds=[volume_id])["VolumesModifications"]) == 1
    described = ec2.describe_volumes(VolumeIds=[volume_id])["Volumes"][0]
    assert (described["VolumeType"], described["Iops"], described["Throughput"]) == ("gp3", 6000, 250)
    # the inventory shows the volume as AWS read it back at once, not at the next sweep (and the demo simulates it)
    assert _inventory(db, owner.org_id, volume_id) == ("gp3", 6000, 250, clock())
    clock.advance(minutes=16)
    apply_run.advance(job, uuid.UUID(pid), clock=clock)
    plan = _plan(owner, pid)
    assert plan["status"] == "succeeded", plan["outcome"]
    entries = [e for e in owner.get(f"/api/v1/clusters/{cid}/changes?days=7").json()["items"] if e["kind"] == "apply"]
    entry = next(e for e in entries if e["changes"][0]["key"] == "volume.type")
    assert (entry["entity_kind"], entry["entity_id"]) == ("volume", volume_id)
    assert [(c["key"], c["before_text"], c["after_text"]) for c in entry["changes"]] == [("volume.type", "gp2", "gp3")]
    iops_entry = next(e for e in entries if e["changes"][0]["key"] == "volume.iops")
    assert iops_entry["changes"][0]["after_text"] == "6,000 IOPS"
    assert [f["id"] for f in entry["findings"]] == [plan["finding_id"]]
    assert entry["who"] == f"Headroom, plan run by {owner.session['user']['email']}"
    assert [s["status"] for s in plan["step_runs"]] == ["done", "done", "done"]
    undo_from = dt.datetime.fromisoformat(plan["step_runs"][0]["undo_not_before"])
    # six hours after the modification started, by AWS's own clock (docs/reference/ebs-modify.md#six-hours)
    modification = ec2.describe_volumes_modifications(VolumeIds=[volume_id])["VolumesModifications"][0]
    assert undo_from - modification["StartTime"] == dt.timedelta(hours=6)

    # the undo: refused before AWS allows it (the time in words), then confirmed and carried out
    early = owner.post(f"/api/v1/apply-plans/{pid}/undo")
    assert early.status_code == 409, early.text
    assert f"{undo_from:%Y-%m-%d %H:%M} UTC" in early.json()["error"]["message"]
    clock.now = undo_from + dt.timedelta(minutes=1)
    confirmed = owner.post(f"/api/v1/apply-plans/{pid}/undo")
    assert confirmed.status_code == 200, confirmed.text
    apply_run.advance(job, uuid.UUID(pid), clock=clock)
    assert [s["status"] for s in _plan(owner, pid)["step_runs"]] == ["undone", "undone", "undone"]
    assert ec2.describe_volumes(VolumeIds=[volume_id])["Volumes"][0]["VolumeType"] == "gp2"
    # gp2 again: the IOPS and throughput gp3 had are not gp2's (the next sweep reads gp2's baseline from AWS)
    assert _inventory(db, owner.org_id, volume_id) == ("gp2", None, None, clock())

    _assert_the_write_role_refuses_untagged(owner, volume_id)
    assert {"apply.step_applied", "apply.step_verified", "apply.undo_confirmed",
            "apply.step_rolled_back"} <= set(_actions(owner))


def test_a_volume_without_the_tag_is_refused_and_not_modified(
        client: Any, make_client: Any, db: Any, clock: Any, job: JobContext, aws_endpoint_url: str, settings: Any,
        stand_ins: list[TikvStatus]) -> None:
    settings.aws_account_id = "210987654321"
    owner = sign_up(client)
    admin = join_with_role(owner, make_client(), "admin")
    cid = _cluster(owner, stand_ins[:1])
    _opt_in(owner, cid)
    ec2 = boto3.client("ec2", endpoint_url=aws_endpoint_url, region_name="us-east-1")
    volume_id = _moto_volume(ec2, {"headroom-apply": "someone-else"})
    _volume(db, owner.org_id, cid, volume_id, "10.0.1.1:20160", {"headroom-apply": "someone-else"})
    gp3 = Change(target="aws", key="volume.type", entity=EntityRef(kind="volume", id=volume_id), current="gp2",
                 proposed="gp3", online=True)
    pid = _approved(owner, admin, cid, _finding(db, owner, cid, [gp3]))
    owner.post(f"/api/v1/apply-plans/{pid}/run")
    apply_run.advance(job, uuid.UUID(pid), clock=clock)
    plan = _plan(owner, pid)
    assert plan["status"] == "failed" and plan["step_runs"][0]["status"] == "failed"
    assert plan["outcome"].endswith("Nothing was changed.")
    assert "does not carry the tag headroom-apply=yes" in plan["step_runs"][0]["error"]
    modifications = ec2.describe_volumes_modifications(VolumeIds=[volume_id]).get("VolumesModifications", [])
    assert modifications == []
    assert ec2.describe_volumes(VolumeIds=[volume_id])["Volumes"][0]["VolumeType"] == "gp2"

    _assert_the_write_role_refuses_untagged(owner, volume_id)


def test_a_volume_step_whose_guard_trips_stops_the_run_alerts_once_and_waits_for_the_undo(
        client: Any, make_client: Any, db: Any, clock: Any, job: JobContext, aws_endpoint_url: str,
        stand_ins: list[TikvStatus]) -> None:
    from headroom.alerts.models import AlertDelivery

    clock.now = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
    owner = sign_up(client)
    admin = join_with_role(owner, make_client(), "admin")
    cid = _cluster(owner, stand_ins[:1])
    _opt_in(owner, cid)
    # a channel for one rule family only: an apply alert still reaches it
    channel = owner.post("/api/v1/alert-channels", json={"name": "ops", "kind": "webhook",
                                                         "url": "http://127.0.0.1:9/hook", "families": ["tikv"]})
    assert channel.status_code == 201, channel.text
    ec2 = boto3.client("ec2", endpoint_url=aws_endpoint_url, region_name="us-east-1")
    volume_id = _moto_volume(ec2, {"headroom-apply": "yes"})
    _volume(db, owner.org_id, cid, volume_id, "10.0.1.1:20160", {"headroom-apply": "yes"})
    _feed(db, owner.org_id, cid, clock(), volume_id, "10.0.1.1:20160", after_latency_ms=40.0)
    gp3 = Change(target="aws", key="volume.type", entity=EntityRef(kind="volume", id=volume_id), current="gp2",
                 proposed="gp3", online=True)
    key = Change(target="tikv", key=KEY, current="8GiB", proposed="12GiB", online=True)
    pid = _approved(owner, admin, cid, _finding(db, owner, cid, [gp3, key]))
    owner.post(f"/api/v1/apply-plans/{pid}/run")
    apply_run.advance(job, uuid.UUID(pid), clock=clock)
    clock.advance(minutes=16)
    apply_run.advance(job, uuid.UUID(pid), clock=clock)
    plan = _plan(owner, pid)
    assert plan["status"] == "failed", plan["outcome"]
    assert [s["status"] for s in plan["step_runs"]] == ["done", "skipped"]
    undo_from = dt.datetime.fromisoformat(plan["step_runs"][0]["undo_not_before"])
    assert f"cannot be undone before {undo_from:%Y-%m-%d %H:%M} UTC" in plan["outcome"]
    assert stand_ins[0].posts == []  # the TiKV step never started
    apply_run.advance(job, uuid.UUID(pid), clock=clock)  # a retried job
    deliveries = db.query(AlertDelivery).filter(AlertDelivery.org_id == uuid.UUID(owner.org_id)).all()
    assert [(d.event["kind"], d.event["severity"]) for d in deliveries] == [("apply", "critical")]
    assert "undo from" in deliveries[0].event["fix"]
    assert owner.post(f"/api/v1/apply-plans/{pid}/undo").status_code == 409
    # once the volume is set back the plan needs nobody: its alert is resolved, once, whatever runs again
    clock.now = undo_from + dt.timedelta(minutes=1)
    assert owner.post(f"/api/v1/apply-plans/{pid}/undo").status_code == 200
    apply_run.advance(job, uuid.UUID(pid), clock=clock)
    assert [s["status"] for s in _plan(owner, pid)["step_runs"]] == ["undone", "skipped"]
    apply_run.advance(job, uuid.UUID(pid), clock=clock)
    db.expire_all()
    deliveries = (db.query(AlertDelivery).filter(AlertDelivery.org_id == uuid.UUID(owner.org_id))
                  .order_by(AlertDelivery.id).all())
    assert [(d.event["kind"], d.event["dedup_key"]) for d in deliveries] == [
        ("apply", f"headroom-apply/{pid}"), ("resolved", f"headroom-apply/{pid}")]
    assert deliveries[1].event["at"] == clock().isoformat()


def test_a_step_no_guard_can_read_is_not_judged_blind(
        client: Any, make_client: Any, db: Any, clock: Any, job: JobContext, stand_ins: list[TikvStatus]) -> None:
    owner = sign_up(client)
    admin = join_with_role(owner, make_client(), "admin")
    cid = _cluster(owner, stand_ins[:1])  # no volume known for the node, no series stored
    _opt_in(owner, cid)
    pid = _approved(owner, admin, cid, _finding(db, owner, cid, [BLOCK_CACHE]))
    owner.post(f"/api/v1/apply-plans/{pid}/run")
    apply_run.advance(job, uuid.UUID(pid), clock=clock)
    clock.advance(minutes=16)
    apply_run.advance(job, uuid.UUID(pid), clock=clock)
    plan = _plan(owner, pid)
    assert plan["status"] == "rolled_back", plan["outcome"]
    # the store is known but has no scheduler latch data: not judged blind
    assert "Scheduler latch wait: no data before the step; a step is not judged blind" in plan["outcome"]
    assert stand_ins[0].value(KEY) == "8GiB"
    verdicts = [g["verdict"] for g in plan["step_runs"][0]["guard_readings"]]
    assert "Read latency: not judged (Headroom knows no volume or store of this step to read it on)." in verdicts
