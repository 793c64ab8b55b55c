"""Alert jobs: `alerts.deliver` every minute on its own "alerts" queue sends every due delivery (claimed before it
is sent, retried with backoff; headroom.alerts.delivery), then re-posts every open finding's alert to each
Alertmanager channel so that it stays active (endsAt renewed)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from headroom.alerts import delivery
from headroom.platform.jobs.context import job_context
from headroom.platform.jobs.registry import Job, Schedule
from headroom.platform.security import SecretBox
from headroom.platform.settings import Settings
from headroom.platform.smtp import config_from_settings


def run_deliveries(database_url: str, settings: Settings, now: dt.datetime, **_: Any) -> dict[str, Any]:
    """Send the alerts that are due (new events, and retries whose backoff has passed)."""
    ctx = job_context(database_url, settings)
    return delivery.deliver_due(ctx.unit, SecretBox(settings.secret_key), now=lambda: dt.datetime.now(dt.UTC),
                                smtp=config_from_settings(settings),
                                alertmanager=delivery.AlertmanagerTiming.of(settings))


JOBS = (
    Job(
        name="alerts.deliver",
        queue="alerts",
        schedule=Schedule(minute="*", expires_seconds=55),
        run=run_deliveries,
        description="Send due alerts to Slack, webhooks, PagerDuty and Alertmanager (claimed before sending; "
        "retried with backoff on 429 and 5xx); re-post open findings' alerts to Alertmanager (endsAt renewed).",
    ),
)
