"""Simulator scenarios: a YAML description of a fleet and its workload, validated with pydantic.

A malformed scenario raises `ScenarioError` whose message names the path of the bad field, e.g.
`nodes[1].volumes[0].size_gib: gp2 size must be 1-16,384 GiB, got 0`. See examples/scenarios/ and
docs/snapshot.md for the format.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from headroom.domain.catalog import CatalogError, instance_limits, volume_limits, volume_type_spec
from headroom.domain.snapshot.errors import ScenarioError, describe_validation_error, field_path
from headroom.domain.snapshot.schema import DeploymentKind, VolumeRole, VolumeType
from headroom.domain.snapshot.tikv_defaults import flatten, parse_version
from headroom.domain.units import parse_size


class _S(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Spike(_S):
    """A burst of load: demand × factor for a while, optionally repeating."""

    at_hour: float = Field(ge=0, description="Hours after the window start.")
    duration_minutes: float = Field(gt=0)
    factor: float = Field(gt=0)
    applies_to: Literal["reads", "writes", "scans", "all"] = "all"
    repeat_every_hours: float | None = Field(
        default=None, gt=0, description="Repeat period (e.g. 24 for daily)."
    )


class Diurnal(_S):
    """A daily cosine: 1 + amplitude × cos(2π (hour − peak) / 24)."""

    amplitude: float = Field(default=0.3, ge=0, lt=1)
    peak_hour_utc: float = Field(default=14.0, ge=0, lt=24)


class CpuCost(_S):
    """CPU cost of the work, in microseconds per unit (assumptions; tune per workload)."""

    point_read_us: float = Field(default=40.0, ge=0, description="Unified read pool, per point read.")
    scan_us_per_kib: float = Field(default=4.0, ge=0, description="Unified read pool, per KiB scanned.")
    scheduler_us_per_write: float = Field(default=30.0, ge=0)
    apply_us_per_write: float = Field(default=12.0, ge=0)
    raftstore_us_per_write: float = Field(default=8.0, ge=0)
    store_writer_us_per_fsync: float = Field(default=25.0, ge=0)
    grpc_us_per_request: float = Field(default=6.0, ge=0)
    compaction_us_per_kib: float = Field(
        default=6.5, ge=0, description="RocksDB background, per KiB written."
    )


class Workload(_S):
    """What one TiKV node is asked to do (daily mean before shape, growth and spikes)."""

    reads_per_sec: float = Field(
        default=2000.0, ge=0, description="Point reads (data-block lookups) per second."
    )
    read_io_kib: float | None = Field(
        default=None,
        gt=0,
        description="Disk read size of a block-cache miss; default the defaultcf block-size.",
    )
    scan_mibps: float = Field(default=0.0, ge=0, description="Sequential reads (scans, coprocessor), MiB/s.")
    write_mibps: float = Field(
        default=5.0, ge=0, description="User bytes the node applies (after replication)."
    )
    write_amplification: float = Field(
        default=8.0, ge=1, description="Flush + compaction bytes written per user byte (leveled LSM)."
    )
    fsyncs_per_sec: float = Field(default=100.0, ge=0, description="Raft log fsyncs per second.")
    value_size_bytes: int = Field(
        default=256, gt=0, description="Average value size (Titan applies above it)."
    )
    key_size_bytes: int = Field(default=64, gt=0)
    working_set_gib: float = Field(default=50.0, gt=0, description="Hot data, uncompressed, read repeatedly.")
    data_size_gib: float | None = Field(
        default=None, gt=0, description="Data stored by the node; default 40% of its data volume(s)."
    )
    compression_ratio: float = Field(
        default=2.5, ge=1, description="Uncompressed / on-disk size of data blocks."
    )
    cache_skew: float = Field(default=3.0, gt=0, description="Steepness k of the hit-ratio curve (docs).")
    diurnal: Diurnal = Field(default_factory=Diurnal)
    growth_per_week: float = Field(default=0.0, ge=-0.5, le=10, description="Fractional growth per week.")
    spikes: list[Spike] = Field(default_factory=list)
    noise: float = Field(default=0.05, ge=0, le=0.5, description="Std-dev of the multiplicative noise.")
    load_factor: float = Field(default=1.0, gt=0, description="Multiplies all rates (e.g. a hot node).")
    cpu_cost: CpuCost = Field(default_factory=CpuCost)


class Raid0(_S):
    """Stripe the volume: `stripes` identical EBS volumes in one RAID 0 array."""

    stripes: int = Field(ge=2, le=8)
    chunk_kib: int = Field(default=512, gt=0)


class VolumeSpec(_S):
    """One volume (or RAID 0 array of identical volumes) of each node in the group."""

    role: VolumeRole = "data"
    type: VolumeType
    size_gib: float = Field(gt=0)
    iops: int | None = Field(default=None, gt=0)
    throughput_mibps: float | None = Field(default=None, gt=0)
    raid0: Raid0 | None = None
    burst_balance_percent: float = Field(
        default=100.0, ge=0, le=100, description="gp2/st1/sc1 balance at start."
    )
    filesystem_gib: float | None = Field(
        default=None, gt=0,
        description="Data volumes: the size of the filesystem on it when smaller than the volume (a resize whose "
        "filesystem step was not run); by default the volume's size less the filesystem's metadata.",
    )

    @field_validator("size_gib")
    @classmethod
    def _size_in_range(cls, size: float, info: ValidationInfo) -> float:
        vtype = info.data.get("type")
        if vtype is None or vtype == "standard":
            return size
        spec = volume_type_spec(vtype)
        if not spec.min_size_gib <= size <= spec.max_size_gib:
            raise ValueError(
                f"{vtype} size must be {spec.min_size_gib:,}-{spec.max_size_gib:,} GiB, got {size:g}"
            )
        return size

    @model_validator(mode="after")
    def _valid_volume(self) -> VolumeSpec:
        if self.type == "standard":
            raise ValueError("the simulator does not model magnetic 'standard' volumes")
        if self.type not in ("gp3", "io1", "io2") and self.iops is not None:
            raise ValueError(f"{self.type} has no provisioned IOPS; remove iops")
        if self.type != "gp3" and self.throughput_mibps is not None:
            raise ValueError(f"{self.type} has no provisioned throughput; remove throughput_mibps")
        if self.type in ("io1", "io2") and self.iops is None:
            raise ValueError(f"{self.type} needs iops")
        limits = volume_limits(self.type, self.size_gib, self.iops, self.throughput_mibps)
        if not limits.valid:
            raise ValueError("; ".join(limits.problems))
        return self


class NodeGroup(_S):
    """TiKV nodes that share a shape: instance type, volumes, config and workload overrides."""

    name: str = Field(default="tikv", pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$", description="Name prefix.")
    count: int = Field(default=1, ge=1, le=200)
    names: list[str] | None = Field(default=None, description="Explicit node names (sets the count).")
    instance_type: str
    tikv_per_host: int = Field(default=1, ge=1, le=8, description="TiKV instances sharing one EC2 instance.")
    volumes: list[VolumeSpec] = Field(min_length=1)
    config: dict[str, Any] = Field(
        default_factory=dict, description="TiKV config overrides (dotted or nested)."
    )
    workload: dict[str, Any] = Field(default_factory=dict, description="Overrides of the cluster workload.")
    ebs_balance_percent: float = Field(
        default=100.0, ge=0, le=100, description="Instance EBS balance at start."
    )
    tikv_version: str | None = Field(
        default=None, description="Version of these nodes (default the cluster's)."
    )

    @field_validator("instance_type")
    @classmethod
    def _known_instance(cls, name: str) -> str:
        try:
            limits = instance_limits(name)
        except CatalogError as exc:
            raise ValueError(str(exc)) from None
        if not limits.vcpus or not limits.memory_gib:
            raise ValueError(f"the catalog has no vCPU/memory figures for {name}")
        return name

    @field_validator("tikv_version")
    @classmethod
    def _version(cls, v: str | None) -> str | None:
        if v is not None:
            parse_version(v)
        return v

    @model_validator(mode="after")
    def _volumes_make_sense(self) -> NodeGroup:
        roles = [v.role for v in self.volumes]
        if roles.count("data") != 1:
            raise ValueError(
                f"each node needs exactly one data volume (or RAID 0 array), got {roles.count('data')}"
            )
        if roles.count("raft") > 1:
            raise ValueError("at most one raft volume per node")
        if self.names is not None and len(set(self.names)) != len(self.names):
            raise ValueError("names must be unique")
        return self

    @property
    def node_names(self) -> list[str]:
        """Return the names of the nodes in the group."""
        if self.names is not None:
            return list(self.names)
        return [f"{self.name}-{i + 1}" for i in range(self.count)]


EC2_MONITORING_DEFAULT: Literal["basic", "detailed", "minute"] = "basic"
"""What a scenario without `monitoring.ec2` gets: AWS's default, basic monitoring."""


