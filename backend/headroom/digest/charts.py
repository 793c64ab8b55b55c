"""The weekly email's charts: for a top finding, a small PNG of its evidence against the limit it was judged by
(and its projection where it has one), with the same said in words for the text part and the image's alt text.

    finding_chart(series, forecasts, *, step_seconds, cid) -> ChartImage | None

`series` are the finding's evidence series as the finding page charts them (headroom.findings.evidence_series:
the numbers the rule judged, over its evidence window); the chart takes the first one that carries a reference
line (the limit), else the first with data. A credit balance (BurstBalance, the instances' EBS IO and byte
balances) is read as a floor: the words say how long it sat empty; anything else as a ceiling: the peak and how
much of the window it spent at or above each line. Drawn with matplotlib's Agg canvas (no display, no pyplot
state, safe in a worker thread); every line is labelled in the legend with its value and unit, so labels never
sit on top of each other.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import math
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from headroom.digest.build import ChartImage
from headroom.domain.model import EvidenceSeries, Forecast
from headroom.domain.snapshot import metric_ids as mid
from headroom.domain.snapshot.labels import metric_label
from headroom.domain.units import format_duration_words, format_quantity, round_half_up

# 560 CSS pixels wide fits every mail client's reading pane (Gmail, Outlook: 600 px templates); drawn at 1.5x for
# high-density screens.
WIDTH_PX, HEIGHT_PX, SCALE = 560, 190, 1.5
# A projection further ahead than this many evidence windows is drawn up to there (the label gives its date).
PROJECTION_WINDOWS = 2.0
BALANCE_METRICS = (mid.EBS_BURST_BALANCE, mid.EC2_EBS_IO_BALANCE, mid.EC2_EBS_BYTE_BALANCE)
LINE, LIMIT, PROJECTION = "#175cd3", "#b42318", "#667085"


# Units as people write them (CloudWatch says "Percent"; derived series say "IOPS", "MiB/s").
_UNIT_WORDS = {"Percent": "%", "None": "", "Count": ""}

def unit_of(chart: EvidenceSeries) -> str:
    return _UNIT_WORDS.get(chart.unit, chart.unit)


def name_of(chart: EvidenceSeries) -> str:
    """What the series is, in words: the evidence's own label, else the metric's label ("Burst balance")."""
    if chart.label and not chart.label.startswith(chart.metric):
        return chart.label
    return metric_label(chart.metric)


def _number(value: float, unit: str) -> str:
    return format_quantity(value, unit)


def _share(fraction: float) -> str:
    return format_quantity(100 * fraction, "%")


def _hours(points: int, step_seconds: int) -> str:
    return format_duration_words(points * step_seconds)


def pick(series: Sequence[EvidenceSeries]) -> EvidenceSeries | None:
    """The series the chart draws: the first with a reference line and data, else the first with data."""
    with_data = [s for s in series if s.found and any(v is not None for v in s.values)]
    return next((s for s in with_data if s.reference_lines), with_data[0] if with_data else None)


def _projection(chart: EvidenceSeries, forecasts: Sequence[Forecast]) -> tuple[dt.datetime, float, str] | None:
    """Where the finding's forecast takes the drawn series: (when, value, in words), or None."""
    for f in forecasts:
        if f.at is None or not f.within_seconds or f.within_seconds <= 0:
            continue
        if f.kind == "ceiling" and f.value is not None and f.unit in (chart.unit, unit_of(chart)):
            return f.at, f.value, f"projected to reach {_number(f.value, f.unit)} around {f.at:%Y-%m-%d}"
        if f.kind == "burst_empty" and chart.metric in BALANCE_METRICS:
            within = "within a day" if f.within_seconds < 86400 else f"in about {round_half_up(f.within_seconds / 86400):,} days"
            return f.at, 0.0, f"projected to empty {within} at the recent demand"
    return None


