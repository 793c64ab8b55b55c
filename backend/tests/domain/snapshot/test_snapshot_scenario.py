"""Scenario validation: a malformed scenario names the path of the bad field."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from headroom.domain.snapshot.errors import ScenarioError
from headroom.domain.snapshot.scenario import node_workload, parse_scenario, scenario_from_dict

BASE: dict[str, Any] = {
    "cluster": {"name": "t", "tikv_version": "v8.5.1"},
    "workload": {"reads_per_sec": 1000},
    "nodes": [
        {"instance_type": "m6i.2xlarge", "count": 2, "volumes": [{"type": "gp3", "size_gib": 500}]},
        {
            "name": "other",
            "instance_type": "m5.2xlarge",
            "volumes": [{"type": "gp3", "size_gib": 500}, {"role": "raft", "type": "gp3", "size_gib": 20}],
        },
    ],
}


def with_change(path: str, value: Any) -> dict[str, Any]:
    doc = copy.deepcopy(BASE)
    cursor: Any = doc
    parts = path.split(".")
    for part in parts[:-1]:
        cursor = cursor[int(part)] if part.isdigit() else cursor[part]
    last = parts[-1]
    cursor[int(last) if last.isdigit() else last] = value
    return doc


def test_base_is_valid() -> None:
    scenario = scenario_from_dict(BASE)
    assert [g.node_names for g in scenario.nodes] == [["tikv-1", "tikv-2"], ["other-1"]]


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("nodes.1.volumes.0.size_gib", 0, "nodes[1].volumes[0].size_gib: Input should be greater than 0"),
        # gp2 1 GiB-16 TiB (docs/reference/ebs-volume-types.md#limits-per-volume-type)
        (
            "nodes.1.volumes.0",
            {"type": "gp2", "size_gib": 20000},
            "nodes[1].volumes[0].size_gib: gp2 size must be",
        ),
        # gp3 at most 500 IOPS/GiB (docs/reference/ebs-volume-types.md#limits-per-volume-type): 10 GiB allows 5,000
        (
            "nodes.0.volumes.0",
            {"type": "gp3", "size_gib": 10, "iops": 6000},
            "nodes[0].volumes[0]: gp3 allows at most 500 IOPS per GiB",
        ),
        ("nodes.0.volumes.0", {"type": "io1", "size_gib": 100}, "nodes[0].volumes[0]: io1 needs iops"),
        (
            "nodes.0.volumes.0",
            {"type": "gp2", "size_gib": 100, "iops": 300},
            "nodes[0].volumes[0]: gp2 has no",
        ),
        ("nodes.0.volumes.0.type", "gp9", "nodes[0].volumes[0].type: Input should be"),
        ("nodes.0.instance_type", "m5.3xlarge", "nodes[0].instance_type: unknown instance type 'm5.3xlarge'"),
        (
            "nodes.0.volumes",
            [{"role": "raft", "type": "gp3", "size_gib": 20}],
            "nodes[0]: each node needs exactly",
        ),
        ("nodes.1.name", "tikv", "node name 'tikv-1' is used twice"),
        (
            "nodes.0.workload",
            {"reads_per_sec": -1},
            "nodes[0].workload.reads_per_sec: Input should be greater",
        ),
        ("nodes.0.workload", {"diurnal": {"amplitude": 2}}, "nodes[0].workload.diurnal.amplitude"),
        (
            "nodes.0.config",
            {"storage.block-cache.capacity": "lots"},
            "nodes[0].config.storage.block-cache.capacity",
        ),
        (
            "nodes.0.config",
            {"raftstore": {"apply-pool-size": -2}},
            "nodes[0].config.raftstore.apply-pool-size",
        ),
        (
            "workload.spikes",
            [{"at_hour": 1, "duration_minutes": 0, "factor": 2}],
            "workload.spikes[0].duration_min",
        ),
        ("cluster.tikv_version", "latest", "cluster.tikv_version: not a TiKV version"),
        ("cluster.deployment", "k8s", "cluster.deployment: Input should be 'tiup', 'operator', 'manual'"),
        ("nodes.0.colour", "blue", "nodes[0].colour: Extra inputs are not permitted"),
    ],
)
def test_errors_name_the_bad_field(path: str, value: Any, message: str) -> None:
    with pytest.raises(ScenarioError) as err:
        scenario_from_dict(with_change(path, value))
    assert message in str(err.value)


def test_yaml_errors_are_one_line() -> None:
    with pytest.raises(ScenarioError) as err:
        parse_scenario("cluster: [unclosed")
    assert "\n" not in str(err.value)
    with pytest.raises(ScenarioError, match=r"\(root\): a scenario is a YAML mapping"):
        parse_scenario("- 1\n- 2")


def test_group_workload_overrides_merge() -> None:
    doc = with_change("nodes.1.workload", {"load_factor": 2.0, "diurnal": {"peak_hour_utc": 3}})
    scenario = scenario_from_dict(doc)
    merged = node_workload(scenario, 1)
    assert merged.load_factor == 2.0
    assert merged.reads_per_sec == 1000  # from the cluster workload
    assert merged.diurnal.peak_hour_utc == 3
    assert merged.diurnal.amplitude == scenario.workload.diurnal.amplitude