class Monitoring(_S):
    """How the simulated data reaches Headroom: CloudWatch periods and missing datapoints (docs/snapshot.md).

    - `ec2: basic` (AWS's default): the AWS/EC2 EBS metrics (EBSReadOps ... EBSWriteBytes) every 5 minutes as
      300 s Sums; `detailed` (detailed monitoring, paid): every minute. EBSIOBalance% / EBSByteBalance% are
      5-minute metrics in both ("Basic monitoring only", AWS EC2 CloudWatch metrics page). AWS/EBS volume
      metrics are 1-minute for every volume type ("All Amazon EBS volume types automatically send 1-minute
      metrics to CloudWatch, but only when the volume is attached", AWS EBS CloudWatch page).
    - `minute`: every series at 1 minute with no gaps, balances included: not what AWS delivers; an idealised
      feed for physics tests.
    - `gaps`: CloudWatch's missing datapoints (a minute or a period now and then; no BurstBalance while a
      volume is idle) and Prometheus scrape gaps. Default: on for basic/detailed, off for minute.
    """

    ec2: Literal["basic", "detailed", "minute"] | None = Field(
        default=None,
        description="basic (5-minute EC2 metrics, AWS's default), detailed (1-minute) or minute.",
    )
    gaps: bool | None = Field(
        default=None, description="Missing datapoints as CloudWatch and Prometheus have them."
    )

    @property
    def ec2_mode(self) -> Literal["basic", "detailed", "minute"]:
        """Return the EC2 monitoring mode, the simulator's default when the scenario does not say."""
        return self.ec2 or EC2_MONITORING_DEFAULT

    @property
    def with_gaps(self) -> bool:
        """Return whether datapoints go missing (default: yes unless every series is at 1 minute)."""
        return self.gaps if self.gaps is not None else self.ec2_mode != "minute"


