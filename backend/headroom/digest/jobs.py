"""Digest jobs: the weekly advisory email, on the "email" queue.

`digest.weekly` fires on Mondays at 08:00 UTC and fans out one `digest.send_org` per organisation (over Celery
when REDIS_URL is set; in this process, one org after another, otherwise). `digest.send_org` sends one org's
digest for one ISO week at most once: it claims the week's `digest_sends` row and commits the claim before
talking to the SMTP server (headroom.digest.service.claim_week), then records the outcome:
- accepted -> `sent` (with the count of accepted recipients);
- a transient failure (4xx, connection refused or dropped, time-out) -> `retrying`, and the task raises a
  ConnectionError that the Celery task retries with exponential backoff and jitter (headroom_worker.tasks:
  retry_backoff=2, max 120 s, 5 retries); the retry takes the row back. The last allowed attempt records
  `failed` instead;
- a permanent failure (5xx, authentication, TLS) -> `failed` with the reason, never retried;
- no member with a verified email -> `skipped`.
Without HEADROOM_SMTP_HOST both jobs log `digest.skipped` and return: an embedded install never crashes on mail.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from sqlalchemy import select

from headroom.platform.db import session_scope
from headroom.platform.jobs.registry import Job, Schedule
from headroom.platform.logging import get_logger
from headroom.platform.settings import Settings

log = get_logger("headroom.digest.jobs")

# Attempts before a transient failure is recorded as `failed`: the first run plus the Celery task's 5 retries
# (headroom_worker.tasks._make_task: max_retries=5).
MAX_ATTEMPTS = 6
# A weekly run queued but not started within 6 hours is dropped (the next Monday sends the next week); 6 hours
# still lets a worker that was down overnight send the morning's digest the same working day.
WEEKLY_EXPIRES_SECONDS = 6 * 3600


def _smtp(settings: Settings) -> Any:
    from headroom.digest.send import config_from_settings

    return config_from_settings(settings)


def run_weekly(database_url: str, settings: Settings, now: dt.datetime, **_: Any) -> dict[str, Any]:
    """Send (or queue) every organisation's digest for the ISO week of `now`."""
    from headroom.accounts.models import Organization
    from headroom.digest.build import iso_week_start
    from headroom.platform.jobs.dispatch import enqueue

    if _smtp(settings) is None:
        log.info("digest.skipped", reason="smtp not configured (HEADROOM_SMTP_HOST is unset)")
        return {"skipped": "smtp not configured"}
    week = iso_week_start(now.astimezone(dt.UTC).date()).isoformat()
    with session_scope(database_url) as db:
        org_ids = [str(i) for i in db.scalars(select(Organization.id).order_by(Organization.created_at))]
    if settings.redis_url:
        for org_id in org_ids:
            enqueue("digest.send_org", settings, database_url, org_id=org_id, week_start=week,
                    now_iso=now.isoformat())
        log.info("digest.fanned_out", orgs=len(org_ids), week_start=week)
        return {"queued": len(org_ids), "week_start": week}
    results = []
    for org_id in org_ids:
        try:
            results.append(run_send_org(database_url, settings, now, org_id=org_id, week_start=week))
        except Exception:  # noqa: BLE001 - one org's failure must not stop the others; recorded and logged
            log.exception("digest.org_failed", org_id=org_id)
            results.append({"org_id": org_id, "status": "retrying"})
    return {"orgs": results, "week_start": week}


def run_send_org(
    database_url: str,
    settings: Settings,
    now: dt.datetime,
    org_id: str | None = None,
    week_start: str | None = None,
    **_: Any,
) -> dict[str, Any]:
    """Send one org's digest for one ISO week, at most once (see the module docstring)."""
    from headroom.accounts.models import Organization
    from headroom.digest import service
    from headroom.digest.build import iso_week_start
    from headroom.digest.models import DigestSend
    from headroom.digest.send import PermanentSendError, TransientSendError, compose, send_message

    if org_id is None:  # the in-process scheduler's start-up pass runs every job once without parameters
        return {"status": "skipped", "reason": "no organisation given"}
    config = _smtp(settings)
    if config is None:
        log.info("digest.skipped", org_id=org_id, reason="smtp not configured (HEADROOM_SMTP_HOST is unset)")
        return {"org_id": org_id, "status": "skipped", "reason": "smtp not configured"}
    org_uuid = uuid.UUID(org_id)
    week = dt.date.fromisoformat(week_start) if week_start else iso_week_start(now.astimezone(dt.UTC).date())
    summary: dict[str, Any] = {"org_id": org_id, "week_start": week.isoformat()}

    with session_scope(database_url) as db:
        if db.get(Organization, org_uuid) is None:
            return summary | {"status": "skipped", "reason": "organisation deleted"}
        prefs = service.prefs(db, org_uuid)
        if not prefs.enabled:
            return summary | {"status": "skipped", "reason": "disabled by the organisation"}
        claim = service.claim_week(db, org_uuid, week, now=now)
        if claim is None:
            existing = db.scalar(
                select(DigestSend.status).where(DigestSend.org_id == org_uuid, DigestSend.week_start == week)
            )
            log.info("digest.already_claimed", org_id=org_id, week_start=week.isoformat(), status=existing)
            return summary | {"status": "skipped", "reason": f"already {existing}"}
        send_id, attempts = claim.id, claim.attempts
        to = service.recipients(db, org_uuid, include_viewers=prefs.include_viewers)
        if not to:
            service.finish(db, send_id, status="skipped", now=now,
                           error="no member with a verified email in the recipient roles")
            return summary | {"status": "skipped", "reason": "no recipients"}
        digest = service.render(db, org_uuid, now=now, public_url=settings.public_url)
    # The claim is committed: a duplicate of this task now finds the week taken.

    message = compose(config.sender, to, digest.subject, digest.text, digest.html)
    try:
        result = send_message(config, message, to)
    except TransientSendError as exc:
        final = attempts >= MAX_ATTEMPTS
        with session_scope(database_url) as db:
            service.finish(db, send_id, status="failed" if final else "retrying", now=now,
                           error=f"attempt {attempts}: {exc}")
        log.warning("digest.send_transient", org_id=org_id, attempt=attempts, final=final, error=str(exc))
        if final:
            return summary | {"status": "failed", "error": str(exc)}
        raise  # a ConnectionError: the Celery task retries it with backoff
    except PermanentSendError as exc:
        with session_scope(database_url) as db:
            service.finish(db, send_id, status="failed", now=now, error=str(exc))
        log.warning("digest.send_failed", org_id=org_id, error=str(exc))
        return summary | {"status": "failed", "error": str(exc)}
    refused = "; ".join(f"{rcpt}: {why}" for rcpt, why in sorted(result.refused.items())) or None
    with session_scope(database_url) as db:
        service.finish(db, send_id, status="sent", now=now, recipients=len(result.accepted),
                       error=f"refused: {refused}" if refused else None)
    log.info("digest.sent", org_id=org_id, week_start=week.isoformat(), recipients=len(result.accepted))
    return summary | {"status": "sent", "recipients": len(result.accepted)}


JOBS = (
    Job(
        name="digest.weekly",
        queue="email",
        # Monday 08:00 UTC: the start of the working week in Europe, before it in the Americas. Celery's
        # crontab numbers days from Sunday = 0, so Monday is 1 (headroom.platform.jobs.runtime.is_due agrees).
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
)
