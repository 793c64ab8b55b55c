"""Findings: what the advisor concluded about a cluster, its recommended changes, and the lifecycle actions."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any, Literal

from pydantic import Field

from headroom.domain.model import Ceiling, Change, Evidence, EvidenceSeries, FindingGroup, Impact, Option, Severity
from headroom.platform.schemas import Input, Instant, Output

FindingStatus = Literal["open", "acknowledged", "snoozed", "resolved"]
EntityKind = Literal["cluster", "tikv_node", "instance", "volume"]


class FindingSummary(Output):
    id: uuid.UUID
    cluster_id: uuid.UUID
    rule: str
    entity_kind: EntityKind
    entity_id: str
    severity: Severity
    status: FindingStatus
    title: str
    confidence: float
    dedup_key: str
    first_seen_at: dt.datetime
    last_seen_at: dt.datetime
    resolved_at: dt.datetime | None
    snoozed_until: dt.datetime | None
    severity_rank: int = Field(description="1 critical, 2 warning, 3 info (the list's default order).")
    impact_summary: str | None = Field(default=None, description="The impact in one line, as the detail has it.")
    headroom_before_pct: float | None = Field(default=None, description="100 × (1 − peak / limit) now.")
    headroom_after_pct: float | None = Field(default=None, description="The same after the recommended change.")
    headroom_gain_pct: float | None = Field(default=None, description="after − before, percentage points.")
    monthly_cost_delta_usd: float | None = Field(default=None, description="Negative: the change saves money.")
    impact_basis: Literal["headroom", "metric", "none"] = Field(
        default="none",
        description="What impact_score measures: headroom points gained, the impact metric's relative change (%), "
        "or nothing measurable.",
    )
    impact_score: float = Field(
        default=0.0,
        description="What sort=impact orders by: the headroom gained in points when known, else the relative "
        "change (%) of the impact metric, else 0.",
    )
    group: FindingGroup | None = Field(
        default=None,
        description="The findings that share this one's cause: the primary fix, the related findings and which "
        "of them the primary fix resolves in a what-if (null: the finding stands alone). Keys are dedup keys.",
    )


class SeverityCounts(Output):
    critical: int = 0
    warning: int = 0
    info: int = 0


class FindingList(Output):
    items: list[FindingSummary]
    total: int
    counts: SeverityCounts = Field(description="Findings by severity under the status and rule filters.")


class HistoryEntry(Output):
    at: dt.datetime
    action: str = Field(description="finding.opened, finding.acknowledged, finding.resolved, ...")
    actor_user_id: uuid.UUID | None = Field(description="Null when the advisor did it.")
    details: dict[str, Any]


class FindingPatchRef(Output):
    """A patch generated from the finding; once applied, findings after applied_at show the change's effect."""

    id: uuid.UUID
    created_at: dt.datetime
    applied_at: dt.datetime | None


class RelatedFinding(Output):
    """Another finding of the same group, as the finding's "related findings" block lists it."""

    id: uuid.UUID
    rule: str
    title: str
    severity: Severity
    status: FindingStatus
    dedup_key: str
    entity_kind: EntityKind
    entity_id: str
    role: Literal["primary", "fix", "related"] = Field(
        description="primary: its fix is the group's primary fix; fix: the primary fix also applies its changes; "
        "related: another view of the same cause."
    )
    resolved_by_primary: bool = Field(description="The what-if no longer finds it once the primary fix is applied.")


class FindingRead(FindingSummary):
    why: str
    evidence: Evidence | None = Field(
        description="Measures vs limits, window, share, episodes, forecasts, series to chart (null: none recorded)."
    )
    impact: Impact | None = Field(description="What the recommended changes buy (null: no estimate).")
    changes: list[Change] = Field(
        description="The recommended changes, in order, as the advisor made them: a tikv.toml key or an AWS "
        "attribute such as volume.iops, on an entity (for tikv: its node; none or a cluster: every node)."
    )
    options: list[Option] = Field(default_factory=list, description="Ranked alternative fixes.")
    sources: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    history: list[HistoryEntry]
    patches: list[FindingPatchRef] = Field(default_factory=list)
    related: list[RelatedFinding] = Field(
        default_factory=list, description="The other findings of its group, the primary fix first (empty: none)."
    )


class EvidenceChartRead(Output):
    """A finding's evidence series over its window, each in the one series shape the Metrics panels use too."""

    finding_id: uuid.UUID
    window_start: dt.datetime
    window_end: dt.datetime
    step_seconds: int
    series: list[EvidenceSeries]


