"""A day cannot justify a cut: cost rules judge a cut on the lookback's peak, and hold it without the history.

Built from the documentation, not from the advisor's output:
- AWS Compute Optimizer looks back 14 days by default, 32 or 93 on request (its `lookBackPeriod` preference:
  DAYS_14 | DAYS_32 | DAYS_93; docs/reference/lookback.md), and gives no recommendation without enough data.
- The cost rules keep the peak at <= 75% of the new ceiling (docs/thresholds/cost.md), so a volume quiet at 600
  IOPS Monday to Saturday with a 2,900 IOPS Sunday batch needs >= 2,900 / 0.75 = 3,867 IOPS after a cut.
- Prices: io1 $0.125 per GB-month + $0.065 per IOPS-month; gp3 $0.08 per GB-month, 3,000 IOPS and 125 MiB/s
  included, $0.005 per IOPS-month above; gp2 $0.10 per GB-month (docs/reference/ebs-prices.md#prices-us-east-1).
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

import numpy as np
import pytest
from advisor_fixtures import of_rule, synthetic
from headroom.domain.advisor import advise
from headroom.domain.derived import io_chunk_kib
from headroom.domain.snapshot.lookback import peak_over
from headroom.domain.snapshot.schema import Lookback, Snapshot, Window

QUIET_IOPS = 600.0
SUNDAY_IOPS = 2900.0
TUESDAY = dt.datetime(2026, 1, 6, tzinfo=dt.UTC)  # a Tuesday
SUNDAY_BATCH = dt.datetime(2026, 1, 4, 3, tzinfo=dt.UTC)  # Sun 4 Jan 03:00, two days before
NEED = SUNDAY_IOPS / 0.75  # 3,867 IOPS: the Sunday peak at <= 75% of the new ceiling


def _shift(value: Any, by: dt.timedelta) -> Any:
    if isinstance(value, dt.datetime):
        return value + by
    if isinstance(value, dict):
        return {k: _shift(v, by) for k, v in value.items()}
    if isinstance(value, list):
        return [_shift(v, by) for v in value]
    return value


def tuesday(volume: dict[str, Any], history_days: float, days: Literal[14, 32, 93] = 14) -> Snapshot:
    """A quiet Tuesday (600 IOPS of 16 KiB all day) with `history_days` of hourly history behind it: quiet every
    day but Sunday, whose 03:00 hour runs the batch at 2,900 IOPS."""
    snap = synthetic(volume=volume, read_iops=np.full(1440, QUIET_IOPS))
    snap = Snapshot.model_validate(_shift(snap.model_dump(), TUESDAY - snap.window.start))
    end = snap.window.end
    hours = int(history_days * 24)
    grid = Window(start=end - dt.timedelta(hours=hours), end=end, step_seconds=3600)
    stamps = [grid.start + dt.timedelta(hours=i) for i in range(hours)]
    iops = np.array([SUNDAY_IOPS if t == SUNDAY_BATCH else QUIET_IOPS for t in stamps])
    sums = {"ebs.read_ops": iops * 3600, "ebs.read_bytes": iops * 3600 * 16 * 1024,
            "ebs.write_ops": np.zeros(hours), "ebs.write_bytes": np.zeros(hours)}
    peak = peak_over("volume", "vol-1", [(grid, sums.get)], io_chunk_kib(volume["type"]), history_days)
    return snap.model_copy(update={"lookback": Lookback(days=days, end=end, peaks=[peak])})


IO1 = {"type": "io1", "size_gib": 1000, "iops": 10000}
GP2 = {"type": "gp2", "size_gib": 2000}


def _iops(changes: list[Any]) -> float:
    return float(next(c.proposed for c in changes if c.key == "volume.iops"))


def test_the_sunday_peak_is_in_the_lookback_read_from_the_hourly_grid() -> None:
    lb = tuesday(IO1, 14).lookback
    assert lb is not None
    (peak,) = lb.peaks
    assert peak.peak_iops == pytest.approx(SUNDAY_IOPS)
    assert peak.peak_iops_at == SUNDAY_BATCH
    assert peak.history_days == 14


def test_with_14_days_the_overprovisioned_cut_keeps_the_sunday_peak() -> None:
    (f,) = of_rule(advise(tuesday(IO1, 14), rules=["volume-overprovisioned"]), "volume-overprovisioned")
    assert f.changes, "a cut is proposed"
    assert _iops(f.changes) >= NEED  # not the 3,000 a quiet Tuesday alone would allow
    for option in f.options:
        assert _iops(option.changes) >= NEED
    assert "judged on the peak of the last 14 days: 2,900 IOPS on Sun 4 Jan 03:00 UTC" in f.why
    assert "2,900 IOPS on Sun 4 Jan 03:00 UTC" in f.evidence.condition
    # gp3 1,000 GiB at 4,000 IOPS (the 500-step above 3,867): 80 + 1,000 × 0.005 = $85 vs 125 + 650 = $775.
    assert f.impact.monthly_cost_after_usd == pytest.approx(85.0)
    assert f.impact.monthly_cost_before_usd == pytest.approx(775.0)


def test_with_14_days_the_gp2_cut_keeps_the_sunday_peak() -> None:
    (f,) = of_rule(advise(tuesday(GP2, 14), rules=["gp2-to-gp3"]), "gp2-to-gp3")
    assert _iops(f.changes) >= NEED
    assert "last 14 days" in f.why


def test_the_window_alone_would_have_cut_below_the_sunday_peak() -> None:
    # The same Tuesday whose history never saw the batch: the cut goes to gp3's included 3,000 IOPS, below 2,900
    # / 0.75; so the test above fails if the lookback peak were ignored.
    snap = tuesday(IO1, 14)
    assert snap.lookback is not None
    quiet = snap.lookback.peaks[0].model_copy(update={"peak_iops": QUIET_IOPS})
    snap = snap.model_copy(update={"lookback": snap.lookback.model_copy(update={"peaks": [quiet]})})
    (f,) = of_rule(advise(snap, rules=["volume-overprovisioned"]), "volume-overprovisioned")
    assert _iops(f.changes) == 3000


def test_with_5_days_the_cut_is_held_and_says_why() -> None:
    (f,) = of_rule(advise(tuesday(IO1, 5), rules=["volume-overprovisioned"]), "volume-overprovisioned")
    assert f.changes == [] and f.options == []
    assert "needs 14 days of history, has 5 days" in f.title
    assert "needs 14 days of history, has 5 days" in f.why
    assert f.severity == "info"


def test_with_5_days_gp2_keeps_only_the_equal_performance_gp3() -> None:
    # gp2 2,000 GiB: 6,000 IOPS / 250 MiB/s baseline (3 IOPS per GiB). Equal performance on gp3 removes nothing
    # and is proposed; the one sized on the peak is held.
    (f,) = of_rule(advise(tuesday(GP2, 5), rules=["gp2-to-gp3"]), "gp2-to-gp3")
    assert len(f.options) == 1
    assert _iops(f.changes) >= 6000 * 0.75
    assert any("needs 14 days of history, has 5 days" in n for n in f.notes)


def test_a_32_day_lookback_holds_with_14_days() -> None:
    (f,) = of_rule(advise(tuesday(IO1, 14, days=32), rules=["volume-overprovisioned"]), "volume-overprovisioned")
    assert f.changes == []
    assert "needs 32 days of history, has 14 days" in f.title


def test_a_93_day_lookback_judges_with_93_days() -> None:
    (f,) = of_rule(advise(tuesday(IO1, 93, days=93), rules=["volume-overprovisioned"]), "volume-overprovisioned")
    assert _iops(f.changes) >= NEED
    assert "judged on the peak of the last 93 days" in f.why


def test_risk_rules_keep_the_window() -> None:
    # A volume at its ceiling in the window is a risk finding whatever the history: the lookback holds cuts only.
    snap = synthetic(volume={"type": "gp3", "size_gib": 500, "iops": 3000, "throughput_mibps": 125},
                     read_iops=np.full(1440, 3000.0))
    assert of_rule(advise(snap, rules=["volume-iops-ceiling"]), "volume-iops-ceiling")
