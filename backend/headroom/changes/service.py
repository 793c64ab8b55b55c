"""The change ledger (docs/changes.md): every change of a cluster with who, when, the findings it addressed, the effect the
advisor predicted and the effect measured.

Entries, newest first, over the last `days`:
- a patch marked applied (patches.applied_at, applied_by): its changes and its findings;
- a change Headroom saw in the EC2 inventory (inventory_changes: a volume's type, size, IOPS or throughput, an
  instance's type), one entry per entity and observation;
- a change Headroom saw in a node's live TiKV config (consecutive tikv_configs versions, keys that differ).
An observed change that carries out a patch (same key and entity, within a day before to MATCH_AFTER_PATCH after
it was marked applied) is folded into the patch's entry as "seen by Headroom", so one change is listed once.

Findings addressed by an observed change: the cluster's findings that recommended that key on that entity and
were open when it happened. Predicted effect: the finding's stored impact (what the advisor expected of its
fix when it last judged it). Measured effect (docs/changes.md): peak use of each IOPS / throughput ceiling of the
stores it touches (the metrics overview: each bucket against the ceiling in force then), after = from the change
for up to AFTER_WINDOW (from when the change was first recorded in effect: marked applied, or seen by Headroom
when that was earlier; applied by a run; observed), before = the same hours of the week one week earlier,
so a daily or weekly cycle compares like with like. The ledger is read from the records it lists.

Outcome (docs/thresholds/fix-outcomes.md): each finding an entry is credited with gets the outcome of its fix,
the finding's predicted use of one ceiling (domain.advisor.outcome) against the measured peak use of the same
ceiling in the entry's windows. The `outcomes.measure` job stores them (FixOutcomeRecord, the prediction as first
judged) for the rules page's per-rule accuracy; the ledger reads a stored prediction back, so both say the same.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import uuid
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from headroom.accounts.models import User
from headroom.apply import service as apply_service
from headroom.changes.models import FixOutcomeRecord
from headroom.clusters import service as clusters_service
from headroom.clusters.models import Cluster
from headroom.domain.advisor.engine import discover_rules
from headroom.domain.advisor.outcome import (
    MEASURED_VERDICTS,
    FULL_WINDOW,
    FixOutcome,
    PredictedUse,
    accuracy_statement,
    decide_outcome,
    predicted_use,
)
from headroom.domain.model import Change, EntityRef, Impact
from headroom.domain.tikvconf.defaults import HostFacts
from headroom.domain.tikvconf.display import config_value_text, known_default
from headroom.domain.tikvconf.parse import flatten, same_value
from headroom.domain.units import GIB, format_duration_words, format_quantity, setting_text
from headroom.findings import service as findings_service
from headroom.inventory.models import Instance, InventoryChange, TikvConfig, TikvNode, Volume
from headroom.metrics import service as metrics_service
from headroom.patches.models import PatchRecord
from headroom.platform.errors import InvalidInput
from headroom.platform.jobs.context import JobContext
from headroom.platform.logging import get_logger
from headroom.platform.principal import Principal
from headroom.platform.shared_cache import SharedCache, shared_cache

from headroom.changes.schemas import (
    AddressedFinding,
    ChangedValue,
    ChangeEntry,
    ChangeLedger,
    MeasuredCell,
    MeasuredEffect,
    PredictedEffect,
    RuleAccuracy,
    RuleList,
    RuleRead,
    WhatIfRead,
)

log = get_logger("headroom.changes")

AFTER_WINDOW = dt.timedelta(days=7)
WEEK = dt.timedelta(days=7)
MIN_AFTER = dt.timedelta(hours=1)
MATCH_BEFORE_PATCH = dt.timedelta(days=1)
MATCH_AFTER_PATCH = dt.timedelta(days=7)
MAX_ENTRIES = 100
MAX_KEYS = 50
PREDICT_LIMIT = 10  # the newest entries get a what-if (about 0.2 s each: bench/README.md, What-if answer time)
# Of those, at most this many are tried while a request waits; the others are tried by the changes.predict job and
# shown on the next load. A what-if is 0.2 s on a quiet machine but 2-3 s at a load of 18, and an apply run adds an
# entry per step: ten tried in the request kept the ledger loading for 27 s.
PREDICT_IN_REQUEST = 3
# A past change's what-if reads the day before it, which does not change: kept a day where every process finds it.
PREDICTION_TTL = dt.timedelta(hours=24)
PREDICT_PENDING_NOTE = ("Headroom is still trying this change on the day before it; its predicted effect shows when "
                        "the page is loaded again")
# EC2 inventory fields -> the change keys findings recommend (domain.model.Change)
INVENTORY_KEYS = {
    ("volume", "volume_type"): "volume.type",
    ("volume", "size_gib"): "volume.size",
    ("volume", "iops"): "volume.iops",
    ("volume", "throughput_mibps"): "volume.throughput",
    ("instance", "instance_type"): "instance.type",
}
# Entries that carry out their own changes (an observed change that matches is folded into them).
OWN_KINDS = ("patch_applied", "apply", "apply_undo")
SOURCE_WORDS = {"status_port": "the live config (TiKV's status port)", "upload": "an uploaded config"}


@dataclass
class _Entry:
    id: str
    kind: Literal["patch_applied", "apply", "apply_undo", "inventory", "config", "config_upload"]
    at: dt.datetime
    who: str
    entity_kind: Literal["volume", "instance", "node", "cluster"]
    entity_id: str
    changes: list[ChangedValue]
    target: Literal["aws", "tikv"] | None = None
    node_addresses: set[str] = field(default_factory=set)  # store addresses of the stores it touches
    patch_id: uuid.UUID | None = None
    finding_ids: list[uuid.UUID] = field(default_factory=list)
    seen: list[str] = field(default_factory=list)
    # A patch's own changes, to credit observed ones with: (change, the stores it touches).
    own: list[tuple[Change, set[str]]] = field(default_factory=list)
    # When Headroom first saw a patch's changes in effect: a person may mark it applied hours after the change.
    seen_at: dt.datetime | None = None

    @property
    def in_effect_at(self) -> dt.datetime:
        """When the change was first recorded in effect: marked applied, or seen by Headroom if that was earlier
        (a sweep sees a change up to its interval late, so a marking before it is the nearer time)."""
        return min(self.at, self.seen_at) if self.seen_at is not None else self.at


class _Texts:
    """Each value of the ledger in words: tikv.toml values as the config writes them, an absent one with the
    version's default when every store it touches has the same (defaults that follow memory or CPUs differ)."""

    def __init__(self, version: str | None, hosts: dict[str, HostFacts]) -> None:
        self.version, self.hosts = version, hosts

    def default(self, key: str, stores: set[str]) -> Any:
        hosts: list[HostFacts | None] = [self.hosts.get(s) for s in sorted(stores)] or [None]
        return known_default(key, self.version, hosts)

    def same(self, key: str, before: Any, after: Any, stores: set[str]) -> bool:
        """Whether two configs' values of a key mean the same to TiKV: two spellings of one size, or a key one
        of them leaves out whose default is the other's value (a tikv.toml sets few keys; /config shows all)."""
        if before is None or after is None:
            default = self.default(key, stores) if before is not after else None
            return before is after or (default is not None and same_value(key, default, after if before is None
                                                                          else before))
        return same_value(key, before, after)

    def value(self, key: str, before: Any, after: Any, target: str | None, stores: set[str]) -> ChangedValue:
        if target != "tikv":
            return ChangedValue(key=key, before=before, after=after, before_text=setting_text(key, before),
                                after_text=setting_text(key, after))
        default = self.default(key, stores) if before is None or after is None else None
        return ChangedValue(key=key, before=before, after=after, before_text=config_value_text(key, before, default),
                            after_text=config_value_text(key, after, default))


