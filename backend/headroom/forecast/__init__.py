"""Forecasts (pure): burst-bucket depletion (`forecast.burst`) and growth to a ceiling (`forecast.growth`)."""

from headroom.forecast.burst import (
    BalancePath,
    BurstForecast,
    forecast_bucket,
    forecast_gp2_burst,
    forecast_hdd_burst,
    forecast_instance_burst,
)

__all__ = [
    "BalancePath",
    "BurstForecast",
    "forecast_bucket",
    "forecast_gp2_burst",
    "forecast_hdd_burst",
    "forecast_instance_burst",
]
