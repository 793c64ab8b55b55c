"""Every example scenario in both CloudWatch monitoring modes: the advice must not depend on whether the customer
pays for detailed monitoring.

Basic monitoring delivers the AWS/EC2 EBS metrics every 5 minutes, detailed every minute; EBSIOBalance% and
EBSByteBalance% are 5-minute metrics in both, AWS/EBS volume metrics 1-minute in both (AWS CloudWatch pages for EC2
and EBS; docs/reference/cloudwatch.md#volume-metrics, docs/reference/cloudwatch.md#instance-ebs-metrics). Both runs carry CloudWatch's missing datapoints and Prometheus scrape gaps. The
findings must agree in substance: the same rules on the same entities at the same severities. Healthy scenarios
stay silent in both.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from headroom.domain.advisor import advise
from headroom.domain.snapshot.scenario import Monitoring, load_scenario
from headroom.domain.snapshot.simulate import simulate

SCENARIOS = Path(__file__).resolve().parents[4] / "examples" / "scenarios"
START = datetime(2026, 1, 5, tzinfo=UTC)
SILENT = {"healthy"}  # the example scenarios written to raise nothing


def _cases() -> list[str]:
    return [path.stem for path in sorted(SCENARIOS.glob("*.yaml"))]


def _findings(name: str, mode: str) -> set[tuple[str, str, str, str]]:
    snapshot = simulate(
        load_scenario(SCENARIOS / f"{name}.yaml"), hours=24, seed=0, start=START, monitoring=Monitoring(ec2=mode)
    )
    return {(f.rule, f.entity.kind, f.entity.id, f.severity) for f in advise(snapshot)}


@pytest.mark.parametrize("name", _cases())
def test_findings_agree_in_both_monitoring_modes(name: str) -> None:
    basic, detailed = _findings(name, "basic"), _findings(name, "detailed")
    assert basic == detailed, {"basic only": basic - detailed, "detailed only": detailed - basic}
    if name in SILENT:
        assert basic == set()
