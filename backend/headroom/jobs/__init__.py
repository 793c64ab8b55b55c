"""Background jobs: what runs on a schedule, defined once here. The Celery worker (worker/) registers each
job as a task and builds its beat schedule from this table; without Redis, `runtime` runs the same table on
an in-process scheduler thread."""
