"""Projection fixtures: the demo cluster's 76 hours before END, ingested and rolled up once per test file
on its shared connection (shared_connection.py: every test here runs in a savepoint of its transaction,
rolled back at its end), in an org with an owner and a viewer."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from app_support import make_settings
from demo_world import DemoWorld, build_demo_world
from projections_support import END, HOURS
from shared_connection import savepoint_connection, shared_connection_fixture, shared_sessions  # noqa: F401
from sqlalchemy import Connection


@pytest.fixture(scope="module")
def projections_world(shared_connection: Connection, redis_url: str, aws_endpoint_url: str,
                      tmp_path_factory: pytest.TempPathFactory) -> DemoWorld:
    """The demo cluster's HOURS before END, ingested and rolled up, in an org with an owner and a viewer."""
    return build_demo_world(shared_connection, make_settings(redis_url, aws_endpoint_url),
                            tmp_path_factory.mktemp("projections-world"), org="Projections Org", now=END,
                            windows=((END - dt.timedelta(hours=HOURS), END),), rollups=True)


@pytest.fixture()
def world(projections_world: DemoWorld, make_client: Any, db: Any) -> dict[str, Any]:
    """projections_world on the test's app: the owner and viewer signed in, the cluster row in the test's
    session."""
    return projections_world.in_test(make_client, db)
