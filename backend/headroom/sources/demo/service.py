"""The demo fleet: a simulated cluster (examples/scenarios/demo.yaml) that flows through the same store as
collected data: inventory rows, a config version per node, series and packed points, with watermarks.

`seed_demo_cluster` creates the cluster in an org; `ingest_demo` (the `demo.ingest` job) simulates from each
demo cluster's watermark up to now and writes the points, so the dashboard moves like a live cluster.
`seed_demo_source` gives the demo organisation an AWS source marked `is_demo`, so a newcomer sees what a healthy
one looks like (permission checks, sweeps and their CloudWatch cost, the history import): its instances are the
demo fleet's, and each demo ingest records on it the sweep the collector would have made (the same queries and
plan), without asking anything of AWS.
Every window is a piece of one history: the workload's time starts at the cluster's `demo_origin` (growth, the
nightly spike and the noise keep their place), and a window after the first starts from the state the store
holds at its start (burst balances, pending compaction bytes) instead of warming up afresh, so the live stream
continues the backfill without a seam.
A demo data or raft volume can be given the ID of a real EBS volume, and the tags it carries in AWS
(`give_volume_id`), so an apply plan of the demo's findings reaches that volume: the simulation goes on as before
and writes the volume's series under the real ID (its history moves with it), the way a demo node given a status
address keeps it. Callers commit.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import hashlib
import json
import uuid
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import select
from sqlalchemy.dialects.postgresql import distinct_on
from sqlalchemy.orm import Session

from headroom.accounts.service import audit
from headroom.clusters.models import Cluster
from headroom.clusters.service import get_cluster
from headroom.domain.snapshot import metric_ids as mid
from headroom.domain.snapshot.scenario import Scenario, VolumeSpec, load_scenario
from headroom.domain.snapshot.schema import Snapshot
from headroom.domain.snapshot.simulate import EC2_PERIOD_SECONDS, SimState, simulate, volume_specs
from headroom.domain.snapshot.views import IO_METRICS
from headroom.inventory.models import Instance, TikvConfig, TikvNode, Volume
from headroom.platform.db import driver_cursor
from headroom.platform.errors import Conflict, NotFound
from headroom.platform.jobs.context import JobContext
from headroom.platform.logging import get_logger
from headroom.platform.principal import Principal
from headroom.sources.aws import service as aws_sources
from headroom.sources.models import AwsConnection
from headroom.timeseries import repository as timeseries
from headroom.timeseries import watermarks

DEMO_TAG = "headroom.demo"
DEMO_SOURCE_KIND = "demo"
BACKFILL = dt.timedelta(days=7)
# Before the raw backfill, hourly history of the I/O sums only, written as hourly rollups (a 168-step simulation,
# a few hundred rows): the demo's cuts are judged on 14 days (the default lookback, docs/reference/lookback.md)
# from its first minute instead of being held for a week, at a cost of well under a second.
HOURLY_HISTORY = dt.timedelta(days=14)
# Re-simulate a little before the watermark so the newest minutes, which a live source may revise, are
# rewritten like a collector's overlap window (the merge keeps the newest values).
OVERLAP = dt.timedelta(minutes=10)
# Snapshot entity kinds -> metric_series.entity_kind.
ENTITY_KIND = {"node": "tikv_node", "volume": "volume", "instance": "instance"}

log = get_logger("headroom.sources.demo")


def default_scenario_path() -> Path:
    """The demo fleet's scenario: the copy packaged with headroom.domain.snapshot (kept identical to
    examples/scenarios/demo.yaml by a test), so an installed build finds it too."""
    from headroom.domain.snapshot.simulate import DEMO_SCENARIO

    return DEMO_SCENARIO


@functools.cache
def packaged_scenario() -> Scenario:
    """The demo fleet's scenario, parsed once per process instead of every minute: the packaged file does not
    change while the process runs, and a Scenario is frozen."""
    return load_scenario(default_scenario_path())


def _seed_for(cluster: Cluster) -> int:
    """The demo's random seed: from the cluster's name, so the same demo cluster always shows the same data."""
    return zlib.crc32(cluster.name.encode())


def demo_clusters(db: Session) -> list[Cluster]:
    return list(db.scalars(select(Cluster).where(Cluster.is_demo)))


def _free_name(db: Session, org_id: uuid.UUID, wanted: str) -> str:
    """`wanted`, or `wanted 2`, `wanted 3`... when the org already has a cluster of that name."""
    taken = set(db.scalars(select(Cluster.name).where(Cluster.org_id == org_id, Cluster.name.startswith(wanted))))
    candidate, n = wanted, 1
    while candidate in taken:
        n += 1
        candidate = f"{wanted} {n}"
    return candidate


def seed_demo_cluster(
    db: Session, org_id: uuid.UUID, *, scenario: Scenario | None = None, name: str | None = None
) -> Cluster:
    """Create the demo cluster in an org (once: an existing one is returned).

    The demo cluster is found by `is_demo`, which only this function sets: its users may rename it or edit its
    tags (DEMO_TAG is a label for people; the API's is_demo drives the badge) without the next start creating a second one."""
    scenario = scenario or packaged_scenario()
    existing = db.scalar(select(Cluster).where(Cluster.org_id == org_id, Cluster.is_demo))
    if existing is not None:
        return existing
    cluster = Cluster(
        org_id=org_id,
        name=_free_name(db, org_id, name or f"{scenario.cluster.name} (demo)"),
        tikv_version=scenario.cluster.tikv_version,
        deployment_kind=scenario.cluster.deployment,
        tags={DEMO_TAG: "true", "environment": "demo"},
        is_demo=True,
    )
    db.add(cluster)
    db.flush()
    return cluster


# The demo source's role: 123456789012 is the account ID AWS's documentation uses in examples, HeadroomReadOnly
# the role deploy/aws/ creates. Nothing ever assumes it.
DEMO_ROLE_ARN = "arn:aws:iam::123456789012:role/HeadroomReadOnly"
DEMO_SOURCE_NAME = "Demo AWS account"


def demo_source(db: Session, org_id: uuid.UUID) -> AwsConnection | None:
    return db.scalar(select(AwsConnection).where(AwsConnection.org_id == org_id, AwsConnection.is_demo))


def seed_demo_source(db: Session, org_id: uuid.UUID, *, scenario: Scenario | None = None) -> AwsConnection:
    """Create the demo organisation's AWS source (once: an existing one is returned), in the demo fleet's region."""
    from headroom.accounts.models import Organization

    existing = demo_source(db, org_id)
    if existing is not None:
        return existing
    scenario = scenario or packaged_scenario()
    org = db.get(Organization, org_id)
    assert org is not None
    taken = set(db.scalars(select(AwsConnection.name).where(AwsConnection.org_id == org_id)))
    name, n = DEMO_SOURCE_NAME, 1
    while name in taken:
        n += 1
        name = f"{DEMO_SOURCE_NAME} {n}"
    source = AwsConnection(org_id=org_id, name=name, auth_kind="assume_role", role_arn=DEMO_ROLE_ARN,
                           external_id=org.aws_external_id, regions=[scenario.cluster.region], is_demo=True)
    db.add(source)
    db.flush()
    return source


@dataclasses.dataclass(frozen=True)
class _KeptInventory:
    """What the last full inventory upsert of a demo cluster in this process wrote, to be checked rather than
    redone: while its rows hold the same values but last_seen_at (a digest of each row's columns), no simulated
    node got another config version, the demo source is the same and the fleet simulated is the same, the upsert
    would write the same values again, and only `last_seen_at` moves. The check is on content, not on row
    versions, so the minutes of a cluster that another worker process ingested in between still pass it."""

    org_id: uuid.UUID
    fleet: tuple[object, ...]  # the snapshot's nodes, instances, volumes and region
    source_id: uuid.UUID | None
    rows: list[uuid.UUID]  # the instance, volume and node rows the upsert wrote
    nodes: list[uuid.UUID]  # the simulated nodes' rows (their newest config version is the simulated config)
    state: tuple[str | None, str | None, str | None]  # _INVENTORY_STATE of those rows after the upsert
    entity_ids: dict[str, str]  # as _upsert_inventory returns them
    volume_ids: dict[str, str]  # simulated volume ID -> the ID it was given (give_volume_id)


# The demo clusters' kept inventories, by cluster id. A process serves a share of the fleet; past this many
# clusters it starts afresh (a cluster not kept takes the full upsert, which keeps it again).
_KEPT: dict[uuid.UUID, _KeptInventory] = {}
_KEPT_CLUSTERS = 4096

# The state of a cluster's inventory rows, in one row: a digest of every column but last_seen_at of its
# instances, volumes and nodes (`rows`: each table's rows read, or touched by moving last_seen_at), the newest
# config version of each simulated node, and the org's demo source.
_ROWS = {
    False: "SELECT t.id, CAST(to_jsonb(t) - 'last_seen_at' AS text) AS c FROM {table} t "
           "WHERE t.org_id = %(org)s AND t.id = ANY(CAST(%(ids)s AS uuid[]))",
    True: "UPDATE {table} t SET last_seen_at = %(now)s WHERE t.org_id = %(org)s "
          "AND t.id = ANY(CAST(%(ids)s AS uuid[])) RETURNING t.id, CAST(to_jsonb(t) - 'last_seen_at' AS text) AS c",
}
_INVENTORY_STATE = {
    touch: f"WITH i AS ({rows.format(table='instances')}), v AS ({rows.format(table='volumes')}), "
           f"n AS ({rows.format(table='tikv_nodes')}) "
           "SELECT (SELECT md5(string_agg(c, ',' ORDER BY id)) FROM "
           "(SELECT * FROM i UNION ALL SELECT * FROM v UNION ALL SELECT * FROM n) AS r), "
           "(SELECT string_agg(node_id || ':' || version, ',' ORDER BY node_id) FROM (SELECT node_id, max(version) "
           "AS version FROM tikv_configs WHERE org_id = %(org)s AND node_id = ANY(CAST(%(nodes)s AS uuid[])) "
           "GROUP BY node_id) AS c), "
           "(SELECT string_agg(CAST(id AS text), ',' ORDER BY id) FROM aws_connections WHERE org_id = %(org)s "
           "AND is_demo)"
    for touch, rows in _ROWS.items()
}


def _inventory_state(db: Session, org_id: uuid.UUID, rows: list[uuid.UUID], nodes: list[uuid.UUID], *,
                     touch_at: dt.datetime | None = None) -> tuple[str | None, str | None, str | None]:
    """_INVENTORY_STATE of these rows; `touch_at`: moving their last_seen_at to it in the same statement."""
    with driver_cursor(db) as cur:
        cur.execute(_INVENTORY_STATE[touch_at is not None],
                    {"now": touch_at, "org": org_id, "ids": rows, "nodes": nodes})
        found = cur.fetchone()
    assert found is not None
    return found[0], found[1], found[2]


def _fleet_of(snap: Snapshot) -> tuple[object, ...]:
    return (snap.nodes, snap.instances, snap.volumes, snap.cluster.region)


def _touch_inventory(db: Session, cluster: Cluster, now: dt.datetime) -> _KeptInventory | None:
    """Move `last_seen_at` of the cluster's kept inventory rows to `now` in one statement; return the kept
    inventory if all of it still holds (rows, configs, demo source), else None (the caller then takes the full
    upsert, which rewrites every row)."""
    kept = _KEPT.get(cluster.id)
    if kept is None or kept.org_id != cluster.org_id:
        return None
    if _inventory_state(db, cluster.org_id, kept.rows, kept.nodes, touch_at=now) != kept.state:
        _KEPT.pop(cluster.id, None)
        return None
    return kept


def _keep_inventory(db: Session, cluster: Cluster, snap: Snapshot, source_id: uuid.UUID | None,
                    rows: list[uuid.UUID], nodes: list[uuid.UUID], entity_ids: dict[str, str],
                    volume_ids: dict[str, str]) -> None:
    """Keep what a full upsert wrote (its state read back), for the next minutes' _touch_inventory."""
    db.flush()
    state = _inventory_state(db, cluster.org_id, rows, nodes)
    if len(_KEPT) >= _KEPT_CLUSTERS:
        _KEPT.clear()
    _KEPT[cluster.id] = _KeptInventory(cluster.org_id, _fleet_of(snap), source_id, rows, nodes, state, entity_ids,
                                       volume_ids)


def _upsert_inventory(db: Session, cluster: Cluster, snap: Snapshot, now: dt.datetime,
                      kept: _KeptInventory | None = None) -> tuple[dict[str, str], dict[str, str], uuid.UUID | None]:
    """Write instances, volumes, nodes and changed configs; return node id -> series entity id, simulated volume
    ID -> the ID it was given (given_volumes: the upsert keeps every volume's ID and its node's references to
    it), and the demo source's id. `kept`: the inventory _touch_inventory found unchanged this minute; when the
    snapshot's fleet is the one it was written from, there is nothing else to write."""
    if kept is not None and kept.fleet == _fleet_of(snap):
        return kept.entity_ids, kept.volume_ids, kept.source_id
    org_id = cluster.org_id
    source = demo_source(db, org_id)
    instances: dict[str, Instance] = {
        i.instance_id: i for i in db.scalars(select(Instance).where(Instance.org_id == org_id))
    }
    for inst in snap.instances:
        row = instances.get(inst.id)
        if row is None:
            row = Instance(org_id=org_id, instance_id=inst.id, instance_type=inst.type)
            db.add(row)
            instances[inst.id] = row
        row.cluster_id, row.instance_type, row.vcpus = cluster.id, inst.type, inst.vcpus
        row.memory_gib, row.availability_zone, row.region = inst.memory_gib, inst.availability_zone, snap.cluster.region
        row.last_seen_at = now
        if source is not None:  # the demo source "sees" the demo fleet, as a real one its account's instances
            row.aws_connection_id = source.id
    db.flush()
    volumes: dict[str, Volume] = {v.volume_id: v for v in db.scalars(select(Volume).where(Volume.org_id == org_id))}
    # A volume given a real ID (give_volume_id) keeps it: its row is the one its node refers to.
    given = given_volumes(db, cluster, snap)
    volumes |= given
    for vol in snap.volumes:
        vrow = volumes.get(vol.id)
        if vrow is None:
            vrow = Volume(org_id=org_id, volume_id=vol.id, volume_type=vol.type, size_gib=int(vol.size_gib))
            db.add(vrow)
            volumes[vol.id] = vrow
        vrow.cluster_id, vrow.volume_type, vrow.size_gib = cluster.id, vol.type, int(vol.size_gib)
        vrow.iops = vol.iops
        vrow.throughput_mibps = int(vol.throughput_mibps) if vol.throughput_mibps is not None else None
        vrow.instance_ref_id = instances[vol.instance_id].id if vol.instance_id in instances else None
        vrow.device, vrow.role, vrow.last_seen_at = vol.device, vol.role, now
    db.flush()
    nodes = {n.store_address: n for n in db.scalars(select(TikvNode).where(TikvNode.cluster_id == cluster.id))}
    entity_ids: dict[str, str] = {}
    configs: list[tuple[TikvNode, dict[str, Any]]] = []
    node_rows: list[TikvNode] = []
    for node in snap.nodes:
        nrow = nodes.get(node.address)
        if nrow is None:
            nrow = TikvNode(org_id=org_id, cluster_id=cluster.id, store_address=node.address)
            db.add(nrow)
        node_rows.append(nrow)
        # A status address given by hand (the node's PATCH) is kept, and the node's config is then the one read from
        # that status port, not the simulated one: a demo node can be pointed at a live TiKV (or a stand-in) and
        # back. Only a node at its simulated address (or none) gets the simulated address and config.
        simulated = nrow.status_address in (None, node.status_address)
        nrow.store_id, nrow.version = node.store_id, node.tikv_version
        if simulated:
            nrow.status_address = node.status_address
        nrow.instance_ref_id = instances[node.instance_id].id
        nrow.data_volume_ref_id = volumes[node.data_volume_ids[0]].id if node.data_volume_ids else None
        nrow.raft_volume_ref_id = volumes[node.raft_volume_ids[0]].id if node.raft_volume_ids else None
        nrow.last_seen_at = now
        if simulated:
            configs.append((nrow, node.config))
        entity_ids[node.id] = node.address
    db.flush()
    _record_configs(db, org_id, configs)
    volume_ids = {sim: row.volume_id for sim, row in given.items()}
    rows = [instances[i.id].id for i in snap.instances] + [volumes[v.id].id for v in snap.volumes] + \
        [n.id for n in node_rows]
    _keep_inventory(db, cluster, snap, source.id if source is not None else None, list(dict.fromkeys(rows)),
                    [node.id for node, _ in configs], entity_ids, volume_ids)
    return entity_ids, volume_ids, source.id if source is not None else None


def given_volumes(db: Session, cluster: Cluster, snap: Snapshot) -> dict[str, Volume]:
    """The demo's volumes given a real ID: simulated ID -> the row (found through its node's reference)."""
    return {sim: row for sim, row in _volume_rows(db, cluster, snap).items() if row.volume_id != sim}


def _volume_rows(db: Session, cluster: Cluster, snap: Snapshot) -> dict[str, Volume]:
    """Each simulated data or raft volume's row, through its node's reference: simulated ID -> row."""
    nodes = {n.store_address: n for n in db.scalars(select(TikvNode).where(TikvNode.org_id == cluster.org_id,
                                                                           TikvNode.cluster_id == cluster.id))}
    refs: dict[str, uuid.UUID] = {}
    for node in snap.nodes:
        row = nodes.get(node.address)
        if row is None:
            continue
        for ids, ref in ((node.data_volume_ids, row.data_volume_ref_id), (node.raft_volume_ids, row.raft_volume_ref_id)):
            if ids and ref is not None:
                refs[ids[0]] = ref
    if not refs:
        return {}
    rows = {v.id: v for v in db.scalars(select(Volume).where(Volume.org_id == cluster.org_id,
                                                             Volume.id.in_(list(refs.values()))))}
    return {sim: rows[ref] for sim, ref in refs.items() if ref in rows}


# The fleets of the scenarios seen by this process (by identity: the packaged one, parsed once, is the usual one).
_FLEETS: dict[int, tuple[Scenario, Snapshot]] = {}
_FLEETS_KEPT = 8


def _fleet(scenario: Scenario, seed: int, at: dt.datetime) -> Snapshot:
    """The fleet (instances, volumes, nodes with their addresses and configs; no series): a one-minute run without
    warm-up names them. The fleet comes from the scenario alone, not the time or the seed, so it is simulated once
    per scenario and process: the run cost about as much as the minute's whole simulation."""
    kept = _FLEETS.get(id(scenario))
    if kept is not None and kept[0] is scenario:
        return kept[1]
    fleet = simulate(scenario, hours=1 / 60, seed=seed, start=at, state=SimState(), lookback=False)
    fleet = fleet.model_copy(update={"series": []})
    if len(_FLEETS) >= _FLEETS_KEPT:
        _FLEETS.clear()
    _FLEETS[id(scenario)] = (scenario, fleet)
    return fleet


def _lock_demo(db: Session, cluster: Cluster) -> None:
    """Serialise a demo cluster's ingest and the change of a volume's ID (held to the end of the transaction)."""
    with driver_cursor(db) as cur:  # the driver's cursor: this runs every minute, the ORM's statement cost more
        cur.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"demo-cluster:{cluster.id}",))


