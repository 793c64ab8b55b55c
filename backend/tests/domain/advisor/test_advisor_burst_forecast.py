"""Burst buckets judged by the forecast (docs/thresholds/burst.md): a gp2 or instance bucket forecast to empty within the next
day is a finding before its balance falls to 10%, with severity by time to empty (docs/thresholds/burst.md).

Cases are written from AWS's bucket arithmetic (docs/reference/gp2-burst.md#the-credit-bucket gp2, docs/reference/ec2-ebs-limits.md#the-burst-rule instance burst, docs/reference/cloudwatch.md#instance-ebs-metrics balances), not
from the code: the balance series below is what the bucket holds at the demand shown.
"""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from advisor_fixtures import of_rule, one_node_snapshot, series_of, synthetic
from headroom.domain.advisor import advise
from headroom.domain.advisor.rules._burst_outlook import duration_text, severity_for_time_to_empty
from headroom.domain.snapshot.schema import Volume

N = 1440  # one day of 1-minute points
DRAIN_MINUTES = 72  # the bucket has drained for the last 72 minutes of the window
GP2_CAPACITY = 5.4e6  # credits (docs/reference/gp2-burst.md#the-credit-bucket)


def _gp2_draining(demand_iops: float, baseline_iops: float = 1500.0) -> tuple[np.ndarray, np.ndarray, float]:
    """Return (demand, BurstBalance %, balance at the end) for a full bucket drained for the last 72 min."""
    demand = np.full(N, 1000.0)  # below the baseline all day: the bucket stays full
    demand[-DRAIN_MINUTES:] = demand_iops
    drained_pct = 100.0 * (demand_iops - baseline_iops) * 60.0 / GP2_CAPACITY  # per minute
    balance = np.full(N, 100.0)
    balance[-DRAIN_MINUTES:] = 100.0 - drained_pct * np.arange(1, DRAIN_MINUTES + 1)
    return demand, balance, float(balance[-1])


def _gp2_findings(demand: np.ndarray, balance: np.ndarray) -> list:
    snap = synthetic(
        volume={"type": "gp2", "size_gib": 500},
        read_iops=demand,
        extra_volume_series={"ebs.burst_balance": balance},
    )
    return of_rule(advise(snap, rules=["gp2-burst-depletion"]), "gp2-burst-depletion")


def test_issue_case_2000_iops_drain_above_10pct_is_critical() -> None:
    # 500 GiB gp2: baseline 3 × 500 = 1,500 IOPS, 5.4 M credits (docs/reference/gp2-burst.md#the-credit-bucket).
    # Draining at 2,000 IOPS: 2,000 − 1,500 = 500 credits/s; 72 min = 4,320 s spend 2.16 M = 40 %: 60 % left.
    # The 60 % left = 3.24 M credits last 3.24e6 / 500 = 6,480 s = 1 h 48 min (< 2 h: critical).
    demand, balance, end = _gp2_draining(2000.0)
    assert end == pytest.approx(60.0)
    assert balance.min() > 10.0  # the old rule (BurstBalance <= 10 %) said nothing
    (f,) = _gp2_findings(demand, balance)
    assert f.severity == "critical"
    empties = next(fc for fc in f.evidence.forecasts if fc.kind == "burst_empty")
    assert empties.within_seconds == pytest.approx(6480.0, abs=60.0)
    assert empties.balance_pct == pytest.approx(60.0)
    assert empties.value == 1500.0  # then it serves its baseline
    assert empties.demand == pytest.approx(2000.0)
    assert empties.at is not None and empties.earliest is not None
    assert empties.earliest <= empties.at  # the band and the moment are shown
    assert empties.at == f.evidence.window_end + timedelta(seconds=empties.within_seconds)
    # the title says it to the hour (it is read for days); the why has the minutes and the clock time
    assert "forecast to empty within 2 h at 2,000 IOPS" in f.title and " min" not in f.title
    assert "1 h 48 min" in f.why
    measures = {m.label: m for m in f.evidence.measures}
    assert measures["forecast time to empty"].value == pytest.approx(108.0, abs=1.0)
    assert measures["forecast time to empty"].source == "How Headroom decides: Burst buckets: when a forecast is a finding"
    assert "How Headroom decides: Burst buckets: when a forecast is a finding" in f.sources
    # the fix is still gp3 at equal or better performance: 2,000 / 0.75 = 2,667 -> gp2's 3,000 burst IOPS
    assert {c.key: c.proposed for c in f.changes}["volume.type"] == "gp3"


