"""Alert fixtures: the real SMTP server (aiosmtpd, tests/smtp_server.py) for the email channel, and the demo
cluster with an owner and a viewer, built once per test file on its shared connection
(shared_connection.py: every test here runs in a savepoint of its transaction, rolled back at its end)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from app_support import make_settings
from demo_world import DemoWorld, build_demo_world
from shared_connection import savepoint_connection, shared_connection_fixture, shared_sessions  # noqa: F401
from smtp_server import smtp_server
from sqlalchemy import Connection

__all__ = ["smtp_server"]

END = dt.datetime(2026, 11, 2, 18, 0, tzinfo=dt.UTC)


@pytest.fixture(scope="module")
def alerts_world(shared_connection: Connection, redis_url: str, aws_endpoint_url: str,
                 tmp_path_factory: pytest.TempPathFactory) -> DemoWorld:
    """The demo cluster's 3 hours before END in an org with an owner and a viewer."""
    return build_demo_world(shared_connection, make_settings(redis_url, aws_endpoint_url),
                            tmp_path_factory.mktemp("alerts-world"), org="Alerts Org", now=END,
                            windows=((END - dt.timedelta(hours=3), END),))


@pytest.fixture()
def world(alerts_world: DemoWorld, make_client: Any, db: Any, clock: Any) -> dict[str, Any]:
    """alerts_world on the test's app: the owner and viewer signed in, the cluster row in the test's session, the
    clock at END."""
    clock.now = END
    return alerts_world.in_test(make_client, db)
