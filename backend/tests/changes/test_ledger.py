"""The change ledger through the real API, on the demo cluster's data as the collectors store it: a patch marked
applied whose change Headroom then sees in the EC2 inventory, and a config change seen on the status port; each
with the findings it addressed and its measured effect over comparable windows (docs/changes.md)."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest
from changes_support import CHANGE, LEDGER_AFTER
from headroom.findings.models import FindingRecord, Recommendation
from headroom.inventory import service as inventory_service
from headroom.inventory.models import InventoryChange, TikvNode, Volume
from helpers import sign_up
from sqlalchemy import select

AFTER = LEDGER_AFTER


@pytest.fixture()
def world(ledger_world: Any, make_client: Any, db: Any) -> dict[str, Any]:
    """The ledger's demo cluster (built once for the directory, conftest.py) with its owner and viewer."""
    return ledger_world.in_test(make_client, db)


def _ledger(actor: Any, cluster_id: Any) -> dict[str, Any]:
    response = actor.get(f"/api/v1/clusters/{cluster_id}/changes")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_a_patch_seen_applied_and_a_config_change_with_their_findings_and_effect(
        world: dict[str, Any], db: Any, clock: Any, client: Any) -> None:
    cluster, owner = world["cluster"], world["owner"]
    # the finding that asks for more IOPS on a data volume, and the value it proposes
    rec, finding = next((r, f) for r, f in db.execute(
        select(Recommendation, FindingRecord).join(FindingRecord, FindingRecord.id == Recommendation.finding_id)
        .where(FindingRecord.cluster_id == cluster.id)
        .order_by(FindingRecord.rule, FindingRecord.entity_id, Recommendation.position)) if r.change.key == "volume.iops")
    volume_id = rec.change.entity.volume_id or rec.change.entity.id
    clock.now = CHANGE - dt.timedelta(minutes=30)
    created = owner.post(f"/api/v1/clusters/{cluster.id}/patches", json={"finding_ids": [str(finding.id)]})
    assert created.status_code == 201, created.text
    pid = created.json()["id"]
    applied = owner.post(f"/api/v1/clusters/{cluster.id}/patches/{pid}/applied")
    assert applied.status_code == 200, applied.text

    # the AWS collector then sees the volume at the new IOPS (what sources.aws.ingest writes on a change)
    vol = db.scalar(select(Volume).where(Volume.cluster_id == cluster.id, Volume.volume_id == volume_id))
    old_iops = vol.iops
    vol.iops = int(rec.change.proposed)
    db.add(InventoryChange(org_id=cluster.org_id, entity_kind="volume", entity_id=volume_id, field="iops",
                           old_value=old_iops, new_value=vol.iops, observed_at=CHANGE))
    # and the status port shows an operator's block-cache change on another node an hour later
    other = db.scalars(select(TikvNode).where(TikvNode.cluster_id == cluster.id)
                       .order_by(TikvNode.store_address)).first()
    latest = inventory_service.latest_config(db, other)
    base = dict(latest.config) if latest else {"storage": {"block-cache": {"capacity": "8GiB"}}}
    changed = {**base, "storage": {**base.get("storage", {}), "block-cache": {"capacity": "12GiB"}}}
    if latest is None:
        inventory_service.store_version(db, other, base, source="status_port", raw_text=None,
                                        now=CHANGE - dt.timedelta(days=2))
    inventory_service.store_version(db, other, changed, source="status_port", raw_text=None,
                                    now=CHANGE + dt.timedelta(hours=1))
    db.commit()
    clock.now = CHANGE + AFTER

    items = _ledger(world["viewer"], cluster.id)["items"]
    assert [i["kind"] for i in items] == ["config", "patch_applied"]  # newest first; the inventory change folded
    config, patch = items
    assert patch["patch_id"] == pid and patch["who"].startswith(owner.session["user"]["email"])
    assert patch["entity_kind"] == "volume" and patch["entity_id"] == volume_id
    iops = next(c for c in patch["changes"] if c["key"] == "volume.iops")
    assert (iops["before"], iops["after"]) == (old_iops, int(rec.change.proposed))
    assert (iops["before_text"], iops["after_text"]) == ("not set" if old_iops is None else f"{old_iops:,} IOPS",
                                                         f"{int(rec.change.proposed):,} IOPS")
    assert len(patch["seen_by_headroom"]) == 1 and "EC2 inventory" in patch["seen_by_headroom"][0]
    # in its unit, as the patch's own table says it ("not set" for a gp2 volume's unprovisioned IOPS)
    old_text = "not set" if old_iops is None else f"{old_iops:,} IOPS"
    assert patch["seen_by_headroom"][0].startswith(f"volume.iops {old_text} -> {int(rec.change.proposed):,} IOPS on ")
    (addressed,) = patch["findings"]
    assert addressed["id"] == str(finding.id) and addressed["predicted"]["summary"] == finding.impact.summary
    # predicted: the what-if on the day before the change, with the volume set back to its IOPS then
    predicted = patch["predicted"]
    assert predicted is not None, patch["predicted_note"]
    assert predicted["window_end"].startswith("2026-11-02T17:30")
    moved = [c for c in predicted["ceilings"] if c["entity_id"] == volume_id and c["dimension"] == "iops"]
    assert moved and moved[0]["ceiling_after"] > moved[0]["ceiling"]
    # measured: the after window runs from the change for the 6 hours since; the before window is the same
    # hours one week earlier, each against the ceiling in force then (the new IOPS after)
    effect = patch["effect"]
    assert effect["after_start"].startswith("2026-11-02T17:30") and effect["after_end"].startswith("2026-11-03T00:00")
    assert effect["before_start"].startswith("2026-10-26T17:30") and effect["before_end"].startswith("2026-10-27T00:00")
    cells = {(c["node"], c["metric"]): c for c in effect["cells"]}
    node = next(n for n in db.scalars(select(TikvNode).where(TikvNode.cluster_id == cluster.id))
                if n.data_volume_ref_id == vol.id)
    data = cells[(node.store_address, "data_iops")]
    # the simulator still serves the old configuration, so the same load now sits under a higher ceiling
    assert data["after_peak_percent"] < data["before_peak_percent"]
    assert "week" in effect["note"]
    assert {c["node"] for c in effect["cells"]} == {node.store_address}

    assert config["entity_id"] == other.store_address and "status port" in config["who"]
    assert any(c["key"] == "storage.block-cache.capacity" and c["after"] == "12GiB" for c in config["changes"])
    assert {c["node"] for c in config["effect"]["cells"]} == {other.store_address}

    # another organisation's cluster is a 404
    stranger = sign_up(client, org="Elsewhere")
    assert stranger.get(f"/api/v1/clusters/{cluster.id}/changes").status_code == 404


