"""The cluster snapshot: everything the advisor needs about one TiKV cluster over one window (pydantic v2).

A snapshot is plain data: inventory (nodes, EC2 instances, EBS volumes), each node's effective TiKV config as
TiKV's status endpoint returns it (`GET :20180/config`), and compact time series (start + step + values,
`null` for a gap). Series names come from `headroom.domain.snapshot.registry.REGISTRY`. The published JSON Schema
(docs/snapshot.schema.json) is generated from these models; docs/snapshot.md explains the format.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    PrivateAttr,
    field_validator,
    model_validator,
)

from headroom.domain.snapshot.registry import REGISTRY

SCHEMA_VERSION: Literal[1] = 1

EntityKind = Literal["volume", "instance", "node"]
VolumeRole = Literal["data", "raft", "other"]
DeploymentKind = Literal["tiup", "operator", "manual", "unknown"]
VolumeType = Literal["gp2", "gp3", "io1", "io2", "st1", "sc1", "standard"]

REDACTED = "<redacted>"
# Config keys whose values may be secrets or point at key material; they never leave the cluster.
_SECRET_KEY = re.compile(
    r"(password|passwd|secret|token|credential|access-key|private-key|key-path|cert-path|ca-path)"
)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Source(_Model):
    """Where the snapshot came from."""

    kind: Literal["collected", "simulated", "demo"] = Field(description="How the data was obtained.")
    tool: str = Field(default="headroom", description="The program (and version) that wrote the file.")
    scenario: str | None = Field(default=None, description="Scenario name when simulated.")
    seed: int | None = Field(default=None, description="Random seed when simulated.")


class Cluster(_Model):
    """The TiKV cluster the snapshot describes."""

    name: str = Field(min_length=1)
    id: str | None = Field(
        default=None,
        min_length=1,
        max_length=64,
        description="A stable id of the cluster (Headroom's cluster UUID). Findings' dedup keys use it, so "
        "renaming the cluster keeps them; without it they use the name.",
    )
    tikv_version: str = Field(description='TiKV version of the cluster, e.g. "v8.5.1".')
    deployment: DeploymentKind = Field(
        description="How the cluster is deployed: TiUP, TiDB Operator, or by hand."
    )
    region: str = Field(default="us-east-1", description="AWS region of the instances and volumes.")


class Window(_Model):
    """The time window the series cover: [start, end) at one step."""

    start: AwareDatetime
    end: AwareDatetime
    step_seconds: int = Field(gt=0, description="Seconds between points (60 for 1-minute CloudWatch data).")

    @model_validator(mode="after")
    def _ordered(self) -> Window:
        if self.end <= self.start:
            raise ValueError("end must be after start")
        return self

    @property
    def points(self) -> int:
        """Return how many steps fit in the window."""
        return int((self.end - self.start).total_seconds()) // self.step_seconds


class DescribedEbsLimits(_Model):
    """An instance type's EBS-optimized limits as the account's DescribeInstanceTypes returned them (EbsInfo)."""

    baseline_bandwidth_mbps: float = Field(gt=0, description="BaselineBandwidthInMbps (megabits per second).")
    max_bandwidth_mbps: float = Field(gt=0, description="MaximumBandwidthInMbps (megabits per second).")
    baseline_iops: float = Field(gt=0, description="BaselineIops (16 KiB I/O).")
    max_iops: float = Field(gt=0, description="MaximumIops (16 KiB I/O).")
    source: str = Field(description="Where and when the answer was observed.")


class Instance(_Model):
    """One EC2 instance that hosts one or more TiKV nodes."""

    id: str = Field(description='EC2 instance id, e.g. "i-0abc...".')
    type: str = Field(description='EC2 instance type, e.g. "m6i.2xlarge".')
    vcpus: int = Field(gt=0)
    memory_gib: float = Field(gt=0)
    availability_zone: str | None = None
    name: str | None = Field(default=None, description="The Name tag, if any.")
    ebs_limits: DescribedEbsLimits | None = Field(
        default=None,
        description="The type's EBS limits from DescribeInstanceTypes, for a type Headroom's catalog lacks "
        "(the catalog wins when it has the type; headroom.domain.catalog.resolve).",
    )


class Volume(_Model):
    """One EBS volume and what it is used for."""

    id: str = Field(description='EBS volume id, e.g. "vol-0abc...".')
    type: VolumeType
    size_gib: float = Field(gt=0)
    iops: int | None = Field(
        default=None, ge=0, description="Provisioned IOPS (gp3, io1, io2); null otherwise."
    )
    throughput_mibps: float | None = Field(
        default=None, ge=0, description="Provisioned MiB/s (gp3); null otherwise."
    )
    instance_id: str | None = Field(default=None, description="Instance the volume is attached to.")
    device: str | None = Field(default=None, description='Device name on the instance, e.g. "/dev/nvme1n1".')
    role: VolumeRole = Field(description="data (KV RocksDB), raft (Raft Engine / raftdb) or other.")
    raid_group: str | None = Field(
        default=None,
        description="Name of the RAID 0 array the volume is a stripe of (e.g. md0); null if none.",
    )


class Node(_Model):
    """One TiKV instance (store), with the effective config it reports."""

    id: str = Field(description="Stable node name, unique in the snapshot (e.g. the TiUP instance name).")
    store_id: int | None = Field(default=None, description="PD store id.")
    address: str = Field(description='Server (gRPC) address, e.g. "10.0.1.5:20160".')
    status_address: str = Field(description='Status address, e.g. "10.0.1.5:20180".')
    instance_id: str = Field(description="EC2 instance the node runs on.")
    instance_type: str
    vcpus: int = Field(gt=0, description="CPUs the node can use (the host's unless limited).")
    memory_gib: float = Field(gt=0, description="Memory the node can use (the host's unless limited).")
    tikv_version: str
    host: str = Field(
        description="Host key: nodes with the same host share one machine (and its EBS limits)."
    )
    data_volume_ids: list[str] = Field(default_factory=list, description="Volumes under the data dir.")
    raft_volume_ids: list[str] = Field(
        default_factory=list, description="Volumes under the Raft Engine dir when it is on its own volume(s)."
    )
    config: dict[str, Any] = Field(
        default_factory=dict,
        description="Effective TiKV config, nested with kebab-case keys as GET /config returns it. "
        "Secret-looking values are replaced by <redacted>.",
    )

    @field_validator("config")
    @classmethod
    def _redact(cls, value: dict[str, Any]) -> dict[str, Any]:
        return redact_config(value)

    def config_value(self, dotted_key: str, default: Any = None) -> Any:
        """Return a config value by dotted key, e.g. "storage.block-cache.capacity"."""
        return config_get(self.config, dotted_key, default)


class Entity(_Model):
    """What a series describes."""

    kind: EntityKind
    id: str = Field(description="Volume id, instance id or node id.")


class _ReadOnlyValues:
    """A series' values as one read-only float array; equal when the values are (NaN equal to NaN)."""

    __slots__ = ("array", "source")

    def __init__(self, values: list[float | None], array: NDArray[np.float64] | None = None) -> None:
        self.source = values  # the list it was read from (a model_copy with new values must not reuse it)
        # numpy reads None as NaN; `array` is that array already built (Series.from_array)
        self.array: NDArray[np.float64] = np.array(values, dtype=np.float64) if array is None else array
        self.array.flags.writeable = False

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _ReadOnlyValues) and bool(np.array_equal(self.array, other.array, equal_nan=True))

    __hash__ = None  # type: ignore[assignment]


