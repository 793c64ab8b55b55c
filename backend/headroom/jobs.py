"""The background jobs' modules, one per feature: an explicit list (each module declares a `JOBS` tuple) that
`all_jobs` collects and installs as the table `platform.jobs.registry` (and so `dispatch`) reads. The order is the
order jobs are listed in (the old modules' name order)."""

from __future__ import annotations

import importlib

from headroom.platform.jobs.registry import Job, install

JOB_MODULES = (
    "headroom.findings.jobs",
    "headroom.sources.demo.jobs",
    "headroom.digest.jobs",
    "headroom.sources.aws.jobs",
    "headroom.sources.prometheus.jobs",
    "headroom.timeseries.jobs",
    "headroom.projections.jobs",
    "headroom.alerts.jobs",
    "headroom.fleet.jobs",
    "headroom.changes.jobs",
    "headroom.apply.jobs",
)


def _collect() -> tuple[Job, ...]:
    """Collect `JOBS` from every module JOB_MODULES names."""
    found: list[Job] = []
    for name in JOB_MODULES:
        found.extend(importlib.import_module(name).JOBS)
    names = [j.name for j in found]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise RuntimeError(f"duplicate job names: {sorted(duplicates)}")
    return tuple(found)


_JOBS: tuple[Job, ...] | None = None


def all_jobs() -> tuple[Job, ...]:
    """Every job, collected once per process and installed in the registry (where `dispatch` finds them)."""
    global _JOBS
    if _JOBS is None:
        _JOBS = _collect()
        install(_JOBS)
    return _JOBS


def job(name: str) -> Job:
    for entry in all_jobs():
        if entry.name == name:
            return entry
    raise KeyError(name)