def give_volume_id(db: Session, principal: Principal, cluster_id: uuid.UUID, volume_id: str, *,
                   real_volume_id: str | None, tags: dict[str, str], now: dt.datetime,
                   scenario: Scenario | None = None) -> tuple[Volume, str]:
    """Give a demo cluster's data or raft volume the ID of a real EBS volume and the tags it carries in AWS (None:
    its simulated ID again, without tags); its series follow the ID. Return the row and its simulated ID."""
    principal.require("admin")
    cluster = get_cluster(db, principal, cluster_id)
    if not cluster.is_demo:
        raise Conflict("Only a demo cluster's volumes can be given another ID: a cluster's own volumes are the ones "
                       "your EC2 inventory reports.", code="not_a_demo_cluster")
    _lock_demo(db, cluster)
    scenario = scenario or packaged_scenario()
    rows = _volume_rows(db, cluster, _fleet(scenario, _seed_for(cluster), now))
    found = next(((sim, row) for sim, row in rows.items() if row.volume_id == volume_id), None)
    if found is None:
        raise NotFound(f"The demo cluster has no data or raft volume {volume_id}.")
    simulated, row = found
    target = real_volume_id or simulated
    if target != row.volume_id:
        if db.scalar(select(Volume.id).where(Volume.org_id == cluster.org_id, Volume.volume_id == target)):
            raise Conflict(f"Real volume ID: your organisation already has a volume {target}.", code="volume_id_taken")
        if target != simulated and timeseries.entity_series(db, cluster.org_id, [target]):
            raise Conflict(f"Real volume ID: Headroom already stores metrics of a volume {target}.",
                           code="volume_id_taken")
        timeseries.rename_entity(db, cluster.org_id, "volume", row.volume_id, target)
        # another volume: whatever a run did to the previous one, the demo simulates this one as the scenario has it
        row.modified_at = None
    before = {"volume_id": row.volume_id, "tags": dict(row.tags)}
    row.volume_id, row.tags = target, (dict(tags) if target != simulated else {})
    db.flush()
    audit(db, principal, "volume.id_given", target_kind="volume", target_id=row.id,
          details={"before": before, "volume_id": row.volume_id, "tags": row.tags, "simulated_volume_id": simulated})
    return row, simulated


