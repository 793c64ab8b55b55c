"""One number per fix: the value a finding's text says the fix provisions is the value its exported artefact sets.

Over every example scenario, each option whose changes provision volume IOPS or throughput states its new ceiling
in its impact summary (the alert's and the digest's fix line). That number must be the one the AWS CLI script
passes to modify-volume (`--throughput 300`), not the node's effective limit where the instance's sustained EBS
limit binds first (298 MiB/s): the limit is said apart ("of which the node gets ...").
"""

from __future__ import annotations

import re

import pytest
from headroom.domain.model import Change
from headroom.domain.tikvconf import Patch, artefact

from advisor_fixtures import SCENARIOS, scenario_findings

SCENARIO_NAMES = sorted(path.stem for path in SCENARIOS.glob("*.yaml"))
# "throughput ceiling 125 MiB/s -> 300 MiB/s", "... -> 250 MiB/s (2 volumes of 125 MiB/s)", ", of which the node gets 298"
# (each number written by units.format_quantity, with its unit: "125 MiB/s -> 300 MiB/s")
SUMMARY = re.compile(
    r"(?P<what>IOPS|throughput) ceiling \d[\d,.]*(?: (?:IOPS|MiB/s))? -> (?P<total>\d[\d,.]*) (?:IOPS|MiB/s)"
    r"(?: \((?P<stripes>\d+) volumes of (?P<each>\d[\d,.]*) (?:IOPS|MiB/s)\))?"
    r"(?:, of which the node gets (?P<node>\d[\d,.]*) (?:IOPS|MiB/s))?"
)
KEY = {"IOPS": "volume.iops", "throughput": "volume.throughput"}
FLAG = {"volume.iops": "--iops", "volume.throughput": "--throughput"}


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _options(name: str) -> list[tuple[str, str, list[Change]]]:
    out = []
    for finding in scenario_findings(name):
        out.append((finding.dedup_key, finding.impact.summary, list(finding.changes)))
        out += [(f"{finding.dedup_key} / {o.label}", o.impact.summary, list(o.changes)) for o in finding.options]
    return out


@pytest.mark.parametrize("name", SCENARIO_NAMES)
def test_the_provisioned_number_in_the_text_is_the_one_the_script_sets(name: str) -> None:
    checked = 0
    for label, summary, changes, match in ((*o, m) for o in _options(name) for m in SUMMARY.finditer(o[1])):
        key = KEY[match["what"]]
        proposed = [c for c in changes if c.target == "aws" and c.key == key and c.proposed is not None]
        if not proposed:
            continue  # this fix sets no value of the dimension its text talks about (io2: IOPS for throughput)
        stated = _number(match["each"] or match["total"])
        assert {float(c.proposed) for c in proposed} == {stated}, (label, summary)  # type: ignore[arg-type]
        if match["node"] is not None:
            assert _number(match["node"]) < _number(match["total"]), (label, summary)
        if match["stripes"] is None:
            script = artefact(Patch(cluster="demo", nodes=(), changes=tuple(changes)), "aws").body
            # the modify-volume call's flags (the script also prints the undo call's, with the values before)
            calls = re.findall(r"aws_cli ec2 modify-volume --volume-id \S+ (.*)", script)
            flags = [v for call in calls for v in re.findall(rf"{FLAG[key]} (\d+(?:\.\d+)?)\b", call)]
            assert flags and {float(f) for f in flags} == {stated}, (label, summary, flags)
        checked += 1
    if name in ("demo", "volume-iops-ceiling", "volume-throughput-ceiling", "volume-overprovisioned"):
        assert checked, f"{name}: no fix stated a provisioned IOPS or throughput"
