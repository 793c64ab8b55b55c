"""The outcome of an applied fix: its finding's predicted ceiling use against the peak use the ledger measured
(the tolerance, the no-change band and the one-day wait are Headroom's own: docs/thresholds/fix-outcomes.md)."""

from __future__ import annotations

import datetime as dt

import pytest
from headroom.domain.advisor.outcome import (
    HELD_TOLERANCE,
    FixOutcome,
    MIN_MEASURED,
    NO_CHANGE,
    PredictedUse,
    accuracy_statement,
    decide_outcome,
    predicted_use,
)
from headroom.domain.model import Impact

AT = dt.datetime(2026, 11, 2, 18, 0, tzinfo=dt.UTC)
MEASURE = "peak use of the data volume's IOPS ceiling"
# A gp3 data volume raised from 3,000 to 6,000 IOPS: the same load uses half as much of the ceiling
# (gp3's IOPS are provisioned per volume: https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html).
DOUBLE = Impact(summary="IOPS 3,000 -> 6,000", metric="sustained IOPS ceiling", unit="IOPS", before=3000.0,
                after=6000.0, headroom_before_pct=8.0, headroom_after_pct=54.0)


def _decide(prediction: PredictedUse | None, before: float | None, after: float | None,
            hours: float = 48.0) -> FixOutcome:
    return decide_outcome(prediction, None if prediction else "no prediction", measure=MEASURE,
                          measured_before=before, measured_after=after, after_start=AT,
                          after_end=AT + dt.timedelta(hours=hours))


def test_a_ceiling_prediction_reads_as_the_use_at_the_same_load() -> None:
    use, reason = predicted_use(DOUBLE)
    assert reason is None and use is not None
    assert (use.dimension, use.scope, use.ratio) == ("iops", None, 0.5)
    assert "3,000 IOPS -> 6,000 IOPS" in use.words


@pytest.mark.parametrize(("impact", "ratio", "dimension", "scope"), [
    # the room above the peak only (a cheaper configuration): 80 % room -> 40 % room triples the use
    (Impact(summary="-$50/month", metric="monthly cost", unit="USD/month", before=100.0, after=50.0,
            headroom_before_pct=80.0, headroom_after_pct=40.0), 3.0, "iops", None),
    # the use itself (a block size change): 0.9 -> 0.45 of the throughput ceiling
    (Impact(summary="blocks", metric="MiB/s utilisation p95", unit="ratio", before=0.9, after=0.45),
     0.5, "throughput", None),
    # the instance's EBS limit
    (Impact(summary="m6i.large -> m6i.xlarge", metric="instance sustained EBS throughput", unit="MiB/s",
            before=81.25, after=156.25), 81.25 / 156.25, "throughput", "instance"),
])
def test_each_kind_of_ceiling_prediction(impact: Impact, ratio: float, dimension: str, scope: str | None) -> None:
    use, _ = predicted_use(impact)
    assert use is not None
    assert use.ratio == pytest.approx(ratio) and use.dimension == dimension and use.scope == scope


@pytest.mark.parametrize("impact", [
    None,
    Impact(summary="4 GiB move to the page cache", metric="block cache, GiB", unit="GiB", before=8.0, after=4.0),
    Impact(summary="a dedicated Raft volume", metric="raft-log fsync p99", unit="ms", before=12.0),
    Impact(summary="ceiling", metric="sustained IOPS ceiling", unit="IOPS", before=3000.0),
])
def test_a_prediction_that_names_no_ceiling_use_is_not_measurable(impact: Impact | None) -> None:
    use, reason = predicted_use(impact)
    assert use is None and reason
    outcome = decide_outcome(use, reason, measure=MEASURE, measured_before=90.0, measured_after=45.0,
                             after_start=AT, after_end=AT + dt.timedelta(days=3))
    assert outcome.verdict == "not_measurable" and reason in outcome.summary