def _record_configs(db: Session, org_id: uuid.UUID, configs: list[tuple[TikvNode, dict[str, Any]]]) -> None:
    """Add a config version for each node whose config differs from its newest stored one.

    One query reads every node's newest version and digest, not the stored configs themselves: the config of a
    node is the same minute after minute, and loading it to learn that costs more than the comparison."""
    if not configs:
        return
    newest = {node_id: (version, digest) for node_id, version, digest in db.execute(
        select(TikvConfig.node_id, TikvConfig.version, TikvConfig.content_sha256)
        .where(TikvConfig.org_id == org_id, TikvConfig.node_id.in_([node.id for node, _ in configs]))
        .order_by(TikvConfig.node_id, TikvConfig.version.desc())
        .ext(distinct_on(TikvConfig.node_id)))}
    for node, config in configs:
        digest = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()
        version, stored = newest.get(node.id, (0, None))
        if stored == digest:
            continue
        db.add(TikvConfig(org_id=node.org_id, node_id=node.id, version=version + 1, source="simulated",
                          config=config, content_sha256=digest))


def demo_origin(cluster: Cluster, start: dt.datetime) -> dt.datetime:
    """Where the demo's workload time starts: midnight UTC a day before the first backfill could begin (the
    cluster's creation day less BACKFILL), so every window of the cluster shares it. A window before it (a
    clock set back, as tests do) starts from its own midnight."""
    created = cluster.created_at.astimezone(dt.UTC) if cluster.created_at else start
    midnight = created.replace(hour=0, minute=0, second=0, microsecond=0)
    origin = midnight - BACKFILL - dt.timedelta(days=1)
    return origin if origin <= start else start.astimezone(dt.UTC).replace(hour=0, minute=0, second=0, microsecond=0)


