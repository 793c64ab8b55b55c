"""Headroom's Celery workers: tasks are thin wrappers around headroom's job table (headroom.jobs.all_jobs)."""