class Series(_Model):
    """One compact time series at its own period: values at start, start + step, ...; null marks a gap."""

    entity: Entity
    metric: str = Field(
        description="Canonical name from the metric registry (headroom.domain.snapshot.registry).",
        json_schema_extra={"enum": list[JsonValue](sorted(REGISTRY))},
    )
    unit: str
    statistic: str = Field(
        description="CloudWatch statistic (Sum, Average, Minimum, Maximum) or rate/gauge/p99/count."
    )
    labels: dict[str, str] = Field(
        default_factory=dict, description="Extra labels, e.g. device for node_exporter."
    )
    start: AwareDatetime = Field(
        description="Time of the first value: the window's start, or the boundary of the series' own period at or "
        "before it."
    )
    step_seconds: int = Field(
        gt=0,
        description="The series' own period: 60 for AWS/EBS, 300 for AWS/EC2 on basic monitoring and for the EC2 "
        "balances; it may differ from the window's step (readers align series: docs/series-alignment.md).",
    )
    values: list[float | None]
    _array: _ReadOnlyValues = PrivateAttr()

    def model_post_init(self, context: Any, /) -> None:
        """Keep the values as a read-only float array (NaN for gaps) too: the analysis reads whole arrays, and
        converting the list once here (when the snapshot is loaded, built or simulated) spares every reader."""
        self._array = _ReadOnlyValues(self.values)

    @classmethod
    def from_array(cls, values: NDArray[np.float64], **fields: Any) -> Series:
        """Return the series of these values (NaN for gaps), validated as any series: what a reader of whole
        arrays builds (the store's grids), without converting the values back from the list."""
        gaps = np.isnan(values)
        at = np.flatnonzero(gaps)
        if at.size * 4 > values.size:  # mostly gaps: one pass over objects
            cells = values.astype(object)  # Python floats, as tolist() gives
            cells[gaps] = None
            listed: list[float | None] = cells.tolist()
        else:
            listed = values.tolist()
            for i in at.tolist():
                listed[i] = None
        array = np.array(values, dtype=np.float64)  # a copy the caller cannot change
        array[gaps] = np.nan  # the NaN numpy reads None as
        # Every check but the values' (floats and None by construction) on a series without them, then the values
        shell = cls.model_validate({**fields, "values": []})
        series = shell.model_copy(update={"values": listed})
        series._array = _ReadOnlyValues(listed, array)
        return series

    @property
    def array(self) -> NDArray[np.float64]:
        """Return the values as a read-only float64 array, NaN for gaps."""
        private = self.__pydantic_private__
        if not private or "_array" not in private or private["_array"].source is not self.values:
            self._array = _ReadOnlyValues(self.values)  # built by model_construct, or copied with new values
        return self._array.array

    @model_validator(mode="after")
    def _known_metric(self) -> Series:
        spec = REGISTRY.get(self.metric)
        if spec is None:
            raise ValueError(f"unknown metric {self.metric!r} (not in headroom.domain.snapshot.registry.REGISTRY)")
        if spec.entity != self.entity.kind:
            raise ValueError(f"metric {self.metric!r} describes a {spec.entity}, not a {self.entity.kind}")
        if spec.unit != self.unit:
            raise ValueError(f"metric {self.metric!r} has unit {spec.unit!r}, not {self.unit!r}")
        return self

    def timestamps(self) -> list[datetime]:
        """Return the timestamp of every value."""
        step = timedelta(seconds=self.step_seconds)
        return [self.start + i * step for i in range(len(self.values))]