# How far back the state is looked for: a missed datapoint or two (CloudWatch, scrapes) before the window start.
STATE_LOOKBACK = dt.timedelta(minutes=20)
_STATE_METRICS = {
    "volume": (mid.EBS_BURST_BALANCE,),
    "instance": (mid.EC2_EBS_IO_BALANCE, mid.EC2_EBS_BYTE_BALANCE),
    "tikv_node": (mid.TIKV_PENDING_COMPACTION_BYTES,),
}


def stored_state(
    db: Session, cluster: Cluster, scenario: Scenario, at: dt.datetime, *, seed: int,
    kept: _KeptInventory | None = None,
) -> SimState | None:
    """The physics' state at `at` as the store holds it: each bucket's newest balance and each node's pending
    compaction bytes from a datapoint whose period ended by `at`; None when the store has none (a first run).
    `kept`: the inventory _touch_inventory found unchanged (its volumes' given IDs are the stored ones)."""
    fleet = _fleet(scenario, seed, at)
    addresses = {n.id: n.address for n in fleet.nodes}
    if kept is not None and kept.fleet == _fleet_of(fleet):
        stored_id = kept.volume_ids
    else:
        stored_id = {sim: row.volume_id for sim, row in given_volumes(db, cluster, fleet).items()}
    simulated_id = {given: sim for sim, given in stored_id.items()}
    identities = [("volume", stored_id.get(v.id, v.id), m) for v in fleet.volumes for m in _STATE_METRICS["volume"]]
    identities += [("instance", i.id, m) for i in fleet.instances for m in _STATE_METRICS["instance"]]
    identities += [("tikv_node", a, m) for a in addresses.values() for m in _STATE_METRICS["tikv_node"]]
    found = timeseries.find_series(db, cluster.org_id, identities)
    if not found:
        return None
    points = timeseries.read_points_many(db, cluster.org_id, [s.id for s in found.values()], at - STATE_LOOKBACK, at)
    newest: dict[tuple[str, str, str], float] = {}
    for ident, stored in found.items():
        t, v = points[stored.id]
        ended = t + stored.step_seconds <= int(at.timestamp())  # the datapoint's period is over by `at`
        if ended.any():
            newest[ident] = float(v[ended][-1])
    if not newest:
        return None
    node_of = {a: nid for nid, a in addresses.items()}
    return SimState(
        volume_balance_pct={simulated_id.get(e, e): x for (k, e, _m), x in newest.items() if k == "volume"},
        instance_io_balance_pct={e: x for (k, e, m), x in newest.items() if m == mid.EC2_EBS_IO_BALANCE},
        instance_byte_balance_pct={e: x for (k, e, m), x in newest.items() if m == mid.EC2_EBS_BYTE_BALANCE},
        pending_compaction_bytes={node_of[e]: x for (k, e, _m), x in newest.items() if k == "tikv_node"},
    )


