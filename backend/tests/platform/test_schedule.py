"""One schedule definition: Celery beat's crontab and the in-process runtime read the same fields the same way."""

from __future__ import annotations

import datetime as dt

from headroom.jobs import all_jobs
from headroom.platform.jobs.registry import Schedule

MONDAY_0800 = dt.datetime(2026, 11, 9, 8, 0, tzinfo=dt.UTC)


def _due_minutes(schedule: Schedule, start: dt.datetime, minutes: int) -> list[dt.datetime]:
    return [at for i in range(minutes) if schedule.is_due(at := start + dt.timedelta(minutes=i))]


def test_step_and_list_fields_fire_on_their_minutes() -> None:
    hour = _due_minutes(Schedule(minute="*/15"), MONDAY_0800, 60)
    assert [at.minute for at in hour] == [0, 15, 30, 45]
    assert [at.minute for at in _due_minutes(Schedule(minute="7,37"), MONDAY_0800, 60)] == [7, 37]
    assert len(_due_minutes(Schedule(), MONDAY_0800, 60)) == 60


def test_celery_day_names_and_ranges_are_understood() -> None:
    # Celery's crontab parser (not a hand-written matcher) reads the fields: names and ranges work.
    week = [MONDAY_0800 + dt.timedelta(days=d) for d in range(7)]
    assert [Schedule(minute="0", hour="8", day_of_week="mon").is_due(at) for at in week] == [
        True, False, False, False, False, False, False]
    assert [Schedule(minute="0", hour="8", day_of_week="1-5").is_due(at) for at in week] == [
        True, True, True, True, True, False, False]


def test_seconds_within_the_minute_do_not_matter() -> None:
    assert Schedule(minute="0", hour="8").is_due(MONDAY_0800.replace(second=59, microsecond=5))
    assert not Schedule(minute="0", hour="8").is_due(MONDAY_0800 - dt.timedelta(seconds=1))


def test_every_scheduled_job_is_due_where_its_beat_crontab_fires() -> None:
    # Over one week, the minutes the runtime finds due are exactly the crontab's own expanded fields.
    start = dt.datetime(2026, 11, 8, 0, 0, tzinfo=dt.UTC)  # a Sunday
    for job in all_jobs():
        if job.schedule is None:
            continue
        cron = job.schedule.crontab()
        for at in (start + dt.timedelta(minutes=m) for m in range(0, 7 * 24 * 60, 7)):
            expected = at.minute in cron.minute and at.hour in cron.hour and at.isoweekday() % 7 in cron.day_of_week
            assert job.schedule.is_due(at) == expected, (job.name, at)


def test_the_start_up_round_runs_the_ingest_jobs_before_the_advice_that_reads_their_data() -> None:
    from headroom.jobs import all_jobs
    from headroom.platform.jobs.runtime import catch_up_order

    order = [job.name for job in catch_up_order(all_jobs())]
    assert sorted(order) == sorted(job.name for job in all_jobs())
    assert {job.name for job in all_jobs() if job.collects} == {
        "demo.ingest", "aws.ingest", "aws.backfill", "prometheus.ingest", "prometheus.backfill"}
    for reader in ("advice.run", "advice.demo_first", "fleet.score", "projections.run"):
        for ingest in ("demo.ingest", "aws.ingest", "prometheus.ingest"):
            assert order.index(ingest) < order.index(reader), (ingest, reader)


def test_every_job_can_run_in_the_start_up_round_without_arguments() -> None:
    """The in-process scheduler runs every job once at start-up with only (database_url, settings, now): a job
    that needs an argument (a plan, a connection) treats its absence as "every one", never a TypeError."""
    import inspect

    from headroom.jobs import all_jobs

    for job in all_jobs():
        inspect.signature(job.run).bind("postgresql://", object(), dt.datetime.now(dt.UTC))  # raises if it cannot