def test_an_observed_change_alone_lists_the_findings_it_addressed(world: dict[str, Any], db: Any, clock: Any) -> None:
    cluster = world["cluster"]
    gp3 = {v.volume_id: v for v in db.scalars(select(Volume).where(Volume.cluster_id == cluster.id,
                                                                    Volume.volume_type == "gp3"))}
    # a change a finding recommends on a gp3 volume (the hot node's: more throughput), made outside Headroom
    rec, finding = next((r, f) for r, f in db.execute(
        select(Recommendation, FindingRecord).join(FindingRecord, FindingRecord.id == Recommendation.finding_id)
        .where(FindingRecord.cluster_id == cluster.id).order_by(FindingRecord.rule, Recommendation.position))
        if r.change.key in ("volume.iops", "volume.throughput") and r.change.applies_to() in gp3)
    volume_id = rec.change.applies_to()
    field = {"volume.iops": "iops", "volume.throughput": "throughput_mibps"}[rec.change.key]
    db.add(InventoryChange(org_id=cluster.org_id, entity_kind="volume", entity_id=volume_id, field=field,
                           old_value=rec.change.current, new_value=rec.change.proposed,
                           observed_at=CHANGE + dt.timedelta(minutes=20)))
    setattr(gp3[volume_id], field, rec.change.proposed)
    db.commit()
    clock.now = CHANGE + dt.timedelta(minutes=50)
    (entry,) = _ledger(world["owner"], cluster.id)["items"]
    assert entry["kind"] == "inventory" and entry["who"] == "seen by Headroom in the EC2 inventory"
    assert str(finding.id) in [f["id"] for f in entry["findings"]]
    assert entry["effect"]["cells"] == [] and entry["effect"]["note"].startswith("Too early")
    # its what-if, tried on the day before it with the volume set back: the ceiling it raises moves
    assert entry["predicted"] is not None, entry["predicted_note"]
    dimension = "iops" if field == "iops" else "throughput"
    (moved,) = [c for c in entry["predicted"]["ceilings"] if c["entity_id"] == volume_id and c["dimension"] == dimension]
    assert moved["ceiling"] == pytest.approx(float(rec.change.current))
    assert moved["ceiling_after"] == pytest.approx(float(rec.change.proposed))


