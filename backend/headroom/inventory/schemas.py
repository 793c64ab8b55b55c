from __future__ import annotations

import datetime as dt
import uuid
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from headroom.platform.schemas import INT64_MAX, Input, Output, pattern_described

ADDRESS = r"^[A-Za-z0-9_.\-\[\]:]+:[0-9]{1,5}$"
Address = Annotated[str, Field(pattern=ADDRESS, max_length=255),
                    pattern_described("a host and port like 10.0.1.5:20160")]


class NodeCreate(Input):
    store_address: Address = Field(examples=["10.0.1.5:20160"])
    status_address: Address | None = Field(default=None, examples=["10.0.1.5:20180"])
    store_id: int | None = Field(default=None, ge=1, le=INT64_MAX)
    version: str | None = Field(default=None, max_length=40)


class NodeUpdate(Input):
    status_address: Address | None = None


class InstanceEbsLimits(Output):
    """The instance type's EBS-optimized limits: the maximum holds 30 min once per 24 h (AWS: Amazon
    EBS-optimized instances, https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ebs-optimized.html)."""

    baseline_throughput_mbps: float = Field(description="Sustained EBS throughput, MB/s (decimal).")
    max_throughput_mbps: float = Field(description="Burst EBS throughput, MB/s (decimal).")
    baseline_iops: float
    max_iops: float
    bursts: bool = Field(description="Baseline below maximum: the instance has an EBS burst bucket.")
    source: str = Field(description="Where the limits come from (the catalog or DescribeInstanceTypes).")


class NodeInstance(Output):
    instance_id: str
    instance_type: str
    vcpus: int | None
    memory_gib: float | None
    availability_zone: str | None
    ebs: InstanceEbsLimits | None = Field(description="Null when the type is in neither the catalog nor EC2's answer.")
    ebs_note: str | None = Field(
        default=None,
        description="Why the EBS limits are unknown (and that no finding judges them); null when they are known.",
    )
    console_url: str | None = Field(default=None, description="The instance's page in the AWS console (null: "
                                    "region unknown, or the simulated demo fleet).")


class NodeVolume(Output):
    volume_id: str
    role: Literal["data", "raft"]
    volume_type: str
    size_gib: int
    iops: float | None = Field(description="Provisioned IOPS (gp3/io1/io2) or the baseline (gp2: 3 IOPS/GiB).")
    iops_provisioned: bool = Field(description="False when `iops` is a baseline the type derives from the size.")
    throughput_mibps: float | None = Field(description="Provisioned (gp3) or the type's sustained throughput, MiB/s.")
    burstable: bool = Field(description="gp2 below 1 TiB (baseline < 3,000 IOPS): it spends burst credits.")
    device: str | None
    console_url: str | None = Field(default=None, description="The volume's page in the AWS console (null: region "
                                    "unknown, or the simulated demo fleet).")


class NodeRead(Output):
    id: uuid.UUID
    cluster_id: uuid.UUID
    store_id: int | None
    store_address: str
    status_address: str | None
    version: str | None
    created_at: dt.datetime
    last_seen_at: dt.datetime
    config_versions: list[int] = Field(default_factory=list)
    instance: NodeInstance | None = Field(default=None, description="The mapped EC2 instance; null when unmapped.")
    volumes: list[NodeVolume] = Field(default_factory=list, description="Data volumes first, then raft, by device.")
    grafana_url: str | None = Field(default=None, description="The node's TiKV-Details dashboard in the Grafana "
                                    "given on the cluster's Prometheus source (null: none given, or no status "
                                    "address).")


class NodeList(Output):
    items: list[NodeRead]
    total: int


class ConfigUpload(Input):
    # the file is kept byte for byte (patches are merged into it), so no whitespace stripping here
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)

    format: Literal["toml", "tiup_topology"] = Field(
        default="toml", description="A tikv.toml, or a TiUP topology YAML whose server_configs.tikv applies."
    )
    content: str = Field(min_length=1, max_length=2_000_000)


class ConfigRead(Output):
    id: uuid.UUID
    node_id: uuid.UUID
    version: int
    source: Literal["status_port", "upload", "tiup", "simulated"]
    config: dict[str, Any] = Field(
        description="The config as TiKV's GET /config returns it: nested sections, kebab-case keys."
    )
    raw_text: str | None
    content_sha256: str
    captured_at: dt.datetime
    created: bool = Field(default=True, description="False when the upload equalled the latest version.")
    warnings: list[str] = Field(
        default_factory=list, description="What the upload stored but TiKV's template does not know (unknown keys)."
    )
