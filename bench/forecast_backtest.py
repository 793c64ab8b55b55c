"""Backtest headroom.domain.forecast against the simulator, whose future is known.

Growth: for each scenario in bench/scenarios/ (known `growth_per_week`) and seed, simulate 81 days at 5-minute
steps (headroom.domain.snapshot.simulate), train `forecast_growth` on the first 2, 6 or 21 days, and compare with the
simulated rest:
- MAPE of the hourly point forecast over the 7 held-out days after the training window;
- coverage: share of those held-out hours inside the 90 % band;
- days until the ceiling vs the truth (the first simulated hour at or above it after the training window);
  whether the forecast interval holds the truth. Ceilings: 90 % of the data volume's provisioned IOPS and
  MiB/s (the simulator clips served I/O at 100 %, so 90 % is reached unclipped), and 80 % of the data volume
  for used bytes (`tikv.store_used_bytes`, noiseless compound growth in the simulator). Both thresholds are
  this benchmark's choices, not AWS or PingCAP figures.

Burst: examples/scenarios/gp2-burst-depletion.yaml (500 GiB gp2, docs/reference/gp2-burst.md#the-credit-bucket) for 3 days at 1-minute
steps; each day, when BurstBalance first falls below 80 % while draining, forecast the empty time from the
last hour and compare with when the simulated balance reached 0.

Real world (`realworld`): the same measures on series our simulator did not make, shipped inside installed
packages (no download), mapped onto the forecaster's hourly clock (daily season 24 steps, weekly 168):
- Victorian electricity demand, hourly, 2012-01-01 to 2012-05-29 (3,600 h): the file statsmodels ships for its
  MSTL tests (`statsmodels/tsa/stl/tests/results/mstl_elec_vic.csv`), hourly sums of the half-hourly
  operational demand (MW) published by the Australian Energy Market Operator, as in tsibbledata's `vic_elec`
  and statsmodels' MSTL example. One observation = one hour: the clock is the real one.
- Mauna Loa CO2 (statsmodels `datasets.co2`: Keeling & Whorf, SIO flask samples, weekly, 1958-2001),
  averaged to semi-monthly means (24 a year). One semi-month = one hour-step, so the forecaster's "day" (24
  steps) is one year and its daily season is the yearly CO2 cycle; a steadily compounding series, like stored
  bytes.
Training windows of 2, 6 and 21 "days" end at several origins (instead of seeds); held out: the next 7
"days". Ceiling: halfway between the training window's maximum and the maximum of the data after it (within
the horizon), so the series really crosses it later; a case whose later data never exceeds the training
maximum has no ceiling (n/a). The truth is the first hour at or above it.

Run: `uv run python bench/forecast_backtest.py [burst|growth|realworld]` (a few minutes each on 2 cores).
Prints Markdown.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import statsmodels.api as sm
import statsmodels.tsa.stl
from headroom.domain.forecast import (
    BurstForecast,
    forecast_gp2_burst,
    forecast_growth,
    forecast_instance_burst,
    hourly,
)
from headroom.domain.derived import mib_per_second
from headroom.domain.snapshot.scenario import Monitoring, Scenario, load_scenario
from headroom.domain.snapshot.schema import Snapshot
from headroom.domain.snapshot.simulate import simulate
from headroom.domain.snapshot.views import (
    IO_METRICS,
    aligned,
    find_series,
    instance_io,
    values,
    volume_io,
)

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ["growth-gp3-iops.yaml", "growth-gp3-weekly.yaml"]
SEEDS = [0, 1, 2]
TRAIN_DAYS = [2, 6, 21]
GROWTH_MODES = ["additive", "multiplicative"]
HOLDOUT_DAYS = 7
HORIZON_DAYS = 60
STEP = 300
GIB = 1024.0**3
IOPS_CEILING_SHARE = 0.9
CAPACITY_CEILING_SHARE = 0.8


@dataclass
class Row:
    scenario: str
    series: str
    growth: str
    train_days: int
    seed: int
    method: str
    mape: float
    coverage: float
    days: float | None
    days_low: float | None
    days_high: float | None
    truth: float | None  # None: not reached within the simulated future
    fit_seconds: float
    ceiling: float | None = (
        0.0  # None: no ceiling (real-world case whose later data stays below the training max)
    )
    horizon: float = HORIZON_DAYS


def _truth_days(hourly_values: np.ndarray, train_hours: int, ceiling: float) -> float | None:
    hit = np.flatnonzero(hourly_values[train_hours:] >= ceiling)
    return None if len(hit) == 0 else float(hit[0]) / 24.0


def _series(snapshot: Snapshot) -> dict[str, tuple[np.ndarray, float]]:
    data = next(v for v in snapshot.volumes if v.role == "data")
    node = snapshot.nodes[0]
    io = volume_io(snapshot, data.id)
    assert data.iops is not None and data.throughput_mibps is not None
    used = values(find_series(snapshot, "node", node.id, "tikv.store_used_bytes")) / GIB
    return {
        "data IOPS": (io.counted_iops, IOPS_CEILING_SHARE * data.iops),
        "data MiB/s": (io.mibps, IOPS_CEILING_SHARE * data.throughput_mibps),
        "used GiB": (used, CAPACITY_CEILING_SHARE * data.size_gib),
    }


def growth_rows() -> list[Row]:
    rows: list[Row] = []
    per_hour = 3600 // STEP
    for name in SCENARIOS:
        scenario = load_scenario(ROOT / "bench" / "scenarios" / name)
        for seed in SEEDS:
            total_hours = (max(TRAIN_DAYS) + HORIZON_DAYS) * 24
            snap = simulate(scenario, hours=float(total_hours), seed=seed, step_seconds=STEP)
            for label, (raw, ceiling) in _series(snap).items():
                truth_hourly = hourly(raw, STEP)
                for mode, train_days in [(m, d) for m in GROWTH_MODES for d in TRAIN_DAYS]:
                    train_h = train_days * 24
                    t0 = time.perf_counter()
                    f = forecast_growth(
                        raw[: train_h * per_hour],
                        step_seconds=STEP,
                        start=snap.window.start,
                        horizon_days=HORIZON_DAYS,
                        ceiling=ceiling,
                        seed=seed,
                        growth=mode,  # type: ignore[arg-type]
                    )
                    fit_s = time.perf_counter() - t0
                    hold = slice(train_h, train_h + HOLDOUT_DAYS * 24)
                    actual = truth_hourly[hold]
                    n = len(actual)
                    point = np.array(f.point[:n])
                    low, high = np.array(f.low[:n]), np.array(f.high[:n])
                    mape = float(np.mean(np.abs(point - actual) / np.abs(actual))) * 100
                    coverage = float(np.mean((actual >= low) & (actual <= high))) * 100
                    rows.append(
                        Row(
                            scenario=name.removesuffix(".yaml"),
                            series=label,
                            growth=mode,
                            train_days=train_days,
                            seed=seed,
                            method=f.method,
                            mape=mape,
                            coverage=coverage,
                            days=f.days_until_ceiling,
                            days_low=f.days_until_ceiling_low,
                            days_high=f.days_until_ceiling_high,
                            truth=_truth_days(truth_hourly, train_h, ceiling),
                            fit_seconds=fit_s,
                        )
                    )
    return rows


def _fmt(x: float | None, horizon: float = HORIZON_DAYS) -> str:
    return f"> {horizon:g}" if x is None else f"{x:.1f}"


def _contains(r: Row) -> bool:
    lo = r.days_low if r.days_low is not None else math.inf
    hi = r.days_high if r.days_high is not None else math.inf
    truth = r.truth if r.truth is not None else math.inf
    if truth > HORIZON_DAYS:
        truth = math.inf
    return lo <= truth <= hi


def _held(group: list[Row]) -> str:
    judged = [r for r in group if r.ceiling is not None]
    return "n/a" if not judged else f"{sum(_contains(r) for r in judged)}/{len(judged)}"


def _days_error(r: Row) -> float | None:
    if r.ceiling is None or r.truth is None or r.days is None or r.truth > HORIZON_DAYS:
        return None
    return r.days - r.truth


def print_growth(
    rows: list[Row],
    title: str = f"Growth: per scenario, series and training length (mean over seeds {SEEDS})",
    summary: str = "Growth: by growth mode and method",
    truth_per_run: bool = False,
) -> None:
    print(f"### {title}\n")
    print(
        "| scenario | series | growth | train | method | MAPE 7 d | 90 % band coverage 7 d | days to ceiling: "
        "forecast [interval] | truth | error (days) | interval holds truth | fit s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    keys = sorted({(r.scenario, r.series, r.growth, r.train_days) for r in rows})
    for key in keys:
        group = [r for r in rows if (r.scenario, r.series, r.growth, r.train_days) == key]
        methods = ", ".join(sorted({r.method for r in group}))
        errs = [e for e in (_days_error(r) for r in group) if e is not None]
        forecast = "; ".join(
            "n/a"
            if r.ceiling is None
            else f"{_fmt(r.days, r.horizon)} [{_fmt(r.days_low, r.horizon)}, {_fmt(r.days_high, r.horizon)}]"
            for r in group
        )
        truth_cells = [
            "n/a"
            if r.ceiling is None
            else _fmt(r.truth if r.truth is None or r.truth <= r.horizon else None, r.horizon)
            for r in group
        ]
        truths = "; ".join(truth_cells) if truth_per_run else ", ".join(sorted(set(truth_cells)))
        print(
            f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} d | {methods} "
            f"| {np.mean([r.mape for r in group]):.1f} % "
            f"| {np.mean([r.coverage for r in group]):.0f} % "
            f"| {forecast} | {truths} "
            f"| {'n/a' if not errs else f'{np.mean(errs):+.1f} (max abs {np.max(np.abs(errs)):.1f})'} "
            f"| {_held(group)} "
            f"| {np.mean([r.fit_seconds for r in group]):.2f} |"
        )
    print()
    print(f"### {summary}\n")
    print(
        "| growth | method | cases | mean MAPE 7 d | mean coverage 7 d | mean abs error, days to ceiling | interval holds truth |"
    )
    print("|---|---|---|---|---|---|---|")
    for mode, method in [
        (g, m) for g in GROWTH_MODES for m in ("theil-sen", "holt", "ets-daily", "ets-weekly")
    ]:
        group = [r for r in rows if r.method == method and r.growth == mode]
        if not group:
            continue
        errs = [abs(e) for e in (_days_error(r) for r in group) if e is not None]
        print(
            f"| {mode} | {method} | {len(group)} | {np.mean([r.mape for r in group]):.1f} % "
            f"| {np.mean([r.coverage for r in group]):.0f} % "
            f"| {np.mean(errs) if errs else math.nan:.1f} ({len(errs)} with a truth inside the horizon) "
            f"| {_held(group)} |"
        )
    print()


@dataclass(frozen=True)
class RealSeries:
    name: str
    label: str
    values: np.ndarray  # one value per hour-step of the forecaster's clock
    start: datetime
    origins_days: list[int]  # where the training windows end, in the forecaster's days


def _vic_elec() -> RealSeries:
    path = Path(statsmodels.tsa.stl.__file__).parent / "tests" / "results" / "mstl_elec_vic.csv"
    if not path.exists():
        raise SystemExit(f"{path} is missing: this statsmodels wheel does not ship its tests")
    frame = pd.read_csv(path, index_col="ds", parse_dates=["ds"])
    ts = frame.index
    assert len(ts) == 3600 and (ts[1:] - ts[:-1] == pd.Timedelta(hours=1)).all()
    # the file's times are Melbourne local time without a zone; only the positions matter to the forecaster
    return RealSeries(
        name="vic-elec",
        label="demand (1 step = 1 h)",
        values=frame["y"].to_numpy(dtype=np.float64),
        start=datetime(2012, 1, 1, tzinfo=UTC),
        origins_days=list(range(28, 119, 10)),  # 10 days apart: every weekday ends a window
    )


def _co2() -> RealSeries:
    weekly = sm.datasets.co2.load_pandas().data["co2"]
    semi_monthly = weekly.resample("SMS").mean()  # the 1st and the 15th: 24 a year; empty bins stay NaN
    return RealSeries(
        name="co2 Mauna Loa",
        label="ppm (1 step = half a month)",
        values=semi_monthly.to_numpy(
            dtype=np.float64
        ),  # NaN: a gap, interpolated by `hourly` as for any series
        start=datetime(1958, 3, 15, tzinfo=UTC),  # a label only: one hour-step stands for half a month
        origins_days=[21, 25, 29, 33],
    )


def realworld_rows() -> list[Row]:
    rows: list[Row] = []
    for series in (_vic_elec(), _co2()):
        truth_hourly = hourly(series.values, 3600)
        for origin in series.origins_days:
            end = origin * 24
            horizon_days = min(HORIZON_DAYS, (len(truth_hourly) - end) // 24)
            future = truth_hourly[end : end + horizon_days * 24]
            for mode, train_days in [(m, d) for m in GROWTH_MODES for d in TRAIN_DAYS]:
                train = series.values[end - train_days * 24 : end]
                train_max = float(np.nanmax(train))
                ceiling = None
                if float(np.max(future)) > train_max:
                    ceiling = train_max + 0.5 * (float(np.max(future)) - train_max)
                t0 = time.perf_counter()
                f = forecast_growth(
                    train,
                    step_seconds=3600,
                    start=series.start + timedelta(hours=end - train_days * 24),
                    horizon_days=horizon_days,
                    ceiling=ceiling,
                    seed=0,
                    growth=mode,  # type: ignore[arg-type]
                )
                fit_s = time.perf_counter() - t0
                actual = future[: HOLDOUT_DAYS * 24]
                n = len(actual)
                point = np.array(f.point[:n])
                low, high = np.array(f.low[:n]), np.array(f.high[:n])
                rows.append(
                    Row(
                        scenario=series.name,
                        series=series.label,
                        growth=mode,
                        train_days=train_days,
                        seed=origin,
                        method=f.method,
                        mape=float(np.mean(np.abs(point - actual) / np.abs(actual))) * 100,
                        coverage=float(np.mean((actual >= low) & (actual <= high))) * 100,
                        days=f.days_until_ceiling,
                        days_low=f.days_until_ceiling_low,
                        days_high=f.days_until_ceiling_high,
                        truth=None if ceiling is None else _truth_days(truth_hourly, end, ceiling),
                        fit_seconds=fit_s,
                        ceiling=ceiling,
                        horizon=float(horizon_days),
                    )
                )
    return rows


BurstRow = tuple[str, int, float, float, float, float, float]


def _inf(x: float | None) -> float:
    return math.inf if x is None else x


def _burst_cases(
    label: str,
    snap: Snapshot,
    bal: np.ndarray,
    demand: np.ndarray,
    forecast: Callable[..., BurstForecast],
    step: int = 60,
) -> list[BurstRow]:
    out: list[BurstRow] = []
    per_day = 86400 // step
    days = len(bal) // per_day
    for day in range(days):
        day_idx = np.arange(day * per_day, (day + 1) * per_day)
        below = [i for i in day_idx[1:] if bal[i] < 80.0 <= bal[i - 1]]
        if not below:
            continue
        i = int(below[0])
        empty = [j for j in range(i, len(bal)) if bal[j] <= 0.0]
        if not empty:
            continue
        now = snap.window.start + timedelta(seconds=step * i)
        f = forecast(bal[: i + 1], demand[: i + 1], step_seconds=step, now=now)
        actual = (empty[0] - i) * float(step)
        out.append(
            (
                label,
                day,
                float(bal[i]),
                _inf(f.seconds_to_empty),
                _inf(f.seconds_to_empty_low),
                _inf(f.seconds_to_empty_high),
                actual,
            )
        )
    return out


def burst_rows() -> list[BurstRow]:
    """Per bucket and day: (bucket, day, balance at forecast, forecast s, band low s, band high s, actual s)."""
    out: list[BurstRow] = []
    scenario = load_scenario(ROOT / "examples" / "scenarios" / "gp2-burst-depletion.yaml")
    snap = simulate(scenario, hours=72.0, seed=0, step_seconds=60)
    for k, vol in enumerate(snap.volumes):
        bal_series = find_series(snap, "volume", vol.id, "ebs.burst_balance")
        if bal_series is None:
            continue
        demand = volume_io(snap, vol.id).counted_iops
        fc = partial(forecast_gp2_burst, size_gib=vol.size_gib)
        out += _burst_cases(f"gp2 500 GiB #{k + 1}", snap, values(bal_series), demand, fc)
    scenario = load_scenario(ROOT / "examples" / "scenarios" / "instance-ebs-burst-depletion.yaml")
    for suffix, variant in (("", scenario), (", gp3 at 1,000 MiB/s", _unclipped(scenario))):
        snap = simulate(variant, hours=72.0, seed=0, step_seconds=60)
        for k, inst in enumerate(snap.instances):
            byte_series = find_series(snap, "instance", inst.id, "ec2.ebs_byte_balance")
            if byte_series is None:
                continue
            mibps = instance_io(snap, inst.id).mibps
            fc = partial(forecast_instance_burst, instance_type=inst.type, kind="byte")
            # EBSByteBalance% is a 5-minute metric in every monitoring mode (the simulator follows AWS since
            # 6938029): put it on the 1-minute grid of the demand, as the advisor does
            balance = aligned(byte_series, snap.window)
            out += _burst_cases(f"{inst.type} EBSByteBalance{suffix} #{k + 1}", snap, balance, mibps, fc)
    return out


def _unclipped(scenario: Scenario) -> Scenario:
    """The instance scenario with its gp3 data volume at 1,000 MiB/s and 16,000 IOPS (gp3 limits, docs/reference/ebs-volume-types.md#limits-per-volume-type):
    the batch's demand is no longer clipped flat at the volume's 400 MiB/s but follows the diurnal load."""
    data = scenario.model_dump()
    for node in data["nodes"]:
        for vol in node["volumes"]:
            vol.update(throughput_mibps=1000, iops=16000)
    return Scenario.model_validate(data)


def instance_shape_rows() -> list[BurstRow]:
    """The instance scenario's byte bucket in the shapes AWS/EC2 delivers it (docs/reference/cloudwatch.md#instance-ebs-metrics), all 3 days.

    - basic, 1-minute grid: 300 s Sums and the 5-minute EBSByteBalance% held on the advisor's 1-minute window;
    - detailed, 1-minute grid: 60 s Sums, the balance still 5-minute ("Basic monitoring only");
    - basic, 5-minute: the series at their own period, as the metrics API's node forecasts read them;
    - minute: every series every minute (not what AWS delivers; the simulator's idealised feed).
    """
    scenario = load_scenario(ROOT / "examples" / "scenarios" / "instance-ebs-burst-depletion.yaml")
    out: list[BurstRow] = []
    for mode in ("basic", "detailed", "minute"):
        snap = simulate(scenario, hours=72.0, seed=0, step_seconds=60, monitoring=Monitoring(ec2=mode))
        for k, inst in enumerate(snap.instances):
            byte_series = find_series(snap, "instance", inst.id, "ec2.ebs_byte_balance")
            if byte_series is None:
                continue
            fc = partial(forecast_instance_burst, instance_type=inst.type, kind="byte")
            out += _burst_cases(
                f"{mode}, 1-minute grid #{k + 1}",
                snap,
                aligned(byte_series, snap.window),
                instance_io(snap, inst.id).mibps,
                fc,
            )
            if mode != "basic":
                continue
            sums = [find_series(snap, "instance", inst.id, m) for m in IO_METRICS["instance"][2:]]
            if any(x is None or x.step_seconds != 300 for x in (*sums, byte_series)):
                continue
            total = sum(np.nan_to_num(x.array) for x in sums if x is not None)
            out += _burst_cases(
                f"basic, 5-minute #{k + 1}",
                snap,
                byte_series.array,
                mib_per_second(total, 300),
                fc,
                step=300,
            )
    return out


def print_instance_shapes(rows: list[BurstRow]) -> None:
    print("### Burst: the instance byte bucket by data shape (instance-ebs-burst-depletion, 3 days)\n")
    print("| data shape | day 1 error | days 2-3 error | mean abs error | in band |")
    print("|---|---|---|---|---|")
    for shape in dict.fromkeys(r[0].split(" #")[0] for r in rows):
        group = [r for r in rows if r[0].split(" #")[0] == shape]
        errs: dict[int, list[float]] = {r[1]: [] for r in group}
        for r in group:
            errs[r[1]].append((r[3] - r[6]) / r[6] * 100)
        later = [e for d, es in errs.items() if d > 0 for e in es]

        def span(xs: list[float]) -> str:
            return "n/a" if not xs else f"{min(xs):+.1f} % to {max(xs):+.1f} %"

        held = sum(r[4] <= r[6] <= r[5] for r in group)
        mae = np.mean([abs(r[3] - r[6]) / r[6] * 100 for r in group])
        print(f"| {shape} | {span(errs.get(0, []))} | {span(later)} | {mae:.0f} % | {held}/{len(group)} |")
    print()


def print_burst(rows: list[BurstRow]) -> None:
    print("### Burst: gp2-burst-depletion and instance-ebs-burst-depletion (3 days each)\n")
    print(
        "| bucket | day | balance at forecast | forecast to empty (min) | band (min) | actual (min) | error "
        "| in band |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for label, day, b, f, lo, hi, actual in rows:
        print(
            f"| {label} | {day + 1} | {b:.1f} % | {f / 60:.0f} | [{lo / 60:.0f}, {hi / 60:.0f}] | {actual / 60:.0f} "
            f"| {(f - actual) / actual * 100:+.0f} % | {'yes' if lo <= actual <= hi else 'no'} |"
        )
    for prefix in dict.fromkeys(r[0].split(" #")[0] for r in rows):
        group = [r for r in rows if r[0].split(" #")[0] == prefix]
        errs = [abs(r[3] - r[6]) / r[6] * 100 for r in group]
        held = sum(r[4] <= r[6] <= r[5] for r in group)
        print(
            f"\n{prefix}: mean abs error {np.mean(errs):.0f} %; actual inside the band {held}/{len(group)}."
        )
    print()


def main() -> int:
    only = sys.argv[1] if len(sys.argv) > 1 else None  # "burst", "growth" or "realworld" to run one part
    t0 = time.perf_counter()
    if only in (None, "burst"):
        print_burst(burst_rows())
        print_instance_shapes(instance_shape_rows())
    if only in (None, "growth"):
        print_growth(growth_rows())
    if only in (None, "realworld"):
        print_growth(
            realworld_rows(),
            "Real world: per series and training length (the forecaster's days; mean over the origins)",
            "Real world: by growth mode and method",
            truth_per_run=True,
        )
    print(f"_Run time {time.perf_counter() - t0:.0f} s._")
    return 0


if __name__ == "__main__":
    sys.exit(main())