class SnoozeBody(Input):
    until: Instant = Field(description="When the finding comes back (a future time, with a timezone).")


class AdviseQueued(Output):
    task_id: str
    job: str
    already_queued: bool = Field(
        default=False,
        description="True when a run of this cluster was already queued or running: its task id is returned and "
        "no new run is queued.",
    )


class WhatIfRequest(Input):
    """Proposed changes to try on the cluster: a volume's type, size, IOPS or throughput, an instance type, or a
    TiKV key (the same Change objects a finding's options carry)."""

    changes: list[Change] = Field(min_length=1, max_length=50)


class WhatIfCeiling(Output):
    """One sustained ceiling the changes move, with the last day's p99 against it. An instance has two: its own
    EBS limit and the sum of its attached volumes'; the smaller is in force (AWS: Amazon EBS-optimized instances)."""

    entity_kind: Literal["volume", "instance"]
    entity_id: str
    dimension: Literal["iops", "throughput"]
    unit: str
    ceiling: float = Field(description="The ceiling in force: a volume's own; an instance's smaller of its EBS limit "
                           "and its volumes' sum (the value of `in_force`).")
    ceiling_after: float = Field(description="The value of `in_force_after`.")
    in_force: Ceiling = Field(description="The ceiling in force before the change, with its kind and public source.")
    in_force_after: Ceiling = Field(description="The ceiling in force after the change, with its kind and source.")
    p99: float
    headroom_pct: float | None = Field(description="100 x (1 - p99 / the limit the I/O meets first) before the "
                                       "change: the ceiling, or a volume's instance's own EBS limit when smaller (the "
                                       "figure the findings predict).")
    headroom_after_pct: float | None
    instance_limit: float | None = Field(description="An instance's own EBS limit (its type's), before the change; for "
                                         "a volume, its instance's; null for a volume without a known instance.")
    instance_limit_after: float | None
    volumes_limit: float | None = Field(description="The sum of an instance's attached volumes' ceilings, before the "
                                        "change; null for a volume.")
    volumes_limit_after: float | None
    binding: Literal["instance", "volumes", "both"] | None = Field(
        description="Which of an instance's two ceilings is in force before the change (both: equal); null for a "
        "volume.")
    binding_after: Literal["instance", "volumes", "both"] | None


class WhatIfFinding(Output):
    """A finding of the advisor, identified by its dedup key."""

    dedup_key: str
    rule: str
    severity: Severity
    title: str
    finding_id: uuid.UUID | None = Field(
        default=None, description="The stored finding of this cluster with that key (null: not recorded, e.g. new)."
    )


class WhatIfCost(Output):
    """On-demand monthly cost of the cluster's volumes and instances before and after (AWS price lists)."""

    before_usd: float
    after_usd: float
    delta_usd: float
    unpriced: list[str] = Field(description="What has no price in the catalog (not counted as free).")


class WhatIfDays(Output):
    """Days from the end of the fitted history until a ceiling, with the forecast's interval (null: not within
    the horizon)."""

    days: float | None
    days_low: float | None = Field(description="Earliest: the band's upper edge reaches the ceiling.")
    days_high: float | None = Field(description="Latest: the band's lower edge reaches it (null: beyond the horizon).")


class WhatIfProjection(Output):
    """A stored projection whose ceiling the changes move: days until the ceiling before and after, read off the
    stored forecast band (no refit; both at the band's 6-hour step, so `before` can differ from the projection's
    own days by up to that step)."""

    entity_kind: Literal["volume", "instance", "node"]
    entity_id: str
    metric: Literal["iops", "mibps", "used_gib"]
    unit: str
    ceiling: float
    ceiling_after: float
    before: WhatIfDays
    after: WhatIfDays
    level_now: float = Field(description="The series' level at the end of its history (the fit's).")
    horizon_days: float
    interval: float = Field(description="The band's coverage, e.g. 0.9 for 5-95 %.")
    fitted_at: dt.datetime


class WhatIfRead(Output):
    """What the changes would do on the last day of the cluster's data."""

    window_start: dt.datetime
    window_end: dt.datetime
    ceilings: list[WhatIfCeiling]
    resolved: list[WhatIfFinding] = Field(description="Findings of today that the changes clear.")
    remaining: list[WhatIfFinding]
    new: list[WhatIfFinding] = Field(description="Findings the changes would cause.")
    projections: list[WhatIfProjection] = Field(
        description="The stored projections whose ceiling the changes move (the nearest ceiling after first); "
        "empty before the first daily fit."
    )
    cost: WhatIfCost
