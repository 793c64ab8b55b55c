"""Forecasts (pure): burst-bucket depletion (`forecast.burst`), growth to a ceiling (`forecast.growth`), and
growth of a snapshot's volumes, instances and nodes to their ceilings (`forecast.capacity`)."""

from headroom.domain.forecast.burst import (
    BalancePath,
    BurstForecast,
    forecast_bucket,
    forecast_gp2_burst,
    forecast_hdd_burst,
    forecast_instance_burst,
)
from headroom.domain.forecast.capacity import (
    CeilingForecast,
    cluster_growth,
    instance_growth,
    node_capacity_growth,
    volume_growth,
)
from headroom.domain.forecast.growth import GrowthForecast, forecast_growth, hourly

__all__ = [
    "BalancePath",
    "BurstForecast",
    "CeilingForecast",
    "GrowthForecast",
    "forecast_bucket",
    "forecast_gp2_burst",
    "forecast_growth",
    "forecast_hdd_burst",
    "forecast_instance_burst",
    "cluster_growth",
    "hourly",
    "instance_growth",
    "node_capacity_growth",
    "volume_growth",
]