class ClusterSpec(_S):
    """The cluster being simulated."""

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
    tikv_version: str = "v8.5.1"
    deployment: DeploymentKind = "tiup"
    region: str = "us-east-1"

    @field_validator("tikv_version")
    @classmethod
    def _version(cls, v: str) -> str:
        parse_version(v)
        return v


class ScenarioLookback(_S):
    """The history behind the simulated window, for the rules that judge a cut on the lookback
    (headroom.domain.snapshot.lookback): how many days exist and how their peak compares to the window's."""

    days: Literal[14, 32, 93] = Field(default=14, description="The lookback asked for (14, 32 or 93 days).")
    history_days: float = Field(ge=0, le=400, description="Days of history the store holds (capped at the lookback).")
    peak_scale: float = Field(
        default=1.0, ge=1.0, le=100.0,
        description="The lookback's peak as a multiple of the window's (1: the window holds the history's peak).",
    )


class Scenario(_S):
    """A fleet to simulate: one cluster, its node groups and their workload."""

    description: str | None = None
    cluster: ClusterSpec
    start: AwareDatetime | None = Field(
        default=None, description="Window start (default: the CLI's --start)."
    )
    warmup_hours: float = Field(default=24.0, ge=0, le=24 * 14, description="Simulated before the window.")
    workload: Workload = Field(default_factory=Workload)
    monitoring: Monitoring = Field(default_factory=Monitoring)
    nodes: list[NodeGroup] = Field(min_length=1)
    lookback: ScenarioLookback | None = Field(
        default=None, description="History behind the window; none: the window is all the history there is."
    )

    @model_validator(mode="after")
    def _unique_names(self) -> Scenario:
        seen: set[str] = set()
        for group in self.nodes:
            for name in group.node_names:
                if name in seen:
                    raise ValueError(f"node name {name!r} is used twice; give groups different names")
                seen.add(name)
        return self