@pytest.mark.parametrize(
    ("demand_iops", "end_pct", "seconds", "severity"),
    [
        # 1,700 IOPS: drains 200 credits/s; 72 min spend 864,000 = 16 % -> 84 % = 4.536 M credits,
        # which last 4.536e6 / 200 = 22,680 s = 6.3 h: within 8 h -> warning.
        (1700.0, 84.0, 22680.0, "warning"),
        # 1,600 IOPS: 100 credits/s; 72 min spend 432,000 = 8 % -> 92 % = 4.968 M, 49,680 s = 13.8 h:
        # within the day -> info.
        (1600.0, 92.0, 49680.0, "info"),
    ],
)
def test_severity_by_time_to_empty(demand_iops: float, end_pct: float, seconds: float, severity: str) -> None:
    demand, balance, end = _gp2_draining(demand_iops)
    assert end == pytest.approx(end_pct)
    (f,) = _gp2_findings(demand, balance)
    empties = next(fc for fc in f.evidence.forecasts if fc.kind == "burst_empty")
    assert empties.within_seconds == pytest.approx(seconds, rel=0.01)
    assert f.severity == severity


def test_beyond_a_day_is_silent() -> None:
    # 1,550 IOPS: 50 credits/s; 72 min spend 216,000 = 4 % -> 96 % = 5.184 M, 103,680 s = 28.8 h > 24 h.
    demand, balance, end = _gp2_draining(1550.0)
    assert end == pytest.approx(96.0)
    assert _gp2_findings(demand, balance) == []


def test_refilling_bucket_is_silent() -> None:
    # Drained at 2,000 IOPS, then back at 1,000 IOPS (below the 1,500 baseline) for the last 40 minutes: the
    # bucket refills at 500 credits/s (0.56 % a minute) and most of the last hour ran below the baseline.
    demand, balance, _ = _gp2_draining(2000.0)
    demand[-40:] = 1000.0
    balance[-40:] = balance[-41] + (1500.0 - 1000.0) * 60.0 / GP2_CAPACITY * 100.0 * np.arange(1, 41)
    assert _gp2_findings(demand, balance) == []


def test_a_rising_trend_from_a_quiet_bucket_is_not_a_finding() -> None:
    # Full bucket, demand climbing from 500 to 1,400 IOPS over the last hour, still under the 1,500 baseline:
    # a line extrapolated for hours would cross the baseline, but the bucket is not draining now (the recent
    # median is below the baseline) and there is no day of history to say tomorrow's peak does.
    demand = np.full(N, 500.0)
    demand[-60:] = np.linspace(500.0, 1400.0, 60)
    balance = np.full(N, 100.0)
    assert _gp2_findings(demand, balance) == []


def test_thresholds_and_text() -> None:
    # docs/thresholds/burst.md: critical <= 2 h, warning <= 8 h, info <= 24 h
    assert [severity_for_time_to_empty(s) for s in (0.0, 7200.0, 7201.0, 28800.0, 28801.0, 86400.0)] == [
        "critical",
        "critical",
        "warning",
        "warning",
        "info",
        "info",
    ]
    assert duration_text(6480.0) == "1 h 48 min"
    assert duration_text(2100.0) == "35 min"
    assert duration_text(7200.0) == "2 h"


def test_instance_byte_bucket_forecast_above_10pct() -> None:
    # m6i.2xlarge (docs/reference/ec2-ebs-limits.md#limits-table): EBS throughput 312.5 MB/s baseline, 1,250 MB/s maximum, burst for 30 min
    # per 24 h (docs/reference/ec2-ebs-limits.md#the-burst-rule). In MiB/s: 312.5e6 / 2^20 = 298.02 and 1,250e6 / 2^20 = 1,192.09.
    # Bucket (headroom.domain.physics.burst, 30 minutes at the maximum, docs/reference/ec2-ebs-limits.md#the-burst-rule): 1,800 s × (1,192.09 − 298.02)
    # = 1,609,330 MiB. At 600 MiB/s it drains 600 − 298.02 = 301.98 MiB/s: a full bucket lasts 5,329 s (89 min).
    # 40 min of drain spend 40 × 60 × 301.98 = 724,752 MiB = 45.0 %: 55.0 % left, which lasts
    # 0.55 × 1,609,330 / 301.98 = 2,931 s (49 min): critical, though EBSByteBalance% never fell to 10 %.
    base, maximum = 312.5e6 / 2**20, 1250e6 / 2**20
    capacity = 1800.0 * (maximum - base)
    assert capacity == pytest.approx(1_609_330, rel=1e-4)
    mibps = np.full(N, 100.0)
    mibps[-40:] = 600.0
    drained = 100.0 * (600.0 - base) * 60.0 / capacity
    balance = np.full(N, 100.0)
    balance[-40:] = 100.0 - drained * np.arange(1, 41)
    assert balance[-1] == pytest.approx(55.0, abs=0.1)
    read_kib = 128.0
    snap = synthetic(
        volume={"type": "gp3", "size_gib": 2000, "iops": 16000, "throughput_mibps": 1000},
        read_iops=mibps * 1024.0 / read_kib,
        read_kib=read_kib,
        instance_type="m6i.2xlarge",
        instance_series={"ec2.ebs_byte_balance": balance, "ec2.ebs_io_balance": np.full(N, 100.0)},
    )
    found = of_rule(advise(snap, rules=["instance-ebs-burst-depletion"]), "instance-ebs-burst-depletion")
    (f,) = [x for x in found if x.dedup_key.endswith("/throughput")]
    empties = next(fc for fc in f.evidence.forecasts if fc.kind == "burst_empty")
    assert empties.within_seconds == pytest.approx(0.55 * capacity / (600.0 - base), rel=0.02)
    assert empties.value == pytest.approx(base, rel=1e-3)  # then the 298 MiB/s baseline
    assert f.severity == "critical"
    assert "How Headroom decides: Burst buckets: when a forecast is a finding" in f.sources


