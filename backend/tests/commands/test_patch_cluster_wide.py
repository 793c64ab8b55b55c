"""`headroom patch` on three identical nodes (docs/thresholds/cluster-config.md): the advisor's one cluster-level value renders once.

The case: examples/scenarios/thread-pool-saturation.yaml, three m6i.2xlarge (8 vCPUs) whose scheduler pools
(clamp(8, 1, 4) = 4 threads, docs/reference/tikv-config.md#keys-and-defaults) run hot under slightly different load. One store at a time the rule
asks for 6, 5 and 5 threads, which no tikv.toml fragment, TiUP server_configs or TiDB Operator spec can hold at
once ("differs by node"); the advisor now proposes the largest need once, within the 8 − 1 = 7 thread budget.
TiUP: `server_configs.tikv` applies to every TiKV (TiUP topology reference); Operator: `spec.tikv.config` is one
TOML string for every pod.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from headroom.cli import app
from headroom.domain.advisor import advise
from headroom.domain.snapshot.files import save_snapshot
from headroom.domain.snapshot.scenario import load_scenario
from headroom.domain.snapshot.simulate import simulate
from typer.testing import CliRunner

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[3]
SCENARIO = ROOT / "examples" / "scenarios" / "thread-pool-saturation.yaml"
KEY = "storage.scheduler-worker-pool-size"


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    scenario = load_scenario(SCENARIO)
    path = tmp_path_factory.mktemp("cluster-wide") / "snapshot.json"
    save_snapshot(simulate(scenario, hours=24.0, seed=0, start=scenario.start), path)
    return path


def _findings(snapshot: Path, tmp_path: Path, *args: str) -> Path:
    result = runner.invoke(app, ["advise", str(snapshot), "--rule", "thread-pool-saturation", *args])
    assert result.exit_code == 0, result.output
    path = tmp_path / "findings.json"
    path.write_text(result.stdout)
    return path


def _patch(snapshot: Path, findings: Path, fmt: str) -> Any:
    return runner.invoke(app, ["patch", str(snapshot), "--findings", str(findings), "--format", fmt])


def _flatten(table: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in table.items():
        if isinstance(value, dict):
            out.update(_flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def test_three_identical_nodes_patch_once(snapshot: Path, tmp_path: Path) -> None:
    findings = _findings(snapshot, tmp_path)
    document = json.loads(findings.read_text())
    (finding,) = document["findings"]
    needs = {n["node"]: n["needs"][KEY] for n in finding["evidence"]["per_node"]}
    assert sorted(needs) == ["tikv-1", "tikv-2", "tikv-3"]
    value = max(needs.values())  # the largest need
    assert value <= 7  # within the m6i.2xlarge's 8 − 1 threads

    toml = _patch(snapshot, findings, "toml")
    # Before config findings were cluster-wide: "differs by node ... render one node at a time".
    assert toml.exit_code == 0, toml.output
    assert _flatten(tomllib.loads(toml.stdout)) == {KEY: value}
    assert "only on" not in toml.stdout  # one value for every node

    tiup = _patch(snapshot, findings, "tiup")
    assert tiup.exit_code == 0, tiup.output
    assert yaml.safe_load(tiup.stdout) == {"server_configs": {"tikv": {KEY: value}}}

    operator = _patch(snapshot, findings, "operator")
    assert operator.exit_code == 0, operator.output
    config = yaml.safe_load(operator.stdout)["spec"]["tikv"]["config"]
    assert _flatten(tomllib.loads(config)) == {KEY: value}

    sql = _patch(snapshot, findings, "sql")
    assert sql.exit_code == 0, sql.output
    assert sql.stdout.count(f"SET CONFIG tikv `{KEY}` = {value};") == 1


def test_per_node_findings_were_refused(snapshot: Path, tmp_path: Path) -> None:
    """The defect: per-node values (per-node sizing gave 6, 5 and 5) cannot make one tikv.toml fragment."""
    from headroom.domain.snapshot.files import load_snapshot

    per_node = advise(load_snapshot(snapshot), rules=["thread-pool-saturation"], cluster_wide=False)
    assert len(per_node) == 3
    # The rules now size to the middle of the band and these three may agree: give one store one thread more,
    # as the old sizing did (6 on tikv-1, 5 on the others).
    first = per_node[0]
    bumped = first.changes[0].model_copy(update={"proposed": int(first.changes[0].proposed) + 1})
    findings = tmp_path / "per-node.json"
    documents = [
        first.model_copy(update={"changes": [bumped]}).to_dict(),
        *(f.to_dict() for f in per_node[1:]),
    ]
    findings.write_text(json.dumps({"findings": documents}))
    refused = _patch(snapshot, findings, "toml")
    assert refused.exit_code != 0
    assert "differs by node" in refused.output
