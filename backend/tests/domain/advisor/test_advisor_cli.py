"""`headroom advise` and `headroom rules`: output shape and exit codes."""

from __future__ import annotations

import json
import re
from pathlib import Path

from advisor_fixtures import AWS_RULES, scenario_snapshot
from headroom.cli import app
from headroom.domain.snapshot.files import save_snapshot
from typer.testing import CliRunner

runner = CliRunner()


def _snapshot_file(tmp_path: Path, name: str) -> Path:
    return save_snapshot(scenario_snapshot(name), tmp_path / f"{name}.json")


def test_advise_json(tmp_path: Path) -> None:
    path = _snapshot_file(tmp_path, "volume-iops-ceiling")
    result = runner.invoke(app, ["advise", str(path)])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    rules = {f["rule"] for f in doc["findings"]}
    assert "volume-iops-ceiling" in rules
    for f in doc["findings"]:
        assert {
            "rule",
            "severity",
            "entity",
            "title",
            "evidence",
            "changes",
            "impact",
            "confidence",
            "dedup_key",
            "why",
        } <= set(f)


def test_advise_text_and_healthy_exit_zero(tmp_path: Path) -> None:
    path = _snapshot_file(tmp_path, "healthy")
    result = runner.invoke(app, ["advise", str(path), "--format", "text"])
    assert result.exit_code == 0
    assert "volume-iops-ceiling" not in result.stdout


def test_bad_snapshot_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema_version": 1}')
    result = runner.invoke(app, ["advise", str(bad)])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("headroom: error:")


def test_what_if_from_a_findings_file(tmp_path: Path) -> None:
    path = _snapshot_file(tmp_path, "volume-iops-ceiling")
    first = runner.invoke(app, ["advise", str(path), "--rule", "volume-iops-ceiling"])
    findings = tmp_path / "findings.json"
    findings.write_text(first.stdout)
    result = runner.invoke(app, ["advise", str(path), "--what-if", str(findings)])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert not [f for f in doc["findings"] if f["rule"] == "volume-iops-ceiling"]
    assert doc["what_if"]["resolved"]


def test_what_if_text_says_each_ceiling_in_its_unit(tmp_path: Path) -> None:
    path = _snapshot_file(tmp_path, "volume-iops-ceiling")
    findings = tmp_path / "findings.json"
    findings.write_text(runner.invoke(app, ["advise", str(path), "--rule", "volume-iops-ceiling"]).stdout)
    result = runner.invoke(app, ["advise", str(path), "--what-if", str(findings), "--format", "text"])
    assert result.exit_code == 0, result.output
    moved = [line for line in result.stdout.splitlines() if ": ceiling in force " in line]
    assert moved, result.stdout
    assert all(re.search(r"ceiling in force [\d,.]+ (IOPS|MiB/s) -> [\d,.]+ (IOPS|MiB/s)", line) for line in moved)
    assert "None" not in result.stdout
    for line in moved:
        if line.lstrip().startswith("instance "):
            assert "the instance's EBS limit" in line and "its volumes' sum" in line


def test_rules_json_lists_every_aws_rule_with_actions() -> None:
    result = runner.invoke(app, ["rules", "--json"])
    assert result.exit_code == 0
    rules = {r["id"]: r for r in json.loads(result.stdout)["rules"]}
    for rule_id in AWS_RULES:
        assert rules[rule_id]["description"] and rules[rule_id]["aws_actions"]
        assert "tikv_keys" in rules[rule_id]
