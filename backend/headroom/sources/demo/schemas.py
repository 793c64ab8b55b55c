"""The demo fleet's API: a demo volume given the ID of a real EBS volume."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from headroom.platform.schemas import Input, Output, pattern_described
from headroom.sources.schemas import TagKey, TagValue

# EBS volume IDs: "vol-" and 8 or 17 hexadecimal characters (AWS, Resource IDs,
# https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/resource-ids.html).
VolumeId = Annotated[str, Field(pattern=r"^vol-([0-9a-f]{8}|[0-9a-f]{17})$", max_length=21,
                                examples=["vol-0123456789abcdef0"]),
                     pattern_described("an EBS volume ID like vol-0123456789abcdef0")]


class DemoVolumeUpdate(Input):
    volume_id: VolumeId | None = Field(title="Real volume ID", description=(
        "The ID of a real EBS volume for this demo volume (the simulation goes on; Headroom's apply then modifies "
        "that volume); null gives it its simulated ID back."))
    # AWS, Tag restrictions: at most 50 tags per resource (docs/reference/ebs-modify.md#tags).
    tags: dict[TagKey, TagValue] = Field(default_factory=dict, max_length=50, title="Volume tags", description=(
        "The tags the real volume carries in AWS, as the EC2 inventory would show them: apply modifies only a volume "
        "carrying the organisation's volume tag (AWS refuses the others). Ignored with a null volume ID."))


class DemoVolumeRead(Output):
    volume_id: str = Field(description="The ID the demo volume has now.")
    simulated_volume_id: str = Field(description="Its simulated ID (what a null volume ID gives back).")
    tags: dict[str, str]
