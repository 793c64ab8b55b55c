"""One Change from rule to download: what a rule emits is what the store keeps, what the API shows, what a patch
holds and what its artefacts render (entity, current, proposed, online), with no conversion in between.

A rule defined here (injected with `rules=`) builds its changes with the real rule helpers on the demo cluster:
a tikv key on one node (current from the node's config), the same key on every node (a cluster entity), an
AWS change on a volume and one that leaves its entity to the finding.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from typing import Any

from advice_support import DemoCluster
from headroom.accounts.service import Principal
from headroom.domain.advisor.context import Context
from headroom.domain.advisor.finding import Finding, make_dedup_key
from headroom.domain.advisor.rule import Rule
from headroom.domain.advisor.rules._tikv_helpers import config_value, tikv_change
from headroom.domain.model import Change, Evidence, Impact
from headroom.domain.tikvconf import target_node
from headroom.domain.tikvconf.render import sql_value
from headroom.findings import service as findings_service
from headroom.findings.models import FindingRecord as FindingRow
from headroom.patches import service as patches_service
from headroom.patches.models import PatchRecord as PatchRow
from sqlalchemy import select

T0 = dt.datetime(2026, 11, 2, 18, 0, tzinfo=dt.UTC)
EMITTED: list[Finding] = []


def _round_trip_rule(ctx: Context) -> list[Finding]:
    node = ctx.nodes[0]
    volume = sorted(v.id for v in ctx.volumes)[0]
    entity = ctx.entity_for_node(node.id)
    finding = Finding(
        rule="test-round-trip",
        severity="warning",
        entity=entity,
        title="round trip",
        evidence=Evidence(window_start=ctx.window.start, window_end=ctx.window.end, step_seconds=ctx.step_seconds,
                          condition="always"),
        why="the test says so",
        changes=[
            tikv_change(ctx, node, "storage.block-cache.capacity", "4GiB", "smaller cache on one node"),
            Change(target="tikv", key="raftstore.apply-pool-size", proposed=3, online=True, reason="every node",
                   current=config_value(ctx, node, "raftstore.apply-pool-size"), entity=ctx.cluster_entity()),
            Change(target="aws", key="volume.iops", current=3000, proposed=4000, online=True, reason="more IOPS",
                   entity=ctx.entity_for_volume(volume)),
            Change(target="aws", key="instance.type", current=node.instance_type, proposed="m6i.4xlarge",
                   reason="bigger instance"),  # no entity: the finding's node, on its instance
        ],
        impact=Impact(summary="none"),
        confidence=0.5,
        dedup_key=make_dedup_key("test-round-trip", ctx.cluster.name, entity),
    )
    EMITTED.append(finding)
    return [finding]


RULE = Rule(id="test-round-trip", description="emits fixed changes", evaluate=_round_trip_rule)


def _admin(org_id: uuid.UUID) -> Principal:
    return Principal(user_id=None, org_id=org_id, role="admin", via="token")


def _emit(db: Any, demo: DemoCluster) -> tuple[Finding, FindingRow]:
    EMITTED.clear()
    findings_service.advise_cluster(db, demo.cluster, now=T0, rules=[RULE])
    (emitted,) = EMITTED
    db.expire_all()
    row = db.scalar(select(FindingRow).where(FindingRow.cluster_id == demo.cluster.id))
    assert row is not None
    return emitted, row


def test_the_store_keeps_the_rules_changes_as_they_are(db: Any, demo_cluster: DemoCluster) -> None:
    emitted, row = _emit(db, demo_cluster)
    stored = [r.change for r in findings_service.recommendations(db, row)]
    assert stored == emitted.changes  # entity, current, proposed, online, reason: all of it
    tikv, everywhere, volume, instance = stored
    node = demo_cluster.simulated.nodes[0]
    assert (tikv.entity, tikv.online) == (emitted.entity, True)  # a block cache resize is online (SET CONFIG)
    assert tikv.current is not None and tikv.proposed == "4GiB"
    assert target_node(tikv) == node.status_address and target_node(everywhere) is None
    assert volume.applies_to() == sorted(v.id for v in demo_cluster.simulated.volumes)[0]
    # no entity of its own: the finding's (the node, on its instance); an instance type change is not online
    assert instance.entity == emitted.entity and instance.applies_to() == node.instance_id
    assert instance.online is False
    assert [Change.model_validate(c.model_dump(mode="json")) for c in stored] == stored


def test_a_patch_holds_and_renders_the_stored_changes(db: Any, demo_cluster: DemoCluster) -> None:
    emitted, row = _emit(db, demo_cluster)
    who = _admin(demo_cluster.org_id)
    made = patches_service.create_patch(db, who, demo_cluster.cluster.id, finding_ids=[row.id],
                                        base_config="latest", now=T0)
    db.expire_all()
    patch = db.get_one(PatchRow, made.id)
    # The base configs are the ones the advisor read: the patch's changes are the rule's, unchanged.
    assert patch.changes == emitted.changes
    assert patch.change_sources == [row.dedup_key] * len(emitted.changes)

    tikv, everywhere, volume, instance = emitted.changes
    node = demo_cluster.simulated.nodes[0]
    sql = patches_service.render_patch(db, who, demo_cluster.cluster.id, patch.id, "sql").artefact.body
    assert f'SET CONFIG "{node.status_address}" `storage.block-cache.capacity` = \'4GiB\';' in sql
    # the current value and the finding it comes from, in words (its title; the key is not shown)
    assert f"(was {json.dumps(tikv.current)}; finding: {row.title})" in sql
    assert "SET CONFIG tikv `raftstore.apply-pool-size` = 3;" in sql  # the cluster entity: every node
    aws = patches_service.render_patch(db, who, demo_cluster.cluster.id, patch.id, "aws").artefact.body
    assert f"aws_cli ec2 modify-volume --volume-id {volume.applies_to()} --iops 4000" in aws
    # docs/reference/rolling-restart.md: the instance restarts through the rolling procedure, with the store id,
    # version and region the cluster's records give
    assert f'restart_instance {node.instance_id} ' in aws
    assert f"STORES_ON_{node.instance_id.replace('-', '_')}={node.store_id}" in aws
    assert f"TIUP_CTL_VERSION={demo_cluster.cluster.tikv_version}" in aws
    assert f"REGION={demo_cluster.simulated.cluster.region}" in aws
    assert f"restarts {emitted.entity.node}" in aws.replace("\n# ", " ")  # the node on that instance
    undo = patches_service.render_patch(db, who, demo_cluster.cluster.id, patch.id, "sql", rollback=True)
    assert f"`storage.block-cache.capacity` = {sql_value(tikv.current)};" in undo.artefact.body
    assert everywhere.online and volume.online and not instance.online