def _batches(snap: Snapshot, series_ids: dict[int, int]) -> Iterator[timeseries.SeriesBatch]:
    for index, series in enumerate(snap.series):
        # The series' float array (NaN for gaps), which the snapshot holds already: the store packs arrays.
        yield timeseries.SeriesBatch(series_ids[index], series.start, series.step_seconds, series.array)


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def modified_volume_specs(db: Session, cluster: Cluster, scenario: Scenario, at: dt.datetime
                          ) -> tuple[dict[str, VolumeSpec], dt.datetime | None]:
    """The demo's volumes a Headroom apply run modified (only a volume given a real ID can be), as their inventory
    rows hold them (what AWS read back: apply/run.py writes it): simulated volume ID -> its spec now, and when the
    newest of those changes took effect. A real cluster's sweep reads a new type from AWS; the demo has no account
    to read, so it simulates what the runs read back."""
    if db.scalar(select(Volume.id).where(Volume.org_id == cluster.org_id, Volume.cluster_id == cluster.id,
                                         Volume.modified_at.is_not(None)).limit(1)) is None:
        return {}, None
    base = volume_specs(scenario)
    specs: dict[str, VolumeSpec] = {}
    newest: dt.datetime | None = None
    for sim, row in given_volumes(db, cluster, _fleet(scenario, _seed_for(cluster), at)).items():
        if row.modified_at is None or sim not in base:
            continue
        newest = row.modified_at if newest is None else max(newest, row.modified_at)
        fields = base[sim].model_dump() | {
            "type": row.volume_type,
            "iops": row.iops if row.volume_type in ("gp3", "io1", "io2") else None,
            "throughput_mibps": row.throughput_mibps if row.volume_type == "gp3" else None,
        }
        try:
            specs[sim] = VolumeSpec.model_validate(fields)
        except ValueError as error:  # a combination the simulator does not model: the volume keeps its spec
            log.warning("demo.volume_change_not_simulated", cluster_id=str(cluster.id), volume=row.volume_id,
                        error=str(error))
    return specs, newest