def _addresses(nodes: list[TikvNode], volumes: dict[uuid.UUID, Volume], instances: dict[uuid.UUID, Instance],
               kind: str, entity_id: str) -> set[str]:
    """The stores an entity's change touches: a volume's node, an instance's nodes, the node itself."""
    out = set()
    for n in nodes:
        vol_ids = {volumes[r].volume_id for r in (n.data_volume_ref_id, n.raft_volume_ref_id) if r in volumes}
        inst = instances.get(n.instance_ref_id) if n.instance_ref_id else None
        if ((kind == "volume" and entity_id in vol_ids) or (kind == "instance" and inst and inst.instance_id == entity_id)
                or (kind == "node" and entity_id in (n.store_address, n.status_address))):
            out.add(n.store_address)
    return out


def _patch_entries(db: Session, cluster_id: uuid.UUID, org_id: uuid.UUID, since: dt.datetime,
                   nodes: list[TikvNode], volumes: dict[uuid.UUID, Volume],
                   instances: dict[uuid.UUID, Instance], texts: _Texts) -> list[_Entry]:
    rows = list(db.scalars(select(PatchRecord).where(
        PatchRecord.org_id == org_id, PatchRecord.cluster_id == cluster_id, PatchRecord.applied_at.is_not(None),
        PatchRecord.applied_at >= since)))
    users = {u.id: u.email for u in db.scalars(select(User).where(
        User.id.in_([r.applied_by_user_id for r in rows if r.applied_by_user_id])))}
    out = []
    for r in rows:
        assert r.applied_at is not None
        entities = {(c.entity.kind, c.entity.id) if c.entity is not None else ("cluster", "") for c in r.changes}
        kind, eid = next(iter(entities)) if len(entities) == 1 else ("cluster", "")
        touched: set[str] = set()
        own: list[tuple[Change, set[str]]] = []
        for c in r.changes:
            if c.entity is None:
                stores = {n.store_address for n in nodes}
            elif c.target == "tikv":
                node = c.entity.tikv_node()
                stores = ({n.store_address for n in nodes} if node is None
                          else _addresses(nodes, volumes, instances, "node", node))
            else:
                stores = _addresses(nodes, volumes, instances, c.entity.kind, c.entity.volume() or
                                    c.entity.instance() or c.entity.id)
            touched |= stores
            own.append((c, stores))
        who = users.get(r.applied_by_user_id, "a former member") if r.applied_by_user_id else "an API token"
        out.append(_Entry(
            id=f"patch:{r.id}", kind="patch_applied", at=r.applied_at, who=f"{who} (marked the patch applied)",
            entity_kind=kind if kind in ("volume", "instance", "node") else "cluster",
            entity_id=eid, changes=[texts.value(c.key, c.current, c.proposed, c.target, stores) for c, stores in own],
            node_addresses=touched, patch_id=r.id, finding_ids=list(r.finding_ids), own=own))
    return out


