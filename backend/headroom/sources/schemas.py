from __future__ import annotations

import datetime as dt
import uuid
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, HttpUrl, StringConstraints, UrlConstraints

from headroom.platform.schemas import Input, Name200, Omittable, Output, pattern_described


def _not_reserved(key: str) -> str:
    if key.lower().startswith("aws:"):
        raise ValueError("must not start with aws: (AWS keeps that prefix for its own tags)")
    return key


# AWS tags: a key of 1-128 characters, a value of 0-256, letters, digits, spaces and _ . : / = + - @; keys starting
# with aws: are AWS's (docs/reference/ebs-modify.md#tags).
TagKey = Annotated[str, StringConstraints(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_ .:/=+@-]+$"),
                   AfterValidator(_not_reserved)]
TagValue = Annotated[str, StringConstraints(max_length=256, pattern=r"^[A-Za-z0-9_ .:/=+@-]*$")]


AwsAuthKind = Literal["assume_role", "static_keys", "default_chain"]
PromAuthKind = Literal["none", "bearer", "basic"]
SourceStatus = Literal["unknown", "ok", "failing"]
REGION_PATTERN = r"^[a-z]{2}(-gov)?-[a-z]+-\d$"
Region = Annotated[str, Field(pattern=REGION_PATTERN, examples=["us-east-1"]),
                   pattern_described("an AWS region code like us-east-1 or eu-west-2")]
ROLE_ARN_PATTERN = r"^arn:aws[a-z-]*:iam::[0-9]{12}:role/[A-Za-z0-9+=,.@_/-]+$"
# 123456789012 is the account ID AWS's own documentation uses in examples; HeadroomReadOnly is deploy/aws/'s role.
RoleArn = Annotated[str, Field(pattern=ROLE_ARN_PATTERN, max_length=2048,
                               examples=["arn:aws:iam::123456789012:role/HeadroomReadOnly"]),
                    pattern_described("an IAM role ARN like arn:aws:iam::123456789012:role/HeadroomReadOnly "
                                      "(arn:aws:iam::, the 12-digit account ID, :role/ and the role's name)")]
ACCESS_KEY_ID_PATTERN = r"^[A-Z0-9]{16,128}$"
# AKIAIOSFODNN7EXAMPLE is the access key ID AWS's documentation uses in examples.
AccessKeyId = Annotated[str, Field(pattern=ACCESS_KEY_ID_PATTERN, examples=["AKIAIOSFODNN7EXAMPLE"]),
                        pattern_described("an AWS access key ID like AKIAIOSFODNN7EXAMPLE (16 to 128 capital "
                                          "letters and digits)")]
# base_url is stored in a varchar(2048).
BaseUrl = Annotated[HttpUrl, UrlConstraints(max_length=2048)]


class SourceHealth(Output):
    status: SourceStatus
    last_success_at: dt.datetime | None
    last_error_at: dt.datetime | None
    last_error: str | None
    consecutive_failures: int


class AwsConnectionCreate(Input):
    name: Name200 = Field(min_length=1)
    auth_kind: AwsAuthKind = "assume_role"
    role_arn: RoleArn | None = None
    regions: list[Region] = Field(min_length=1, max_length=30)
    access_key_id: AccessKeyId | None = None
    secret_access_key: str | None = Field(default=None, min_length=1, max_length=256)


class AwsConnectionUpdate(Input):
    """Fields to change; an omitted field keeps its value. Only role_arn and access_key_id can be null."""

    name: Name200 = Omittable(min_length=1)
    role_arn: RoleArn | None = None
    regions: list[Region] = Omittable(min_length=1, max_length=30)
    access_key_id: AccessKeyId | None = None
    secret_access_key: str = Omittable(min_length=1, max_length=256)


class AwsConnectionRead(Output):
    id: uuid.UUID
    name: str
    auth_kind: AwsAuthKind
    role_arn: str | None
    external_id: str
    regions: list[str]
    access_key_id: str | None
    has_secret: bool
    health: SourceHealth
    is_demo: bool = Field(default=False, description=(
        "The demo organisation's simulated source: nothing of it reaches AWS; its test, sweeps and import are "
        "the simulator's."))
    created_at: dt.datetime


class PrometheusSourceCreate(Input):
    name: Name200 = Field(min_length=1)
    base_url: BaseUrl
    label_selector: str = Field(default="", max_length=1000, examples=['tidb_cluster="prod"'])
    auth_kind: PromAuthKind = "none"
    username: str | None = Field(default=None, max_length=200)
    secret: str | None = Field(default=None, min_length=1, max_length=4096,
                               description="Bearer token or basic-auth password; write-only.")
    cluster_id: uuid.UUID | None = None
    grafana_url: BaseUrl | None = Field(default=None, description=(
        "The Grafana that shows this Prometheus's TiKV dashboards, e.g. https://grafana.example.com: each node "
        "links to its TiKV-Details dashboard there. A link only: Headroom never calls it."))


class PrometheusSourceUpdate(Input):
    """Fields to change; an omitted field keeps its value. Only username and cluster_id can be null (cleared)."""

    name: Name200 = Omittable(min_length=1)
    base_url: BaseUrl = Omittable()
    label_selector: str = Omittable(max_length=1000)
    auth_kind: PromAuthKind = Omittable()
    username: str | None = Field(default=None, max_length=200)
    secret: str = Omittable(min_length=1, max_length=4096)
    cluster_id: uuid.UUID | None = None
    grafana_url: BaseUrl | None = None


class PrometheusSourceRead(Output):
    id: uuid.UUID
    name: str
    base_url: str
    label_selector: str
    auth_kind: PromAuthKind
    username: str | None
    has_secret: bool
    cluster_id: uuid.UUID | None
    grafana_url: str | None = None
    health: SourceHealth
    created_at: dt.datetime
