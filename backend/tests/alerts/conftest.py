"""Alert fixtures: the real SMTP server (aiosmtpd, tests/smtp_server.py) for the email channel, and the demo
cluster with an owner and a viewer, built once per test file on its shared connection
(shared_connection.py: every test here runs in a savepoint of its transaction, rolled back at its end)."""

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
from helpers import join_with_role, sign_up, signed_in_again
from shared_connection import savepoint_connection, shared_connection_fixture, shared_sessions  # noqa: F401
from smtp_server import smtp_server
from sqlalchemy import Connection

__all__ = ["smtp_server"]

END = dt.datetime(2026, 11, 2, 18, 0, tzinfo=dt.UTC)


@dataclass
class AlertsWorld:
    """The demo cluster's 3 hours before END in an org with an owner and a viewer (their sign-in answers and
    cookies, to sign them in again on each test's app)."""

    cluster_id: uuid.UUID
    owner: tuple[dict[str, Any], dict[str, str]]
    viewer: tuple[dict[str, Any], dict[str, str]]


@pytest.fixture(scope="module")
def alerts_world(shared_connection: Connection, redis_url: str, aws_endpoint_url: str,
                 tmp_path_factory: pytest.TempPathFactory) -> AlertsWorld:
    from fastapi.testclient import TestClient
    from headroom.api.app import create_app

    sessions = shared_sessions(shared_connection)
    ctx = make_app_context(sessions, make_settings(redis_url, aws_endpoint_url), lambda: END,
                           tmp_path_factory.mktemp("alerts-world"))
    app = create_app(ctx)
    with TestClient(app, raise_server_exceptions=False) as owner_client, \
            TestClient(app, raise_server_exceptions=False) as viewer_client:
        owner = sign_up(owner_client, org="Alerts Org")
        viewer = join_with_role(owner, viewer_client, "viewer")
        with sessions() as db:
            cluster = demo.seed_demo_cluster(db, uuid.UUID(owner.org_id))
            demo.ingest_window(db, cluster, load_scenario(demo.default_scenario_path()),
                               END - dt.timedelta(hours=3), END)
            db.commit()
            return AlertsWorld(cluster.id, (owner.session, dict(owner_client.cookies)),
                               (viewer.session, dict(viewer_client.cookies)))


@pytest.fixture()
def world(alerts_world: AlertsWorld, make_client: Any, db: Any, clock: Any) -> dict[str, Any]:
    """alerts_world on the test's app: the owner and viewer signed in, the cluster row in the test's session, the
    clock at END."""
    clock.now = END
    return {"owner": signed_in_again(make_client(), *alerts_world.owner),
            "viewer": signed_in_again(make_client(), *alerts_world.viewer),
            "cluster": db.get(Cluster, alerts_world.cluster_id)}
