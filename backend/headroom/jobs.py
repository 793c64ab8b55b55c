"""The background jobs' modules, one per feature: an explicit list read by `platform.jobs.registry` (each module
declares a `JOBS` tuple). The order is the order jobs are listed in (the old modules' name order)."""

JOB_MODULES = (
    "headroom.findings.jobs",
    "headroom.clusters.jobs",
    "headroom.digest.jobs",
    "headroom.sources.aws.jobs",
    "headroom.sources.prometheus.jobs",
    "headroom.timeseries.jobs",
)
