"""The demo cluster in an org of its own, built once per test file on the file's shared connection
(shared_connection.py: every test runs in a savepoint of its transaction, rolled back at its end).

    world = build_demo_world(shared_connection, settings, outbox, org="Fleet Org", now=END,
                             windows=((END - 26 h, END),), rollups=True, advise=True, project=True)
    world.in_test(make_client, db)  # {"owner": Actor, "viewer": Actor, "cluster": Cluster, **extra}

Signing up, inviting, ingesting and advising take seconds (tens under load), so the directories whose tests read
the same demo data (alerts, changes, fleet, projections) build it here, each with the windows and steps it needs.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app_support import make_app_context
from headroom.clusters.models import Cluster
from helpers import Actor, join_with_role, sign_up, signed_in_again
from shared_connection import shared_sessions
from sqlalchemy import Connection

Window = tuple[dt.datetime, dt.datetime]


@dataclass
class DemoWorld:
    """The demo cluster and its org's people (their sign-in answers and cookies, to sign them in again on each
    test's app), and what the builder's `after` step added."""

    cluster_id: uuid.UUID
    people: dict[str, tuple[dict[str, Any], dict[str, str]]]
    extra: dict[str, Any] = field(default_factory=dict)

    def in_test(self, make_client: Any, db: Any) -> dict[str, Any]:
        """The world on the test's app: its people signed in, the cluster row in the test's session."""
        world: dict[str, Any] = {name: signed_in_again(make_client(), *person) for name, person in self.people.items()}
        world["cluster"] = db.get(Cluster, self.cluster_id)
        return world | self.extra


def build_demo_world(shared_connection: Connection, settings: Any, outbox: Path, *, org: str, now: dt.datetime,
                     windows: tuple[Window, ...], roles: tuple[str, ...] = ("viewer",), rollups: bool = False,
                     advise: bool = False, project: bool = False,
                     after: Callable[[Actor], dict[str, Any]] | None = None) -> DemoWorld:
    """Sign up an owner (and one person per role in `roles`), seed the demo cluster in their org, ingest each of
    `windows` (rolled up when `rollups`), advise and project it at `now` when asked, then run `after` as the owner;
    all on the shared connection, committed into its transaction."""
    from fastapi.testclient import TestClient
    from headroom.api.app import create_app
    from headroom.domain.snapshot.scenario import load_scenario
    from headroom.findings import service as findings_service
    from headroom.projections import service as projections
    from headroom.sources.demo import service as demo
    from headroom.timeseries import repository as ts

    sessions = shared_sessions(shared_connection)
    app = create_app(make_app_context(sessions, settings, lambda: now, outbox))
    clients = [TestClient(app, raise_server_exceptions=False) for _ in range(1 + len(roles))]
    try:
        for client in clients:
            client.__enter__()
        owner = sign_up(clients[0], org=org)
        actors = {"owner": owner} | {role: join_with_role(owner, client, role)
                                     for role, client in zip(roles, clients[1:], strict=True)}
        with sessions() as db:
            cluster = demo.seed_demo_cluster(db, uuid.UUID(owner.org_id))
            scenario = load_scenario(demo.default_scenario_path())
            for start, end in windows:
                demo.ingest_window(db, cluster, scenario, start, end)
                if rollups:
                    ts.refresh_rollups(db, start, end)
            if advise:
                findings_service.advise_cluster(db, cluster, now=now)
            if project:
                projections.project_cluster(db, cluster, now=now)
            db.commit()
            cluster_id = cluster.id
        extra = after(owner) if after is not None else {}
        return DemoWorld(cluster_id, {name: (actor.session, dict(actor.client.cookies))
                                      for name, actor in actors.items()}, extra)
    finally:
        for client in clients:
            client.__exit__(None, None, None)