def _apply_entries(db: Session, cluster_id: uuid.UUID, org_id: uuid.UUID, since: dt.datetime,
                   nodes: list[TikvNode], volumes: dict[uuid.UUID, Volume], instances: dict[uuid.UUID, Instance],
                   texts: _Texts) -> list[_Entry]:
    """The steps Headroom's runs applied (and set back), credited to the plan's finding, with the values read."""
    out = []
    for a in apply_service.applied_changes(db, org_id, cluster_id, since):
        c = a.change
        if c.target == "aws":
            kind, eid = "volume", c.applies_to() or ""
            stores = _addresses(nodes, volumes, instances, "volume", eid)
        else:
            node = next((n for n in nodes if n.status_address == c.applies_to()), None)
            kind, eid = "node", node.store_address if node is not None else (c.applies_to() or "")
            stores = {eid} if node is not None else set()
        out.append(_Entry(
            id=a.id, kind="apply_undo" if a.undo else "apply", at=a.at, who=a.who, entity_kind=kind,  # type: ignore[arg-type]
            entity_id=eid, changes=[texts.value(c.key, c.current, c.proposed, c.target, stores)], target=c.target,
            node_addresses=stores, finding_ids=[a.finding_id] if a.finding_id else [],
            own=[] if a.undo else [(c, stores)]))
    return out


def _inventory_entries(db: Session, org_id: uuid.UUID, since: dt.datetime, nodes: list[TikvNode],
                       volumes: dict[uuid.UUID, Volume], instances: dict[uuid.UUID, Instance],
                       texts: _Texts) -> list[_Entry]:
    ids = {("volume", v.volume_id) for v in volumes.values()} | {("instance", i.instance_id) for i in instances.values()}
    if not ids:
        return []
    rows = db.scalars(select(InventoryChange).where(
        InventoryChange.org_id == org_id, InventoryChange.observed_at >= since,
        InventoryChange.entity_id.in_([e for _, e in ids])).order_by(InventoryChange.observed_at, InventoryChange.id))
    grouped: dict[tuple[str, str, dt.datetime], list[InventoryChange]] = defaultdict(list)
    for r in rows:
        if (r.entity_kind, r.entity_id) in ids and (r.entity_kind, r.field) in INVENTORY_KEYS:
            grouped[(r.entity_kind, r.entity_id, r.observed_at)].append(r)
    return [
        _Entry(id=f"inventory:{group[0].id}", kind="inventory", at=at, who="seen by Headroom in the EC2 inventory",
               entity_kind=kind, entity_id=eid, target="aws",  # type: ignore[arg-type]
               changes=[texts.value(INVENTORY_KEYS[(kind, r.field)], r.old_value, r.new_value, "aws", set())
                        for r in group],
               node_addresses=_addresses(nodes, volumes, instances, kind, eid))
        for (kind, eid, at), group in grouped.items()
    ]


def _config_entries(db: Session, org_id: uuid.UUID, since: dt.datetime, nodes: list[TikvNode],
                    texts: _Texts) -> list[_Entry]:
    by_id = {n.id: n for n in nodes}
    if not by_id:
        return []
    rows = list(db.scalars(select(TikvConfig).where(TikvConfig.org_id == org_id, TikvConfig.node_id.in_(list(by_id)))
                           .order_by(TikvConfig.node_id, TikvConfig.version)))
    out = []
    for prev, cur in zip(rows, rows[1:], strict=False):
        if prev.node_id != cur.node_id or cur.captured_at < since:
            continue
        before, after = flatten(prev.config), flatten(cur.config)
        node = by_id[cur.node_id]
        keys = sorted(k for k in set(before) | set(after)
                      if not texts.same(k, before.get(k), after.get(k), {node.store_address}))
        if not keys:
            continue
        upload = cur.source == "upload"
        out.append(_Entry(
            id=f"config:{cur.id}", kind="config_upload" if upload else "config", at=cur.captured_at,
            who=("a tikv.toml uploaded for the node" if upload
                 else f"seen by Headroom in {SOURCE_WORDS.get(cur.source, cur.source)}"), entity_kind="node",
            entity_id=node.store_address, target="tikv",
            changes=[texts.value(k, before.get(k), after.get(k), "tikv", {node.store_address})
                     for k in keys[:MAX_KEYS]],
            node_addresses={node.store_address}))
    return out


