"""One limits resolver end to end: an instance type the catalog lacks but the account's DescribeInstanceTypes
answer has is judged by the advisor against those limits, and the metrics chart draws the same ceiling; a type
neither knows is said to be unknown (nodes API, email) and judged by nothing."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from advice_support import make_org
from headroom.accounts.service import Principal
from headroom.digest import service as digest
from headroom.digest.build import build_digest
from headroom.domain.advisor import advise
from headroom.domain.catalog import instance_limits
from headroom.domain.snapshot.scenario import load_scenario
from headroom.inventory.models import Instance, InstanceTypeLimits, TikvNode
from headroom.metrics import service as metrics
from headroom.sources.demo import service as demo
from headroom.timeseries.snapshots import build_snapshot
from sqlalchemy import select

SCENARIO = "instance-ebs-bandwidth-bound.yaml"  # 3 nodes on m5.4xlarge, clipped at the instance's 4,750 Mbps
# The afternoon of the scenario's diurnal peak (14:00 UTC): the instance limit binds.
START = dt.datetime(2026, 1, 5, 12, 0, tzinfo=dt.UTC)
END = START + dt.timedelta(hours=4)
UNLISTED = "zz7.4xlarge"  # not in the catalog (docs/reference/ec2-ebs-limits.md#limits-table): only DescribeInstanceTypes can tell its limits


def _ingest(db: Any, repo_root: Any, instance_type: str) -> tuple[Any, Any]:
    org_id = make_org(db, "limits")
    scenario = load_scenario(repo_root / "examples" / "scenarios" / SCENARIO)
    cluster = demo.seed_demo_cluster(db, org_id, scenario=scenario)
    demo.ingest_window(db, cluster, scenario, START, END)
    for row in db.scalars(select(Instance).where(Instance.org_id == org_id)):
        row.instance_type = instance_type  # the same machine, under a name the catalog does not list
    db.flush()
    return org_id, cluster


def _describe(db: Any, name: str, like: str) -> None:
    """Store an EC2 DescribeInstanceTypes answer for `name` with the EBS figures of the catalog's `like`."""
    lim = instance_limits(like)
    db.merge(InstanceTypeLimits(
        instance_type=name, region="us-east-1", observed_at=dt.datetime(2026, 1, 4, tzinfo=dt.UTC),
        entry={"name": name, "vcpus": lim.vcpus, "memory_gib": lim.memory_gib,
               "baseline_bandwidth_mbps": lim.baseline_bandwidth_mbps, "max_bandwidth_mbps": lim.max_bandwidth_mbps,
               "baseline_iops": lim.baseline_iops, "max_iops": lim.max_iops, "hourly_price_usd": None}))
    db.flush()


def test_a_described_type_is_judged_by_its_limits_and_charted_with_the_same_ceiling(db: Any, repo_root: Any) -> None:
    org_id, cluster = _ingest(db, repo_root, UNLISTED)
    _describe(db, UNLISTED, "m5.4xlarge")
    snap = build_snapshot(db, org_id, cluster.id, start=START, end=END)
    inst = snap.instances[0]
    assert inst.type == UNLISTED and inst.ebs_limits is not None
    assert inst.ebs_limits.source == "DescribeInstanceTypes EbsInfo (us-east-1, observed 2026-01-04)"

    found = [f for f in advise(snap) if f.rule == "instance-ebs-bandwidth-bound"]
    assert found, "the advisor must judge the instance against the DescribeInstanceTypes limits"
    finding = next(f for f in found if f.entity.id == inst.id)
    limit = finding.evidence.measures[0].limit
    # m5.4xlarge's 4,750 Mbps = 593.75 MB/s = 566.2 MiB/s (docs/reference/ec2-ebs-limits.md#units, docs/reference/ec2-ebs-limits.md#limits-table), now known only from EC2's answer.
    assert limit == pytest.approx(593.75 / 1.048576)

    node = db.scalar(select(TikvNode).where(TikvNode.cluster_id == cluster.id, TikvNode.instance_ref_id == select(
        Instance.id).where(Instance.org_id == org_id, Instance.instance_id == inst.id).scalar_subquery()))
    principal = Principal(user_id=None, org_id=org_id, role="viewer", via="token")
    charted = metrics.node_metrics(db, principal, cluster.id, node_id=node.id, panels=["instance_throughput"],
                                   start=START, end=END, now=END)
    assert charted is not None
    (panel,) = charted.panels
    ceilings = {c.id: c for c in panel.ceilings}
    assert ceilings["instance_max_throughput"].value == pytest.approx(limit)
    assert "DescribeInstanceTypes" in ceilings["instance_max_throughput"].source
    # The reference lines of the finding's chart are the panel's ceilings.
    lines = {line.value for line in finding.evidence.series[0].reference_lines}
    assert {c.value for c in panel.ceilings} == lines


def test_an_unknown_type_is_judged_by_nothing_and_says_so(db: Any, repo_root: Any) -> None:
    org_id, cluster = _ingest(db, repo_root, UNLISTED)  # no DescribeInstanceTypes answer for it
    snap = build_snapshot(db, org_id, cluster.id, start=START, end=END)
    assert snap.instances[0].ebs_limits is None
    assert not [f for f in advise(snap) if f.rule.startswith("instance-ebs")]

    node = db.scalars(select(TikvNode).where(TikvNode.cluster_id == cluster.id)).first()
    principal = Principal(user_id=None, org_id=org_id, role="viewer", via="token")
    charted = metrics.node_metrics(db, principal, cluster.id, node_id=node.id, panels=["instance_throughput"],
                                   start=START, end=END, now=END)
    assert charted is not None and charted.panels[0].ceilings == []

    data = digest.gather(db, org_id, now=END, public_url="https://headroom.example")
    (section,) = data.clusters
    assert len(section.limit_notes) == 3  # the scenario's three instances
    assert all(UNLISTED in note and "EBS limits unknown" in note and "no finding judges" in note
               for note in section.limit_notes)
    body = build_digest(data)
    assert "Not judged:" in body.text and section.limit_notes[0] in body.text and not body.all_clear
    assert "Not judged:" in body.html
