"""The alert channels' API shapes."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Literal

from pydantic import Field, field_validator

from headroom.platform.schemas import Input, Name100, Output

ChannelKind = Literal["slack", "webhook", "pagerduty", "alertmanager", "email"]
Severity = Literal["critical", "warning", "info"]


class ChannelCreate(Input):
    """A channel: where alerts go and which ones."""

    name: Name100 = Field(min_length=1)
    kind: ChannelKind
    url: str = Field(min_length=3, max_length=2000, description="Slack incoming-webhook URL, your webhook's URL, "
                     "PagerDuty's Events API v2 URL (https://events.pagerduty.com/v2/enqueue), your Alertmanager's "
                     "base URL, or for email the addresses, comma-separated. Stored encrypted; a URL is never shown "
                     "again.")
    secret: str | None = Field(default=None, max_length=500, description="Webhook: the HMAC key for "
                               "X-Headroom-Signature. PagerDuty: the integration's routing key. Stored encrypted.")
    min_severity: Severity = "warning"
    families: list[str] = Field(default_factory=list, max_length=20,
                                description="Rule families to send (e.g. aws-volume, tikv, disk); empty: all.")
    quiet_hours: tuple[int, int] | None = Field(
        default=None, description="[start, end) in UTC hours, e.g. [22, 7]: alerts below critical wait until the "
        "end (critical ones and resolutions go at once).")
    renotify_hours: int | None = Field(default=None, ge=1, le=24 * 14,
                                       description="Send a finding that stays open again every so many hours.")
    burst_horizon_hours: int | None = Field(
        default=None, ge=1, le=7 * 24, description="Alert when a burst bucket is forecast to empty within so many "
        "hours (whatever the finding's severity); null: off.")
    ceiling_horizon_days: int | None = Field(
        default=None, ge=1, le=365, description="Alert when an IOPS, throughput or disk-space ceiling is forecast "
        "to be reached within so many days (whatever the finding's severity); null: off.")

    @field_validator("quiet_hours")
    @classmethod
    def _hours(cls, value: tuple[int, int] | None) -> tuple[int, int] | None:
        if value is not None and (not all(0 <= h <= 23 for h in value) or value[0] == value[1]):
            raise ValueError("two different hours from 0 to 23, e.g. [22, 7]")
        return value


class DeliveryRead(Output):
    id: int
    event: Literal["opened", "escalated", "resolved", "reminder", "forecast", "test", "apply"]
    forecast: str | None = Field(default=None, description="The finding's soonest forecast, in words.")
    title: str
    severity: Severity
    status: Literal["pending", "sending", "sent", "failed"]
    result: str = Field(description='The outcome in one sentence: "Delivered: this channel works." for a test that '
                        'arrived, "Not delivered: <why, and what to check>" otherwise.')
    attempts: int
    last_status_code: int | None
    last_error: str | None
    created_at: dt.datetime
    sent_at: dt.datetime | None
    next_attempt_at: dt.datetime | None = Field(description="When a pending delivery is tried again.")


class ChannelRead(Output):
    id: uuid.UUID
    name: str
    kind: ChannelKind
    url_hint: str = Field(description="Scheme and host of the URL (the rest is secret).")
    has_secret: bool
    min_severity: Severity
    families: list[str]
    quiet_hours: list[int] | None = Field(description="[start, end) in UTC hours; null: none.")
    renotify_hours: int | None
    burst_horizon_hours: int | None
    ceiling_horizon_days: int | None
    enabled: bool
    created_at: dt.datetime
    last_deliveries: list[DeliveryRead]


class ChannelList(Output):
    items: list[ChannelRead]