def _carries_out(own: tuple[Change, set[str]], target: str | None, entity_id: str, stores: set[str],
                 value: ChangedValue) -> bool:
    """Whether an observed change is one of a patch's own: the same key on the same volume, instance or store,
    set to the patch's value."""
    change, touched = own
    if change.key != value.key or change.target != target or change.proposed is None:
        return False
    if target == "aws":
        where = change.applies_to() if change.entity is not None else None
        if where is not None and where != entity_id:
            return False
    elif not stores & touched:
        return False
    return same_value(value.key, change.proposed, value.after)


def _fold_into_patches(entries: list[_Entry]) -> list[_Entry]:
    """Credit a patch with the observed changes that carry out its own changes ("seen by Headroom"); every other
    observed change stays an entry of its own (a tikv.toml uploaded minutes before a patch is not the patch)."""
    patches = [e for e in entries if e.kind in OWN_KINDS]
    out = []
    for e in entries:
        if e.kind in OWN_KINDS:
            out.append(e)
            continue
        near = [p for p in patches if p.at - MATCH_BEFORE_PATCH <= e.at <= p.at + MATCH_AFTER_PATCH]
        left = []
        for c in e.changes:
            owner = next((p for p in near if any(_carries_out(own, e.target, e.entity_id, e.node_addresses, c)
                                                 for own in p.own)), None)
            if owner is None:
                left.append(c)
                continue
            owner.seen_at = min(owner.seen_at or e.at, e.at)
            owner.seen.append(f"{c.key} {c.before_text} -> {c.after_text} on {e.entity_id}, "
                              f"{e.who.removeprefix('seen by Headroom ')} at {e.at:%Y-%m-%d %H:%M} UTC")
        if left:
            e.changes = left
            out.append(e)
    return out


def _addressed(db: Session, org_id: uuid.UUID, cluster_id: uuid.UUID, entries: list[_Entry]) -> None:
    """For observed changes: the findings that recommended the key on that entity and were open at the time."""
    observed = [e for e in entries if e.kind not in OWN_KINDS]
    if not observed:
        return
    recs = findings_service.recommended_changes_of_cluster(db, org_id, cluster_id)
    for e in observed:
        keys = {c.key for c in e.changes}
        for rec in recs:
            change = rec.change
            if change.key not in keys or change.target != e.target:
                continue
            target = change.applies_to()
            if e.kind == "inventory" and target != e.entity_id:
                continue
            if e.kind in ("config", "config_upload") and target is not None and target not in e.node_addresses and \
                    not (change.entity is not None and change.entity.node in e.node_addresses):
                continue
            opened_before = rec.first_seen_at <= e.at
            open_then = rec.resolved_at is None or rec.resolved_at >= e.at - dt.timedelta(hours=1)
            if opened_before and open_then and rec.finding_id not in e.finding_ids:
                e.finding_ids.append(rec.finding_id)


def _predicted(impact: Impact | None) -> PredictedEffect | None:
    if impact is None or not impact.summary:
        return None
    return PredictedEffect.model_validate(impact, from_attributes=True)


class _Overviews:
    """Cluster overviews by window, each read once (two per change)."""

    def __init__(self, db: Session, principal: Principal, cluster_id: uuid.UUID, now: dt.datetime) -> None:
        self.db, self.principal, self.cluster_id, self.now = db, principal, cluster_id, now
        self.cache: dict[tuple[dt.datetime, dt.datetime], dict[tuple[str, str], Any]] = {}

    def cells(self, lo: dt.datetime, hi: dt.datetime) -> dict[tuple[str, str], Any]:
        if (lo, hi) not in self.cache:
            ov = metrics_service.cluster_overview(self.db, self.principal, self.cluster_id, start=lo, end=hi,
                                                  now=self.now)
            self.cache[(lo, hi)] = {(n.refs.node.store_address, c.metric): (n.refs.node.id, c)
                                    for n in ov.nodes for c in n.cells}
        return self.cache[(lo, hi)]


def _effect(e: _Entry, overviews: _Overviews, now: dt.datetime) -> MeasuredEffect:
    after_start = e.in_effect_at.replace(second=0, microsecond=0)
    after_end = min(after_start + AFTER_WINDOW, now.replace(second=0, microsecond=0))
    span = after_end - after_start
    before_start, before_end = after_start - WEEK, after_start - WEEK + max(span, dt.timedelta(0))
    if span < MIN_AFTER:
        return MeasuredEffect(before_start=before_start, before_end=before_end, after_start=after_start,
                              after_end=after_end, cells=[],
                              note="Too early to measure: less than an hour of data since the change.")
    before = overviews.cells(before_start, before_end)
    after = overviews.cells(after_start, after_end)
    cells = []
    for (node, metric), (node_id, cell) in sorted(after.items(), key=lambda kv: kv[0]):
        if node not in e.node_addresses:
            continue
        old = before.get((node, metric), (None, None))[1]
        cells.append(MeasuredCell(
            node=node, node_id=node_id, metric=metric,
            before_peak_percent=round(old.peak.percent, 1) if old is not None and old.peak is not None else None,
            after_peak_percent=round(cell.peak.percent, 1) if cell.peak is not None else None,
            ceiling_after=(f"{cell.ceiling_now.label} ({format_quantity(cell.ceiling_now.value, cell.ceiling_now.unit)})"
                           if cell.ceiling_now is not None else None)))
    note = None
    if span < AFTER_WINDOW:
        note = (f"{format_duration_words(span.total_seconds())} since the change: compared with the same hours one "
                "week earlier; a full week compares a whole weekly cycle.")
    return MeasuredEffect(before_start=before_start, before_end=before_end, after_start=after_start,
                          after_end=after_end, cells=cells, note=note)