def test_the_weekly_email_shows_the_weeks_changes_with_their_effect(world: dict[str, Any], db: Any) -> None:
    from headroom.digest import service as digest

    cluster = world["cluster"]
    rec = next(r for r, f in db.execute(
        select(Recommendation, FindingRecord).join(FindingRecord, FindingRecord.id == Recommendation.finding_id)
        .where(FindingRecord.cluster_id == cluster.id)) if r.change.key == "volume.iops")
    volume_id = rec.change.entity.volume_id or rec.change.entity.id
    vol = db.scalar(select(Volume).where(Volume.cluster_id == cluster.id, Volume.volume_id == volume_id))
    old, vol.iops = vol.iops, int(rec.change.proposed)
    db.add(InventoryChange(org_id=cluster.org_id, entity_kind="volume", entity_id=volume_id, field="iops",
                           old_value=old, new_value=vol.iops, observed_at=CHANGE))
    db.commit()
    mail = digest.render(db, cluster.org_id, now=CHANGE + AFTER, public_url="http://127.0.0.1:8000")
    (line,) = [x for x in mail.text.splitlines() if x.startswith("- 2026-11-02: volume.iops")]
    before = "not set" if old is None else f"{old:,} IOPS"  # a gp2 volume's IOPS are not provisioned
    assert f"volume.iops {before} -> {vol.iops:,} IOPS on {volume_id} (seen by Headroom in the EC2 inventory)" in line
    assert re.search(r"; (data|raft) volume (IOPS|throughput) on [0-9.:]+: peak [\d.]+% -> [\d.]+% of its ceiling "
                     r"\(same hours a week earlier\)$", line), line
    assert "Changes this week" in mail.html and volume_id in mail.html


def _texts(entry: dict[str, Any]) -> list[str]:
    return [f"{c['key']} {c['before_text']} -> {c['after_text']}" for c in entry["changes"]]


def test_a_patch_is_credited_only_with_its_own_changes_not_a_config_uploaded_minutes_before(
        world: dict[str, Any], db: Any, clock: Any) -> None:
    cluster, owner = world["cluster"], world["owner"]
    cache_key = "storage.block-cache.capacity"
    # the demo's block-cache finding and a store it is about
    cache = owner.get(f"/api/v1/clusters/{cluster.id}/findings", params={"rule": "block-cache-size"}).json()["items"]
    assert cache, "the demo's block-cache finding"
    store = owner.get(f"/api/v1/findings/{cache[0]['id']}").json()["evidence"]["per_node"][0]["node"]
    node = db.scalar(select(TikvNode).where(TikvNode.cluster_id == cluster.id, TikvNode.store_address == store))
    full = inventory_service.latest_config(db, node)  # the node's whole config, as /config serves it
    assert full is not None
    full_config = dict(full.config)
    was = full_config["storage"]["block-cache"]["capacity"]
    # 1. three minutes before the patch, an operator uploads the node's own tikv.toml: a few keys, as real files
    # are (every other key takes TiKV's default), with the block cache at 8GiB and gRPC at 8 threads
    clock.now = CHANGE - dt.timedelta(minutes=3)
    uploaded = owner.post(f"/api/v1/clusters/{cluster.id}/nodes/{node.id}/config", json={
        "format": "toml",
        "content": '[server]\ngrpc-concurrency = 8\n\n[storage.block-cache]\ncapacity = "8GiB"\n'})
    assert uploaded.status_code == 201, uploaded.text
    # 2. a patch of the block-cache finding (4GiB), made against the node's latest config, marked applied
    clock.now = CHANGE - dt.timedelta(minutes=1)
    created = owner.post(f"/api/v1/clusters/{cluster.id}/patches",
                         json={"finding_ids": [cache[0]["id"]], "base_config": "latest"})
    assert created.status_code == 201, created.text
    patch = created.json()
    own = [c for c in patch["changes"] if c["key"] == cache_key and c["entity"]["node"] in (None, node.store_address)]
    assert own and own[0]["proposed"] == "4GiB" and own[0]["current"] == "8GiB", own
    clock.now = CHANGE
    assert owner.post(f"/api/v1/clusters/{cluster.id}/patches/{patch['id']}/applied").status_code == 200
    # 3. an hour later the status port shows both: the upload's gRPC threads and the patch's block cache
    live = {**full_config, "server": {**full_config.get("server", {}), "grpc-concurrency": 8},
            "storage": {**full_config["storage"], "block-cache": {"capacity": "4GiB"}}}
    inventory_service.store_version(db, node, live, source="status_port", raw_text=None,
                                    now=CHANGE + dt.timedelta(hours=1))
    db.commit()
    clock.now = CHANGE + AFTER

    items = _ledger(world["viewer"], cluster.id)["items"]
    assert [i["kind"] for i in items] == ["config", "patch_applied", "config_upload"], [(i["kind"], _texts(i))
                                                                                       for i in items]
    live_entry, applied, upload = items
    # the patch: its own change in TiKV's units, and what Headroom saw of it (the block cache, on the node), only
    assert f"{cache_key} 8GiB -> 4GiB" in _texts(applied)
    assert len(applied["seen_by_headroom"]) == 1, applied["seen_by_headroom"]
    assert applied["seen_by_headroom"][0].startswith(f"{cache_key} 8GiB -> 4GiB on {node.store_address}, in the live "
                                                     "config (TiKV's status port) at ")
    # the upload: its own entry with its own changes; a key the file leaves out whose default is the value the
    # node ran (region sizes, flow control...) is no change, so it is not listed
    assert upload["at"].startswith("2026-11-02T17:57") and upload["who"] == "a tikv.toml uploaded for the node"
    assert upload["patch_id"] is None and upload["entity_id"] == node.store_address
    texts = _texts(upload)
    # a size of 1 GiB or more is also read in GiB (docs/number-formats.json size_reading): 14,745 MiB / 1,024
    assert was == "14745MiB"
    assert f"{cache_key} 14745MiB (14.4 GiB) -> 8GiB" in texts and "server.grpc-concurrency 5 -> 8" in texts
    assert not any(c["key"].startswith(("coprocessor.", "storage.flow-control.", "rocksdb.rate-")) for c in upload["changes"])
    # no raw Python values anywhere; an absent value is said in words
    body = str([(_texts(i), i["seen_by_headroom"]) for i in items])
    assert not re.search(r"\b(None|True|False)\b", body), body
    assert all(c["after_text"].startswith("not set") for c in upload["changes"] if c["after"] is None)
    # the status port's snapshot: the patch's block cache is credited to the patch, so its own entry lists only
    # what neither the patch nor the upload set (keys the file left out whose default Headroom does not know)
    assert live_entry["who"] == "seen by Headroom in the live config (TiKV's status port)"
    assert live_entry["patch_id"] is None and live_entry["changes"]
    assert not {cache_key, "server.grpc-concurrency"} & {c["key"] for c in live_entry["changes"]}
    assert "storage.data-dir not set -> /data/tikv" in _texts(live_entry)