# Config keys the simulator reads, each with the parser that must accept it.
_SIZE_KEYS = (
    "storage.block-cache.capacity",
    "rocksdb.rate-bytes-per-sec",
    "rocksdb.defaultcf.block-size",
    "rocksdb.defaultcf.titan.min-blob-size",
    "storage.flow-control.soft-pending-compaction-bytes-limit",
    "storage.flow-control.hard-pending-compaction-bytes-limit",
)
_INT_KEYS = (
    "storage.scheduler-worker-pool-size",
    "raftstore.apply-pool-size",
    "raftstore.store-pool-size",
    "raftstore.store-io-pool-size",
    "readpool.unified.max-thread-count",
    "server.grpc-concurrency",
)


def node_workload(scenario: Scenario, group_index: int) -> Workload:
    """Return the workload of one node group: the cluster workload with the group's overrides."""
    group = scenario.nodes[group_index]
    if not group.workload:
        return scenario.workload
    merged = {**scenario.workload.model_dump(), **group.workload}
    for nested in ("diurnal", "cpu_cost"):
        if isinstance(group.workload.get(nested), dict):
            merged[nested] = {**scenario.workload.model_dump()[nested], **group.workload[nested]}
    try:
        return Workload.model_validate(merged)
    except ValidationError as exc:
        raise ScenarioError(_prefix(exc, f"nodes[{group_index}].workload")) from None


def _prefix(exc: ValidationError, prefix: str) -> str:
    parts = []
    for err in exc.errors()[:3]:
        parts.append(f"{prefix}.{field_path(tuple(err['loc']))}: {err['msg'].removeprefix('Value error, ')}")
    return "; ".join(parts)


def _check_config(scenario: Scenario) -> None:
    for gi, group in enumerate(scenario.nodes):
        flat = flatten(group.config)
        for key, value in flat.items():
            where = f"nodes[{gi}].config.{key}"
            try:
                if key in _SIZE_KEYS:
                    parse_size(value)
                elif key in _INT_KEYS and (
                    not isinstance(value, int) or isinstance(value, bool) or value < 0
                ):
                    raise ValueError(f"expected a non-negative integer, got {value!r}")
            except ValueError as exc:
                raise ScenarioError(f"{where}: {exc}") from None


def scenario_from_dict(document: Any) -> Scenario:
    """Validate a decoded scenario document; errors name the path of the bad field."""
    if not isinstance(document, dict):
        raise ScenarioError("(root): a scenario is a YAML mapping")
    try:
        scenario = Scenario.model_validate(document)
    except ValidationError as exc:
        raise ScenarioError(describe_validation_error(exc)) from None
    for gi in range(len(scenario.nodes)):
        node_workload(scenario, gi)
    _check_config(scenario)
    return scenario


def parse_scenario(text: str) -> Scenario:
    """Parse scenario YAML text."""
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ScenarioError(f"(root): not valid YAML ({exc})".replace("\n", " ")) from None
    return scenario_from_dict(document)


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario file."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as exc:
        raise ScenarioError(f"{p}: {exc.strerror or exc}") from None
    return parse_scenario(text)
