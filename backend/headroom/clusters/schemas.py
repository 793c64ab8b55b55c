from __future__ import annotations

import datetime as dt
import uuid
from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from headroom.platform.schemas import Input, Name200, Omittable, Output, pattern_described

DeploymentKind = Literal["tiup", "operator", "manual"]
# TiKV versions look like v8.5.1 / 7.6.0 / 9.0.0-beta.2 (stored in a varchar(40)).
VERSION_PATTERN = r"^v?\d+\.\d+(\.\d+)?(-[0-9A-Za-z.]+)?$"
VERSION_MAX = 40
TikvVersion = Annotated[str, Field(pattern=VERSION_PATTERN, max_length=VERSION_MAX, examples=["v8.5.1"]),
                        pattern_described("a TiKV version like v8.5.1 or 7.6.0")]
# AWS's own tag limits (EC2 User Guide, "Tag restrictions"): 50 tags per resource, keys up to 128 characters,
# values up to 256.
TagKey = Annotated[str, StringConstraints(min_length=1, max_length=128)]
TagValue = Annotated[str, StringConstraints(max_length=256)]
Tags = Annotated[dict[TagKey, TagValue], Field(max_length=50, description="At most 50 tags (AWS's limit).")]


class ClusterCreate(Input):
    name: Name200 = Field(min_length=1)
    tikv_version: TikvVersion
    deployment_kind: DeploymentKind = "tiup"
    tags: Tags = Field(default_factory=dict)


class ClusterUpdate(Input):
    """Fields to change; an omitted field keeps its value (none of them can be null)."""

    name: Name200 = Omittable(min_length=1)
    tikv_version: TikvVersion = Omittable()
    deployment_kind: DeploymentKind = Omittable()
    tags: Tags = Omittable()


class ClusterRead(Output):
    id: uuid.UUID
    name: str
    tikv_version: str
    deployment_kind: DeploymentKind
    tags: dict[str, str]
    # The simulated demo cluster (set only by demo seeding; a tag is the user's to edit and means nothing here).
    is_demo: bool
    advised_at: dt.datetime | None = Field(description="When the advisor last ran over the cluster's data; null: "
                                                       "never yet (the first analysis is still running).")
    created_at: dt.datetime


LookbackDays = Literal[14, 32, 93]


class ClusterPreferencesRead(Output):
    """A cluster's recommendation preferences: its own lookback (null: its organisation's) and the one in force."""

    lookback_days: LookbackDays | None = Field(
        description="The cluster's own lookback in days; null: it inherits its organisation's."
    )
    organization_lookback_days: LookbackDays
    effective_lookback_days: LookbackDays = Field(
        description="The lookback the advisor uses for this cluster: its own, else its organisation's."
    )


class ClusterPreferencesUpdate(Input):
    lookback_days: LookbackDays | None = Field(
        title="Lookback (days)",
        description="14, 32 or 93 days of history a cut is judged on; null: inherit the organisation's.",
    )


class ClusterList(Output):
    items: list[ClusterRead]
    total: int
