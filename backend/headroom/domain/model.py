"""The shared vocabulary of the domain, one of each (pure: pydantic v2, frozen, JSON-ready; no shell imports)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

# --- Entities and changes

EntityKind = Literal["volume", "instance", "node", "cluster"]
ChangeTarget = Literal["tikv", "aws"]
ChangeValue = str | int | float | bool | list[Any] | dict[str, Any]


class EntityRef(BaseModel):
    """What a finding or a change is about; the optional fields give its context (node, instance, volume).

    A TiKV node is named by its snapshot id (`node`, e.g. the TiUP instance name or the store address) and,
    once known, its status address (what SET CONFIG and the patcher address it by).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: EntityKind
    id: str
    node: str | None = Field(default=None, description="TiKV node id, when the entity belongs to one.")
    instance_id: str | None = None
    volume_id: str | None = None
    status_address: str | None = Field(default=None, description="TiKV status address (SET CONFIG).")

    def label(self) -> str:
        """Return `kind id`, e.g. `volume vol-0abc`."""
        return f"{self.kind} {self.id}"

    def tikv_node(self) -> str | None:
        """Return the TiKV node this entity pins down (status address, else node id), or None for every node."""
        return self.status_address or self.node or (self.id if self.kind == "node" else None)

    def volume(self) -> str | None:
        """Return the EBS volume id this entity names, if any."""
        return self.volume_id or (self.id if self.kind == "volume" else None)

    def instance(self) -> str | None:
        """Return the EC2 instance id this entity names, if any."""
        return self.instance_id or (self.id if self.kind == "instance" else None)


