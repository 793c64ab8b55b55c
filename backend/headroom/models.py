"""The ORM model modules: an explicit list read by `store.base.import_all_models` (alembic and the app import
every table through it)."""

MODEL_MODULES = (
    "headroom.store.models",
    "headroom.store.models_collect",
    "headroom.store.models_digest",
    "headroom.store.models_inventory",
    "headroom.store.models_prometheus",
)