def test_held_when_the_measured_move_reaches_the_predicted_one() -> None:
    use, _ = predicted_use(DOUBLE)
    outcome = _decide(use, 92.0, 48.0)
    assert outcome.verdict == "held"
    assert outcome.predicted_after_percent == 46.0 and outcome.measured_after_percent == 48.0
    assert outcome.achieved == pytest.approx((48 / 92 - 1) / -0.5, abs=0.01)
    assert "predicted 92% -> 46%" in outcome.summary and "measured 92% -> 48%" in outcome.summary
    assert not outcome.final


def test_the_edges_of_the_tolerance() -> None:
    use = PredictedUse(dimension="iops", scope=None, ratio=0.5, words="x")
    # predicted -50 %: 75 % of it is -37.5 % (held), just short of it is partly
    assert _decide(use, 80.0, 80.0 * (1 - 0.5 * (1 - HELD_TOLERANCE))).verdict == "held"
    assert _decide(use, 80.0, 80.0 * (1 - 0.5 * (1 - HELD_TOLERANCE)) + 1).verdict == "partly"
    # lower than predicted: the room promised is there
    assert _decide(use, 80.0, 20.0).verdict == "held"


def test_partly_in_the_right_direction() -> None:
    use, _ = predicted_use(DOUBLE)
    outcome = _decide(use, 90.0, 70.0)
    assert outcome.verdict == "partly"
    assert "right direction" in outcome.summary and "44% of the predicted move" in outcome.summary


@pytest.mark.parametrize(("after", "words"), [
    (90.0 * (1 - NO_CHANGE / 2), "no change"),  # within the no-change band
    (97.0, "wrong way"),  # the use rose where it should have fallen
])
def test_missed_with_no_change_or_the_wrong_direction(after: float, words: str) -> None:
    use, _ = predicted_use(DOUBLE)
    outcome = _decide(use, 90.0, after)
    assert outcome.verdict == "missed" and words in outcome.summary


def test_a_cut_that_takes_more_room_than_predicted_missed() -> None:
    # a cheaper configuration predicted to take the use from 20 % to 40 %: 60 % is past the tolerance
    cut = PredictedUse(dimension="iops", scope=None, ratio=2.0, words="x")
    assert _decide(cut, 20.0, 40.0).verdict == "held"
    outcome = _decide(cut, 20.0, 60.0)
    assert outcome.verdict == "missed" and "less room" in outcome.summary


def test_too_early_says_how_long_until_it_is_measurable() -> None:
    use, _ = predicted_use(DOUBLE)
    outcome = _decide(use, 90.0, 45.0, hours=7)
    assert outcome.verdict == "too_early"
    assert outcome.measurable_at == AT + MIN_MEASURED
    assert "measurable in 17 h" in outcome.summary


@pytest.mark.parametrize(("before", "after", "words"), [
    (None, 45.0, "in the week before"),
    (90.0, None, "after the change"),
    (0.0, 45.0, "in the week before"),
])
def test_missing_data_is_not_measurable(before: float | None, after: float | None, words: str) -> None:
    use, _ = predicted_use(DOUBLE)
    outcome = _decide(use, before, after)
    assert outcome.verdict == "not_measurable" and words in outcome.summary


def test_a_predicted_move_inside_the_noise_is_not_measurable() -> None:
    tiny = PredictedUse(dimension="iops", scope=None, ratio=0.98, words="x")
    assert _decide(tiny, 90.0, 88.0).verdict == "not_measurable"


def test_final_once_the_week_is_in() -> None:
    use, _ = predicted_use(DOUBLE)
    assert _decide(use, 90.0, 45.0, hours=7 * 24).final


@pytest.mark.parametrize(("counts", "text"), [
    ((0, 0, 0, 0, 0), "No fix of this rule applied yet in the last 90 days."),
    ((0, 0, 0, 2, 0), "No applied fix of this rule measured yet in the last 90 days (2 too early to tell)."),
    ((1, 0, 0, 0, 0), "The prediction held for 1 of 1 applied fix measured in the last 90 days."),
    ((7, 1, 1, 1, 3), "The prediction held for 7 of 9 applied fixes measured in the last 90 days (1 partly, 1 missed); "
                      "1 more too early to tell."),
])
def test_the_accuracy_statement_in_words(counts: tuple[int, int, int, int, int], text: str) -> None:
    assert accuracy_statement(*counts, days=90) == text
