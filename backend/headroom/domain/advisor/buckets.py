"""The burst forecast of each credit bucket of a snapshot, as the advisor judges it: one path for the rules and the
charts.

A gp2 volume's BurstBalance with its counted IOPS (each I/O in 256 KiB units, docs/reference/ebs-io-accounting.md),
an st1/sc1 volume's BurstBalance with its MiB/s, and an instance's EBSIOBalance% / EBSByteBalance% with its counted
IOPS / MiB/s (AWS/EC2 sums, else the sum of its volumes), all on the window's grid (`Context.series`,
docs/series-alignment.md), the forecast taken at `ctx.now` (headroom.domain.forecast.burst). The burst rules
(rules/burst.py, rules/instance_ebs.py) judge these forecasts; the Metrics panels and the glance table show the same
ones, computed on the advisor's Context of the same window, so "empties in ..." is one number on every surface.

    instance_io_series(ctx, instance_id) -> (counted IOPS, MiB/s) | None
    volume_burst_forecast(ctx, volume_id, horizon_seconds=None) -> BurstForecast | None
    instance_burst_forecast(ctx, instance_id, kind, horizon_seconds=None) -> BurstForecast | None

`horizon_seconds` only bounds the charted path; the time to empty and its band do not depend on it.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import NDArray

from headroom.domain.advisor.context import Context
from headroom.domain.catalog.errors import CatalogError
from headroom.domain.forecast.burst import (
    BurstForecast,
    forecast_gp2_burst,
    forecast_hdd_burst,
    forecast_instance_burst,
)
from headroom.domain.snapshot import metric_ids as mid

Array = NDArray[np.float64]

BURST_VOLUME_TYPES = ("gp2", "st1", "sc1")  # the volume types with a credit bucket (docs/reference/ebs-volume-types.md)


def instance_io_series(ctx: Context, iid: str) -> tuple[Array, Array] | None:
    """Return (counted IOPS, MiB/s) of the instance: AWS/EC2 sums, else the sum of its volumes."""
    view = ctx.instance_io(iid)
    if view is not None:
        return view.counted_iops, view.mibps
    views = [ctx.volume_io(v.id) for v in ctx.volumes_on_instance(iid)]
    known = [v for v in views if v is not None]
    if not known:
        return None
    return (
        np.sum([v.counted_iops for v in known], axis=0),
        np.sum([v.mibps for v in known], axis=0),
    )


def _balance(ctx: Context, kind: str, entity_id: str, metric: str) -> Array | None:
    bal = ctx.series(kind, entity_id, metric)
    return None if bal is None or bool(np.all(np.isnan(bal))) else bal


def volume_burst_forecast(
    ctx: Context, volume_id: str, *, horizon_seconds: float | None = None
) -> BurstForecast | None:
    """Forecast a gp2 (I/O credits) or st1/sc1 (throughput credits) volume's bucket; None for other types, without
    a balance or demand, or when the catalog lacks the type. Computed once per context (the burst rule and the
    forecasts the advice run stores for the pages ask for the same)."""
    return ctx.memo(("volume_burst_forecast", volume_id, repr(horizon_seconds)),
                    lambda: _volume_burst_forecast(ctx, volume_id, horizon_seconds))


def _volume_burst_forecast(ctx: Context, volume_id: str, horizon_seconds: float | None) -> BurstForecast | None:
    try:
        vol = ctx.volume(volume_id)
    except KeyError:
        return None
    if vol.type not in BURST_VOLUME_TYPES:
        return None
    view = ctx.volume_io(vol.id)
    bal = _balance(ctx, "volume", vol.id, mid.EBS_BURST_BALANCE)
    if view is None or bal is None:
        return None
    try:
        if vol.type == "gp2":
            return forecast_gp2_burst(bal, view.counted_iops, size_gib=vol.size_gib, step_seconds=ctx.step_seconds,
                                      now=ctx.now, horizon_seconds=horizon_seconds)
        return forecast_hdd_burst(bal, view.mibps, volume_type=vol.type,  # type: ignore[arg-type]
                                  size_gib=vol.size_gib, step_seconds=ctx.step_seconds, now=ctx.now,
                                  horizon_seconds=horizon_seconds)
    except (ValueError, CatalogError):  # no demand in the recent window: nothing to forecast from
        return None


def instance_burst_forecast(
    ctx: Context, instance_id: str, kind: Literal["io", "byte"], *, horizon_seconds: float | None = None
) -> BurstForecast | None:
    """Forecast an instance's EBS burst: EBSIOBalance% with its counted IOPS (kind "io") or EBSByteBalance% with its
    MiB/s (kind "byte"); None for a type that does not burst, without a balance or demand. Computed once per
    context, as volume_burst_forecast."""
    return ctx.memo(("instance_burst_forecast", instance_id, kind, repr(horizon_seconds)),
                    lambda: _instance_burst_forecast(ctx, instance_id, kind, horizon_seconds))


def _instance_burst_forecast(
    ctx: Context, instance_id: str, kind: Literal["io", "byte"], horizon_seconds: float | None
) -> BurstForecast | None:
    inst = ctx.instance_limits(instance_id)
    rates = instance_io_series(ctx, instance_id)
    if inst is None or rates is None or not inst.bursts:
        return None
    bal = _balance(ctx, "instance", instance_id, mid.EC2_EBS_IO_BALANCE if kind == "io" else mid.EC2_EBS_BYTE_BALANCE)
    if bal is None:
        return None
    try:
        return forecast_instance_burst(bal, rates[0] if kind == "io" else rates[1], instance_type=inst.name, kind=kind,
                                       step_seconds=ctx.step_seconds, now=ctx.now, limits=inst,
                                       horizon_seconds=horizon_seconds)
    except (ValueError, CatalogError):
        return None