class ForecastBand(_Model):
    """A forecast path to draw and read: times with the point forecast and its band (same length)."""

    t: list[AwareDatetime]
    point: list[float]
    low: list[float]
    high: list[float]

    @model_validator(mode="after")
    def _same_length(self) -> ForecastBand:
        if not len(self.t) == len(self.point) == len(self.low) == len(self.high):
            raise ValueError("band: t, point, low and high must have the same length")
        return self


class ProjectedCeiling(_Model):
    """One ceiling of one volume, instance or node projected from weeks of hourly history (the projections
    job: headroom.domain.forecast.capacity). Advice reads it to warn before a ceiling is reached."""

    entity: Entity
    metric: Literal["iops", "mibps", "used_gib"]
    unit: str
    ceiling: float = Field(gt=0)
    ceiling_source: str
    method: str = Field(description="ets-weekly, ets-daily, holt, theil-sen or constant (docs/projections.md).")
    history_hours: int = Field(ge=0)
    level_now: float
    growth_percent_per_week: float | None = None
    days: float | None = Field(description="Days from the end of the history until the ceiling; null: not within "
                                           "the horizon.")
    days_low: float | None = None
    days_high: float | None = None
    horizon_days: float = Field(gt=0)
    interval: float = Field(gt=0, lt=1)
    fitted_at: AwareDatetime
    history_end: AwareDatetime
    band: ForecastBand


LookbackDays = Literal[14, 32, 93]


class LookbackPeak(_Model):
    """One volume's or instance's I/O peak over the lookback, read from the store's 5-minute and hourly rollups
    (counted IOPS and MiB/s derived as the advisor derives them: headroom.domain.snapshot.lookback)."""

    entity: Entity
    history_days: float = Field(ge=0, description="Days of history held for it, at most the lookback.")
    peak_iops: float | None = Field(default=None, ge=0, description="Highest counted IOPS over the lookback.")
    peak_iops_at: AwareDatetime | None = None
    peak_mibps: float | None = Field(default=None, ge=0, description="Highest MiB/s over the lookback.")
    peak_mibps_at: AwareDatetime | None = None


