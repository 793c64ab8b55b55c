"""Projection fixtures: the demo cluster's 76 hours before END, ingested and rolled up once per test file
on its shared connection (shared_connection.py: every test here runs in a savepoint of its transaction,
rolled back at its end), in an org with an owner and a viewer."""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from typing import Any

import pytest
from app_support import make_app_context, make_settings
from headroom.clusters.models import Cluster
from headroom.domain.snapshot.scenario import load_scenario
from headroom.sources.demo import service as demo
from headroom.timeseries import repository as ts
from helpers import join_with_role, sign_up, signed_in_again
from projections_support import END, HOURS
from shared_connection import savepoint_connection, shared_connection_fixture, shared_sessions  # noqa: F401
from sqlalchemy import Connection


@dataclass
class ProjectionsWorld:
    """The ingested cluster and its org's owner and viewer (sign-in answers and cookies, to sign them in again on
    each test's app)."""

    cluster_id: uuid.UUID
    owner: tuple[dict[str, Any], dict[str, str]]
    viewer: tuple[dict[str, Any], dict[str, str]]


@pytest.fixture(scope="module")
def projections_world(shared_connection: Connection, redis_url: str, aws_endpoint_url: str,
                      tmp_path_factory: pytest.TempPathFactory) -> ProjectionsWorld:
    from fastapi.testclient import TestClient
    from headroom.api.app import create_app

    sessions = shared_sessions(shared_connection)
    ctx = make_app_context(sessions, make_settings(redis_url, aws_endpoint_url), lambda: END,
                           tmp_path_factory.mktemp("projections-world"))
    app = create_app(ctx)
    with TestClient(app, raise_server_exceptions=False) as owner_client, \
            TestClient(app, raise_server_exceptions=False) as viewer_client:
        owner = sign_up(owner_client, org="Projections Org")
        viewer = join_with_role(owner, viewer_client, "viewer")
        with sessions() as db:
            cluster = demo.seed_demo_cluster(db, uuid.UUID(owner.org_id))
            start = END - dt.timedelta(hours=HOURS)
            demo.ingest_window(db, cluster, load_scenario(demo.default_scenario_path()), start, END)
            ts.refresh_rollups(db, start, END)
            db.commit()
            return ProjectionsWorld(cluster.id, (owner.session, dict(owner_client.cookies)),
                                    (viewer.session, dict(viewer_client.cookies)))


@pytest.fixture()
def world(projections_world: ProjectionsWorld, make_client: Any, db: Any) -> dict[str, Any]:
    """projections_world on the test's app: the owner and viewer signed in, the cluster row in the test's
    session."""
    return {"owner": signed_in_again(make_client(), *projections_world.owner),
            "viewer": signed_in_again(make_client(), *projections_world.viewer),
            "cluster": db.get(Cluster, projections_world.cluster_id)}