class Change(BaseModel):
    """One proposed change: a tikv.toml key as TiKV spells it, or an AWS action.attribute, on one entity.

    For `target="tikv"`, `key` is the dotted tikv.toml key and `proposed` the value as written in tikv.toml
    (e.g. "4GiB"); the change applies to `entity.tikv_node()`, or to every TiKV when that is None. For
    `target="aws"`, `key` names the action and attribute (`volume.type`, `volume.iops`, `volume.throughput`,
    `volume.size`, `volume.create`, `volume.raid0-stripes`, `instance.type`) and `entity` the volume or instance.
    `entity` None means "the entity of the finding it belongs to" until the finding fills it in.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    target: ChangeTarget
    key: str
    entity: EntityRef | None = None
    current: ChangeValue | None = None
    proposed: ChangeValue | None
    online: bool | None = Field(
        default=None, description="Applies without a restart (SET CONFIG, modify-volume); None: not stated."
    )
    reason: str = ""

    def applies_to(self) -> str | None:
        """Return what the change is applied to: its TiKV node (None: every node), else its volume or instance."""
        if self.entity is None:
            return None
        if self.target == "tikv":
            return self.entity.tikv_node()
        return self.entity.volume() or self.entity.instance()


# --- Findings

Severity = Literal["critical", "warning", "info"]
# The one order of severities, most severe first: lists, sorts, counts and the API's severity_rank read it.
SEVERITIES: tuple[Severity, ...] = get_args(Severity)
# 1 = most severe (the API's `severity_rank`); every sort orders by it.
SEVERITY_RANK: Mapping[str, int] = {severity: rank for rank, severity in enumerate(SEVERITIES, 1)}


def severity_rank(severity: str) -> int:
    """Return 1 for critical, 2 for warning, 3 for info, and after them anything unknown."""
    return SEVERITY_RANK.get(severity, len(SEVERITIES) + 1)


CeilingKind = Literal["sustained", "burst", "provisioned", "configured"]
CEILING_KINDS: tuple[CeilingKind, ...] = get_args(CeilingKind)


class _FindingPart(BaseModel):
    # Fields with a default are always present in the JSON: the generated client types them as required.
    model_config = ConfigDict(extra="forbid", frozen=True, json_schema_serialization_defaults_required=True)


class Ceiling(_FindingPart):
    """A limit of a volume, an instance or a store: its value, what kind of limit it is, when it is in force and
    where the number comes from. Every surface that shows a ceiling (charts, the glance table, findings, what-if,
    the email, alert rules) shows one of these, made by `headroom.domain.physics.ceilings`.

    Kinds: `sustained` holds indefinitely (a gp2 or st1/sc1 baseline, an instance's EBS baseline); `burst` holds
    only while a credit bucket has credits (gp2 burst IOPS, st1/sc1 burst throughput, an instance's 30-minute EBS
    maximum); `provisioned` is what the volume was bought with (gp3, io1, io2); `configured` is a TiKV or PD
    setting (flow control's pending-compaction limits, PD's space ratios).
    """

    id: str = Field(description='Stable within its chart, e.g. "data_baseline_iops".')
    label: str
    value: float
    unit: str
    kind: CeilingKind
    valid_from: datetime | None = Field(default=None, description="In force from (null: since before the window).")
    valid_to: datetime | None = Field(default=None, description="In force until (null: still in force).")
    source: str = Field(description="The public document (with its link), the EC2 API answer, or the setting.")


class Measure(_FindingPart):
    """One observed number and, when it is compared to one, the limit (same unit).

    When the limit is a volume's or an instance's ceiling, `ceiling` is that ceiling as the charts and the glance
    table show it (physics.ceilings: its kind, when it is in force, its public source) and `limit` its value.
    """

    label: str
    value: float
    unit: str
    limit: float | None = None
    limit_label: str | None = None
    ceiling: Ceiling | None = Field(
        default=None, description="The volume's or instance's ceiling `limit` is (null: a threshold or a setting)."
    )
    statistic: str | None = Field(default=None, description='How it was taken: "p95", "max", "share", ...')
    source: str | None = Field(default=None, description="Where the limit comes from: a public document with its link, or a Headroom threshold page.")

    @property
    def ratio(self) -> float | None:
        """Return value / limit, or None without a positive limit."""
        return self.value / self.limit if self.limit else None


class ReferenceLine(_FindingPart):
    """A horizontal line on a chart: a ceiling (with its kind and public source, so no chart guesses where a
    number comes from), or a threshold."""

    value: float
    label: str
    unit: str
    kind: CeilingKind | None = Field(default=None, description="For a ceiling: sustained, burst, provisioned or configured.")
    source: str | None = Field(default=None, description="Where the number comes from (public document with its link).")


class SeriesRef(_FindingPart):
    """A series to chart: a registry metric of the snapshot, or a derived view (`derived.*`, domain/advisor/context.py)."""

    entity_kind: Literal["volume", "instance", "node"]
    entity_id: str
    metric: str
    labels: dict[str, str] = Field(default_factory=dict)
    label: str | None = None
    reference_lines: list[ReferenceLine] = Field(default_factory=list)


# --- Series

SeriesEntityKind = Literal["volume", "instance", "node"]
Statistic = Literal["avg", "max", "min"]


class Series(_FindingPart):
    """One series of points as every chart receives it (the Metrics panels, a finding's evidence): epoch seconds
    and one value each, of one entity, in one unit. A missing value is None (a gap), never 0; a distance between
    two points longer than `step_seconds` is a gap too."""

    id: str = Field(description="Stable within its chart, e.g. \"data_read_iops\".")
    label: str = Field(description="What the series is, without its entity (see entity_name).")
    unit: str
    entity_kind: SeriesEntityKind = Field(description="What the series is of: a volume, an instance or a TiKV store.")
    entity_id: str = Field(description="The volume id, the instance id, or the store's id (its address).")
    entity_name: str = Field(
        description='A short name of the entity for a legend: a store\'s address, a volume or instance with the store '
        'it serves ("10.0.1.14:20160 vol-0abc"); the entity id when no single store is known.'
    )
    statistic: Statistic = Field(
        description="Which aggregate of each step's samples a value is: a 1-minute point is one sample (avg); at "
        "5-minute or hourly steps the longest write stall and the lowest credit balance, else the average."
    )
    step_seconds: int = Field(
        description="Seconds one point covers: the resolution, the series' own period when longer (AWS/EC2 sends "
        "5-minute points on basic monitoring), or the M4 span when the series was cut. A longer distance between "
        "two points is a gap."
    )
    span_seconds: int | None = Field(
        default=None,
        description="The M4 span (seconds) when the series was cut to a point budget: of each span its first, "
        "lowest, highest and last point (docs/metrics-downsampling.md); null when it is whole.",
    )
    t: list[int] = Field(description="Point starts, epoch seconds (UTC), ascending.")
    values: list[float | None] = Field(description="One per t; null marks a gap (no sample), never 0.")


class EvidenceSeries(Series):
    """A series a finding's evidence charts: the points of the SeriesRef the advisor named, over the evidence
    window, with the reference lines (ceilings, thresholds) it was judged against."""

    metric: str = Field(description="A metric registry name or a derived.* view (domain/advisor/context.py).")
    reference_lines: list[ReferenceLine] = Field(default_factory=list)
    found: bool = Field(default=True, description="False when the store has no points of this series in the window.")
    in_force: list[float | None] | None = Field(
        default=None,
        description="For a volume's or an instance's IOPS or MiB/s: the ceiling in force at each point of `t` (a "
        "burst figure while credits last, else the sustained one), as the advisor and the glance table judge it "
        "(headroom.domain.physics.ceilings.in_force); null for any other series.",
    )


ForecastKind = Literal["burst_empty", "refill", "ceiling"]


class Forecast(_FindingPart):
    """A projection a rule made: when a credit bucket empties, how long it takes to refill, when growth reaches
    a ceiling. Times are UTC; `within_seconds` counts from the evidence's end (the advice run's `now`).

    - `burst_empty`: the bucket empties in `within_seconds` (0: it is empty now; None: not at this demand), at
      `at` (band `earliest` to `latest`, `latest` None: never at the band's low demand), then serves `value`
      `unit` (its baseline); `demand` is the demand assumed and `balance_pct` the balance now.
    - `refill`: from empty (or from now) back to full in `within_seconds` at the off-peak `demand`.
    - `ceiling`: `label` (e.g. "sustained IOPS ceiling", `value` `unit`) is reached in `within_seconds`.
    """

    kind: ForecastKind
    label: str | None = Field(default=None, description="What is projected, e.g. the balance metric.")
    within_seconds: float | None = Field(
        default=None, description="From the evidence's end; null: not at all."
    )
    at: datetime | None = None
    earliest: datetime | None = Field(default=None, description="The band's earliest time (high demand).")
    latest: datetime | None = Field(
        default=None, description="The band's latest time (low demand); null: never."
    )
    value: float | None = Field(
        default=None, description="burst_empty: the baseline served after; ceiling: it."
    )
    unit: str
    demand: float | None = Field(default=None, description="The demand the projection assumes, in `unit`.")
    balance_pct: float | None = Field(default=None, description="The credit balance now (%).")
    method: str = Field(description="How it was computed.")
    source: str | None = Field(default=None, description="The public document whose rules it applies (with its link).")


class NodeEvidence(_FindingPart):
    """One store's own reading behind a cluster-level config finding: what it showed and what it alone needs.

    TiUP's `server_configs.tikv` and TiDB Operator's `spec.tikv.config` set a key for every store, so the advisor
    states one finding per group of like stores (docs/thresholds/cluster-config.md) and keeps each store's
    evidence here.
    """

    node: str
    instance_type: str
    severity: Severity
    title: str = Field(description="What the rule said about this store alone.")
    measures: list[Measure] = Field(default_factory=list)
    share_of_window: float | None = None
    longest_run_minutes: float | None = None
    needs: dict[str, ChangeValue] = Field(
        default_factory=dict, description="tikv.toml key -> the value this store alone would get."
    )


class Evidence(_FindingPart):
    """Observed numbers vs limits, the window, how often and how long the condition held, forecasts, what to chart."""

    window_start: datetime
    window_end: datetime
    step_seconds: int
    condition: str = Field(description='The condition tested, e.g. "counted IOPS >= 90% of 3,000 IOPS".')
    measures: list[Measure] = Field(default_factory=list)
    threshold_pct: float | None = None
    share_of_window: float | None = Field(default=None, description="Fraction (0-1) of points where it held.")
    longest_run_minutes: float | None = None
    episodes: int | None = Field(default=None, description="Separate runs of the condition in the window.")
    corroboration: list[str] = Field(default_factory=list)
    forecasts: list[Forecast] = Field(default_factory=list)
    series: list[SeriesRef] = Field(default_factory=list)
    per_node: list[NodeEvidence] = Field(
        default_factory=list, description="A cluster-level config finding: each store's own evidence."
    )


class Impact(_FindingPart):
    """What the recommended changes buy: headroom on the binding limit and the monthly cost delta (USD)."""

    summary: str
    metric: str | None = Field(default=None, description='The limit, e.g. "sustained IOPS ceiling".')
    unit: str | None = None
    before: float | None = None
    after: float | None = None
    headroom_before_pct: float | None = Field(default=None, description="100 × (1 − peak / limit) now.")
    headroom_after_pct: float | None = Field(default=None, description="The same after the change.")
    monthly_cost_before_usd: float | None = None
    monthly_cost_after_usd: float | None = None
    monthly_cost_delta_usd: float | None = None
    price_region: str | None = Field(
        default=None, description="The AWS region whose on-demand prices the costs use (prices differ by region)."
    )


class Option(_FindingPart):
    """One way to fix a finding (e.g. "gp3 at 6,000 IOPS"), with its changes and impact."""

    label: str
    changes: list[Change]
    impact: Impact
    notes: list[str] = Field(default_factory=list)


class FindingGroup(_FindingPart):
    """Findings that share one cause (domain/advisor/groups.py; the rule is docs/thresholds/finding-groups.md):
    the primary fix, the related findings, and which of them the primary fix resolves in a what-if (its changes
    applied to the snapshot's inventory and config, the rules run again). Every member carries the same group."""

    id: str = Field(description="Stable across runs: derived from the members' dedup keys.")
    cause: str = Field(description='What the members share, e.g. "disk I/O of node tikv-1".')
    primary: str = Field(description="Dedup key of the finding whose fix is the primary fix.")
    fix: list[str] = Field(
        description="Dedup keys of the findings whose changes make up the primary fix (the primary first): the "
        "same rule's advice on every member it names."
    )
    fix_label: str = Field(description='The primary fix in words, e.g. "gp3 at 3,000 IOPS / 125 MiB/s".')
    members: list[str] = Field(description="Every member's dedup key, the primary first.")
    related: list[str] = Field(description="The members that are not part of the primary fix.")
    resolves: list[str] = Field(description="Members the what-if no longer finds once the primary fix is applied.")
    remaining: list[str] = Field(description="Members the what-if still finds after the primary fix.")
    measured: bool = Field(
        description="False when the primary fix could not be simulated (resolves then lists only what it fixes)."
    )
    summary: str = Field(description='E.g. "Primary fix: gp3 at 3,000 IOPS resolves 2 of 3".')
