"""Fleet fixtures: the demo cluster's 26 hours before END, advised and projected, next to an empty cluster, built
once per test file on its shared connection (shared_connection.py: every test here runs in a
savepoint of its transaction, rolled back at its end), in an org with an owner and a viewer."""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from typing import Any

import pytest
from app_support import make_app_context, make_settings
from fleet_support import END
from headroom.clusters.models import Cluster
from headroom.domain.snapshot.scenario import load_scenario
from headroom.findings import service as findings_service
from headroom.projections import service as projections
from headroom.sources.demo import service as demo
from headroom.timeseries import repository as ts
from helpers import join_with_role, sign_up, signed_in_again
from shared_connection import savepoint_connection, shared_connection_fixture, shared_sessions  # noqa: F401
from sqlalchemy import Connection


@dataclass
class FleetWorld:
    """The demo cluster, the empty one (as POST /clusters answered) and the org's owner and viewer (sign-in answers
    and cookies, to sign them in again on each test's app)."""

    cluster_id: uuid.UUID
    empty: dict[str, Any]
    owner: tuple[dict[str, Any], dict[str, str]]
    viewer: tuple[dict[str, Any], dict[str, str]]


@pytest.fixture(scope="module")
def fleet_world(shared_connection: Connection, redis_url: str, aws_endpoint_url: str,
                tmp_path_factory: pytest.TempPathFactory) -> FleetWorld:
    from fastapi.testclient import TestClient
    from headroom.api.app import create_app

    sessions = shared_sessions(shared_connection)
    ctx = make_app_context(sessions, make_settings(redis_url, aws_endpoint_url), lambda: END,
                           tmp_path_factory.mktemp("fleet-world"))
    app = create_app(ctx)
    with TestClient(app, raise_server_exceptions=False) as owner_client, \
            TestClient(app, raise_server_exceptions=False) as viewer_client:
        owner = sign_up(owner_client, org="Fleet Org")
        viewer = join_with_role(owner, viewer_client, "viewer")
        with sessions() as db:
            cluster = demo.seed_demo_cluster(db, uuid.UUID(owner.org_id))
            start = END - dt.timedelta(hours=26)
            demo.ingest_window(db, cluster, load_scenario(demo.default_scenario_path()), start, END)
            ts.refresh_rollups(db, start, END)
            findings_service.advise_cluster(db, cluster, now=END)
            projections.project_cluster(db, cluster, now=END)
            db.commit()
            cluster_id = cluster.id
        empty = owner.post("/api/v1/clusters", json={"name": "empty-one", "tikv_version": "v8.5.1"})
        assert empty.status_code == 201, empty.text
        return FleetWorld(cluster_id, empty.json(), (owner.session, dict(owner_client.cookies)),
                          (viewer.session, dict(viewer_client.cookies)))


@pytest.fixture()
def world(fleet_world: FleetWorld, make_client: Any, db: Any, clock: Any) -> dict[str, Any]:
    """fleet_world on the test's app: the owner and viewer signed in, the cluster row in the test's session, the
    clock at END."""
    clock.now = END
    return {"owner": signed_in_again(make_client(), *fleet_world.owner),
            "viewer": signed_in_again(make_client(), *fleet_world.viewer),
            "cluster": db.get(Cluster, fleet_world.cluster_id), "empty": fleet_world.empty}
