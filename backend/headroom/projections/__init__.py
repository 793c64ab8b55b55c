"""Projections (docs/projections.md): days until each ceiling of a cluster's volumes, instances and stores, fitted once a day
from weeks of hourly history and served to the dashboard."""
