"""Fleet fixtures: the demo cluster's 26 hours before END, advised and projected, next to an empty cluster, built
once per test file on its shared connection (shared_connection.py: every test here runs in a
savepoint of its transaction, rolled back at its end), in an org with an owner and a viewer."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from app_support import make_settings
from demo_world import DemoWorld, build_demo_world
from fleet_support import END
from helpers import Actor
from shared_connection import savepoint_connection, shared_connection_fixture, shared_sessions  # noqa: F401
from sqlalchemy import Connection


def _empty_cluster(owner: Actor) -> dict[str, Any]:
    empty = owner.post("/api/v1/clusters", json={"name": "empty-one", "tikv_version": "v8.5.1"})
    assert empty.status_code == 201, empty.text
    return {"empty": empty.json()}


@pytest.fixture(scope="module")
def fleet_world(shared_connection: Connection, redis_url: str, aws_endpoint_url: str,
                tmp_path_factory: pytest.TempPathFactory) -> DemoWorld:
    """The demo cluster's 26 hours before END, advised and projected, and the empty cluster (extra["empty"], as
    POST /clusters answered), in an org with an owner and a viewer."""
    return build_demo_world(shared_connection, make_settings(redis_url, aws_endpoint_url),
                            tmp_path_factory.mktemp("fleet-world"), org="Fleet Org", now=END,
                            windows=((END - dt.timedelta(hours=26), END),), rollups=True, advise=True,
                            project=True, after=_empty_cluster)


@pytest.fixture()
def world(fleet_world: DemoWorld, make_client: Any, db: Any, clock: Any) -> dict[str, Any]:
    """fleet_world on the test's app: the owner and viewer signed in, the cluster row in the test's session, the
    clock at END."""
    clock.now = END
    return fleet_world.in_test(make_client, db)
