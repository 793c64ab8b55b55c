"""Change fixtures: the demo cluster's data around CHANGE, ingested, rolled up and advised once per test file
on its shared connection (shared_connection.py: every test here runs in a savepoint of its
transaction, rolled back at its end). The ledger's and the outcomes' tests each have an org of their own."""

from __future__ import annotations

import datetime as dt

import pytest
from app_support import make_settings
from changes_support import CHANGE, LEDGER_AFTER, OUTCOME_AFTER, WEEK
from demo_world import DemoWorld, build_demo_world
from shared_connection import savepoint_connection, shared_connection_fixture, shared_sessions  # noqa: F401
from sqlalchemy import Connection


@pytest.fixture(scope="module")
def ledger_world(shared_connection: Connection, redis_url: str, aws_endpoint_url: str,
                 tmp_path_factory: pytest.TempPathFactory) -> DemoWorld:
    """The hours before and after CHANGE, and the same hours of the week before, rolled up and advised at CHANGE;
    an owner and a viewer."""
    return build_demo_world(shared_connection, make_settings(redis_url, aws_endpoint_url),
                            tmp_path_factory.mktemp("ledger-world"), org="Ledger Org", now=CHANGE,
                            windows=((CHANGE - WEEK, CHANGE - WEEK + LEDGER_AFTER),
                                     (CHANGE - LEDGER_AFTER, CHANGE + LEDGER_AFTER)), rollups=True, advise=True)


@pytest.fixture(scope="module")
def outcomes_world(shared_connection: Connection, redis_url: str, aws_endpoint_url: str,
                   tmp_path_factory: pytest.TempPathFactory) -> DemoWorld:
    """The 6 hours before CHANGE to a day and more after, and the same hours of the week before, rolled up and
    advised at CHANGE; an owner."""
    return build_demo_world(shared_connection, make_settings(redis_url, aws_endpoint_url),
                            tmp_path_factory.mktemp("outcomes-world"), org="Outcome Org", now=CHANGE,
                            windows=((CHANGE - WEEK, CHANGE - WEEK + OUTCOME_AFTER),
                                     (CHANGE - dt.timedelta(hours=6), CHANGE + OUTCOME_AFTER)), roles=(),
                            rollups=True, advise=True)
