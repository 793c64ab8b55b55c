"""Digest jobs: the weekly advisory email, on the "email" queue.

`digest.weekly` fires on Mondays at 08:00 UTC and fans out one `digest.send_org` per organisation (over Celery
when REDIS_URL is set; in this process, one org after another, otherwise). `digest.send_org` sends one org's
digest for one ISO week at most once: it claims the week's `digest_sends` row and commits the claim before
talking to the SMTP server (headroom.digest.service.send_week, claim_week), then records the outcome:
- accepted -> `sent` (with the count of accepted recipients);
- a transient failure (4xx, connection refused or dropped, time-out) -> `retrying`, and the task raises a
  ConnectionError that the Celery task retries with exponential backoff and jitter (headroom_worker.tasks:
  retry_backoff=2, max 120 s, 5 retries) after the sender's own two quick retries (platform.smtp.SEND_RETRY);
  the retry takes the row back. The last allowed attempt (services.digest.MAX_ATTEMPTS) records `failed` instead;
- a permanent failure (5xx, authentication, TLS) -> `failed` with the reason, never retried;
- no member with a verified email -> `skipped`.
Without HEADROOM_SMTP_HOST both jobs log `digest.skipped` and return: an embedded install never crashes on mail.

`digest.preview` renders the Weekly email page's preview of one org and stores it where every API process finds
it (headroom.digest.service.prepare_preview); an advice run queues it for the org of each cluster it advised, so
the page reads a stored preview instead of rendering one.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from headroom.digest import service
from headroom.platform.jobs.context import job_context
from headroom.platform.jobs.registry import Job, Schedule
from headroom.platform.settings import Settings

# A weekly run queued but not started within 6 hours is dropped (the next Monday sends the next week); 6 hours
# still lets a worker that was down overnight send the morning's digest the same working day.
WEEKLY_EXPIRES_SECONDS = 6 * 3600


def run_weekly(database_url: str, settings: Settings, now: dt.datetime, **_: Any) -> dict[str, Any]:
    """Send (or queue) every organisation's digest for the ISO week of `now`."""
    return service.send_weekly(job_context(database_url, settings), now)


def run_send_org(
    database_url: str,
    settings: Settings,
    now: dt.datetime,
    org_id: str | None = None,
    week_start: str | None = None,
    **_: Any,
) -> dict[str, Any]:
    """Send one org's digest for one ISO week, at most once (see the module docstring)."""
    return service.send_week(job_context(database_url, settings), now, org_id=org_id, week_start=week_start)


def run_preview(database_url: str, settings: Settings, now: dt.datetime, org_id: str | None = None,
                **_: Any) -> dict[str, Any]:
    """Render and store one org's preview of this week's email unless the stored one is current."""
    return service.prepare_preview(job_context(database_url, settings), now, org_id=org_id)


JOBS = (
    Job(
        name="digest.weekly",
        queue="email",
        # Monday 08:00 UTC: the start of the working week in Europe, before it in the Americas. Celery's
        # crontab numbers days from Sunday = 0, so Monday is 1 (the in-process runtime asks the same crontab).
        schedule=Schedule(minute="0", hour="8", day_of_week="1", expires_seconds=WEEKLY_EXPIRES_SECONDS),
        run=run_weekly,
        description="Send every organisation its weekly advisory email (fans out digest.send_org).",
    ),
    Job(
        name="digest.send_org",
        queue="email",
        schedule=None,
        run=run_send_org,
        description="Send one organisation's weekly advisory email for one ISO week, at most once.",
    ),
    Job(
        name="digest.preview",
        # the email queue: a render (charts drawn) waits behind no advice run, and holds none back
        queue="email",
        schedule=None,
        run=run_preview,
        description="Render one organisation's preview of this week's email for the Weekly email page.",
    ),
)
