from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import Field

from headroom.platform.schemas import Input, Output


class MetricPresenceRead(Output):
    metric: str
    series: int = Field(description="Series under the selector right now (0 = missing).")


class ConnectionTestRead(Output):
    ok: bool = Field(description="Reachable, authenticated, and TiKV series found under the selector.")
    reachable: bool
    prometheus_api: bool | None = Field(
        description="Whether the address answered as Prometheus's HTTP API (JSON with status and data); null when "
        "not known (no answer, or the credentials were refused). Unless true, `authenticated` and the metric "
        "counts say nothing."
    )
    authenticated: bool
    prometheus_version: str | None
    flavour: Literal["tiup", "operator"] | None = Field(
        description='How the TiKV targets are labelled: TiUP (job="tikv", instance=host:port) or TiDB '
        'Operator (component="tikv", instance=<pod>).'
    )
    selector: str
    tikv_instances: list[str]
    tikv_targets_up: int
    tikv_targets_down: int
    node_exporter_hosts: int
    metrics: list[MetricPresenceRead]
    missing_metrics: list[str]
    messages: list[str]


class BackfillRequest(Input):
    days: int = Field(
        default=14, ge=1, le=35, description="History to import (Prometheus keeps 15 days by default)."
    )


class BackfillRead(Output):
    status: Literal["none", "queued", "running", "done", "failed"]
    steps_done: int = Field(description="Query steps (one series-minute per registry query) imported so far.")
    steps_total: int
    percent: float
    points_written: int
    dropped_non_finite: int
    dropped_outside: int
    range_start_at: dt.datetime | None
    range_end_at: dt.datetime | None
    started_at: dt.datetime | None
    finished_at: dt.datetime | None
    last_error: str | None
    queued: bool = False
