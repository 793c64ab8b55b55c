"""The ORM model modules: an explicit list read by `platform.orm.import_all_models` (alembic and the app import
every table through it)."""

MODEL_MODULES = (
    "headroom.accounts.models",
    "headroom.clusters.models",
    "headroom.findings.models",
    "headroom.patches.models",
    "headroom.sources.models",
    "headroom.sources.prometheus.models",
    "headroom.inventory.models",
    "headroom.timeseries.models",
    "headroom.digest.models",
)
