"""Shared helpers for the advice tests: an org with the demo cluster ingested over a short window."""

from __future__ import annotations

import datetime as dt
import uuid
import dataclasses
from dataclasses import dataclass
from typing import Any

from headroom.accounts.models import Organization
from headroom.clusters.models import Cluster
from headroom.domain.snapshot.scenario import Scenario, load_scenario
from headroom.domain.snapshot.schema import Snapshot
from headroom.domain.snapshot.simulate import simulate
from headroom.platform.security import new_external_id
from headroom.sources.demo import service as demo
from helpers import Actor, signed_in_again

# The demo scenario's afternoon: the hot node pins its gp3 volume and the gp2 nodes drain their burst bucket.
END = dt.datetime(2026, 11, 2, 18, 0, tzinfo=dt.UTC)
HOURS = 3


@dataclass
class DemoCluster:
    org_id: uuid.UUID
    cluster: Cluster
    scenario: Scenario
    start: dt.datetime
    end: dt.datetime
    simulated: Snapshot


def make_org(db: Any, name: str = "advice") -> uuid.UUID:
    org = Organization(name=name, slug=f"{name}-{uuid.uuid4().hex[:8]}", aws_external_id=new_external_id())
    db.add(org)
    db.flush()
    return org.id


def ingest_demo(db: Any, org_id: uuid.UUID, *, end: dt.datetime = END, hours: int = HOURS) -> DemoCluster:
    """Seed the demo cluster in the org and write [end - hours, end) into the store; return what was simulated."""
    cluster = demo.seed_demo_cluster(db, org_id)
    scenario = load_scenario(demo.default_scenario_path())
    start = end - dt.timedelta(hours=hours)
    demo.ingest_window(db, cluster, scenario, start, end)
    simulated = simulate(scenario, hours=hours, seed=demo._seed_for(cluster), start=start)
    return DemoCluster(org_id, cluster, scenario, start, end, simulated)




@dataclass
class Advised:
    """The advised demo cluster as a test sees it: its owner and viewer signed in on the test's own app."""

    owner: Actor
    viewer: Actor
    demo: DemoCluster

    @property
    def cid(self) -> str:
        return str(self.demo.cluster.id)


@dataclass
class AdvisedDemo:
    """The demo cluster advised once for many tests: the people's sessions (their cookies) and the cluster."""

    demo: DemoCluster
    owner_session: dict[str, Any]
    owner_cookies: dict[str, str]
    viewer_session: dict[str, Any]
    viewer_cookies: dict[str, str]

    def in_test(self, db: Any, make_client: Any) -> Advised:
        """Sign the owner and the viewer in on new clients of the test's app; the cluster row from `db`."""

        cluster = db.get(Cluster, self.demo.cluster.id)
        return Advised(signed_in_again(make_client(), self.owner_session, self.owner_cookies),
                       signed_in_again(make_client(), self.viewer_session, self.viewer_cookies),
                       dataclasses.replace(self.demo, cluster=cluster))