def test_a_what_if_left_for_later_is_tried_by_the_job_and_kept_for_the_next_load(
        world: dict[str, Any], db: Any, clock: Any, sessions: Any, settings: Any) -> None:
    """A ledger load tries at most a few what-ifs while the user waits; the others read as pending, the
    changes.predict job tries them and keeps them, and the next load shows what a full load computes."""
    from headroom.changes import service
    from headroom.platform.jobs.context import JobContext
    from headroom.platform.principal import Principal
    from headroom.platform.shared_cache import MemoryCache, shared_cache
    from helpers import units_of_work

    cluster = world["cluster"]
    volume = db.scalars(select(Volume).where(Volume.cluster_id == cluster.id, Volume.volume_type == "gp3")).first()
    db.add(InventoryChange(org_id=cluster.org_id, entity_kind="volume", entity_id=volume.volume_id,
                           field="throughput_mibps", old_value=volume.throughput_mibps, new_value=500,
                           observed_at=CHANGE + dt.timedelta(minutes=20)))
    volume.throughput_mibps = 500
    db.commit()
    clock.now = CHANGE + dt.timedelta(minutes=50)
    viewer = Principal(user_id=None, org_id=cluster.org_id, role="viewer", via="job")
    cache, deferred = shared_cache(settings.redis_url), []  # the test Redis, as the API and the job share it

    (pending,) = service.cluster_changes(db, viewer, cluster.id, now=clock.now, cache=cache, predict_in_request=0,
                                         on_deferred=lambda: deferred.append(1)).items
    assert pending.predicted is None and pending.predicted_note == service.PREDICT_PENDING_NOTE
    assert deferred == [1]  # queued once for the whole load

    ctx = JobContext(settings=settings, database_url="unused", units=units_of_work(sessions),
                     queue=lambda name, **params: name)
    assert service.predict_changes(ctx, clock.now, cluster_id=str(cluster.id), org_id=str(cluster.org_id)) \
        == {"cluster_id": str(cluster.id), "status": "ready", "predicted": 1}

    (kept,) = service.cluster_changes(db, viewer, cluster.id, now=clock.now, cache=cache, predict_in_request=0,
                                      on_deferred=lambda: deferred.append(2)).items
    (fresh,) = service.cluster_changes(db, viewer, cluster.id, now=clock.now, cache=MemoryCache()).items
    assert kept.predicted is not None and kept.predicted == fresh.predicted and kept.predicted_note is None
    assert deferred == [1]  # nothing left for later the second time
    moved = [c for c in kept.predicted.ceilings if c.entity_id == volume.volume_id and c.dimension == "throughput"]
    assert moved, kept.predicted.ceilings
