"""The beat schedule, built from headroom's job table. Run exactly one beat process per deployment."""

from __future__ import annotations

from typing import Any

from headroom.jobs import all_jobs


def beat_schedule() -> dict[str, dict[str, Any]]:
    """Return Celery's beat_schedule: one crontab entry per scheduled job, with `expires` so no backlog piles up."""
    return {
        job.name: {
            "task": job.name,
            "schedule": job.schedule.crontab(),
            "options": {"queue": job.queue, "expires": job.schedule.expires_seconds},
        }
        for job in all_jobs()
        if job.schedule is not None
    }