def peak_use(chart: EvidenceSeries) -> tuple[float, float, float] | None:
    """The highest value / the ceiling in force then, as (fraction, value, ceiling): the advisor's and the glance
    table's utilisation (metrics.service.peak_utilisation); None without a ceiling in force."""
    if chart.in_force is None:
        return None
    best: tuple[float, float, float] | None = None
    for value, ceiling in zip(chart.values, chart.in_force, strict=True):
        if value is None or ceiling is None or not ceiling > 0:
            continue
        if best is None or value / ceiling > best[0]:
            best = (value / ceiling, value, ceiling)
    return best


def describe(chart: EvidenceSeries, step_seconds: int, forecasts: Sequence[Forecast] = ()) -> str:
    """The chart in words: what it shows, over which window, against which lines."""
    values = [v for v in chart.values if v is not None]
    if not values:
        return f"{name_of(chart)}: no data in the window."
    end = dt.datetime.fromtimestamp(chart.t[-1] + step_seconds, dt.UTC)
    unit = unit_of(chart)
    span = f"{name_of(chart)} over the {_hours(len(chart.t), step_seconds)} to {end:%Y-%m-%d %H:%M} UTC"
    parts: list[str] = []
    if chart.metric in BALANCE_METRICS:
        empty = sum(1 for v in values if v <= 0.5)
        parts.append(f"lowest {_number(min(values), unit)}")
        parts.append(f"empty for {_hours(empty, step_seconds)}" if empty else "never empty")
        for line in chart.reference_lines[:2]:
            below = sum(1 for v in values if v < line.value) / len(values)
            value = _number(line.value, _UNIT_WORDS.get(line.unit, line.unit) or unit)
            parts.append(f"{_share(below)} of the time below {value} ({line.label})")
    else:
        peak = max(values)
        lines = sorted(chart.reference_lines, key=lambda r: r.value)
        highest = lines[-1] if lines else None
        use = peak_use(chart)
        if use is not None:
            # a volume's or an instance's IOPS / MiB/s: its peak use of the ceiling in force, the glance table's number
            share, at_peak, in_force_then = use
            parts.append(f"peak {_number(at_peak, unit)} ({_share(share)} of {_number(in_force_then, unit)}: "
                         "ceiling in force)")
        else:
            of = ""
            if highest is not None and highest.value > 0:
                limit_text = _number(highest.value, _UNIT_WORDS.get(highest.unit, highest.unit) or unit)
                of = f" ({_share(peak / highest.value)} of {limit_text}: {highest.label})"
            parts.append(f"peak {_number(peak, unit)}{of}")
        for line in lines[:3]:
            share = sum(1 for v in values if v >= line.value) / len(values)
            value = _number(line.value, _UNIT_WORDS.get(line.unit, line.unit) or unit)
            parts.append(f"{_share(share)} of the time at or above {value} ({line.label})")
    projection = _projection(chart, forecasts)
    if projection is not None:
        parts.append(projection[2])
    return f"{span}: {'; '.join(parts)}."


# Drawn charts by what they draw (the series, the forecasts, the step): a finding's evidence window is fixed
# between advisor runs, so the settings page's preview, a test send and Monday's send draw each chart once and
# then reuse the PNG (matplotlib takes 0.5-1 s of CPU a chart; the lookup, hashing the inputs, about 1 ms).
# 128 charts of about 30 KB: a few MB per process.
CHART_CACHE_SIZE = 128
_drawn: OrderedDict[str, ChartImage] = OrderedDict()
_drawn_lock = threading.Lock()


