"""Change fixtures: the demo cluster's data around CHANGE, ingested, rolled up and advised once per test file
on its shared connection (shared_connection.py: every test here runs in a savepoint of its
transaction, rolled back at its end). The ledger's and the outcomes' tests each have an org of their own."""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from app_support import make_app_context, make_settings
from changes_support import CHANGE, LEDGER_AFTER, OUTCOME_AFTER, WEEK
from headroom.clusters.models import Cluster
from headroom.domain.snapshot.scenario import load_scenario
from headroom.findings import service as findings_service
from headroom.sources.demo import service as demo
from headroom.timeseries import repository as ts
from helpers import Actor, join_with_role, sign_up, signed_in_again
from shared_connection import savepoint_connection, shared_connection_fixture, shared_sessions  # noqa: F401
from sqlalchemy import Connection


@dataclass
class ChangesWorld:
    """The advised demo cluster and its org's people (sign-in answers and cookies, to sign them in again on each
    test's app)."""

    cluster_id: uuid.UUID
    people: dict[str, tuple[dict[str, Any], dict[str, str]]]

    def in_test(self, make_client: Any, db: Any) -> dict[str, Any]:
        """The world on the test's app: its people signed in, the cluster row in the test's session."""
        world: dict[str, Any] = {name: signed_in_again(make_client(), *person) for name, person in self.people.items()}
        world["cluster"] = db.get(Cluster, self.cluster_id)
        return world


def _build(shared_connection: Connection, redis_url: str, aws_endpoint_url: str, outbox: Path, org: str,
           windows: tuple[tuple[dt.datetime, dt.datetime], ...], viewer: bool) -> ChangesWorld:
    """Sign up an owner (and a viewer), ingest and roll up the demo cluster's `windows` and advise it at CHANGE,
    on the shared connection (committed into its transaction)."""
    from fastapi.testclient import TestClient
    from headroom.api.app import create_app

    sessions = shared_sessions(shared_connection)
    app = create_app(make_app_context(sessions, make_settings(redis_url, aws_endpoint_url), lambda: CHANGE, outbox))
    with TestClient(app, raise_server_exceptions=False) as owner_client, \
            TestClient(app, raise_server_exceptions=False) as viewer_client:
        actors: dict[str, tuple[Actor, TestClient]] = {"owner": (sign_up(owner_client, org=org), owner_client)}
        if viewer:
            actors["viewer"] = (join_with_role(actors["owner"][0], viewer_client, "viewer"), viewer_client)
        with sessions() as db:
            cluster = demo.seed_demo_cluster(db, uuid.UUID(actors["owner"][0].org_id))
            scenario = load_scenario(demo.default_scenario_path())
            for start, end in windows:
                demo.ingest_window(db, cluster, scenario, start, end)
                ts.refresh_rollups(db, start, end)
            findings_service.advise_cluster(db, cluster, now=CHANGE)
            db.commit()
            return ChangesWorld(cluster.id, {name: (actor.session, dict(client.cookies))
                                             for name, (actor, client) in actors.items()})


@pytest.fixture(scope="module")
def ledger_world(shared_connection: Connection, redis_url: str, aws_endpoint_url: str,
                 tmp_path_factory: pytest.TempPathFactory) -> ChangesWorld:
    """The hours before and after CHANGE, and the same hours of the week before; an owner and a viewer."""
    return _build(shared_connection, redis_url, aws_endpoint_url, tmp_path_factory.mktemp("ledger-world"),
                  "Ledger Org", ((CHANGE - WEEK, CHANGE - WEEK + LEDGER_AFTER),
                                 (CHANGE - LEDGER_AFTER, CHANGE + LEDGER_AFTER)), viewer=True)


@pytest.fixture(scope="module")
def outcomes_world(shared_connection: Connection, redis_url: str, aws_endpoint_url: str,
                   tmp_path_factory: pytest.TempPathFactory) -> ChangesWorld:
    """The 6 hours before CHANGE to a day and more after, and the same hours of the week before; an owner."""
    return _build(shared_connection, redis_url, aws_endpoint_url, tmp_path_factory.mktemp("outcomes-world"),
                  "Outcome Org", ((CHANGE - WEEK, CHANGE - WEEK + OUTCOME_AFTER),
                                  (CHANGE - dt.timedelta(hours=6), CHANGE + OUTCOME_AFTER)), viewer=False)