def ingest_window(
    db: Session,
    cluster: Cluster,
    scenario: Scenario,
    start: dt.datetime,
    end: dt.datetime,
    *,
    origin: dt.datetime | None = None,
    state: SimState | None = None,
    modified: dict[str, VolumeSpec] | None = None,
    kept: _KeptInventory | None = None,
) -> dict[str, int]:
    """Simulate [start, end) for a demo cluster and write inventory, configs and points (idempotent).

    `origin`, `state` and `modified` as `simulate` takes them: the window continues the history they describe.
    `kept`: the inventory _touch_inventory found unchanged at `end`."""
    hours = (end - start).total_seconds() / 3600
    snap = simulate(scenario, hours=hours, seed=_seed_for(cluster), start=start, origin=origin, state=state,
                    modified=modified, lookback=False)  # the series are written; the lookback is the store's
    entity_ids, volume_ids, source_id = _upsert_inventory(db, cluster, snap, end, kept)
    keys = [
        timeseries.SeriesKey(
            entity_kind=ENTITY_KIND[s.entity.kind],
            entity_id=(entity_ids.get(s.entity.id, s.entity.id) if s.entity.kind == "node"
                       else volume_ids.get(s.entity.id, s.entity.id) if s.entity.kind == "volume" else s.entity.id),
            metric=s.metric,
            unit=s.unit,
            labels=tuple(sorted(s.labels.items())),
            step_seconds=s.step_seconds,
        )
        for s in snap.series
    ]
    ids = timeseries.ensure_series(db, cluster.org_id, list(dict.fromkeys(keys)), cluster_id=cluster.id)
    series_ids = {i: ids[k] for i, k in enumerate(keys)}
    result = timeseries.write_batches(db, cluster.org_id, _batches(snap, series_ids))
    last = snap.window.end - dt.timedelta(seconds=snap.window.step_seconds)
    watermarks.advance_watermarks(db, cluster.org_id, DEMO_SOURCE_KIND, cluster.id,
                                  dict.fromkeys(set(series_ids.values()), last))
    source = db.get(AwsConnection, source_id) if source_id is not None else None
    if source is not None:
        # What a collector would have written from CloudWatch: the EBS and EC2 series' points.
        cloudwatch_points = sum(int(np.isfinite(s.array).sum()) for s in snap.series
                                if s.metric.startswith(("ebs.", "ec2.")))
        aws_sources.record_demo_sweep(db, source, start=start, end=end, points_written=cloudwatch_points, now=end)
    return {"series": len(set(series_ids.values())), "points": result.points}


