"""Context helpers: stats on arrays, sustained pressure, per-step ceilings, effective config values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from advisor_fixtures import scenario_snapshot, synthetic
from headroom.domain.advisor.context import (
    Context,
    longest_run,
    mask_at_or_above,
    p95,
    peak,
    percentile,
    ratio,
    runs,
    share_at_or_above,
    trend_per_hour,
)
from headroom.domain.advisor.engine import run_rules
from headroom.domain.advisor.rule import Rule
from headroom.domain.advisor.rules._common import pressure, round_up

NAN = math.nan


@pytest.mark.parametrize(
    ("values", "threshold", "share", "longest", "n_runs"),
    [
        ([1, 2, 3, 4], 3, 0.5, 2, 1),
        ([5, 0, 5, 5, 0, 5], 5, 4 / 6, 2, 3),
        ([NAN, 5, 5, NAN], 5, 1.0, 2, 1),  # NaN points are neither counted nor "at or above"
        ([NAN, NAN], 1, 0.0, 0, 0),
        ([0, 0, 0], 1, 0.0, 0, 0),
    ],
)
def test_share_and_runs(
    values: list[float], threshold: float, share: float, longest: int, n_runs: int
) -> None:
    arr = np.asarray(values, dtype=np.float64)
    assert share_at_or_above(arr, threshold) == pytest.approx(share)
    mask = mask_at_or_above(arr, threshold)
    assert longest_run(mask) == longest
    assert len(runs(mask)) == n_runs


def test_percentiles_ratio_and_trend() -> None:
    arr = np.asarray([NAN, *range(1, 101)], dtype=np.float64)
    assert peak(arr) == 100
    assert p95(arr) == pytest.approx(95.05)
    assert math.isnan(percentile(np.asarray([NAN]), 50))
    assert ratio(np.asarray([1.0, 2.0]), np.asarray([2.0, 0.0])).tolist()[0] == 0.5
    assert math.isnan(ratio(np.asarray([1.0, 2.0]), np.asarray([2.0, 0.0]))[1])
    # 1 unit per minute = 60 per hour
    assert trend_per_hour(np.arange(100, dtype=np.float64), 60) == pytest.approx(60.0)


@pytest.mark.parametrize(
    ("level", "minutes", "sustained"),
    [(0.89, 600, False), (0.90, 30, True), (0.95, 29, False), (0.95, 72, True)],
)
def test_pressure_thresholds(level: float, minutes: int, sustained: bool) -> None:
    # 90% of the ceiling (docs/reference/ebs-volume-types.md#performance-consistency), for >= 30 consecutive minutes or >= 5% of the window (72 of 1,440)
    values = np.full(1440, 0.5)
    values[100 : 100 + minutes] = level
    assert pressure(values, 1.0, 60).sustained is sustained


def test_round_up_tolerates_measurement_noise() -> None:
    assert round_up(4000.03, 500) == 4000
    assert round_up(4010.0, 500) == 4500
    assert round_up(0.0, 500) == 0


def test_gp2_ceiling_follows_burst_balance() -> None:
    balance = np.full(120, 50.0)
    balance[60:] = 0.0
    snap = synthetic(
        volume={"type": "gp2", "size_gib": 500},
        read_iops=np.full(120, 100.0),
        extra_volume_series={"ebs.burst_balance": balance},
    )
    ceiling = Context(snap).volume_iops_ceiling("vol-1")
    assert ceiling is not None
    # docs/reference/gp2-burst.md#baseline-and-burst: 3,000 with credits, 3 IOPS/GiB = 1,500 without
    assert ceiling[:60].tolist() == [3000.0] * 60 and ceiling[60:].tolist() == [1500.0] * 60


def test_config_uses_version_defaults_when_unset() -> None:
    snap = synthetic(volume={"type": "gp3", "size_gib": 100}, read_iops=np.full(10, 1.0))
    ctx = Context(snap)
    value = ctx.config("tikv-1", "rocksdb.defaultcf.block-size")
    assert (value.value, value.origin) == ("32KB", "default")  # docs/reference/tikv-config.md#keys-and-defaults: 32KB since v7.0.0
    # 45% of 64 GiB (docs/reference/tikv-config.md#keys-and-defaults BLOCK_CACHE_RATE)
    assert ctx.config_bytes("tikv-1", "storage.block-cache.capacity") == math.floor(64 * 2**30 * 0.45)


def test_node_ceilings_and_entities() -> None:
    snap = scenario_snapshot("pingcap-aws-m5-2xlarge-io1")
    ctx = Context(snap)
    inst = snap.instances[0]
    ceilings = ctx.node_ceilings(inst.id)
    assert ceilings is not None
    # io1 1,000 GiB at 6,000 IOPS caps at 500 MiB/s below 32,000 IOPS (docs/reference/ebs-io-accounting.md#io1-throughput-rule); m5.2xlarge 287.5 MB/s (docs/reference/ec2-ebs-limits.md#limits-table)
    assert ceilings.sustained_throughput_mibps.volumes == pytest.approx(500.0)
    assert ceilings.sustained_throughput_mibps.binding == "instance"
    vol = ctx.volumes_on_instance(inst.id)[0]
    ent = ctx.entity_for_volume(vol.id)
    assert ent.instance_id == inst.id and ent.node is not None and ent.status_address


def test_a_failing_rule_is_isolated_when_asked() -> None:
    snap = scenario_snapshot("healthy")

    def boom(ctx: Context) -> list:  # type: ignore[type-arg]
        raise RuntimeError("bad rule")

    broken = Rule(id="broken", description="x", evaluate=boom)
    advice = run_rules(snap, rules=[broken, "volume-iops-ceiling"], on_error="skip")
    assert [f.rule for f in advice.failures] == ["broken"]
    with pytest.raises(RuntimeError):
        run_rules(snap, rules=[broken])


def test_bridge_gaps_fills_only_short_holes_inside_a_run() -> None:
    from headroom.domain.advisor.context import bridge_gaps

    t, f = True, False
    mask = np.array([t, t, f, f, t, f, f, f, t, f, t, f], dtype=np.bool_)
    missing = np.array([f, f, t, t, f, t, t, t, f, t, f, t], dtype=np.bool_)
    got = bridge_gaps(mask, missing, max_gap=2)
    # [2:4] is a 2-point hole between True points: filled. [5:8] is 3 points (> 2): kept. [9] is filled.
    # [11] is a hole at the end (nothing after it): kept.
    assert got.tolist() == [t, t, t, t, t, f, f, f, t, t, t, f]
    assert mask.tolist()[2] is False  # the input is not changed
