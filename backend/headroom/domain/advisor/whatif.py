"""What-if: apply proposed changes to a snapshot's inventory and config, re-derive ceilings, advise again.

API (pure):
    parse_changes(document) -> list[Change]
        accepts {"changes": [...]}, a bare list of changes, or a findings document ({"findings": [...]}: every
        finding's `changes`, each inheriting its finding's entity)
    apply_changes(snapshot, changes) -> Snapshot
        aws `volume.type|iops|throughput|size` edit the volume; `instance.type` edits the instance and its
        nodes (vCPUs and memory from the catalog); tikv keys set the dotted key in the node's config (every node
        when the change names none). Series that describe the *old* configuration are dropped for the changed
        entities: BurstBalance and the Exceeded checks of a modified volume, EBSIOBalance% / EBSByteBalance% of
        a re-typed instance; a gp2 resized but still bursting gets its new bucket's BurstBalance replayed over the
        window (apply._resized_gp2_balance), so a grow too small still drains. Observed I/O stays as it was: demand that was clipped at the old ceiling is still
        shown at that level (a lower bound of what the new configuration will see).
    ceilings_report(snapshot) -> list[CeilingRow]     per volume and instance: ceiling, p99, headroom % (an
        instance's own EBS limit and its volumes' sum, each under its own name, and the smaller in force)
    monthly_cost(snapshot) -> MonthlyCost               on-demand EBS and EC2 per month, with what is not priced
    what_if(snapshot, changes, *, now=None) -> WhatIf  findings and ceilings before and after
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from pydantic import ValidationError

from headroom.domain.advisor.apply import VOLUME_KEYS, WhatIfError, apply_changes
from headroom.domain.advisor.context import Context
from headroom.domain.advisor.engine import advise
from headroom.domain.catalog import CatalogError, ebs_monthly_cost
from headroom.domain.advisor.finding import Finding
from headroom.domain.model import Ceiling, Change
from headroom.domain.physics.ceilings import IoDimension, headroom_pct, observed_p99, sustained
from headroom.domain.snapshot.schema import Snapshot

# apply_changes and its error live in advisor/apply.py (the grouping of findings uses them without the engine);
# they are re-exported here, where callers have always found them.
__all__ = [
    "VOLUME_KEYS",
    "CeilingRow",
    "WhatIf",
    "WhatIfError",
    "apply_changes",
    "ceilings_report",
    "parse_changes",
    "what_if",
]


def parse_changes(document: Any) -> list[Change]:
    """Read changes from {"changes": [...]}, a list, or a findings document (validated as domain Changes)."""
    if isinstance(document, dict) and isinstance(document.get("findings"), list):
        out: list[Change] = []
        for f in document["findings"]:
            ent = f.get("entity") if isinstance(f, dict) else None
            for c in (f.get("changes", []) if isinstance(f, dict) else []) or []:
                out.append(_one({**c, "entity": c.get("entity") or ent} if isinstance(c, dict) else c))
        return out
    items = document.get("changes") if isinstance(document, dict) else document
    if not isinstance(items, list):
        raise WhatIfError('expected {"changes": [...]}, a list of changes, or {"findings": [...]}')
    return [_one(c) for c in items]


def _one(raw: Any) -> Change:
    if not isinstance(raw, Change | dict):
        raise WhatIfError(f"a change must be an object, got {raw!r}")
    try:
        return Change.model_validate(raw)
    except ValidationError as exc:
        raise WhatIfError(f"bad change {raw!r}: {exc}") from None


def _rounded(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)


@dataclass(frozen=True)
class CeilingRow:
    """One entity's sustained ceiling and observed p99 in one dimension.

    An instance has two ceilings: its own EBS limit (the instance type's) and the sum of its attached volumes'
    ceilings; the one in force is the smaller (AWS: "Amazon EBS-optimized instances": an instance's EBS performance
    is bounded by the instance type's limits or the aggregate of its attached volumes, whichever is smaller,
    https://docs.aws.amazon.com/ebs/latest/userguide/ebs-optimized.html). `in_force` is the one in force, as the
    charts and the glance table show it (physics.ceilings: value, kind, source); for an instance `instance` and
    `volumes` keep each under its own name and `binding` says which is smaller. A volume's row keeps its own
    ceiling in force and names its instance's own EBS limit as `instance`: its headroom is against the smaller, the
    limit its I/O meets first (physics.ceilings.headroom_pct, the figure its findings predict).
    """

    entity_kind: str
    entity_id: str
    dimension: IoDimension
    unit: str
    in_force: Ceiling
    p99: float
    headroom_pct: float | None
    instance: Ceiling | None = None
    volumes: Ceiling | None = None
    binding: str | None = None  # "instance" | "volumes" | "both"

    @property
    def ceiling(self) -> float:
        """The value of the ceiling in force."""
        return self.in_force.value

    @property
    def instance_limit(self) -> float | None:
        """The instance's own EBS limit (a volume's: its instance's; None without one)."""
        return self.instance.value if self.instance is not None else None

    @property
    def volumes_limit(self) -> float | None:
        """Its attached volumes' limit together (None for a volume)."""
        return self.volumes.value if self.volumes is not None else None

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict (the numbers are the ceilings' values)."""
        return {
            "entity": {"kind": self.entity_kind, "id": self.entity_id},
            "dimension": self.dimension,
            "unit": self.unit,
            "ceiling": round(self.ceiling, 2),
            "in_force": self.in_force.model_dump(mode="json"),
            "p99": round(self.p99, 2),
            "headroom_pct": self.headroom_pct,
            "instance_limit": _rounded(self.instance_limit),
            "volumes_limit": _rounded(self.volumes_limit),
            "binding": self.binding,
        }


def _row(
    kind: str, eid: str, dim: IoDimension, in_force: Ceiling, values: np.ndarray[Any, Any],
    instance: Ceiling | None = None, volumes: Ceiling | None = None, binding: str | None = None,
) -> CeilingRow:
    p99 = observed_p99(values)
    return CeilingRow(
        kind, eid, dim, in_force.unit, in_force, p99, headroom_pct(p99, in_force.value),
        instance=instance, volumes=volumes, binding=binding,
    )


def ceilings_report(snapshot: Snapshot) -> list[CeilingRow]:
    """Return every volume's and instance's sustained ceilings next to the observed p99."""
    ctx = Context(snapshot)
    rows: list[CeilingRow] = []
    for vol in ctx.volumes:
        ceilings, view = ctx.volume_ceilings(vol.id), ctx.volume_io(vol.id)
        if ceilings is None or view is None:
            continue
        io: tuple[tuple[IoDimension, np.ndarray[Any, Any]], ...] = (
            ("iops", view.counted_iops), ("throughput", view.mibps))
        for side, series in io:
            # the volume's headroom is the advisor's own figure (Context.volume_headroom_pct), the one its findings
            # predict: its p99 against the smaller of its sustained ceiling and its instance's EBS limit
            in_force = sustained(ceilings[side])
            rows.append(CeilingRow("volume", vol.id, side, in_force.unit, in_force, observed_p99(series),
                                   ctx.volume_headroom_pct(vol.id, side, in_force.value),
                                   instance=ctx.volume_host_limit(vol.id, side)))
    for inst in ctx.instances:
        own = ctx.instance_ceilings(inst.id)
        view = ctx.instance_io(inst.id)
        if not own["iops"] or view is None:
            continue
        for dim, values in (("iops", view.counted_iops), ("throughput", view.mibps)):
            dimension: IoDimension = "iops" if dim == "iops" else "throughput"
            limit = sustained(own[dimension])
            volumes = ctx.attached_volumes_ceiling(inst.id, dimension)
            if volumes is None:
                rows.append(_row("instance", inst.id, dimension, limit, values, instance=limit))
                continue
            # the smaller is in force; equal within rounding: both bind (the instance's own is named)
            tol = 1e-9 * max(limit.value, volumes.value, 1.0)
            binding = "both" if abs(limit.value - volumes.value) <= tol else (
                "volumes" if volumes.value < limit.value else "instance")
            rows.append(_row("instance", inst.id, dimension, volumes if binding == "volumes" else limit, values,
                             instance=limit, volumes=volumes, binding=binding))
    return rows


@dataclass(frozen=True)
class MonthlyCost:
    """On-demand monthly cost of a snapshot's volumes and instances (AWS price lists; what has no price is named,
    never counted as free)."""

    volumes_usd: float
    instances_usd: float
    unpriced: tuple[str, ...]

    @property
    def total_usd(self) -> float:
        return self.volumes_usd + self.instances_usd


def monthly_cost(snapshot: Snapshot) -> MonthlyCost:
    """Price every volume (storage, provisioned IOPS and throughput) and every instance on demand for a month."""
    ctx = Context(snapshot)
    volumes = instances = 0.0
    unpriced: list[str] = []
    for vol in snapshot.volumes:
        try:
            volumes += ebs_monthly_cost(vol.type, vol.size_gib, vol.iops, vol.throughput_mibps,
                                        region=snapshot.cluster.region).total_usd
        except CatalogError:
            unpriced.append(f"volume {vol.id} ({vol.type})")
    for inst in snapshot.instances:
        limits = ctx.instance_limits(inst.id)
        if limits is None or limits.monthly_price_usd is None:
            unpriced.append(f"instance {inst.id} ({inst.type})")
        else:
            instances += limits.monthly_price_usd
    return MonthlyCost(volumes, instances, tuple(unpriced))


@dataclass(frozen=True)
class WhatIf:
    """Findings and ceilings before and after a set of changes."""

    changes: list[Change]
    snapshot_before: Snapshot
    snapshot_after: Snapshot
    findings_before: list[Finding]
    findings_after: list[Finding]
    ceilings_before: list[CeilingRow]
    ceilings_after: list[CeilingRow]

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON shape `headroom advise --what-if` prints under "what_if"."""
        before = {f.dedup_key for f in self.findings_before}
        after = {f.dedup_key for f in self.findings_after}
        after_rows = {(r.entity_kind, r.entity_id, r.dimension): r for r in self.ceilings_after}
        ceilings = []
        for r in self.ceilings_before:
            a = after_rows.get((r.entity_kind, r.entity_id, r.dimension))
            # A row moves when any of its ceilings does: a new instance type changes the instance's own limit even
            # where its volumes stay the smaller.
            if a is None or (a.ceiling, a.instance_limit, a.volumes_limit) == (
                r.ceiling, r.instance_limit, r.volumes_limit
            ):
                continue
            ceilings.append(
                {
                    **r.to_dict(),
                    "ceiling_after": round(a.ceiling, 2),
                    "in_force_after": a.in_force.model_dump(mode="json"),
                    "headroom_after_pct": a.headroom_pct,
                    "instance_limit_after": _rounded(a.instance_limit),
                    "volumes_limit_after": _rounded(a.volumes_limit),
                    "binding_after": a.binding,
                }
            )
        cost_before, cost_after = monthly_cost(self.snapshot_before), monthly_cost(self.snapshot_after)
        return {
            "changes": [c.model_dump(mode="json") for c in self.changes],
            "ceilings": ceilings,
            "cost": {
                "before_usd": round(cost_before.total_usd, 2),
                "after_usd": round(cost_after.total_usd, 2),
                "delta_usd": round(cost_after.total_usd - cost_before.total_usd, 2),
                "unpriced": sorted(set(cost_before.unpriced) | set(cost_after.unpriced)),
            },
            "resolved": sorted(before - after),
            "remaining": sorted(before & after),
            "new": sorted(after - before),
        }


def what_if(
    snapshot: Snapshot,
    changes: Sequence[Change],
    *,
    now: datetime | None = None,
    findings_before: Sequence[Finding] | None = None,
) -> WhatIf:
    """Apply changes, then return findings and ceilings before and after (`findings_before`: the advisor's answer
    on `snapshot` when the caller already has it)."""
    after = apply_changes(snapshot, changes)
    return WhatIf(
        changes=list(changes),
        snapshot_before=snapshot,
        snapshot_after=after,
        findings_before=list(findings_before) if findings_before is not None else advise(snapshot, now=now),
        findings_after=advise(after, now=now),
        ceilings_before=ceilings_report(snapshot),
        ceilings_after=ceilings_report(after),
    )
