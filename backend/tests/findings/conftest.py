"""Fixtures for the advice tests."""

from __future__ import annotations

from typing import Any

import pytest
from advice_support import DemoCluster, ingest_demo, make_org


@pytest.fixture()
def demo_cluster(db: Any) -> DemoCluster:
    """The demo cluster of a new org, ingested for the 3 hours before advice_support.END."""
    return ingest_demo(db, make_org(db))
