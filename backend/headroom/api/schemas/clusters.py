from __future__ import annotations

import datetime as dt
import uuid
from typing import Literal

from pydantic import Field

from headroom.api.schemas.common import Input, Output

DeploymentKind = Literal["tiup", "operator", "manual"]
# TiKV versions look like v8.5.1 / 7.6.0 / 9.0.0-beta.2.
VERSION_PATTERN = r"^v?\d+\.\d+(\.\d+)?(-[0-9A-Za-z.]+)?$"


class ClusterCreate(Input):
    name: str = Field(min_length=1, max_length=200)
    tikv_version: str = Field(pattern=VERSION_PATTERN, examples=["v8.5.1"])
    deployment_kind: DeploymentKind = "tiup"
    tags: dict[str, str] = Field(default_factory=dict)


class ClusterUpdate(Input):
    name: str | None = Field(default=None, min_length=1, max_length=200)
    tikv_version: str | None = Field(default=None, pattern=VERSION_PATTERN)
    deployment_kind: DeploymentKind | None = None
    tags: dict[str, str] | None = None


class ClusterRead(Output):
    id: uuid.UUID
    name: str
    tikv_version: str
    deployment_kind: DeploymentKind
    tags: dict[str, str]
    created_at: dt.datetime


class ClusterList(Output):
    items: list[ClusterRead]
    total: int
