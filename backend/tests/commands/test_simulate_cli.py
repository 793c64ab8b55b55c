"""`headroom simulate` and `headroom snapshot validate|schema` through Typer's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from headroom.cli import app
from typer.testing import CliRunner

runner = CliRunner()
SCENARIOS = Path(__file__).resolve().parents[3] / "examples" / "scenarios"
SCHEMA_FILE = Path(__file__).resolve().parents[3] / "docs" / "snapshot.schema.json"


def test_simulate_to_stdout_is_a_valid_snapshot() -> None:
    result = runner.invoke(app, ["simulate", str(SCENARIOS / "healthy.yaml"), "--hours", "2", "--seed", "3"])
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["schema_version"] == 1
    assert doc["source"] == {
        "kind": "simulated",
        "tool": "headroom simulate",
        "scenario": "healthy",
        "seed": 3,
    }
    assert doc["window"]["start"] == "2026-01-05T00:00:00Z"  # the scenario's start
    assert len(doc["series"][0]["values"]) == 120


def test_simulate_monitoring_chooses_the_ec2_period() -> None:
    # Basic monitoring: EC2 EBS metrics at 300 s (2 h = 24 periods); detailed: 60 s; balances 300 s in both.
    steps = {}
    for mode in ("basic", "detailed"):
        args = ["simulate", str(SCENARIOS / "healthy.yaml"), "--hours", "2", "--monitoring", mode]
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.stderr
        doc = json.loads(result.stdout)
        steps[mode] = {(s["metric"], s["step_seconds"], len(s["values"])) for s in doc["series"]
                       if s["metric"] in ("ec2.ebs_read_ops", "ebs.read_ops")}
    assert ("ec2.ebs_read_ops", 300, 24) in steps["basic"] and ("ebs.read_ops", 60, 120) in steps["basic"]
    assert ("ec2.ebs_read_ops", 60, 120) in steps["detailed"]
    bad = runner.invoke(app, ["simulate", str(SCENARIOS / "healthy.yaml"), "--hours", "1", "--monitoring", "x"])
    assert bad.exit_code != 0 and "--monitoring" in bad.stderr


def test_simulate_out_file_then_validate(tmp_path: Path) -> None:
    out = tmp_path / "snap.json.gz"
    args = ["simulate", str(SCENARIOS / "demo.yaml"), "--hours", "1", "--out", str(out)]
    result = runner.invoke(app, [*args, "--start", "2026-02-01T00:00:00Z"])
    assert result.exit_code == 0, result.stderr
    assert "wrote" in result.stderr and result.stdout == ""
    checked = runner.invoke(app, ["snapshot", "validate", str(out)])
    assert checked.exit_code == 0, checked.stderr
    summary = json.loads(checked.stdout)
    assert summary["valid"] is True and summary["nodes"] == 6
    assert summary["window"]["start"] == "2026-02-01T00:00:00+00:00"


def test_step_option_sets_the_resolution() -> None:
    result = runner.invoke(
        app, ["simulate", str(SCENARIOS / "healthy.yaml"), "--hours", "2", "--step", "300"]
    )
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["window"]["step_seconds"] == 300
    assert len(doc["series"][0]["values"]) == 24
    bad = runner.invoke(app, ["simulate", str(SCENARIOS / "healthy.yaml"), "--step", "7"])
    assert bad.exit_code != 0 and "--step: must divide an hour" in bad.stderr


def test_same_seed_same_bytes() -> None:
    args = ["simulate", str(SCENARIOS / "gp2-burst-depletion.yaml"), "--hours", "1", "--seed", "5"]
    assert runner.invoke(app, args).stdout == runner.invoke(app, args).stdout


@pytest.mark.parametrize(
    ("yaml_text", "reason"),
    [
        (
            "cluster: {name: x}\nnodes:\n  - instance_type: m5.large\n    volumes: [{type: gp3, size_gib: 100}]\n"
            "  - instance_type: m5.large\n    name: b\n    volumes: [{type: gp2, size_gib: 0}]\n",
            "nodes[1].volumes[0].size_gib: Input should be greater than 0",
        ),
        ("cluster: {name: x}\nnodes: []\n", "nodes: List should have at least 1 item"),
        ("just text", "(root): a scenario is a YAML mapping"),
    ],
)
def test_bad_scenario_is_one_line_naming_the_field(tmp_path: Path, yaml_text: str, reason: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(yaml_text)
    result = runner.invoke(app, ["simulate", str(path), "--hours", "1"])
    assert result.exit_code != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert reason in lines[0]
    assert result.stdout == ""


def test_bad_options_fail_cleanly(tmp_path: Path) -> None:
    healthy = str(SCENARIOS / "healthy.yaml")
    result = runner.invoke(app, ["simulate", healthy, "--hours", "0"])
    assert result.exit_code != 0 and "--hours: must be positive" in result.stderr
    result = runner.invoke(app, ["simulate", healthy, "--start", "yesterday"])
    assert result.exit_code != 0 and "--start: not an ISO 8601 time" in result.stderr
    result = runner.invoke(app, ["simulate", str(tmp_path / "missing.yaml")])
    assert result.exit_code != 0 and "missing.yaml" in result.stderr


def test_validate_reports_the_bad_field(tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    assert (
        runner.invoke(
            app, ["simulate", str(SCENARIOS / "healthy.yaml"), "--hours", "1", "--out", str(out)]
        ).exit_code
        == 0
    )
    doc = json.loads(out.read_text())
    doc["volumes"][0]["size_gib"] = "big"
    out.write_text(json.dumps(doc))
    result = runner.invoke(app, ["snapshot", "validate", str(out)])
    assert result.exit_code != 0
    assert "volumes[0].size_gib: Input should be a valid number" in result.stderr


def test_schema_command_prints_the_published_schema() -> None:
    result = runner.invoke(app, ["snapshot", "schema"])
    assert result.exit_code == 0
    assert result.stdout == SCHEMA_FILE.read_text()


@pytest.mark.parametrize(
    "args",
    [
        ["simulate", "--help"],
        ["snapshot", "--help"],
        ["snapshot", "validate", "--help"],
        ["snapshot", "schema", "--help"],
    ],
)
def test_help(args: list[str]) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 0
    assert "Usage" in result.stdout
