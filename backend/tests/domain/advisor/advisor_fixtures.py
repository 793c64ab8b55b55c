"""Test helpers for the advisor: simulated scenario snapshots (cached) and hand-built synthetic snapshots."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import numpy as np
from headroom.domain.advisor import Finding, advise
from headroom.domain.snapshot.registry import REGISTRY
from headroom.domain.snapshot.scenario import ScenarioLookback, load_scenario
from headroom.domain.snapshot.schema import (
    SCHEMA_VERSION,
    Cluster,
    Entity,
    Instance,
    Node,
    Series,
    Snapshot,
    Source,
    Volume,
    Window,
)
from headroom.domain.snapshot.simulate import scenario_lookback, simulate

SCENARIOS = Path(__file__).resolve().parents[4] / "examples" / "scenarios"
START = datetime(2026, 1, 5, tzinfo=UTC)
AWS_RULES = (
    "volume-iops-ceiling",
    "volume-throughput-ceiling",
    "instance-ebs-bandwidth-bound",
    "instance-ebs-burst-depletion",
    "gp2-burst-depletion",
    "gp2-to-gp3",
    "volume-overprovisioned",
)


@lru_cache(maxsize=32)
def scenario_snapshot(name: str, hours: float = 24.0) -> Snapshot:
    """Simulate examples/scenarios/<name>.yaml over `hours` (seed 0), cached for the test session."""
    scenario = load_scenario(SCENARIOS / f"{name}.yaml")
    return simulate(scenario, hours=hours, seed=0, start=scenario.start or START)


@lru_cache(maxsize=32)
def scenario_findings(name: str, hours: float = 24.0) -> tuple[Finding, ...]:
    """Return the advisor's findings on a scenario (all rules, resolved)."""
    return tuple(advise(scenario_snapshot(name, hours)))


def of_rule(findings: tuple[Finding, ...] | list[Finding], rule: str) -> list[Finding]:
    """Return the findings of one rule."""
    return [f for f in findings if f.rule == rule]


def aws_findings(findings: tuple[Finding, ...] | list[Finding]) -> list[Finding]:
    """Return the findings of this family's rules."""
    return [f for f in findings if f.rule in AWS_RULES]


def one_node_snapshot(
    instance_type: str,
    volume: Volume,
    series: list[Series],
    *,
    minutes: int,
    name: str,
    kind: Literal["collected", "simulated", "demo"],
) -> Snapshot:
    """One TiKV node (16 vCPUs, 64 GiB) on instance i-1 with one data volume, over `minutes` at 60 s steps."""
    return Snapshot(
        schema_version=SCHEMA_VERSION,
        generated_at=START + timedelta(minutes=minutes),
        source=Source(kind=kind),
        cluster=Cluster(name=name, tikv_version="v8.5.1", deployment="tiup"),
        window=Window(start=START, end=START + timedelta(minutes=minutes), step_seconds=60),
        nodes=[
            Node(
                id="tikv-1",
                address="10.0.0.1:20160",
                status_address="10.0.0.1:20180",
                instance_id="i-1",
                instance_type=instance_type,
                vcpus=16,
                memory_gib=64,
                tikv_version="v8.5.1",
                host="10.0.0.1",
                data_volume_ids=[volume.id],
            )
        ],
        instances=[Instance(id="i-1", type=instance_type, vcpus=16, memory_gib=64)],
        volumes=[volume],
        series=series,
    )


def series_of(
    kind: str, eid: str, metric: str, values: np.ndarray[Any, Any], step_seconds: int = 60
) -> Series:
    """Build a series of `values`, one per `step_seconds` from START (NaN: a gap), as the registry declares it."""
    spec = REGISTRY[metric]
    return Series(
        entity=Entity(kind=kind, id=eid),  # type: ignore[arg-type]
        metric=metric,
        unit=spec.unit,
        statistic=spec.statistic,
        start=START,
        step_seconds=step_seconds,
        values=[None if np.isnan(v) else float(v) for v in values],
    )


def synthetic(
    *,
    volume: dict[str, Any],
    read_iops: np.ndarray[Any, Any],
    read_kib: float = 16.0,
    instance_type: str = "m6i.4xlarge",
    extra_volume_series: dict[str, np.ndarray[Any, Any]] | None = None,
    instance_series: dict[str, np.ndarray[Any, Any]] | None = None,
    with_instance_io: bool = True,
) -> Snapshot:
    """Build a one-node snapshot whose data volume reads `read_iops` I/Os of `read_kib` per second, per minute."""
    n = len(read_iops)
    vol = Volume(id="vol-1", instance_id="i-1", role="data", **volume)
    ops = read_iops * 60.0
    nbytes = ops * read_kib * 1024.0
    zeros = np.zeros(n)
    series = [
        series_of("volume", "vol-1", "ebs.read_ops", ops),
        series_of("volume", "vol-1", "ebs.write_ops", zeros),
        series_of("volume", "vol-1", "ebs.read_bytes", nbytes),
        series_of("volume", "vol-1", "ebs.write_bytes", zeros),
    ]
    for metric, values in (extra_volume_series or {}).items():
        series.append(series_of("volume", "vol-1", metric, values))
    if with_instance_io:
        series += [
            series_of("instance", "i-1", "ec2.ebs_read_ops", ops),
            series_of("instance", "i-1", "ec2.ebs_write_ops", zeros),
            series_of("instance", "i-1", "ec2.ebs_read_bytes", nbytes),
            series_of("instance", "i-1", "ec2.ebs_write_bytes", zeros),
        ]
    for metric, values in (instance_series or {}).items():
        series.append(series_of("instance", "i-1", metric, values))
    return one_node_snapshot(instance_type, vol, series, minutes=n, name="synthetic", kind="demo")


def plateau(
    base: float, level: float, minutes: int, total: int = 1440, at: int = 600
) -> np.ndarray[Any, Any]:
    """Return `total` minutes at `base` with `minutes` consecutive minutes at `level` starting at `at`."""
    out = np.full(total, base, dtype=np.float64)
    out[at : at + minutes] = level
    return out


def with_history(snap: Snapshot, history_days: float = 14.0, days: Literal[14, 32, 93] = 14) -> Snapshot:
    """Return the snapshot with `history_days` of history behind it whose peak is the window's (a scenario's
    `lookback:` block), so a cut is judged rather than held."""
    spec = ScenarioLookback(days=days, history_days=history_days)
    return snap.model_copy(update={"lookback": scenario_lookback(snap, spec)})
