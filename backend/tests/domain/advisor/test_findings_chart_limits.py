"""A finding's charts draw the limits its table states: the evidence measures' limits are reference lines.

Regression: the block-cache finding's table gave its limit as 1,050 IOPS while its chart's line said "IOPS ceiling:
3,000". For every example scenario, each measure in IOPS or MiB/s that is compared with a limit, on a finding
that charts a series in that unit with reference lines, must find its limit among those lines, and the chart's
series names must not be a unit (a chart titled "MiB/s (MiB/s)").
"""

from __future__ import annotations

import pytest
from advisor_fixtures import SCENARIOS, scenario_findings
from headroom.domain.advisor import Finding

MIB = 1024 * 1024
# Limits the table compares with but that are no line of a chart, each with its reason:
NOT_CHARTED = {
    # a smaller gp2's sustained throughput against what a >= 334 GiB gp2 sustains: a fix's target, not a limit
    # the volume ran against
    ("volume-throughput-ceiling", "gp2 sustained throughput at this size"),
    # the configured rate limiter (10 GiB/s by default) against the rate proposed: a config value, not a series
    ("compaction-rate-limit", "rocksdb.rate-bytes-per-sec"),
}
UNITS = {"IOPS", "MiB/s", "bytes/s", "B/s"}


def _lines_by_unit(f: Finding) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for s in f.evidence.series:
        for line in s.reference_lines:
            if line.unit in ("bytes/s", "B/s"):
                out.setdefault("MiB/s", []).append(line.value / MIB)
            else:
                out.setdefault(line.unit, []).append(line.value)
    return out


@pytest.mark.parametrize("scenario", sorted(p.stem for p in SCENARIOS.glob("*.yaml")))
def test_every_charted_limit_of_a_finding_is_a_line_on_its_chart(scenario: str) -> None:
    for f in scenario_findings(scenario):
        lines = _lines_by_unit(f)
        for m in f.evidence.measures:
            if m.limit is None or m.unit not in lines or (f.rule, m.label) in NOT_CHARTED:
                continue
            assert any(abs(v - m.limit) <= 1e-6 * max(1.0, m.limit) for v in lines[m.unit]), (
                f"{f.rule} on {f.entity.id}: the table's '{m.label}' limit {m.limit:g} {m.unit} "
                f"({m.limit_label}) is no line of its chart ({sorted(set(lines[m.unit]))})"
            )
        for s in f.evidence.series:
            assert s.label not in UNITS, f"{f.rule}: a series named after its unit ({s.label})"
            assert not (s.label or "").endswith(("(bytes/s)", "(MiB/s)", "(IOPS)")), f"{f.rule}: {s.label}"


@pytest.mark.parametrize("scenario", sorted(p.stem for p in SCENARIOS.glob("*.yaml")))
def test_every_line_on_a_findings_chart_names_its_source(scenario: str) -> None:
    """The chart never guesses where a line comes from (frontend evidenceChart.ceilingSource): each line the advisor
    draws carries its own source, a public document's link or the "How Headroom decides" page of a Headroom choice."""
    for f in scenario_findings(scenario):
        for s in f.evidence.series:
            for line in s.reference_lines:
                assert line.source and ("https://" in line.source or "How Headroom decides: " in line.source), (
                    f"{f.rule} on {f.entity.id}: the line '{line.label}' ({line.value:g} {line.unit}) names no "
                    f"source ({line.source!r})"
                )
