"""Findings, snapshot and patch routes, through the real API, on findings the real advisor produced from the
demo cluster's data in the store."""

from __future__ import annotations

import datetime as dt
import json
import shlex
import uuid
from pathlib import Path
from typing import Any

import pytest
from advice_support import END, Advised
from headroom.accounts.models import AuditLog
from headroom.clusters.models import Cluster
from headroom.domain.snapshot.schema import Snapshot
from headroom.domain.tikvconf import FORMATS, Change, artefact, template_keys, toml_view
from headroom.domain.tikvconf.parse import tiup_topology_view
from headroom.domain.tikvconf import Patch as ConfPatch
from headroom.inventory.models import Instance, TikvConfig, TikvNode
from headroom.projections.models import Projection
from helpers import sign_up
from sqlalchemy import select


World = Advised


@pytest.fixture()
def world(advised: Advised) -> World:
    """The demo cluster advised at END (built once for the directory), its owner and viewer on the test's app."""
    return advised


def _findings(w: World, **params: Any) -> dict[str, Any]:
    response = w.owner.get(f"/api/v1/clusters/{w.cid}/findings", params=params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_list_filters_and_counts(world: World) -> None:
    everything = _findings(world)
    items = everything["items"]
    assert everything["total"] == len(items) > 0
    counts = everything["counts"]
    assert counts == {s: sum(1 for f in items if f["severity"] == s) for s in ("critical", "warning", "info")}
    assert [f["severity"] for f in items] == sorted((f["severity"] for f in items),
                                                    key=["critical", "warning", "info"].index)
    critical = _findings(world, severity="critical")
    assert {f["severity"] for f in critical["items"]} == {"critical"}
    assert critical["counts"] == counts  # counts ignore the severity filter (tabs keep their numbers)
    burst = _findings(world, rule="gp2-burst-depletion")
    assert {f["rule"] for f in burst["items"]} == {"gp2-burst-depletion"} and burst["total"] == 2
    assert _findings(world, status="resolved")["total"] == 0
    assert world.viewer.get(f"/api/v1/clusters/{world.cid}/findings").json()["total"] == everything["total"]
    bad = world.owner.get(f"/api/v1/clusters/{world.cid}/findings", params={"status": "gone"})
    assert bad.status_code == 422 and bad.json()["error"]["message"].startswith("Status, item 1: ")


def test_detail_and_actions(world: World, db: Any, clock: Any) -> None:
    burst = _findings(world, rule="gp2-burst-depletion")["items"][0]
    url = f"/api/v1/findings/{burst['id']}"
    detail = world.viewer.get(url).json()
    assert detail["why"] and detail["evidence"]["measures"] and detail["impact"]["summary"]
    assert [c["key"] for c in detail["changes"]][:1] == ["volume.type"]
    assert detail["changes"][0] == {**detail["changes"][0], "target": "aws", "proposed": "gp3"}
    assert detail["changes"][0]["entity"]["kind"] == "volume"
    assert detail["changes"][0]["entity"]["id"] == burst["entity_id"]
    assert [h["action"] for h in detail["history"]] == ["finding.opened"]
    assert detail["history"][0]["actor_user_id"] is None

    assert world.viewer.post(f"{url}/acknowledge").status_code == 403
    acked = world.owner.post(f"{url}/acknowledge")
    assert acked.status_code == 200 and acked.json()["status"] == "acknowledged"
    past = world.owner.post(f"{url}/snooze", json={"until": "2026-11-01T00:00:00Z"})
    assert past.status_code == 422 and past.json()["error"]["message"].startswith("Until: ")
    assert world.owner.post(f"{url}/snooze", json={"until": "2026-11-09T00:00:00Z", "x": 1}).status_code == 422
    snoozed = world.owner.post(f"{url}/snooze", json={"until": "2026-11-09T00:00:00Z"}).json()
    assert (snoozed["status"], snoozed["snoozed_until"]) == ("snoozed", "2026-11-09T00:00:00Z")
    resolved = world.owner.post(f"{url}/resolve").json()
    assert (resolved["status"], resolved["resolved_at"]) == ("resolved", clock.now.isoformat().replace("+00:00", "Z"))
    reopened = world.owner.post(f"{url}/reopen").json()
    assert (reopened["status"], reopened["resolved_at"]) == ("open", None)
    history = reopened["history"]
    assert [h["action"] for h in history] == ["finding.opened", "finding.acknowledged", "finding.snoozed",
                                               "finding.resolved", "finding.reopened"]
    user_id = world.owner.session["user"]["id"]
    assert {h["actor_user_id"] for h in history[1:]} == {user_id}
    audited = db.scalars(select(AuditLog.action).where(AuditLog.target_id == burst["id"],
                                                       AuditLog.actor_user_id == uuid.UUID(user_id))).all()
    assert sorted(audited) == ["finding.acknowledged", "finding.reopened", "finding.resolved", "finding.snoozed"]
    assert world.owner.get(f"/api/v1/findings/{uuid.uuid4()}").status_code == 404


def test_advise_enqueues_the_job(world: World, settings: Any) -> None:
    import base64

    import redis

    assert world.viewer.post(f"/api/v1/clusters/{world.cid}/advise").status_code == 403
    response = world.owner.post(f"/api/v1/clusters/{world.cid}/advise")
    assert response.status_code == 202
    task_id = response.json()["task_id"]
    assert response.json() == {"task_id": task_id, "job": "advice.run", "already_queued": False}
    # The message waiting in the broker (no worker reads the tests' broker db): the job by name, on its queue.
    broker = redis.Redis.from_url(settings.redis_url)
    messages = [json.loads(m) for m in broker.lrange("advice", 0, -1)]
    sent = [m for m in messages if m["headers"]["id"] == task_id]
    assert [m["headers"]["task"] for m in sent] == ["advice.run"]
    assert json.loads(base64.b64decode(sent[0]["body"]))[1] == {"cluster_id": world.cid, "run_id": task_id}


def test_advice_jobs_are_registered_and_scheduled() -> None:
    from headroom.jobs import job

    run = job("advice.run")
    assert (run.queue, run.schedule.minute if run.schedule else None) == ("advice", "*/15")
    assert job("advice.demo_first").queue == "ingest"


def test_no_per_minute_job_waits_behind_an_advice_round() -> None:
    # A round of 1,000 advice runs keeps the "advice" queue busy for minutes (docs/scaling.md, "1,000 clusters"):
    # a job queued there must be able to wait that long.
    from headroom.jobs import all_jobs

    every_minute = [j.name for j in all_jobs() if j.queue == "advice" and j.schedule and j.schedule.minute == "*"]
    assert every_minute == []


def test_snapshot_download(world: World) -> None:
    start = (END - dt.timedelta(hours=1)).isoformat()
    response = world.viewer.get(f"/api/v1/clusters/{world.cid}/snapshot", params={"start": start,
                                                                                 "end": END.isoformat()})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    assert response.headers["content-disposition"] == (
        'attachment; filename="demo-prod-demo-snapshot-20261102T1700Z.json"'
    )
    snapshot = Snapshot.model_validate_json(response.content)
    assert snapshot.window.points == 60 and len(snapshot.nodes) == 6
    # Each series at its own period: 60 one-minute points, or 12 five-minute ones (basic EC2 monitoring).
    assert {s.step_seconds for s in snapshot.series} == {60, 300}
    assert all(len(s.values) == 3600 // s.step_seconds for s in snapshot.series)
    bad = world.viewer.get(f"/api/v1/clusters/{world.cid}/snapshot", params={"start": END.isoformat(),
                                                                            "end": start})
    assert bad.status_code == 422 and bad.json()["error"]["message"].startswith("End: ")


# ---------------------------------------------------------------------------------------------------- patches


def _create(w: World, body: dict[str, Any]) -> Any:
    return w.owner.post(f"/api/v1/clusters/{w.cid}/patches", json=body)


def _titles(w: World, stored: dict[str, Any]) -> tuple[str, ...]:
    """Each change's finding in words: the title of the finding whose key the patch stored with the change."""
    title_of = {}
    for finding_id in stored["finding_ids"]:
        finding = w.viewer.get(f"/api/v1/findings/{finding_id}").json()
        title_of[finding["dedup_key"]] = finding["title"]
    return tuple(title_of[source] for source in stored["change_sources"])


def _conf_patch(db: Any, w: World, stored: dict[str, Any]) -> ConfPatch:
    from headroom.domain.tikvconf import config_json_view, pd_url_of
    from headroom.patches.service import _nodes
    from headroom.timeseries.snapshots import latest_configs, node_filesystems

    infos = _nodes(db, w.demo.cluster)
    # the region and PD address the AWS script checks before it changes anything: the demo's instances all run in
    # one region, and its nodes' pd.endpoints name PD
    regions = {i.region for i in db.scalars(select(Instance).where(Instance.org_id == w.demo.cluster.org_id))}
    configs = latest_configs(db, w.demo.cluster.org_id, [n.row.id for n in infos])
    # the data mount and its filesystem type the AWS script's filesystem step checks: the demo simulates one mount
    # per TiKV, the parent of its storage.data-dir, labelled ext4 as node_exporter labels it
    filesystems = node_filesystems(db, w.demo.cluster.org_id, w.demo.cluster.id)
    nodes = []
    for n in infos:
        data_dir = config_json_view(configs[n.row.id].config)["storage.data-dir"]
        mount = data_dir.rstrip("/").rsplit("/", 1)[0] or "/"
        assert filesystems[n.row.store_address] == {mount: "ext4"}
        nodes.append(n.node.model_copy(update={"data_mount": mount, "data_fstype": "ext4"}))
    return ConfPatch(cluster=w.demo.cluster.name, tikv_version="v8.5.1", nodes=tuple(nodes),
                     changes=tuple(Change.model_validate(c) for c in stored["changes"]),
                     sources=tuple(stored["change_sources"]), source_titles=_titles(w, stored),
                     region=regions.pop() if len(regions) == 1 else None,
                     pd_url=pd_url_of(config_json_view(c.config) for c in configs.values()))


def test_patch_from_all_open_findings_downloads_every_format(world: World, db: Any) -> None:
    response = _create(world, {"finding_ids": "all_open", "base_config": "latest"})
    assert response.status_code == 201, response.text
    patch = response.json()
    open_ids = {f["id"] for f in _findings(world, status="open")["items"]}
    assert set(patch["finding_ids"]) == open_ids
    assert patch["created_by_user_id"] == world.owner.session["user"]["id"]
    nodes = db.scalars(select(TikvNode).where(TikvNode.cluster_id == world.demo.cluster.id)).all()
    first = min(nodes, key=lambda n: n.store_address)
    base = db.scalar(select(TikvConfig).where(TikvConfig.node_id == first.id))
    assert patch["base_config_id"] == str(base.id) and patch["base_config"]["has_raw_text"] is False
    assert any("rebuilt from the live /config JSON" in n for n in patch["notes"])

    tikv = [c for c in patch["changes"] if c["target"] == "tikv"]
    aws = [c for c in patch["changes"] if c["target"] == "aws"]
    assert tikv and aws
    keys = template_keys()
    assert {c["key"] for c in tikv} <= set(keys), {c["key"] for c in tikv} - set(keys)
    # Current values come from the nodes' stored configs: the demo's legacy m5.2xlarge (32 GiB) nodes run
    # the default block cache, 45% of memory (docs/reference/tikv-config.md#keys-and-defaults).
    cache = [c for c in tikv if c["key"] == "storage.block-cache.capacity"]
    assert cache and all(c["current"] is not None and c["proposed"] == "4GiB" for c in cache)
    assert all(c["entity"]["status_address"].endswith(":20180") for c in tikv)  # resolved to status addresses
    conf = _conf_patch(db, world, patch)
    url = f"/api/v1/clusters/{world.cid}/patches/{patch['id']}"
    base_node = f"{first.status_address}"
    base_text = _rebuilt(base)
    # A tikv.toml fragment holds one value per key: when the proposals differ by node (e.g. a rate limit sized
    # to each node's disk), it is rendered for one node, like merged and diff.
    by_key: dict[str, set[str]] = {}
    for c in tikv:
        by_key.setdefault(c["key"], set()).add(json.dumps(c["proposed"]))
    differs = any(len(values) > 1 for values in by_key.values())
    for fmt in FORMATS:
        node = base_node if fmt in ("merged", "diff") or (fmt == "toml" and differs) else None
        got = world.viewer.get(url, params={"format": fmt, **({"node": node} if node and fmt == "toml" else {})})
        assert got.status_code == 200, (fmt, got.text)
        expected = artefact(conf, fmt, config_text=base_text if node else None, node=node,
                            config_source=f"tikv.toml of {first.store_address}" if node else "tikv.toml")
        assert got.text == expected.body, fmt
        assert got.headers["content-type"].split(";")[0] == expected.media_type
        assert got.headers["content-disposition"] == f'attachment; filename="{expected.filename}"'
        assert got.text.strip(), fmt
    sql = world.viewer.get(url, params={"format": "sql"}).text
    assert "SET CONFIG" in sql and "storage.block-cache.capacity" in sql
    # the comments name each change's finding in words, never by its key
    toml = world.viewer.get(url, params={"format": "toml", **({"node": base_node} if differs else {})}).text
    assert "# finding: " in toml and "; finding: " in sql
    for source in patch["change_sources"]:
        assert source not in sql and source not in toml, source
    burst_volume = next(c["entity"]["volume_id"] for c in aws if c["key"] == "volume.type")
    assert f"--volume-id {burst_volume}" in world.viewer.get(url, params={"format": "aws"}).text
    # merged: the base node's rebuilt config with the patch applied, every other key unchanged.
    merged = world.viewer.get(url, params={"format": "merged"})
    assert merged.headers["x-headroom-config-source"] == "rebuilt"
    before, after = toml_view(base_text), toml_view(merged.text)
    changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    assert changed == {c["key"] for c in tikv if c["entity"]["status_address"] in (None, base_node)}
    assert world.viewer.get(url, params={"format": "bogus"}).json()["error"]["message"].startswith("Format: ")
    assert world.viewer.get(url, params={"format": "toml", "node": "10.9.9.9:1"}).status_code == 422
    per_node = world.viewer.get(url, params={"format": "toml", "node": first.store_address})
    assert per_node.status_code == 200
    assert first.status_address.replace(":", "-") in per_node.headers["content-disposition"]

    meta = world.viewer.get(url).json()
    assert meta["id"] == patch["id"] and meta["applied_at"] is None and "merged" in meta["formats"]
    assert world.viewer.post(f"{url}/applied").status_code == 403
    applied = world.owner.post(f"{url}/applied")
    assert applied.status_code == 200
    assert applied.json()["applied_by_user_id"] == world.owner.session["user"]["id"]
    assert applied.json()["applied_at"] is not None
    again = world.owner.post(f"{url}/applied")
    assert again.status_code == 409 and again.json()["error"]["code"] == "patch_already_applied"
    finding = world.viewer.get(f"/api/v1/findings/{patch['finding_ids'][0]}").json()
    assert finding["patches"] == [{"id": patch["id"], "created_at": patch["created_at"],
                                   "applied_at": applied.json()["applied_at"]}]
    listed = world.viewer.get(f"/api/v1/clusters/{world.cid}/patches").json()
    assert [p["id"] for p in listed["items"]] == [patch["id"]] and listed["total"] == 1


def test_a_patch_names_nodes_by_store_address_but_where_a_command_needs_the_status_port(world: World) -> None:
    # TiKV, PD and TiDB Dashboard name a store by its server address (:20160); the status address (:20180) is for
    # the commands that talk to the status port: TiDB's SET CONFIG 'host:20180' (PingCAP: SET CONFIG).
    patch = _create(world, {"finding_ids": "all_open", "base_config": "latest"}).json()
    assert not [n for n in patch["notes"] if ":20180" in n]
    url = f"/api/v1/clusters/{world.cid}/patches/{patch['id']}"
    for fmt in ("toml", "operator", "tiup", "tikv-ctl"):
        got = world.viewer.get(url, params={"format": fmt})
        assert got.status_code in (200, 422), got.text  # toml refuses values that differ by node: said in words
        assert ":20180" not in got.text, fmt
    sql = world.viewer.get(url, params={"format": "sql"}).text
    named = [line for line in sql.splitlines() if ":20180" in line]
    assert named and all("SET CONFIG" in line for line in named), named


def _rebuilt(config: TikvConfig) -> str:
    from headroom.patches.service import toml_from_config

    return toml_from_config(config.config)


def test_patch_of_chosen_findings_against_an_uploaded_config(world: World, db: Any) -> None:
    cache = _findings(world, rule="block-cache-size")["items"][0]
    # Config findings are cluster-level (one per group of like stores); the store is one of its nodes.
    detail = world.viewer.get(f"/api/v1/findings/{cache['id']}").json()
    store = detail["evidence"]["per_node"][0]["node"]
    node = db.scalar(select(TikvNode).where(TikvNode.cluster_id == world.demo.cluster.id,
                                            TikvNode.store_address == store))
    raw = "# our tikv.toml\n[storage.block-cache]\n# tuned by hand\ncapacity = \"14GiB\"\n"
    uploaded = TikvConfig(org_id=node.org_id, node_id=node.id, version=2, source="upload",
                          config={"storage": {"block-cache": {"capacity": "14GiB"}}}, raw_text=raw,
                          content_sha256="0" * 64)
    db.add(uploaded)
    db.commit()
    response = _create(world, {"finding_ids": [cache["id"]], "base_config": str(uploaded.id)})
    assert response.status_code == 201, response.text
    patch = response.json()
    assert patch["finding_ids"] == [cache["id"]] and patch["base_config_id"] == str(uploaded.id)
    # One value for the group (both m5.2xlarge stores): the uploaded store's change reads its tikv.toml.
    by_store = {c["entity"]["node"]: (c["key"], c["current"], c["proposed"]) for c in patch["changes"]}
    assert by_store[store] == ("storage.block-cache.capacity", "14GiB", "4GiB")
    assert {proposed for _, _, proposed in by_store.values()} == {"4GiB"}
    assert any("uploaded tikv.toml" in n for n in patch["notes"])
    url = f"/api/v1/clusters/{world.cid}/patches/{patch['id']}"
    merged = world.viewer.get(url, params={"format": "merged"})
    assert merged.headers["x-headroom-config-source"] == "uploaded"
    assert merged.text == raw.replace('"14GiB"', '"4GiB"')  # comments and layout kept
    diff = world.viewer.get(url, params={"format": "diff"}).text
    assert '-capacity = "14GiB"' in diff and '+capacity = "4GiB"' in diff
    undo = world.viewer.get(url, params={"format": "merged", "rollback": "true"}).text
    assert undo == raw
    # each format's undo is its own file of that format (the diff's undo is a diff, named as the rollback)
    undo_diff = world.viewer.get(url, params={"format": "diff", "rollback": "true"})
    assert undo_diff.headers["content-type"].startswith("text/x-diff")
    assert '-capacity = "4GiB"' in undo_diff.text and '+capacity = "14GiB"' in undo_diff.text
    assert "-rollback-tikv.toml.diff" in undo_diff.headers["content-disposition"]
    # the old one-file bundle's links get a 400 naming the parameter that replaced it
    old = world.viewer.get(url, params={"format": "rollback"})
    assert old.status_code == 400 and "rollback=true" in old.json()["error"]["message"]
    assert "rollback" not in world.viewer.get(url).json()["formats"]


def test_merged_and_diff_are_offered_only_for_the_nodes_the_patch_changes(world: World, db: Any) -> None:
    # Regression: a patch whose changes are on some nodes downloaded "merged" and "diff" for the base config's node
    # when that node had no change (a 0-byte diff, an unchanged file). The base here is another node's upload.
    cache = _findings(world, rule="block-cache-size")["items"][0]
    detail = world.viewer.get(f"/api/v1/findings/{cache['id']}").json()
    group = sorted(row["node"] for row in detail["evidence"]["per_node"])
    nodes = list(db.scalars(select(TikvNode).where(TikvNode.cluster_id == world.demo.cluster.id)))
    other = next(n for n in nodes if n.store_address not in group)
    uploaded = TikvConfig(org_id=other.org_id, node_id=other.id, version=2, source="upload",
                          config={"storage": {"block-cache": {"capacity": "14GiB"}}},
                          raw_text='[storage.block-cache]\ncapacity = "14GiB"\n', content_sha256="1" * 64)
    db.add(uploaded)
    db.commit()
    response = _create(world, {"finding_ids": [cache["id"]], "base_config": str(uploaded.id)})
    assert response.status_code == 201, response.text
    patch = response.json()
    changed = {c["entity"]["node"] for c in patch["changes"] if c["target"] == "tikv"}
    assert sorted(n["address"] for n in patch["nodes"]) == sorted(changed) == group
    assert all(n["keys"] == ["storage.block-cache.capacity"] and n["has_config"] for n in patch["nodes"])
    assert "configs" in patch["formats"]
    url = f"/api/v1/clusters/{world.cid}/patches/{patch['id']}"

    # two nodes changed, neither the base: which file is meant must be said
    unsaid = world.viewer.get(url, params={"format": "merged"})
    assert unsaid.status_code == 422, unsaid.text
    message = unsaid.json()["error"]["message"]
    assert message.startswith("Node:") and all(store in message for store in group) and "format=configs" in message
    # a node the patch does not change has no merged file or diff
    untouched = world.viewer.get(url, params={"format": "diff", "node": other.store_address})
    assert untouched.status_code == 422 and untouched.json()["error"]["details"]["field"] == "node"
    assert other.store_address in untouched.json()["error"]["message"]
    for store in group:
        merged = world.viewer.get(url, params={"format": "merged", "node": store})
        assert merged.status_code == 200, merged.text
        assert isinstance(json.loads(merged.headers["x-headroom-notes"]), list)  # what to know before running it
        assert toml_view(merged.text)["storage.block-cache.capacity"] == "4GiB"
        diff = world.viewer.get(url, params={"format": "diff", "node": store}).text
        assert '+capacity = "4GiB"' in diff

    # all of them in one zip: <node>/tikv.toml and <node>/tikv.toml.diff for each changed node, no other
    import io
    import zipfile

    archive = world.viewer.get(url, params={"format": "configs"})
    assert archive.status_code == 200 and archive.headers["content-type"] == "application/zip"
    assert archive.headers["content-disposition"].endswith('tikv-configs.zip"')
    with zipfile.ZipFile(io.BytesIO(archive.content)) as z:
        names = sorted(n for n in z.namelist() if n != "NOTES.txt")
        notes = z.read("NOTES.txt").decode().splitlines() if "NOTES.txt" in z.namelist() else []
        assert notes == json.loads(archive.headers["x-headroom-notes"])
        folders = sorted({name.split("/")[0] for name in names})
        assert folders == sorted(store.replace(":", "_") for store in group)
        assert names == sorted(f"{f}/{n}" for f in folders for n in ("tikv.toml", "tikv.toml.diff"))
        for folder in folders:
            single = world.viewer.get(url, params={"format": "merged", "node": folder.replace("_", ":")}).text
            assert z.read(f"{folder}/tikv.toml").decode() == single


def test_a_patch_applies_the_option_the_user_chose(world: World) -> None:
    # Regression: a finding with several options silently gave its first to the patch. The demo's gp2 volume out of
    # burst offers gp3 first and a larger gp2 second (AWS gp2: 3 IOPS per GiB, so more GiB, more baseline).
    burst = _findings(world, rule="gp2-burst-depletion")["items"][0]
    detail = world.viewer.get(f"/api/v1/findings/{burst['id']}").json()
    assert len(detail["options"]) >= 2
    second = detail["options"][1]
    response = _create(world, {"finding_ids": [burst["id"]], "options": {burst["id"]: 1}})
    assert response.status_code == 201, response.text
    patch = response.json()
    assert [(c["key"], c["proposed"]) for c in patch["changes"]] == [
        (c["key"], c["proposed"]) for c in second["changes"]
    ]
    chosen = [n for n in patch["notes"] if f"option 2 of {len(detail['options'])}" in n]
    assert len(chosen) == 1 and second["label"] in chosen[0] and second["impact"]["summary"] in chosen[0]
    # the default is the first option, and says so
    first = _create(world, {"finding_ids": [burst["id"]]}).json()
    assert [c["key"] for c in first["changes"]] == [c["key"] for c in detail["options"][0]["changes"]]
    assert any(n.startswith(f"{detail['title']}: option 1 of {len(detail['options'])}") for n in first["notes"])
    assert not any(detail["dedup_key"] in n for n in first["notes"])  # the finding in words, not its key
    for bad in ({burst["id"]: 99}, {str(uuid.uuid4()): 0}):
        refused = _create(world, {"finding_ids": [burst["id"]], "options": bad})
        assert refused.status_code == 422 and refused.json()["error"]["message"].startswith("Options: "), refused.text


def test_the_operator_patch_of_the_users_own_manifest_changes_only_the_proposed_keys(world: World) -> None:
    # tidb-operator's examples/basic (spec.tikv.config as a YAML map; data/operator/README.md names it)
    cache = _findings(world, rule="block-cache-size")["items"][0]
    patch = _create(world, {"finding_ids": [cache["id"]]}).json()
    url = f"/api/v1/clusters/{world.cid}/patches/{patch['id']}/operator"
    manifest = (Path(__file__).resolve().parents[1] / "domain" / "tikvconf" / "data" / "operator"
                / "basic-tidb-cluster.yaml").read_text()
    response = world.viewer.post(url, json={"manifest": manifest})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json-patch+json")
    proposed = {c["proposed"] for c in patch["changes"] if c["key"] == "storage.block-cache.capacity"}
    proposed_value = proposed.pop()
    assert response.json() == [
        {"op": "add", "path": "/spec/tikv/config/storage/block-cache", "value": {"capacity": proposed_value}}
    ]
    # runs as printed: the patch inline, quoted for the shell (was `--patch-file <this file>`, a redirection)
    assert shlex.split(response.headers["x-headroom-apply-command"]) == [
        "kubectl", "patch", "tc", "basic", "--type", "json", "-p", json.dumps(response.json(), separators=(",", ":"))]
    undo = world.viewer.post(url, json={"manifest": manifest, "rollback": True})
    assert undo.status_code == 200, undo.text
    # the rollback takes the key out again (the manifest had none): not the node's old live value pinned in
    added = {"capacity": proposed_value}
    assert undo.json() == [{"op": "test", "path": "/spec/tikv/config/storage/block-cache", "value": added},
                           {"op": "remove", "path": "/spec/tikv/config/storage/block-cache"}]
    refused = world.viewer.post(url, json={"manifest": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"})
    assert refused.status_code == 422 and refused.json()["error"]["message"].startswith("Manifest: ")
    assert "no TidbCluster" in refused.json()["error"]["message"]


def test_merged_and_diff_work_on_a_config_read_from_a_tiup_topology(world: World, db: Any) -> None:
    # Regression: after a TiUP topology upload the stored text is YAML; merged and diff parsed it as TOML and failed.
    cache = _findings(world, rule="block-cache-size")["items"][0]
    detail = world.viewer.get(f"/api/v1/findings/{cache['id']}").json()
    store = detail["evidence"]["per_node"][0]["node"]
    node = db.scalar(select(TikvNode).where(TikvNode.cluster_id == world.demo.cluster.id,
                                            TikvNode.store_address == store))
    topology = "server_configs:\n  tikv:\n    storage.block-cache.capacity: 14GiB\n"
    db.add(TikvConfig(org_id=node.org_id, node_id=node.id, version=3, source="tiup",
                      config={"storage": {"block-cache": {"capacity": "14GiB"}}}, raw_text=topology,
                      content_sha256="2" * 64))
    db.commit()
    patch = _create(world, {"finding_ids": [cache["id"]]}).json()
    url = f"/api/v1/clusters/{world.cid}/patches/{patch['id']}"
    merged = world.viewer.get(url, params={"format": "merged", "node": store})
    assert merged.status_code == 200, merged.text
    assert merged.headers["x-headroom-config-source"] == "rebuilt"
    assert toml_view(merged.text)["storage.block-cache.capacity"] == "4GiB"
    diff = world.viewer.get(url, params={"format": "diff", "node": store})
    assert diff.status_code == 200 and '+capacity = "4GiB"' in diff.text


def test_the_tiup_topology_is_patched_in_place_after_tiups_precedence(world: World) -> None:
    # Regression: the tiup artefact never saw the topology, so an instance's own config silently overrode a
    # cluster-wide change. Given the topology, every instance ends with the proposed value.
    cache = _findings(world, rule="block-cache-size")["items"][0]
    patch = _create(world, {"finding_ids": [cache["id"]]}).json()
    stores = sorted({c["entity"]["node"] for c in patch["changes"] if c["target"] == "tikv"})
    proposed = {c["proposed"] for c in patch["changes"] if c["key"] == "storage.block-cache.capacity"}.pop()
    host, port = stores[0].split(":")
    topology = (
        "# ours\nserver_configs:\n  tikv:\n    storage.block-cache.capacity: 8GiB\ntikv_servers:\n"
        + "".join(f"  - host: {s.split(':')[0]}\n    port: {s.split(':')[1]}\n" for s in stores[1:])
        + f"  - host: {host}\n    port: {port}\n    config:\n      storage.block-cache.capacity: 20GiB\n"
    )
    url = f"/api/v1/clusters/{world.cid}/patches/{patch['id']}/tiup"
    response = world.viewer.post(url, json={"topology": topology})
    assert response.status_code == 200, response.text
    view = tiup_topology_view(response.text)
    assert {view.for_instance(s.split(":")[0], int(s.split(":")[1]))["storage.block-cache.capacity"]
            for s in stores} == {proposed}
    assert response.text.startswith("# ours")
    # the TiUP steps for the downloaded file, one shell word per name (the cluster's name, or a placeholder)
    name = world.viewer.get(f"/api/v1/clusters/{world.cid}").json()["name"]
    # Headroom's name for the cluster is not TiUP's: the command holds the placeholder and a note names it
    tiup_name = "<tiup-cluster-name>"
    assert any("tiup cluster list" in n and name in n for n in json.loads(response.headers["x-headroom-notes"]))
    edit, reload = response.headers["x-headroom-apply-command"].split(" && ")
    assert shlex.split(edit) == ["tiup", "cluster", "edit-config", tiup_name, "--topology-file", "topology.yaml"]
    # TiUP restarts the TiKVs one at a time and waits up to an hour for each one's leaders to move away first
    # (docs/reference/rolling-restart.md)
    assert shlex.split(reload) == ["tiup", "cluster", "reload", tiup_name, "-R", "tikv", "--transfer-timeout", "3600"]
    assert 'filename="topology.yaml"' in response.headers["content-disposition"]
    # the rollback is the topology the patch was made from, byte for byte (edit-config replaces the topology)
    undo = world.viewer.post(url, json={"topology": topology, "rollback": True})
    assert undo.status_code == 200, undo.text
    assert undo.text == topology and 'filename="topology-rollback.yaml"' in undo.headers["content-disposition"]
    assert "topology-rollback.yaml" in undo.headers["x-headroom-apply-command"]
    already = world.viewer.post(url, json={"topology": response.text, "rollback": True})
    assert already.status_code == 422 and "made from" in already.json()["error"]["message"]
    refused = world.viewer.post(url, json={"topology": "tikv_servers: [\n"})
    assert refused.status_code == 422 and refused.json()["error"]["message"].startswith("Topology: ")


# each refusal names its field in words (the machine path stays in details)
BAD_PATCH_BODIES = [
    ({"finding_ids": []}, "Findings: "),
    ({"finding_ids": [str(uuid.uuid4())]}, "Findings: "),
    ({"finding_ids": "all"}, "Findings: "),
    ({"finding_ids": "all_open", "base_config": str(uuid.uuid4())}, "Base config: "),
    ({"finding_ids": "all_open", "base_config": "newest"}, "Base config: "),
    ({"finding_ids": "all_open", "extra": 1}, "Extra: "),
]


def test_bad_patch_input_names_the_field(world: World) -> None:
    for body, field in BAD_PATCH_BODIES:  # one cluster for every case: the fixture is slow
        response = _create(world, body)
        assert response.status_code == 422, (body, response.text)
        assert response.json()["error"]["message"].startswith(field), (body, response.json())


def test_viewer_cannot_create_a_patch(world: World) -> None:
    response = world.viewer.post(f"/api/v1/clusters/{world.cid}/patches", json={"finding_ids": "all_open"})
    assert response.status_code == 403


def test_a_cluster_without_findings_has_nothing_to_patch(world: World, db: Any) -> None:
    other = Cluster(org_id=world.demo.org_id, name="empty", tikv_version="v8.5.1", deployment_kind="tiup")
    db.add(other)
    db.commit()
    response = world.owner.post(f"/api/v1/clusters/{other.id}/patches", json={"finding_ids": "all_open"})
    assert response.status_code == 422
    assert json.loads(response.text)["error"]["details"]["field"] == "finding_ids"


def test_the_patch_list_takes_the_same_number_of_queries_for_any_number_of_patches(
    world: World, connection: Any
) -> None:
    from sqlalchemy import event

    url = f"/api/v1/clusters/{world.cid}/patches"
    tikv = [f for f in _findings(world)["items"]
            if any(c["target"] == "tikv" for o in world.owner.get(f"/api/v1/findings/{f['id']}").json()["options"]
                   for c in o["changes"])]
    assert tikv, "the demo needs a finding with tikv.toml changes"
    others = [f for f in _findings(world)["items"] if f["id"] != tikv[0]["id"]]
    assert world.owner.post(url, json={"finding_ids": [tikv[0]["id"]]}).status_code == 201
    statements: list[str] = []

    def count(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        statements.append(statement)

    event.listen(connection, "before_cursor_execute", count)
    try:
        assert world.viewer.get(url).json()["total"] == 1
        with_one = len(statements)
        for finding in (tikv[0], others[0], tikv[0]):
            assert world.owner.post(url, json={"finding_ids": [finding["id"]]}).status_code == 201
        statements.clear()
        listed = world.viewer.get(url).json()
        assert listed["total"] == 4 and sum(1 for p in listed["items"] if p["nodes"]) >= 3
        assert len(statements) == with_one  # was 3 + 2 per changed node for every patch
    finally:
        event.remove(connection, "before_cursor_execute", count)


def test_what_if_shows_the_ceilings_findings_and_cost_a_change_moves(world: World, client: Any) -> None:
    # The demo's gp2 volume out of burst: its first option is gp3 (AWS: gp3 3,000 IOPS / 125 MiB/s baseline at any
    # size, $0.08 per GB-month against gp2's $0.10 in us-east-1).
    burst = _findings(world, rule="gp2-burst-depletion")["items"][0]
    option = world.viewer.get(f"/api/v1/findings/{burst['id']}").json()["options"][0]
    url = f"/api/v1/clusters/{world.cid}/what-if"
    answer = world.viewer.post(url, json={"changes": option["changes"]})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert burst["dedup_key"] in {f["dedup_key"] for f in body["resolved"]}
    assert all(f["title"] for f in body["resolved"] + body["remaining"] + body["new"])
    volume = next(c["entity"]["volume_id"] for c in option["changes"] if c["key"] == "volume.type")
    moved = [c for c in body["ceilings"] if c["entity_id"] == volume]
    assert moved and all(c["ceiling_after"] >= c["ceiling"] for c in moved)
    assert body["cost"]["delta_usd"] < 0 and body["cost"]["after_usd"] < body["cost"]["before_usd"]

    wrong = dict(option["changes"][0], entity={"kind": "volume", "id": "vol-nope", "volume_id": "vol-nope"})
    refused = world.viewer.post(url, json={"changes": [option["changes"][0], wrong]})
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"]["details"]["field"] == "changes[1]"  # the machine path, for programs
    assert refused.json()["error"]["message"].startswith("Change 2: ")  # the person's words
    assert "vol-nope" in refused.json()["error"]["message"]
    stranger = sign_up(client, org="Another Org")
    assert stranger.post(url, json={"changes": option["changes"]}).status_code == 404


def test_what_if_names_an_instances_own_ebs_limit_and_its_volumes_sum_apart(world: World) -> None:
    # The demo's m6i.2xlarge store at its gp3 volumes' 125 MiB/s: its instance's own EBS limit is 312.5 MB/s =
    # 298 MiB/s (AWS: EBS-optimized instance types, 2,500 Mbps baseline / 8); its two volumes give 125 + 125 =
    # 250 MiB/s, the smaller and so in force. Raising the data volume to 300 MiB/s makes the volumes 425 MiB/s and
    # the instance's 298 MiB/s binds: the answer names each ceiling, and never calls 250 MiB/s the instance's limit.
    fix = next(c for f in _findings(world, status="open")["items"]
               for o in world.viewer.get(f"/api/v1/findings/{f['id']}").json()["options"]
               for c in o["changes"] if c["key"] == "volume.throughput" and c["current"] == 125)
    body = world.viewer.post(f"/api/v1/clusters/{world.cid}/what-if", json={"changes": [fix]}).json()
    volume = next(c for c in body["ceilings"] if c["entity_kind"] == "volume" and c["dimension"] == "throughput")
    assert (volume["ceiling"], volume["ceiling_after"]) == (125, 300)
    instance_mibps = 312.5e6 / 2**20
    # the volume's row names its instance's own limit (its I/O meets the smaller first: 298 MiB/s after) and its
    # peak use is against that, the figure its finding predicts; it has no volumes' sum and no binding of its own
    assert volume["instance_limit"] == pytest.approx(instance_mibps, abs=0.01) and volume["binding"] is None
    assert volume["headroom_after_pct"] == pytest.approx(100 * (1 - volume["p99"] / instance_mibps), abs=0.01)
    (instance,) = [c for c in body["ceilings"] if c["entity_kind"] == "instance" and c["dimension"] == "throughput"]
    assert instance["instance_limit"] == pytest.approx(instance_mibps, abs=0.01)
    assert instance["instance_limit_after"] == pytest.approx(instance_mibps, abs=0.01)
    assert (instance["volumes_limit"], instance["volumes_limit_after"]) == (250, 425)
    assert (instance["binding"], instance["binding_after"]) == ("volumes", "instance")
    assert instance["ceiling"] == 250 and instance["ceiling_after"] == pytest.approx(instance_mibps, abs=0.01)
    # each number is a ceiling with its kind and public source, as the charts show it (never guessed by the UI)
    assert (volume["in_force"]["value"], volume["in_force"]["kind"]) == (125, "provisioned")
    assert (volume["in_force_after"]["value"], volume["in_force_after"]["kind"]) == (300, "provisioned")
    assert "docs.aws.amazon.com" in volume["in_force"]["source"]
    assert (instance["in_force"]["id"], instance["in_force"]["value"]) == ("volumes_sum_throughput", 250)
    assert instance["in_force_after"]["id"] == "instance_baseline_throughput" or \
        instance["in_force_after"]["id"] == "instance_max_throughput"
    assert instance["in_force_after"]["kind"] == "sustained"
    assert "ebs-optimized" in instance["in_force_after"]["source"]


def _stored_projection(db: Any, w: World, volume_id: str, metric: str, *, start: float, per_day: float) -> None:
    """A projection as the daily fit stores it: a band growing `per_day` from `start` over 90 days, every 6 hours,
    the band ±10 % around the point."""
    end = w.demo.end
    steps = range(0, 90 * 4)
    point = [start + per_day * k / 4 for k in steps]
    db.add(Projection(
        org_id=w.demo.org_id, cluster_id=w.demo.cluster.id, entity_kind="volume", entity_id=volume_id, metric=metric,
        unit="IOPS" if metric == "iops" else "MiB/s", ceiling=3000.0, ceiling_source="test", method="holt",
        history_hours=72, level_now=start, growth_percent_per_week=None, days=None, days_low=None, days_high=None,
        hits_at=None, horizon_days=90.0, interval=0.9, notes=[], history_start=end - dt.timedelta(hours=72),
        history_end=end, fitted_at=end,
        band={"t": [(end + dt.timedelta(hours=6 * k)).isoformat() for k in steps], "point": point,
              "low": [p * 0.9 for p in point], "high": [p * 1.1 for p in point]},
    ))
    db.commit()


def test_what_if_reads_the_days_until_a_moved_ceiling_off_the_stored_projection(world: World, db: Any) -> None:
    # A 1,000 GiB gp3 data volume at gp3's included 3,000 IOPS (demo.yaml; AWS: gp3 3,000 IOPS baseline at any
    # size), its IOPS projected to grow 2,000 -> +100 IOPS a day: the point path reaches 3,000 on day 10 and
    # 6,000 on day 40. Raising the volume to 6,000 IOPS moves the days later; its throughput ceiling does not move.
    vol = next(v for v in world.demo.simulated.volumes if v.type == "gp3" and v.size_gib == 1000)
    _stored_projection(db, world, vol.id, "iops", start=2000.0, per_day=100.0)
    _stored_projection(db, world, vol.id, "mibps", start=100.0, per_day=1.0)
    change = {"target": "aws", "key": "volume.iops", "proposed": 6000,
              "entity": {"kind": "volume", "id": vol.id, "volume_id": vol.id}}
    answer = world.viewer.post(f"/api/v1/clusters/{world.cid}/what-if", json={"changes": [change]})
    assert answer.status_code == 200, answer.text
    moved = answer.json()["projections"]
    assert [(p["entity_id"], p["metric"]) for p in moved] == [(vol.id, "iops")]
    p = moved[0]
    assert (p["ceiling"], p["ceiling_after"]) == (3000.0, 6000.0)
    assert p["before"]["days"] == 10.0 and p["after"]["days"] == 40.0
    # the interval: the band's upper edge (x1.1) reaches 3,000 first (day 7.5 at the 6-hour step), its lower
    # edge (x0.9) last (day 13.5); after the change the lower edge stays under 6,000 until day 46.75
    assert (p["before"]["days_low"], p["before"]["days_high"]) == (7.5, 13.5)
    assert p["after"]["days_low"] < p["after"]["days"] < p["after"]["days_high"] == 46.75
    assert p["after"]["days_low"] > p["before"]["days_high"]


def test_what_if_applies_changes_in_order_and_names_the_first_that_cannot_apply(world: World) -> None:
    # gp3 allows at most 80,000 IOPS (limits raised in 2025), io2 Block Express 256,000 at 1,000 IOPS per GiB (AWS
    # EBS volume types; domain/catalog/volume_types.py): 100,000 IOPS on the 1,000 GiB volume is refused on gp3 and
    # fine once the type change before it makes it io2.
    vol = next(v for v in world.demo.simulated.volumes if v.type == "gp3" and v.size_gib == 1000)
    entity = {"kind": "volume", "id": vol.id, "volume_id": vol.id}
    iops = {"target": "aws", "key": "volume.iops", "proposed": 100000, "entity": entity}
    to_io2 = {"target": "aws", "key": "volume.type", "proposed": "io2", "entity": entity}
    url = f"/api/v1/clusters/{world.cid}/what-if"
    refused = world.viewer.post(url, json={"changes": [iops, to_io2]})
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"]["details"]["field"] == "changes[0]"
    answer = world.viewer.post(url, json={"changes": [to_io2, iops]})
    assert answer.status_code == 200, answer.text
    moved = {(c["entity_id"], c["dimension"]): c for c in answer.json()["ceilings"]}
    assert moved[(vol.id, "iops")]["ceiling_after"] == 100000