class Lookback(_Model):
    """The history a change that removes capacity is judged on (AWS Compute Optimizer's look-back period:
    14 days by default, 32 or 93 on request; docs/reference/lookback.md)."""

    days: LookbackDays = Field(default=14, description="The lookback the organisation or cluster asked for.")
    end: AwareDatetime = Field(description="The end of the lookback (the advisor's window end).")
    peaks: list[LookbackPeak] = Field(default_factory=list)


class Snapshot(_Model):
    """A cluster snapshot: inventory, configs and time series over one window."""

    schema_version: Literal[1] = Field(
        description="Format version; readers refuse versions they do not know."
    )
    generated_at: AwareDatetime
    source: Source
    cluster: Cluster
    window: Window
    nodes: list[Node]
    instances: list[Instance]
    volumes: list[Volume]
    series: list[Series] = Field(default_factory=list)
    projections: list[ProjectedCeiling] = Field(
        default_factory=list,
        description="Stored projections of the cluster's ceilings (optional; the advisor warns from them).",
    )
    lookback: Lookback | None = Field(
        default=None,
        description="Peaks over the lookback; null: no history beyond the window (a cut is held until it exists).",
    )

    @model_validator(mode="after")
    def _references_resolve(self) -> Snapshot:
        instance_ids = {i.id for i in self.instances}
        volume_ids = {v.id for v in self.volumes}
        node_ids = [n.id for n in self.nodes]
        if len(set(node_ids)) != len(node_ids):
            raise ValueError("node ids must be unique")
        for i, node in enumerate(self.nodes):
            if node.instance_id not in instance_ids:
                raise ValueError(f"nodes[{i}].instance_id: {node.instance_id!r} is not in instances")
            for vid in [*node.data_volume_ids, *node.raft_volume_ids]:
                if vid not in volume_ids:
                    raise ValueError(f"nodes[{i}]: volume {vid!r} is not in volumes")
        for i, vol in enumerate(self.volumes):
            if vol.instance_id is not None and vol.instance_id not in instance_ids:
                raise ValueError(f"volumes[{i}].instance_id: {vol.instance_id!r} is not in instances")
        known = {"volume": volume_ids, "instance": instance_ids, "node": set(node_ids)}
        for i, s in enumerate(self.series):
            if s.entity.id not in known[s.entity.kind]:
                raise ValueError(f"series[{i}].entity: no {s.entity.kind} {s.entity.id!r}")
        for i, f in enumerate(self.projections):
            if f.entity.id not in known[f.entity.kind]:
                raise ValueError(f"projections[{i}].entity: no {f.entity.kind} {f.entity.id!r}")
        return self


def config_get(config: dict[str, Any], dotted_key: str, default: Any = None) -> Any:
    """Look up a dotted key ("rocksdb.defaultcf.block-size") in a nested TiKV config dict."""
    node: Any = config
    for part in dotted_key.split("."):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node


def config_set(config: dict[str, Any], dotted_key: str, value: Any) -> dict[str, Any]:
    """Return a copy of a nested config with one dotted key set."""
    parts = dotted_key.split(".")
    out = dict(config)
    cursor = out
    for part in parts[:-1]:
        child = cursor.get(part)
        child = dict(child) if isinstance(child, dict) else {}
        cursor[part] = child
        cursor = child
    cursor[parts[-1]] = value
    return out


def redact_config(config: dict[str, Any]) -> dict[str, Any]:
    """Return the config with secret-looking string values replaced by <redacted> (snapshots are shared)."""
    out: dict[str, Any] = {}
    for key, value in config.items():
        if isinstance(value, dict):
            out[key] = redact_config(value)
        elif isinstance(value, str) and value and _SECRET_KEY.search(key.lower()):
            out[key] = REDACTED
        else:
            out[key] = value
    return out


def snapshot_json_schema() -> dict[str, Any]:
    """Return the published JSON Schema of the snapshot format (docs/snapshot.schema.json)."""
    schema = Snapshot.model_json_schema(mode="serialization")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://headroom.dev/schemas/snapshot-v{SCHEMA_VERSION}.json",
        **schema,
    }


def snapshot_json_schema_text() -> str:
    """Return the JSON Schema as the text committed in docs/snapshot.schema.json."""
    import json

    return json.dumps(snapshot_json_schema(), indent=2, ensure_ascii=False) + "\n"
