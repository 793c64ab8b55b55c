"""The one limits resolver of the shell: the rule of headroom.domain.catalog.resolve fed with the account's stored
DescribeInstanceTypes answers (`instance_type_limits`) and, for a time in the past, the inventory as it was then.

Used by the snapshot builder (so the advisor judges by it), the nodes API, the metrics charts' reference lines
and the weekly email. Callers commit (nothing is written here).
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from headroom.domain.catalog.resolve import (
    DescribedType,
    ResolvedInstanceLimits,
    ResolvedVolumeLimits,
    described_source,
    resolve_instance_limits,
    resolve_volume_limits,
)
from headroom.domain.model import Ceiling
from headroom.domain.physics.ceilings import IoDimension, instance_ceilings, merge_segments, volume_ceilings
from headroom.inventory.models import Instance, InstanceTypeLimits, InventoryChange, Volume


def undo_changes(current: Mapping[str, Any], changes: Sequence[tuple[dt.datetime, str, Any, Any]],
                 ts: dt.datetime) -> dict[str, Any]:
    """An entity's attributes at `ts`: undo, newest first, every change observed after `ts`.

    `changes` are (observed_at, field, old, new). A change observed at t means the new value held from t on
    (the collector sees a change within one sweep of it happening: a minute late at most).
    """
    attrs = dict(current)
    for observed_at, name, old, _new in sorted(changes, key=lambda c: c[0], reverse=True):
        if observed_at > ts:
            attrs[name] = old
    return attrs


def described_types(db: Session, instance_types: Iterable[str]) -> dict[str, DescribedType]:
    """Return the stored DescribeInstanceTypes answers of these types (types never described are absent)."""
    names = sorted(set(instance_types))
    if not names:
        return {}
    rows = db.scalars(select(InstanceTypeLimits).where(InstanceTypeLimits.instance_type.in_(names)))
    return {r.instance_type: DescribedType(dict(r.entry), described_source(r.region, r.observed_at)) for r in rows}


def resolve_instance_types(db: Session, instance_types: Iterable[str]) -> dict[str, ResolvedInstanceLimits]:
    """Return the EBS limits of each instance type (catalog, else the stored answer, else unknown): one query."""
    names = set(instance_types)
    described = described_types(db, names)
    return {name: resolve_instance_limits(name, described.get(name)) for name in names}


def volume_limits_of(volume: Volume, *, region: str = "us-east-1") -> ResolvedVolumeLimits:
    """Return a stored volume's limits (catalog, with its provisioned IOPS / throughput)."""
    return resolve_volume_limits(volume.volume_type, volume.size_gib, volume.iops, volume.throughput_mibps,
                                 region=region)


# --- limits at a time: evidence before a gp2 -> gp3 change is judged against gp2's limits ---------------------


def attributes_at(db: Session, org_id: uuid.UUID, entity_kind: str, entity_id: str,
                  ts: dt.datetime) -> dict[str, Any] | None:
    """An instance's or volume's attributes as they were at `ts` (current row, changes after `ts` undone)."""
    current: dict[str, Any]
    if entity_kind == "instance":
        inst = db.scalar(select(Instance).where(Instance.org_id == org_id, Instance.instance_id == entity_id))
        if inst is None:
            return None
        current = {"instance_type": inst.instance_type}
    else:
        vol = db.scalar(select(Volume).where(Volume.org_id == org_id, Volume.volume_id == entity_id))
        if vol is None:
            return None
        current = {"volume_type": vol.volume_type, "size_gib": vol.size_gib, "iops": vol.iops,
                   "throughput_mibps": vol.throughput_mibps}
    rows = db.execute(select(InventoryChange.observed_at, InventoryChange.field, InventoryChange.old_value,
                             InventoryChange.new_value)
                      .where(InventoryChange.org_id == org_id, InventoryChange.entity_kind == entity_kind,
                             InventoryChange.entity_id == entity_id, InventoryChange.observed_at > ts)).all()
    return undo_changes(current, [(r[0], r[1], r[2], r[3]) for r in rows], ts)


@dataclass(frozen=True)
class LimitsAt:
    """An entity's limits at one time: `instance` for an instance, `volume` for a volume (the other is None)."""

    instance: ResolvedInstanceLimits | None = None
    volume: ResolvedVolumeLimits | None = None


def limits_at(db: Session, org_id: uuid.UUID, entity_kind: str, entity_id: str, ts: dt.datetime) -> LimitsAt | None:
    """Return the limits an instance or volume had at `ts` (None when the org has no such entity)."""
    attrs = attributes_at(db, org_id, entity_kind, entity_id, ts)
    if attrs is None:
        return None
    if entity_kind == "instance":
        itype = str(attrs["instance_type"])
        return LimitsAt(instance=resolve_instance_types(db, [itype])[itype])
    return LimitsAt(volume=resolve_volume_limits(
        str(attrs["volume_type"]), float(attrs["size_gib"]), attrs.get("iops"), attrs.get("throughput_mibps")))