def _domain_changes(e: _Entry, nodes: list[TikvNode], patch_changes: dict[uuid.UUID, list[Change]]
                    ) -> tuple[list[Change], list[Change]]:
    """The entry's changes as the what-if takes them, and the ones that set each key back to its value before."""
    if e.patch_id is not None:
        forward = patch_changes.get(e.patch_id, [])
    else:
        if e.target == "aws":
            ref = EntityRef(kind=e.entity_kind, id=e.entity_id,
                            volume_id=e.entity_id if e.entity_kind == "volume" else None,
                            instance_id=e.entity_id if e.entity_kind == "instance" else None)
        else:
            node = next((n for n in nodes if n.store_address == e.entity_id), None)
            ref = EntityRef(kind="node", id=e.entity_id, node=e.entity_id,
                            status_address=node.status_address if node is not None else None)
        forward = [Change(target=e.target or "aws", key=c.key, entity=ref, current=c.before, proposed=c.after)
                   for c in e.changes if c.after is not None]
    back = [c.model_copy(update={"proposed": c.current, "current": c.proposed}) for c in forward
            if c.current is not None]
    return forward, back


def _predict(db: Session, principal: Principal, cluster_id: uuid.UUID, e: _Entry, forward: list[Change],
             back: list[Change]) -> tuple[WhatIfRead | None, str | None]:
    if not forward:
        return None, "nothing to try: the change has no new value"
    try:
        return findings_service.what_if_cluster(db, principal, cluster_id, forward, now=e.at, as_it_was=back), None
    except InvalidInput as exc:
        return None, f"could not be tried on the day before: {exc.message}"


class _Predictions:
    """The what-if of each entry, kept in the installation's shared cache (platform.shared_cache) under its inputs
    (the entry, when it happened, the changes tried and set back), so each is tried once, not on every load.

    `in_request`: how many not yet kept may be tried now; past it an entry reads PREDICT_PENDING_NOTE and
    `deferred` says so (the caller queues changes.predict, which tries them with no such limit)."""

    def __init__(self, db: Session, principal: Principal, cluster_id: uuid.UUID, cache: SharedCache,
                 in_request: int | None) -> None:
        self.db, self.principal, self.cluster_id, self.cache = db, principal, cluster_id, cache
        self.left = in_request
        self.deferred = False

    def _key(self, e: _Entry, forward: list[Change], back: list[Change]) -> str:
        words = json.dumps([e.id, e.at.astimezone(dt.UTC).isoformat(), [c.model_dump(mode="json") for c in forward],
                            [c.model_dump(mode="json") for c in back]], separators=(",", ":"), sort_keys=True)
        return f"change-prediction:{self.principal.org_id}:{self.cluster_id}:{hashlib.sha256(words.encode()).hexdigest()}"

    def of(self, e: _Entry, forward: list[Change], back: list[Change]) -> tuple[WhatIfRead | None, str | None]:
        key = self._key(e, forward, back)
        kept = self.cache.get(key)
        if kept is None and self.left is not None and self.left <= 0:
            self.deferred = True
            return None, PREDICT_PENDING_NOTE
        if kept is None and self.left is not None:
            self.left -= 1

        def make() -> bytes:
            predicted, note = _predict(self.db, self.principal, self.cluster_id, e, forward, back)
            return json.dumps({"predicted": predicted.model_dump(mode="json") if predicted is not None else None,
                               "note": note}).encode()

        body = json.loads(kept if kept is not None else self.cache.get_or_make(
            key, make, ttl_seconds=PREDICTION_TTL.total_seconds()))
        predicted = WhatIfRead.model_validate(body["predicted"]) if body["predicted"] is not None else None
        return predicted, body["note"]


