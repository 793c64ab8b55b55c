"""The pure parts of the metrics service: resolution bands, ceiling segments and utilisation against the limit in
force at each time (counted IOPS: tests/domain/test_derived.py; raw aggregation and the raw tail:
tests/timeseries/test_timeseries_read.py)."""

from __future__ import annotations

import datetime as dt

import numpy as np
from headroom.domain.model import Ceiling, CeilingKind
import pytest
from headroom.domain.physics.ceilings import merge_segments
from headroom.metrics import service as m
from headroom.timeseries import columns
from headroom.platform.errors import InvalidInput

T0 = dt.datetime(2026, 11, 2, 0, 0, tzinfo=dt.UTC)


@pytest.mark.parametrize(
    ("window", "resolution"),
    [
        (dt.timedelta(minutes=1), 60),
        (dt.timedelta(hours=6), 60),  # the brief: raw up to 6 h inclusive
        (dt.timedelta(hours=6, minutes=1), 300),
        (dt.timedelta(days=8), 300),  # 5-minute up to 8 days inclusive
        (dt.timedelta(days=8, minutes=1), 3600),
        (dt.timedelta(days=30), 3600),
    ],
)
def test_resolution_bands(window: dt.timedelta, resolution: int) -> None:
    assert m.choose_resolution(T0, T0 + window) == resolution


def test_window_defaults_and_errors() -> None:
    now = T0 + dt.timedelta(hours=12)
    assert m.validate_window(None, None, now) == (now - dt.timedelta(hours=6), now)
    with pytest.raises(InvalidInput) as err:
        m.validate_window(now, now, now)
    assert err.value.details == [{"field": "start", "message": "must be before end"}]
    with pytest.raises(InvalidInput) as err:
        m.validate_window(None, dt.datetime(2026, 11, 2), now)
    assert err.value.details[0]["field"] == "end"
    with pytest.raises(InvalidInput):
        m.validate_window(now - dt.timedelta(days=401), now, now)


def test_combine_keeps_extremes_only_for_raw_and_counts_a_missing_series_as_zero() -> None:
    a = m.Columns(np.array([0, 60], dtype=np.int64), np.array([1.0, 2.0]), np.array([5.0, 6.0]), np.zeros(2))
    b = m.Columns(np.array([60], dtype=np.int64), np.array([10.0]), np.array([10.0]), np.array([10.0]))
    rolled = columns.combine([a, b], lambda x, y: x + y, exact_extremes=False)
    assert rolled.t.tolist() == [0, 60]
    assert np.isnan(rolled.avg[0]) and rolled.avg[1] == 12.0 and np.isnan(rolled.max).all()
    missing = columns.combine([a, m.empty_columns()], lambda x, y: x + y, exact_extremes=True)
    assert missing.avg.tolist() == [1.0, 2.0] == missing.max.tolist()


def _seg(value: float, lo_h: int, hi_h: int, label: str = "x", kind: CeilingKind = "provisioned") -> Ceiling:
    return Ceiling(id="data_max_iops", label=label, value=value, unit="IOPS", kind=kind, source="src",
                   valid_from=T0 + dt.timedelta(hours=lo_h), valid_to=T0 + dt.timedelta(hours=hi_h))


def test_segments_merge_when_nothing_changed_and_peak_uses_the_limit_in_force() -> None:
    merged = merge_segments([_seg(3000, 0, 2), _seg(3000, 2, 4), _seg(6000, 4, 8, "gp3")])
    assert [(s.value, s.valid_from.hour, s.valid_to.hour) for s in merged  # type: ignore[union-attr]
            ] == [(3000, 0, 4), (6000, 4, 8)]
    t = np.array([int((T0 + dt.timedelta(hours=h)).timestamp()) for h in (1, 5)], dtype=np.int64)
    values = m.Columns(t, np.array([2700.0, 4800.0]), np.full(2, np.nan), np.full(2, np.nan))
    peak = m.peak_utilisation(values, m.ceiling_in_force(merged, None, t))
    assert peak is not None
    assert peak.percent == pytest.approx(90.0) and peak.ceiling == 3000 and peak.at == T0 + dt.timedelta(hours=1)
    assert m.peak_utilisation(m.empty_columns(), m.ceiling_in_force(merged, None, np.empty(0, np.int64))) is None


def test_a_gp2_volume_with_an_empty_bucket_is_judged_against_its_baseline() -> None:
    # gp2 350 GiB: 1,050 IOPS baseline, 3,000 burst (AWS gp2 docs, docs/reference/gp2-burst.md). With the bucket
    # empty, 1,050 IOPS is 100 % of the ceiling in force, not 35 % of the burst figure.
    segs = [_seg(1050, 0, 8, "gp2 baseline IOPS", "sustained"), _seg(3000, 0, 8, "gp2 burst IOPS", "burst")]
    t = np.array([int((T0 + dt.timedelta(hours=h)).timestamp()) for h in (1, 2, 3)], dtype=np.int64)
    balance = m.Columns(t, np.array([40.0, 0.0, np.nan]), np.array([40.0, 0.0, np.nan]),
                        np.array([40.0, 0.0, np.nan]))
    held = columns.held_at(balance, "avg", t, 60)
    ceil = m.ceiling_in_force(segs, held, t)
    assert ceil.tolist() == [3000.0, 1050.0, 3000.0]  # a point without a balance sample counts as credits
    peak = m.peak_utilisation(m.Columns(t, np.array([2000.0, 1050.0, 900.0]), t * 0.0, t * 0.0), ceil)
    assert peak is not None and peak.percent == pytest.approx(100.0) and peak.ceiling == 1050.0


def test_a_five_minute_balance_is_held_across_its_period() -> None:
    tb = np.array([0, 300], dtype=np.int64)
    bal = m.Columns(tb, np.array([5.0, 0.0]), np.array([5.0, 0.0]), np.array([5.0, 0.0]))
    t = np.arange(0, 720, 60, dtype=np.int64)
    held = columns.held_at(bal, "min", t, 300)
    assert held is not None
    assert held[:5].tolist() == [5.0] * 5 and held[5:10].tolist() == [0.0] * 5 and np.isnan(held[10:]).all()


def test_a_series_point_covers_its_own_period_when_longer_than_the_chart_step() -> None:
    # AWS/EC2 on basic monitoring: one point every 300 s (docs/reference/cloudwatch.md#instance-ebs-metrics). On a raw (60 s) chart each point covers
    # 300 s, so the chart breaks the line only where two points are more than 1.5 x 300 s apart.
    t = np.array([0, 300, 600, 1200], dtype=np.int64)
    ec2 = m.Columns(t, np.ones(4), np.ones(4), np.ones(4))
    assert columns.point_step(ec2, 60) == 300
    assert columns.point_step(ec2, 3600) == 3600  # hourly rollups: the chart's step is the longer
    ebs = m.Columns(np.arange(0, 600, 60, dtype=np.int64), np.ones(10), np.ones(10), np.ones(10))
    assert columns.point_step(ebs, 60) == 60
    assert columns.point_step(m.Columns(t[:1], np.ones(1), np.ones(1), np.ones(1)), 60) == 60
