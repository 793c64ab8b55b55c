from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import Field

from headroom.platform.schemas import Input, Output
from headroom.sources.schemas import AwsConnectionRead


class PermissionCheckRead(Output):
    action: str = Field(examples=["ec2:DescribeVolumes"])
    ok: bool
    error_code: str | None = None
    message: str | None = None


class AwsConnectionTestRead(Output):
    ok: bool
    region: str | None
    checks: list[PermissionCheckRead]
    missing: list[str] = Field(description="IAM actions the role lacks (AccessDenied / UnauthorizedOperation).")
    error: str | None = None
    import_started: bool = Field(default=False, description=(
        "This test was the connection's first passing one, so its 14-day history import was queued."))
    demo: bool = Field(default=False, description="A demo source: nothing was asked of AWS (the simulator's data).")


class AwsConnectionCreated(AwsConnectionRead):
    test: AwsConnectionTestRead | None = Field(description=(
        "The test run as the connection was saved; null when it could not run (every outbound slot busy): "
        "test it from its page."))


class AwsBackfillRequest(Input):
    # CloudWatch keeps 1-minute data for 15 days (docs/reference/cloudwatch.md#retention).
    days: int = Field(default=14, ge=1, le=15)


class AwsBackfillRead(Output):
    state: Literal["not_started", "queued", "running", "done", "failed"]
    days: int
    points_done: int = Field(description="Worst-case datapoints of the requests finished so far.")
    points_total: int = Field(description="Worst-case datapoints of the whole backfill plan.")
    points_written: int
    started_at: dt.datetime | None
    finished_at: dt.datetime | None
    last_error: str | None
    queued: bool = False


class CollectionSweepRead(Output):
    id: int
    kind: str
    region: str | None
    started_at: dt.datetime
    finished_at: dt.datetime | None
    window_start_at: dt.datetime | None
    window_end_at: dt.datetime | None
    series: int
    api_calls: int = Field(description="GetMetricData calls made (NextToken pages and retries included).")
    planned_calls: int
    lower_bound_calls: int = Field(description="max(ceil(series / 500), ceil(datapoints / 100,800)).")
    metrics_requested: int = Field(description="Metrics named over all calls: CloudWatch bills these.")
    datapoints: int
    points_written: int
    dropped: int
    retries: int
    error: str | None