def cluster_changes(db: Session, principal: Principal, cluster_id: uuid.UUID, *, now: dt.datetime,
                    days: int = 90, predict: bool = True, cache: SharedCache | None = None,
                    predict_in_request: int | None = None, on_deferred: Callable[[], None] | None = None
                    ) -> ChangeLedger:
    """The cluster's change ledger (see the module); another org's cluster is NotFound.

    The newest PREDICT_LIMIT entries get their what-if, kept in `cache` (default: this process's memory); with
    `predict_in_request`, at most that many not yet kept are tried now and `on_deferred` is called once when some
    were left for later."""
    cluster = clusters_service.get_cluster(db, principal, cluster_id)
    since = now - dt.timedelta(days=days)
    org_id = principal.org_id
    nodes = list(db.scalars(select(TikvNode).where(TikvNode.org_id == org_id, TikvNode.cluster_id == cluster.id)))
    volumes = {v.id: v for v in db.scalars(select(Volume).where(Volume.org_id == org_id, Volume.cluster_id == cluster.id))}
    refs = {n.instance_ref_id for n in nodes if n.instance_ref_id} | {v.instance_ref_id for v in volumes.values()
                                                                      if v.instance_ref_id}
    instances = {i.id: i for i in db.scalars(select(Instance).where(
        Instance.org_id == org_id, (Instance.cluster_id == cluster.id) | Instance.id.in_(list(refs))))}
    texts = _Texts(cluster.tikv_version, {
        n.store_address: HostFacts(cpus=i.vcpus, memory_bytes=int(i.memory_gib * GIB) if i.memory_gib else None)
        for n in nodes if n.instance_ref_id is not None and (i := instances.get(n.instance_ref_id)) is not None})
    entries = (_patch_entries(db, cluster.id, org_id, since, nodes, volumes, instances, texts)
               + _apply_entries(db, cluster.id, org_id, since, nodes, volumes, instances, texts)
               + _inventory_entries(db, org_id, since, nodes, volumes, instances, texts)
               + _config_entries(db, org_id, since, nodes, texts))
    entries.sort(key=lambda e: e.at)
    entries = _fold_into_patches(entries)
    _addressed(db, org_id, cluster.id, entries)
    entries = sorted(entries, key=lambda e: e.at, reverse=True)[:MAX_ENTRIES]
    finding_ids = {f for e in entries for f in e.finding_ids}
    findings = findings_service.findings_by_id(db, org_id, list(finding_ids))
    overviews = _Overviews(db, principal, cluster.id, now)
    stored = _stored_predictions(db, org_id, cluster.id, [e.id for e in entries if e.finding_ids])
    inventory = _Inventory(nodes, volumes, instances)
    patch_changes = {p.id: list(p.changes) for p in db.scalars(select(PatchRecord).where(
        PatchRecord.org_id == org_id, PatchRecord.id.in_([e.patch_id for e in entries if e.patch_id])))}
    predictions = _Predictions(db, principal, cluster.id, cache or shared_cache(None), predict_in_request)
    items = []
    for index, e in enumerate(entries):
        predicted, predicted_note = None, None
        if predict and index < PREDICT_LIMIT:
            predicted, predicted_note = predictions.of(e, *_domain_changes(e, nodes, patch_changes))
        elif predict:
            predicted_note = f"the what-if is tried for the newest {PREDICT_LIMIT} changes"
        effect = _effect(e, overviews, now) if e.node_addresses else None
        addressed = [
            AddressedFinding(
                id=f.id, rule=f.rule, severity=f.severity, title=f.title, status=f.status, resolved_at=f.resolved_at,
                resolved_after_change=f.status == "resolved" and f.resolved_at is not None and f.resolved_at >= e.at,
                predicted=_predicted(f.impact),
                outcome=_outcome(f, e, effect, stored.get((e.id, f.id), _NOT_STORED), inventory, now))
            for fid in e.finding_ids if (f := findings.get(fid)) is not None
        ]
        items.append(ChangeEntry(
            id=e.id, kind=e.kind, at=e.at, who=e.who, entity_kind=e.entity_kind, entity_id=e.entity_id,
            changes=e.changes, patch_id=e.patch_id, seen_by_headroom=e.seen, findings=addressed,
            predicted=predicted, predicted_note=predicted_note, effect=effect))
    if predictions.deferred and on_deferred is not None:
        on_deferred()
    return ChangeLedger(items=items, days=days)


def predict_changes(ctx: JobContext, now: dt.datetime, *, cluster_id: str | None, org_id: str | None
                    ) -> dict[str, Any]:
    """Try the what-if of each of the cluster's newest changes not yet kept, and keep it (changes.predict: queued
    by a ledger load that left some for later)."""
    if cluster_id is None or org_id is None:  # the in-process scheduler's start-up pass runs every job once
        return {"status": "skipped", "reason": "no cluster given"}
    job = Principal(user_id=None, org_id=uuid.UUID(org_id), role="viewer", via="job")
    cache = shared_cache(ctx.settings.redis_url)
    with ctx.unit() as db:
        if db.get(Cluster, uuid.UUID(cluster_id)) is None:
            return {"cluster_id": cluster_id, "status": "skipped", "reason": "cluster deleted"}
        ledger = cluster_changes(db, job, uuid.UUID(cluster_id), now=now, cache=cache)
    return {"cluster_id": cluster_id, "status": "ready",
            "predicted": sum(1 for e in ledger.items if e.predicted is not None)}