# An entity whose ceilings are wanted: (kind "volume" | "instance", its AWS id, the role naming its ceilings).
EntityRole = tuple[str, str, str]


def _limits_of(kind: str, attrs: Mapping[str, Any], instance_limits: Mapping[str, ResolvedInstanceLimits]) -> LimitsAt:
    if kind == "instance":
        return LimitsAt(instance=instance_limits[str(attrs["instance_type"])])
    return LimitsAt(volume=resolve_volume_limits(
        str(attrs["volume_type"]), float(attrs["size_gib"]), attrs.get("iops"), attrs.get("throughput_mibps")))


def ceilings_over_time_many(db: Session, org_id: uuid.UUID, entities: Sequence[EntityRole], start: dt.datetime,
                            end: dt.datetime) -> dict[EntityRole, dict[IoDimension, list[Ceiling]]]:
    """The IOPS and MiB/s ceilings of each volume (ids prefixed by its role) or instance over [start, end), each
    piece in force where the inventory said so (an Elastic Volumes change or an instance resize splits them).

    Four queries whatever the number of entities: their current rows (instances, volumes), their changes since
    `start`, and the instance types' stored DescribeInstanceTypes answers."""
    wanted = list(dict.fromkeys(entities))
    ids = {kind: sorted({e for k, e, _ in wanted if k == kind}) for kind in ("instance", "volume")}
    current: dict[tuple[str, str], dict[str, Any]] = {}
    if ids["instance"]:
        # the columns the limits need, not the whole rows (what a chart's request pays for each node)
        for instance_id, instance_type in db.execute(select(Instance.instance_id, Instance.instance_type).where(
                Instance.org_id == org_id, Instance.instance_id.in_(ids["instance"]))):
            current[("instance", instance_id)] = {"instance_type": instance_type}
    if ids["volume"]:
        for volume_id, volume_type, size_gib, iops, throughput_mibps in db.execute(
                select(Volume.volume_id, Volume.volume_type, Volume.size_gib, Volume.iops, Volume.throughput_mibps)
                .where(Volume.org_id == org_id, Volume.volume_id.in_(ids["volume"]))):
            current[("volume", volume_id)] = {"volume_type": volume_type, "size_gib": size_gib, "iops": iops,
                                              "throughput_mibps": throughput_mibps}
    changes: dict[tuple[str, str], list[tuple[dt.datetime, str, Any, Any]]] = {key: [] for key in current}
    if current:
        rows = db.execute(select(InventoryChange.entity_kind, InventoryChange.entity_id, InventoryChange.observed_at,
                                 InventoryChange.field, InventoryChange.old_value, InventoryChange.new_value)
                          .where(InventoryChange.org_id == org_id, InventoryChange.observed_at > start,
                                 InventoryChange.entity_kind.in_(list({k for k, _ in current})),
                                 InventoryChange.entity_id.in_(list({e for _, e in current})))).all()
        for kind, entity_id, observed_at, name, old, new in rows:
            if (kind, entity_id) in changes:
                changes[(kind, entity_id)].append((observed_at, name, old, new))
    # Every instance type the segments can name: the current ones and those the changes undo back to.
    types = {str(a["instance_type"]) for (k, _), a in current.items() if k == "instance"}
    types |= {str(old) for (k, _), cs in changes.items() if k == "instance" for _, name, old, _ in cs
              if name == "instance_type"}
    instance_limits = resolve_instance_types(db, types)

    out: dict[EntityRole, dict[IoDimension, list[Ceiling]]] = {}
    for kind, entity_id, role in wanted:
        pieces_of: dict[IoDimension, list[Ceiling]] = {"iops": [], "throughput": []}
        out[(kind, entity_id, role)] = pieces_of
        attrs_now = current.get((kind, entity_id))
        if attrs_now is None:
            continue
        log = changes[(kind, entity_id)]
        bounds = [start, *sorted({c[0] for c in log if c[0] < end}), end]
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
            try:
                lim = _limits_of(kind, undo_changes(attrs_now, log, lo), instance_limits)
            except (KeyError, TypeError, ValueError):  # an inventory change log the undo cannot read
                continue
            if kind == "volume" and lim.volume is not None and lim.volume.limits is not None:
                pieces = volume_ceilings(lim.volume.limits, role, lo, hi)
            elif kind == "instance" and lim.instance is not None:
                pieces = instance_ceilings(lim.instance, lo, hi)
            else:
                continue
            for dim, cs in pieces.items():
                pieces_of[dim] += cs
        out[(kind, entity_id, role)] = {dim: merge_segments(cs) for dim, cs in pieces_of.items()}
    return out


def ceilings_over_time(db: Session, org_id: uuid.UUID, kind: str, entity_id: str, role: str, start: dt.datetime,
                       end: dt.datetime) -> dict[IoDimension, list[Ceiling]]:
    """The IOPS and MiB/s ceilings of one volume or instance over [start, end) (ceilings_over_time_many)."""
    return ceilings_over_time_many(db, org_id, [(kind, entity_id, role)], start, end)[(kind, entity_id, role)]
