"""Fixtures for the advice tests.

Ingesting the demo cluster and running the advisor on it take seconds (tens under load), so each worker does it
once for each test file, on its shared connection (shared_connection.py): every test here runs in a
savepoint of its transaction, rolled back at its end.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import uuid
from typing import Any

import pytest
from advice_support import END, Advised, AdvisedDemo, DemoCluster, ingest_demo, make_org
from app_support import make_app_context, make_settings
from headroom.clusters.models import Cluster
from headroom.findings import service as findings_service
from helpers import join_with_role, sign_up
# the directory's tests run on its shared connection (each in a savepoint)
from shared_connection import savepoint_connection, shared_connection_fixture, shared_sessions  # noqa: F401
from sqlalchemy import Connection


def _advised_demo(shared_connection: Connection, redis_url: str, aws_endpoint_url: str, outbox: Any,
                  hours: int) -> AdvisedDemo:
    """Sign up an owner and a viewer, ingest the demo cluster into their org and advise it at END, on the shared
    connection (committed into its transaction)."""
    from fastapi.testclient import TestClient
    from headroom.api.app import create_app

    sessions = shared_sessions(shared_connection)
    clock = lambda: END + dt.timedelta(minutes=5)  # noqa: E731
    app = create_app(make_app_context(sessions, make_settings(redis_url, aws_endpoint_url), clock, outbox))
    with TestClient(app, raise_server_exceptions=False) as owner_client, \
            TestClient(app, raise_server_exceptions=False) as viewer_client:
        owner = sign_up(owner_client, org="Advice Org")
        viewer = join_with_role(owner, viewer_client, "viewer")
        with sessions() as db:
            demo = ingest_demo(db, uuid.UUID(owner.org_id), hours=hours)
            findings_service.advise_cluster(db, demo.cluster, now=END)
            db.commit()
        return AdvisedDemo(demo, owner.session, dict(owner_client.cookies), viewer.session,
                           dict(viewer_client.cookies))


@pytest.fixture(scope="module")
def advised_demo(shared_connection: Connection, redis_url: str, aws_endpoint_url: str,
                 tmp_path_factory: pytest.TempPathFactory) -> AdvisedDemo:
    """The demo cluster's last 3 hours before END, advised at END, in an org with an owner and a viewer."""
    return _advised_demo(shared_connection, redis_url, aws_endpoint_url, tmp_path_factory.mktemp("advised"), 3)


@pytest.fixture(scope="module")
def advised_demo_6h(shared_connection: Connection, redis_url: str, aws_endpoint_url: str,
                    tmp_path_factory: pytest.TempPathFactory) -> AdvisedDemo:
    """As advised_demo, with 6 hours of data."""
    return _advised_demo(shared_connection, redis_url, aws_endpoint_url, tmp_path_factory.mktemp("advised6"), 6)


@pytest.fixture(scope="module")
def shared_demo(shared_connection: Connection) -> DemoCluster:
    """The demo cluster of an org of its own, ingested for the 3 hours before END and not advised."""
    sessions = shared_sessions(shared_connection)
    with sessions() as db:
        demo = ingest_demo(db, make_org(db))
        db.commit()
        return demo


@pytest.fixture()
def demo_cluster(shared_demo: DemoCluster, db: Any) -> DemoCluster:
    """shared_demo seen from the test: the cluster row in the test's session."""
    return dataclasses.replace(shared_demo, cluster=db.get(Cluster, shared_demo.cluster.id))


@pytest.fixture()
def advised(advised_demo: AdvisedDemo, make_client: Any, db: Any, clock: Any) -> Advised:
    """advised_demo seen from the test: its cluster in the test's session, the clock 5 minutes after END."""
    clock.now = END + dt.timedelta(minutes=5)
    return advised_demo.in_test(db, make_client)