@dataclass(frozen=True)
class _Inventory:
    nodes: list[TikvNode]
    volumes: dict[uuid.UUID, Volume]
    instances: dict[uuid.UUID, Instance]

    def cells_of(self, f: findings_service.StoredFinding, use: PredictedUse, e: _Entry) -> list[tuple[str, str]]:
        """The (store, ceiling) cells a finding's prediction is about: its volume's (data or Raft) on that
        volume's store, its instance's EBS limit on the instance's stores, else the data volume of the stores
        the change touched."""
        dim = use.dimension
        if use.scope == "instance" or f.entity_kind == "instance":
            stores = {n.store_address for n in self.nodes if n.instance_ref_id is not None
                      and (i := self.instances.get(n.instance_ref_id)) is not None and i.instance_id == f.entity_id}
            return [(s, f"instance_{dim}") for s in sorted(stores or e.node_addresses)]
        if f.entity_kind == "volume":
            return [(n.store_address, f"{role}_{dim}") for n in self.nodes
                    for role, ref in (("data", n.data_volume_ref_id), ("raft", n.raft_volume_ref_id))
                    if ref is not None and (v := self.volumes.get(ref)) is not None and v.volume_id == f.entity_id]
        stores = {n.store_address for n in self.nodes if f.entity_id in (n.store_address, n.status_address)}
        return [(s, f"data_{dim}") for s in sorted(stores or e.node_addresses)]


_NOT_STORED = object()


def _outcome(f: findings_service.StoredFinding, e: _Entry, effect: MeasuredEffect | None,
             stored: PredictedUse | None | object, inventory: _Inventory, now: dt.datetime) -> FixOutcome:
    """The outcome of the fix an entry made for a finding: the prediction as first stored (else the finding's
    impact now) against the peak use of the same ceiling in the entry's measured windows."""
    use, reason = predicted_use(f.impact)
    if stored is not _NOT_STORED:
        use = stored if isinstance(stored, PredictedUse) else None
        reason = None if use is not None else (reason or "the finding predicted no ceiling use when the fix was made")
    cells = {(c.node, c.metric): c for c in (effect.cells if effect is not None else [])}
    candidates = [cells[k] for k in inventory.cells_of(f, use, e) if k in cells] if use is not None else []
    pick = max(candidates, key=lambda c: c.before_peak_percent if c.before_peak_percent is not None else -1.0,
               default=None)
    if effect is not None:
        after_start, after_end = effect.after_start, effect.after_end
    else:
        after_start = e.in_effect_at.replace(second=0, microsecond=0)
        after_end = max(after_start, min(after_start + AFTER_WINDOW, now))
    return decide_outcome(
        use, reason, measure=f"peak use of the {_METRIC_WORDS[pick.metric]} ceiling on {pick.node}" if pick else None,
        measured_before=pick.before_peak_percent if pick else None,
        measured_after=pick.after_peak_percent if pick else None, after_start=after_start, after_end=after_end)


def _outcomes(org_id: uuid.UUID) -> Any:
    """The org's stored outcomes (the one place their tenancy is written)."""
    return select(FixOutcomeRecord).where(FixOutcomeRecord.org_id == org_id)


def _stored_predictions(db: Session, org_id: uuid.UUID, cluster_id: uuid.UUID,
                        change_ids: list[str]) -> dict[tuple[str, uuid.UUID], PredictedUse | None]:
    if not change_ids:
        return {}
    rows = db.scalars(_outcomes(org_id).where(FixOutcomeRecord.cluster_id == cluster_id,
                                              FixOutcomeRecord.change_id.in_(change_ids)))
    return {(r.change_id, r.finding_id): r.prediction for r in rows}


def record_outcomes(db: Session, org_id: uuid.UUID, cluster_id: uuid.UUID, *, now: dt.datetime) -> int:
    """Store the outcome of every fix in the cluster's ledger still being measured (the last week and a day, or
    the last 90 days the first time): one row per entry and finding, written again as data comes in, never twice;
    the prediction of a row stays as first stored. Return the rows written."""
    job = Principal(user_id=None, org_id=org_id, role="viewer", via="job")
    seen_before = db.scalar(select(func.count()).select_from(
        _outcomes(org_id).where(FixOutcomeRecord.cluster_id == cluster_id).subquery()))
    days = (FULL_WINDOW + dt.timedelta(days=1)).days if seen_before else 90
    ledger = cluster_changes(db, job, cluster_id, now=now, days=days, predict=False)
    findings = findings_service.findings_by_id(db, org_id, list({f.id for e in ledger.items for f in e.findings}))
    written = 0
    for e in ledger.items:
        for addressed in e.findings:
            if addressed.outcome is None:
                continue
            f = findings.get(addressed.id)
            prediction = predicted_use(f.impact if f is not None else None)[0]
            values = {"org_id": org_id, "cluster_id": cluster_id, "change_id": e.id, "finding_id": addressed.id,
                      "rule": addressed.rule, "changed_at": e.at, "verdict": addressed.outcome.verdict,
                      "prediction": prediction, "outcome": addressed.outcome, "measured_at": now}
            stmt = insert(FixOutcomeRecord).values(id=uuid.uuid4(), **values)
            db.execute(stmt.on_conflict_do_update(
                index_elements=["cluster_id", "change_id", "finding_id"],
                set_={k: stmt.excluded[k] for k in ("rule", "changed_at", "verdict", "outcome", "measured_at")}))
            written += 1
    return written


