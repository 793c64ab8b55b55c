"""What a finding's chart draws for a minute without data: a gap (None), never 0; and the names its legend needs.

Pure: the demo scenario simulated in memory, read through findings.evidence_series.chart_series (no database).
"""

from __future__ import annotations

import datetime as dt

import pytest

from headroom.domain.model import SeriesRef
from headroom.domain.snapshot.scenario import load_scenario
from headroom.domain.snapshot.schema import Snapshot
from headroom.domain.snapshot.simulate import simulate
from headroom.findings.evidence_series import chart_series, entity_name
from headroom.sources.demo import service as demo

# The demo's afternoon (the gp2 stores serve ~1,000 IOPS), two hours of 1-minute points.
START = dt.datetime(2026, 11, 2, 16, 0, tzinfo=dt.UTC)


@pytest.fixture(scope="module")
def snapshot() -> Snapshot:
    return simulate(load_scenario(demo.default_scenario_path()), hours=2, seed=7, start=START)


def _gp2(snapshot: Snapshot) -> tuple[str, str]:
    """The first gp2 data volume and the address of the store it serves."""
    vol = next(v for v in snapshot.volumes if v.type == "gp2")
    node = next(n for n in snapshot.nodes if vol.id in n.data_volume_ids)
    return vol.id, node.address


def _drop(snapshot: Snapshot, volume_id: str, metric: str, minutes: range) -> Snapshot:
    """The snapshot with `metric` of the volume missing (None) over `minutes` of the window."""
    series = []
    for s in snapshot.series:
        if s.entity.id == volume_id and s.metric == metric:
            s = s.model_copy(update={"values": [None if i in minutes else v for i, v in enumerate(s.values)]})
        series.append(s)
    return snapshot.model_copy(update={"series": series})


def test_read_latency_is_a_gap_where_its_total_time_is_missing_and_positive_elsewhere(snapshot: Snapshot) -> None:
    vol, _ = _gp2(snapshot)
    missing = range(30, 40)  # CloudWatch sent no VolumeTotalReadTime for ten minutes; VolumeReadOps kept coming
    holed = _drop(snapshot, vol, "ebs.total_read_time", missing)
    refs = [SeriesRef(entity_kind="volume", entity_id=vol, metric=m)
            for m in ("derived.read_latency_ms", "derived.counted_iops")]
    latency, iops = chart_series(holed, refs)
    assert latency.found and iops.found
    assert latency.unit == "ms"
    for i, (lat, io) in enumerate(zip(latency.values, iops.values, strict=True)):
        if i in missing:
            # no total time, no latency: the chart shows a gap, not a volume answering in 0 ms
            assert lat is None, (i, lat)
            assert io is not None and io > 0  # the I/O itself was there
        elif io is not None and io > 0:
            # Sum(VolumeTotalReadTime) / Sum(VolumeReadOps) x 1000 of a volume doing I/O is never 0 ms
            # (AWS: https://docs.aws.amazon.com/ebs/latest/userguide/using_cloudwatch_ebs.html)
            assert lat is not None and lat > 0.1, (i, lat)


def test_a_minute_without_ops_has_no_latency(snapshot: Snapshot) -> None:
    vol, _ = _gp2(snapshot)
    idle = range(5, 8)
    holed = _drop(_drop(snapshot, vol, "ebs.read_ops", idle), vol, "ebs.total_read_time", idle)
    (latency,) = chart_series(holed, [SeriesRef(entity_kind="volume", entity_id=vol, metric="derived.read_latency_ms")])
    assert [latency.values[i] for i in idle] == [None, None, None]


def test_legend_names_say_which_store_and_volume(snapshot: Snapshot) -> None:
    vol, address = _gp2(snapshot)
    node = next(n for n in snapshot.nodes if n.address == address)
    assert entity_name(snapshot, "volume", vol) == f"{address} {vol}"
    assert entity_name(snapshot, "node", node.id) == address
    assert entity_name(snapshot, "volume", "vol-unknown") == "vol-unknown"
    refs = [SeriesRef(entity_kind="volume", entity_id=vol, metric="derived.read_latency_ms"),
            SeriesRef(entity_kind="volume", entity_id=vol, metric="ebs.burst_balance")]
    latency, balance = chart_series(snapshot, refs)
    # a readable name, not "derived.read_latency_ms vol-0abc"
    assert (latency.label, latency.entity_name) == ("Read latency", f"{address} {vol}")
    assert balance.label == "Burst balance"
