"""What-if: apply changes, re-derive ceilings, re-run the advisor."""

from __future__ import annotations

import numpy as np
import pytest
from advisor_fixtures import of_rule, scenario_findings, scenario_snapshot, synthetic
from headroom.domain.advisor.context import Context
from headroom.domain.advisor.whatif import WhatIfError, apply_changes, parse_changes, what_if
from headroom.domain.model import Change, EntityRef


def test_accepting_the_iops_fix_resolves_the_finding_and_raises_the_ceiling() -> None:
    snap = scenario_snapshot("volume-iops-ceiling")
    findings = of_rule(scenario_findings("volume-iops-ceiling"), "volume-iops-ceiling")
    changes = [c for f in findings for c in f.changes]
    result = what_if(snap, changes)
    assert not of_rule(result.findings_after, "volume-iops-ceiling")
    doc = result.to_dict()
    assert set(doc["resolved"]) >= {f.dedup_key for f in findings}
    rows = [r for r in doc["ceilings"] if r["dimension"] == "iops" and r["entity"]["kind"] == "volume"]
    assert rows and all(r["ceiling"] == 3000.0 and r["ceiling_after"] >= 4000.0 for r in rows)
    assert all(r["headroom_after_pct"] > r["headroom_pct"] for r in rows)


def test_gp2_to_gp3_drops_the_burst_balance_series_and_the_bucket() -> None:
    balance = np.zeros(1440)
    snap = synthetic(
        volume={"type": "gp2", "size_gib": 500},
        read_iops=np.full(1440, 1490.0),
        extra_volume_series={"ebs.burst_balance": balance},
    )
    vol = EntityRef(kind="volume", id="vol-1", volume_id="vol-1")
    after = apply_changes(
        snap,
        [
            Change(target="aws", key="volume.type", current="gp2", proposed="gp3", entity=vol),
            Change(target="aws", key="volume.iops", current=None, proposed=3000, entity=vol),
        ],
    )
    assert after.volumes[0].type == "gp3" and after.volumes[0].iops == 3000
    assert not [s for s in after.series if s.metric == "ebs.burst_balance"]
    ctx = Context(after)
    ceiling = ctx.volume_iops_ceiling("vol-1")
    assert ceiling is not None and float(ceiling[0]) == 3000.0  # gp3 3,000 sustained (docs/reference/ebs-volume-types.md#gp3-limits-raised-in-2025) vs gp2 1,500


def test_instance_type_and_tikv_changes() -> None:
    snap = scenario_snapshot("pingcap-aws-m5-2xlarge-io1")
    iid = snap.instances[0].id
    node = snap.nodes[0]
    after = apply_changes(
        snap,
        parse_changes(
            {
                "changes": [
                    {
                        "target": "aws",
                        "key": "instance.type",
                        "proposed": "m5.4xlarge",
                        "entity": {"kind": "instance", "id": iid, "instance_id": iid},
                    },
                    {
                        "target": "tikv",
                        "key": "storage.block-cache.capacity",
                        "proposed": "4GiB",
                        "entity": {"kind": "node", "id": node.id, "node": node.id},
                    },
                ]
            }
        ),
    )
    assert after.instances[0].type == "m5.4xlarge"
    assert [n.instance_type for n in after.nodes if n.instance_id == iid] == ["m5.4xlarge"]
    assert Context(after).config(node.id, "storage.block-cache.capacity").value == "4GiB"
    assert not [s for s in after.series if s.entity.id == iid and s.metric == "ec2.ebs_byte_balance"]
    ceilings = Context(after).node_ceilings(iid)
    assert ceilings is not None and ceilings.sustained_throughput_mibps.instance == pytest.approx(
        593.75e6 / 2**20
    )


@pytest.mark.parametrize(
    "change",
    [
        {
            "target": "aws",
            "key": "volume.iops",
            "proposed": 90000,
            "entity": {"kind": "volume", "id": "vol-1"},
        },
        {
            "target": "aws",
            "key": "volume.iops",
            "proposed": 4000,
            "entity": {"kind": "volume", "id": "vol-x"},
        },
        {
            "target": "aws",
            "key": "instance.type",
            "proposed": "m99.huge",
            "entity": {"kind": "instance", "id": "i-1"},
        },
        {"target": "aws", "key": "volume.colour", "proposed": 1, "entity": {"kind": "volume", "id": "vol-1"}},
        # values the volume cannot take: refused by name, not a 500 when the what-if API rebuilds the volume
        {"target": "aws", "key": "volume.type", "proposed": "gp9", "entity": {"kind": "volume", "id": "vol-1"}},
        {"target": "aws", "key": "volume.iops", "proposed": -5, "entity": {"kind": "volume", "id": "vol-1"}},
        {"target": "aws", "key": "volume.size", "proposed": 0, "entity": {"kind": "volume", "id": "vol-1"}},
    ],
)
def test_bad_changes_are_refused(change: dict[str, object]) -> None:
    snap = synthetic(
        volume={"type": "gp3", "size_gib": 100, "iops": 3000, "throughput_mibps": 125},
        read_iops=np.full(60, 10.0),
    )
    with pytest.raises(WhatIfError):
        apply_changes(snap, parse_changes([change]))


@pytest.mark.parametrize(
    ("size_gib", "still_drains"),
    [
        (600, True),  # baseline 3 x 600 = 1,800 IOPS, under the ~2,116 IOPS the volume drained at
        (941, False),  # the burst rule's own "gp2 grown to 941 GiB": 2,823 IOPS >= 2,116 / 0.75
        (1000, False),  # 3,000 IOPS baseline: gp2 no longer bursts, so there is no bucket to empty
    ],
)
def test_a_resized_gp2_is_judged_by_its_new_bucket_not_cleared(size_gib: int, still_drains: bool) -> None:
    # AWS gp2 (docs/reference/gp2-burst.md#the-credit-bucket): 5.4 M credits earned at 3 IOPS per GiB. The scenario's
    # 500 GiB gp2 (1,500 IOPS baseline) drains at ~2,116 IOPS and sits at 0% for about 6 hours. Growing it keeps a
    # bucket below 1,000 GiB: the what-if replays that bucket at the new baseline instead of dropping the balance,
    # so a grow too small to cover the demand still drains, and the rule's own grow resolves it.
    snap = scenario_snapshot("gp2-burst-depletion")
    before = of_rule(scenario_findings("gp2-burst-depletion"), "gp2-burst-depletion")
    finding = before[0]
    vid = finding.dedup_key.split("volume:")[1]
    vol = EntityRef(kind="volume", id=vid, volume_id=vid)
    result = what_if(snap, [Change(target="aws", key="volume.size", current=500, proposed=size_gib, entity=vol)],
                     findings_before=scenario_findings("gp2-burst-depletion"))
    after = {f.dedup_key for f in result.findings_after if f.rule == "gp2-burst-depletion"}
    assert (finding.dedup_key in after) is still_drains
    replayed = [s for s in result.snapshot_after.series if s.metric == "ebs.burst_balance" and s.entity.id == vid]
    if size_gib >= 1000:
        assert replayed == []
    else:
        values = [v for v in replayed[0].values if v is not None]
        assert (min(values) <= 0.0) is still_drains
