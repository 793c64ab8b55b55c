"""Pure inventory mapping: volume roles, TiKV node -> instance, field diffs and attributes at a past time."""

from __future__ import annotations

import datetime as dt

import pytest
from headroom.inventory.limits import undo_changes
from headroom.sources.aws.ec2_inventory import (
    InstanceInfo,
    VolumeInfo,
    address_host,
    diff_fields,
    match_node,
    parse_instances,
    volume_roles,
)


def _inst(iid: str, ip: str = "10.0.0.1", tags: dict[str, str] | None = None) -> InstanceInfo:
    return InstanceInfo(iid, "m5.2xlarge", "us-east-1a", ip, f"ip-{ip.replace('.', '-')}.ec2.internal", "/dev/xvda",
                        False, "running", tags or {})


def _vol(vid: str, size: int, inst: str | None, device: str | None, tags: dict[str, str] | None = None) -> VolumeInfo:
    return VolumeInfo(vid, "gp3", size, 3000, 125, "us-east-1a", inst, device, tags or {})


ROLE_CASES = [
    # (volumes, expected roles): root -> other; largest -> data; <= 1/4 of it -> raft; tags win.
    ([_vol("v-root", 8, "i-1", "/dev/xvda"), _vol("v-big", 1000, "i-1", "/dev/sdf"), _vol("v-small", 50, "i-1", "/dev/sdg")],
     {"v-root": "other", "v-big": "data", "v-small": "raft"}),
    ([_vol("v-a", 1000, "i-1", "/dev/sdf"), _vol("v-b", 800, "i-1", "/dev/sdg")], {"v-a": "data", "v-b": "other"}),
    ([_vol("v-a", 1000, "i-1", "/dev/sdf", {"headroom:role": "raft"}), _vol("v-b", 800, "i-1", "/dev/sdg")],
     {"v-a": "raft", "v-b": "data"}),
    ([_vol("v-a", 100, "i-1", "/dev/sdf", {"Name": "tikv-1-raft-log"}), _vol("v-b", 90, "i-1", "/dev/sdg")],
     {"v-a": "raft", "v-b": "data"}),
    ([_vol("v-free", 100, None, None)], {"v-free": "other"}),
]


@pytest.mark.parametrize(("volumes", "expected"), ROLE_CASES)
def test_volume_roles(volumes: list[VolumeInfo], expected: dict[str, str]) -> None:
    assert volume_roles([_inst("i-1")], volumes) == expected


def test_match_node_by_ip_dns_and_tags() -> None:
    fleet = [_inst("i-1", "10.0.0.1"), _inst("i-2", "10.0.0.2", {"tidb_cluster": "prod", "component": "tikv",
                                                                 "Name": "tikv-2"})]
    assert match_node("10.0.0.1:20160", fleet) == "i-1"
    assert match_node("ip-10-0-0-2.ec2.internal:20160", fleet) == "i-2"
    assert match_node("ip-10-0-0-2:20160", fleet) == "i-2"
    assert match_node("tikv-2.tikv-peer.tidb.svc:20160", fleet, "prod") == "i-2"
    assert match_node("tikv-2.tikv-peer.tidb.svc:20160", fleet, "staging") is None
    assert address_host("[fd00::1]:20160") == "fd00::1"


def test_terminated_instances_are_skipped_and_monitoring_read() -> None:
    pages = [{"Reservations": [{"Instances": [
        {"InstanceId": "i-1", "InstanceType": "m5.large", "State": {"Name": "running"},
         "Monitoring": {"State": "enabled"}},
        {"InstanceId": "i-2", "InstanceType": "m5.large", "State": {"Name": "terminated"}}]}]}]
    parsed = parse_instances(pages)
    assert [i.instance_id for i in parsed] == ["i-1"] and parsed[0].detailed_monitoring


def test_attributes_at_undoes_later_changes() -> None:
    t0 = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
    current = {"volume_type": "gp3", "size_gib": 400}
    changes = [(t0 + dt.timedelta(hours=1), "volume_type", "gp2", "gp3"),
               (t0 + dt.timedelta(hours=2), "size_gib", 200, 400)]
    assert undo_changes(current, changes, t0) == {"volume_type": "gp2", "size_gib": 200}
    assert undo_changes(current, changes, t0 + dt.timedelta(minutes=90)) == {"volume_type": "gp3", "size_gib": 200}
    assert undo_changes(current, changes, t0 + dt.timedelta(hours=3)) == current
    assert [c.field for c in diff_fields("volume", "v", {"size_gib": 1, "iops": 3}, {"size_gib": 2, "iops": 3},
                                         ("size_gib", "iops"))] == ["size_gib"]