def measure_outcomes(ctx: JobContext, now: dt.datetime, cluster_id: str | None = None) -> dict[str, Any]:
    """Store the outcomes of every cluster's applied fixes (or one cluster's), each cluster in its own unit of
    work: one failing cluster is logged and the others go on."""
    with ctx.unit() as db:
        query = select(Cluster.id, Cluster.org_id).order_by(Cluster.created_at)
        if cluster_id is not None:
            query = query.where(Cluster.id == uuid.UUID(cluster_id))
        clusters = [(cid, oid) for cid, oid in db.execute(query)]
    written, failed = 0, 0
    for cid, oid in clusters:
        try:
            with ctx.unit() as db:
                written += record_outcomes(db, oid, cid, now=now)
        except Exception:  # noqa: BLE001 - one cluster's bad data must not stop the others; it is logged
            failed += 1
            log.exception("outcomes.failed", cluster_id=str(cid))
    log.info("outcomes.done", clusters=len(clusters), outcomes=written, failed=failed)
    return {"clusters": len(clusters), "outcomes": written, "failed": failed}


def rule_accuracy(db: Session, principal: Principal, *, now: dt.datetime, days: int = 90) -> RuleList:
    """Every advisor rule with how often its predictions held for the caller's org's applied fixes (counted by
    the date of the change, over the last `days` days)."""
    rows = _outcomes(principal.org_id).where(FixOutcomeRecord.changed_at >= now - dt.timedelta(days=days)).subquery()
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for rule, verdict, n in db.execute(select(rows.c.rule, rows.c.verdict, func.count())
                                       .group_by(rows.c.rule, rows.c.verdict)):
        counts[rule][verdict] = n
    items = []
    for rule in discover_rules():
        c = counts.get(rule.id, {})
        measured = sum(c.get(v, 0) for v in MEASURED_VERDICTS)
        held, partly, missed = c.get("held", 0), c.get("partly", 0), c.get("missed", 0)
        too_early, unmeasurable = c.get("too_early", 0), c.get("not_measurable", 0)
        items.append(RuleRead(id=rule.id, family=rule.family, description=rule.description, accuracy=RuleAccuracy(
            days=days, measured=measured, held=held, partly=partly, missed=missed, too_early=too_early,
            not_measurable=unmeasurable, held_share=round(held / measured, 3) if measured else None,
            statement=accuracy_statement(held, partly, missed, too_early, unmeasurable, days))))
    return RuleList(items=items, days=days)


_METRIC_WORDS = {"data_iops": "data volume IOPS", "data_throughput": "data volume throughput",
                 "raft_iops": "raft volume IOPS", "raft_throughput": "raft volume throughput",
                 "instance_iops": "instance EBS IOPS", "instance_throughput": "instance EBS throughput"}


def week_lines(db: Session, org_id: uuid.UUID, cluster_id: uuid.UUID, *, now: dt.datetime,
               limit: int = 5) -> list[str]:
    """The last 7 days' changes of a cluster in one line each, for the weekly email: what, who, the findings it
    resolved, and the largest measured move of a ceiling's peak use (the ledger, read as the org's job)."""
    job = Principal(user_id=None, org_id=org_id, role="viewer", via="job")
    ledger = cluster_changes(db, job, cluster_id, now=now, days=7, predict=False)
    out = []
    for e in ledger.items[:limit]:
        what = ", ".join(f"{c.key} {c.before_text} -> {c.after_text}" for c in e.changes[:3])
        more = f" (+{len(e.changes) - 3} more)" if len(e.changes) > 3 else ""
        target = f" on {e.entity_id}" if e.entity_id else ""
        line = f"{e.at:%Y-%m-%d}: {what}{more}{target} ({e.who})"
        resolved = sum(1 for f in e.findings if f.resolved_after_change)
        if e.findings:
            line += f"; {resolved} of {len(e.findings)} finding{'s' if len(e.findings) != 1 else ''} it addressed resolved"
        moved = [c for c in (e.effect.cells if e.effect else []) if c.before_peak_percent is not None
                 and c.after_peak_percent is not None]
        if moved:
            c = max(moved, key=lambda c: abs((c.before_peak_percent or 0) - (c.after_peak_percent or 0)))
            line += (f"; {_METRIC_WORDS[c.metric]} on {c.node}: peak {format_quantity(c.before_peak_percent or 0, '%')} -> "
                     f"{format_quantity(c.after_peak_percent or 0, '%')} of its ceiling (same hours a week earlier)")
        elif e.effect and e.effect.note:
            line += f"; {e.effect.note[0].lower()}{e.effect.note[1:].rstrip('.')}"
        out.append(line)
    return out