def test_instance_batch_on_5_minute_cloudwatch_data_empties_at_the_batch_demand() -> None:
    # AWS/EC2 basic monitoring (docs/reference/cloudwatch.md#instance-ebs-metrics): EBSReadBytes as 300 s Sums, EBSByteBalance% every 5 minutes
    # in whole percent. m6i.xlarge (docs/reference/ec2-ebs-limits.md#limits-table): 156.25 / 1,250 MB/s = 149.01 / 1,192.09 MiB/s; bucket 1,800 s x
    # (1,192.09 - 149.01) = 1,877,544 MiB (30 minutes at the maximum, docs/reference/ec2-ebs-limits.md#the-burst-rule). A day at 140 MiB/s (below the
    # baseline, the bucket full), then a batch at 400 MiB/s for the last 30 minutes: 250.99 MiB/s drained,
    # 4.01 % per period, 76 % left after six periods, which last 0.76 x 1,877,544 / 250.99 = 5,685 s (95 min).
    # The hour's line (30 min at 140, 30 at 400) read the step as a ramp and said 59 min, "at 270 MiB/s".
    base, maximum = 156.25e6 / 2**20, 1250e6 / 2**20
    capacity = 1800.0 * (maximum - base)
    periods = N // 5
    mibps = np.full(periods, 140.0)
    mibps[-6:] = 400.0
    drained = np.cumsum(np.maximum(mibps - base, 0.0)) * 300.0 / capacity * 100.0
    balance = np.round(100.0 - drained)
    assert balance[-1] == 76.0 and balance[-7] == 100.0
    nbytes = mibps * 2**20 * 300.0  # a 300 s Sum
    ops = nbytes / (128 * 1024)
    minute_ops = np.repeat(ops, 5) / 5.0
    zeros, zeros5 = np.zeros(N), np.zeros(periods)
    vol = Volume(
        id="vol-1", instance_id="i-1", role="data", type="gp3", size_gib=500, iops=6000, throughput_mibps=1000
    )
    series = [
        series_of("volume", "vol-1", "ebs.read_ops", minute_ops),
        series_of("volume", "vol-1", "ebs.write_ops", zeros),
        series_of("volume", "vol-1", "ebs.read_bytes", minute_ops * 128 * 1024),
        series_of("volume", "vol-1", "ebs.write_bytes", zeros),
        series_of("instance", "i-1", "ec2.ebs_read_ops", ops, 300),
        series_of("instance", "i-1", "ec2.ebs_write_ops", zeros5, 300),
        series_of("instance", "i-1", "ec2.ebs_read_bytes", nbytes, 300),
        series_of("instance", "i-1", "ec2.ebs_write_bytes", zeros5, 300),
        series_of("instance", "i-1", "ec2.ebs_byte_balance", balance, 300),
        series_of("instance", "i-1", "ec2.ebs_io_balance", np.full(periods, 100.0), 300),
    ]
    snap = one_node_snapshot("m6i.xlarge", vol, series, minutes=N, name="batch", kind="demo")
    found = of_rule(advise(snap, rules=["instance-ebs-burst-depletion"]), "instance-ebs-burst-depletion")
    (f,) = [x for x in found if x.dedup_key.endswith("/throughput")]
    empties = next(fc for fc in f.evidence.forecasts if fc.kind == "burst_empty")
    expected = 0.76 * capacity / (400.0 - base)
    assert expected == pytest.approx(5685.0, abs=1.0)
    assert empties.within_seconds == pytest.approx(expected, rel=0.02)
    assert empties.demand == pytest.approx(400.0)
    assert empties.balance_pct == 76.0
    assert f.severity == "critical"  # within 2 h (docs/thresholds/burst.md)
