"""The ORM model modules: an explicit list that `import_all_models` imports (alembic and the app import every table
through it). It sits here, above the features, so the ORM base (platform.orm) never imports a feature."""

import importlib

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
    "headroom.projections.models",
    "headroom.alerts.models",
    "headroom.fleet.models",
    "headroom.metrics.models",
    "headroom.apply.models",
    "headroom.changes.models",
)


def import_all_models() -> None:
    """Import every module MODEL_MODULES lists, so all tables are on platform.orm.Base.metadata."""
    for name in MODEL_MODULES:
        importlib.import_module(name)