def ingest_demo(db: Session, cluster: Cluster, *, now: dt.datetime, scenario: Scenario | None = None) -> dict[str, int]:
    """Bring one demo cluster up to `now`: 7 days on the first run, then from its watermark."""
    scenario = scenario or packaged_scenario()
    _lock_demo(db, cluster)
    end = now.astimezone(dt.UTC).replace(second=0, microsecond=0)
    newest = watermarks.newest_watermark(db, cluster.org_id, DEMO_SOURCE_KIND, cluster.id)
    if newest is None:
        start = end - BACKFILL
    period = dt.timedelta(seconds=EC2_PERIOD_SECONDS)
    modified, changed_at = modified_volume_specs(db, cluster, scenario, end)
    if newest is not None:  # from a 5-minute boundary, where the EC2 periods the store holds end
        resume = max(end - BACKFILL, newest - OVERLAP)
        if changed_at is not None:
            # The overlap is not simulated again from before a volume's change, with physics it did not have
            # then (its stored minutes stay); what comes after the watermark always is.
            resume = max(resume, min(changed_at, newest + dt.timedelta(minutes=1)))
        start = resume - (resume - _EPOCH) % period
    if end - start < dt.timedelta(minutes=1):
        return {"series": 0, "points": 0}
    seed = _seed_for(cluster)
    kept = _touch_inventory(db, cluster, end) if newest is not None else None
    state = stored_state(db, cluster, scenario, start, seed=seed, kept=kept) if newest is not None else None
    written = ingest_window(db, cluster, scenario, start, end, origin=demo_origin(cluster, start), state=state,
                            modified=modified, kept=kept)
    if newest is None:
        written["hourly_rollups"] = backfill_hourly_history(db, cluster, scenario, end - HOURLY_HISTORY, start)
    return written