def warm_up() -> None:
    """Import matplotlib and draw one small figure: the first chart of a process otherwise pays for both (2-8 s
    on a busy 2-core machine, most of it the import), and the first person to open the email's preview waits."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(1, 1), dpi=50, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], label="x")
    ax.legend(fontsize=6.5)
    fig.savefig(io.BytesIO(), format="png")


def _chart_key(chart: EvidenceSeries, forecasts: Sequence[Forecast], step_seconds: int) -> str:
    digest = hashlib.sha256(chart.model_dump_json().encode())
    for f in forecasts:
        digest.update(f.model_dump_json().encode())
    digest.update(str(step_seconds).encode())
    return digest.hexdigest()


def finding_chart(series: Sequence[EvidenceSeries], forecasts: Sequence[Forecast], *, step_seconds: int, cid: str
                  ) -> ChartImage | None:
    """Draw a finding's evidence chart, or reuse the one drawn from the same inputs (None: nothing to draw)."""
    chart = pick(series)
    if chart is None:
        return None
    key = _chart_key(chart, forecasts, step_seconds)
    with _drawn_lock:
        cached = _drawn.get(key)
        if cached is not None:
            _drawn.move_to_end(key)
            return replace(cached, cid=cid)
    image = _draw(chart, forecasts, step_seconds=step_seconds, cid=cid)
    with _drawn_lock:
        _drawn[key] = image
        while len(_drawn) > CHART_CACHE_SIZE:
            _drawn.popitem(last=False)
    return image


def _draw(chart: EvidenceSeries, forecasts: Sequence[Forecast], *, step_seconds: int, cid: str) -> ChartImage:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter
    from matplotlib.figure import Figure

    times = np.asarray(chart.t, dtype=np.int64).astype("datetime64[s]")
    values = [math.nan if v is None else v for v in chart.values]
    fig = Figure(figsize=(WIDTH_PX / 100, HEIGHT_PX / 100), dpi=100 * SCALE, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    unit = unit_of(chart)
    name = name_of(chart)
    series_label = name if not unit or unit in name else f"{name} ({unit})"
    # clip_on=False: a balance sitting at 0 % is drawn over the axis, not hidden under it
    ax.plot(times, values, color=LINE, linewidth=1.1, label=series_label, clip_on=False, zorder=3)
    top = max((v for v in values if not math.isnan(v)), default=0.0)
    for line in sorted(chart.reference_lines, key=lambda r: -r.value)[:3]:
        line_unit = _UNIT_WORDS.get(line.unit, line.unit) or unit
        ax.axhline(line.value, color=LIMIT, linewidth=1.0, linestyle="-" if line.value >= top * 0.999 else "--",
                   label=f"{line.label}: {_number(line.value, line_unit)}")
        top = max(top, line.value)
    projection = _projection(chart, forecasts)
    if projection is not None and len(chart.t):
        at_time, target, words = projection
        last_t, at = float(chart.t[-1]), at_time.timestamp()
        last_v = next((v for v in reversed(values) if not math.isnan(v)), math.nan)
        cap = last_t + (last_t - chart.t[0]) * PROJECTION_WINDOWS
        if at > cap and not math.isnan(last_v):  # drawn up to the cap, on the straight line to the crossing
            target = last_v + (target - last_v) * (cap - last_t) / (at - last_t)
            at = cap
        ends = np.asarray([last_t, at], dtype=np.int64).astype("datetime64[s]")
        ax.plot(ends, [last_v, target], color=PROJECTION, linewidth=1.2, linestyle=":", label=words)
    if unit == "%":
        ax.set_ylim(0, 100)  # a balance is 0-100 %
    else:
        ax.set_ylim(bottom=0, top=top * 1.15 if top > 0 else 1)
    locator = AutoDateLocator(minticks=3, maxticks=7)  # type: ignore[no-untyped-call]
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(ConciseDateFormatter(  # type: ignore[no-untyped-call]
        locator, offset_formats=["", "%Y", "%Y-%m", "%Y-%m-%d UTC", "%Y-%m-%d UTC", "%Y-%m-%d %H:%M UTC"]))
    ax.xaxis.get_offset_text().set_fontsize(6.5)
    ax.tick_params(labelsize=7)
    if unit:
        ax.set_ylabel(unit, fontsize=7)
    ax.grid(True, color="#eaecf0", linewidth=0.6)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    # the legend above the plot, in a row: every line named with its value, nothing drawn over the data
    ax.legend(fontsize=6.5, loc="lower left", bbox_to_anchor=(0.0, 1.0), ncols=2, frameon=False,
              borderaxespad=0.2, handlelength=1.8)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    words = describe(chart, step_seconds, forecasts)
    return ChartImage(cid=cid, png=buffer.getvalue(), alt=words, words=words)
