"""Forecasts (pure): burst-bucket depletion (`forecast.burst`) and growth to a ceiling (`forecast.growth`)."""

from headroom.forecast.burst import (
    BalancePath,
    BurstForecast,
    forecast_bucket,
    forecast_gp2_burst,
    forecast_hdd_burst,
    forecast_instance_burst,
)
from headroom.forecast.growth import GrowthForecast, forecast_growth, hourly

__all__ = [
    "BalancePath",
    "BurstForecast",
    "GrowthForecast",
    "forecast_bucket",
    "forecast_gp2_burst",
    "forecast_growth",
    "forecast_hdd_burst",
    "forecast_instance_burst",
    "hourly",
]