def backfill_hourly_history(
    db: Session, cluster: Cluster, scenario: Scenario, start: dt.datetime, raw_start: dt.datetime
) -> int:
    """Write the demo's history before its raw backfill as hourly rollups of its volumes' and instances' I/O sums,
    over the whole days from `start` up to the day `raw_start` falls in (that day's rollups come from its raw
    points); return the rows written."""
    first = start.astimezone(dt.UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    last = raw_start.astimezone(dt.UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    if last <= first:
        return 0
    hours = (last - first).total_seconds() / 3600
    snap = simulate(scenario, hours=hours, seed=_seed_for(cluster), start=first, step_seconds=3600,
                    origin=demo_origin(cluster, first), lookback=False)
    io = {
        (ENTITY_KIND[s.entity.kind], s.entity.id, s.metric): s
        for s in snap.series
        if s.entity.kind in IO_METRICS and s.metric in IO_METRICS[s.entity.kind]
    }
    # The raw backfill created these series (with their native periods); every one of them is a Sum.
    stored = timeseries.find_series(db, cluster.org_id, list(io))
    batches = [timeseries.SeriesBatch(row.id, io[ident].start, 3600, io[ident].values) for ident, row in stored.items()]
    native = {row.id: row.step_seconds for row in stored.values()}
    return timeseries.backfill_hourly_rollups(db, cluster.org_id, batches, native, sums=set(native))


DEMO_EMAIL = "demo@example.com"  # example.com is reserved for examples (RFC 2606); .local is refused by email validation


def ensure_demo_account(db: Session, password_file: Path) -> tuple[str, str, uuid.UUID]:
    """Create (once) the demo organisation and its owner; the password is generated and kept in a 0600 file."""
    from headroom.accounts import service as accounts
    from headroom.platform.security import new_token

    if password_file.is_file():
        password = password_file.read_text().strip()
    else:
        password = new_token()[:20]
        password_file.parent.mkdir(parents=True, exist_ok=True)
        password_file.write_text(password + "\n")
        password_file.chmod(0o600)
    user = accounts.find_user_by_email(db, DEMO_EMAIL)
    if user is None:
        user, org, _ = accounts.sign_up(
            db, email=DEMO_EMAIL, password=password, organization_name="Headroom Demo", full_name="Demo User"
        )
        org_id = org.id
    else:
        org_id = accounts.primary_membership(db, user.id).org_id
    seed_demo_cluster(db, org_id)
    seed_demo_source(db, org_id)
    return DEMO_EMAIL, password, org_id


def ingest_demo_fleet(ctx: JobContext, now: dt.datetime, cluster_id: str | None = None) -> dict[str, Any]:
    """Bring every demo cluster (or the one given) up to `now` (the demo.ingest job's work; a no-op when
    HEADROOM_DEMO_FLEET is off). With Celery workers the scheduled run queues one task per cluster."""
    if not ctx.settings.demo_fleet:
        return {"clusters": 0, "points": 0}
    with ctx.unit() as db:
        query = select(Cluster.id).where(Cluster.is_demo).order_by(Cluster.created_at)
        if cluster_id is not None:
            query = query.where(Cluster.id == uuid.UUID(cluster_id))
        ids = list(db.scalars(query))
    if cluster_id is None:
        fanned = ctx.fan_out("demo.ingest", "cluster_id", ids, now)
        if fanned is not None:
            return {"clusters": len(ids), "points": 0, **fanned}
    points = clusters = 0
    for cid in ids:  # each cluster its own unit of work: one cluster's failure does not undo the others
        with ctx.unit() as db:
            cluster = db.get(Cluster, cid)
            if cluster is None:  # deleted since the list was read
                continue
            result = ingest_demo(db, cluster, now=now)
        points += result["points"]
        clusters += 1
    log.info("demo.ingested", clusters=clusters, points=points)
    return {"clusters": clusters, "points": points}
