"""Test fixtures. They connect to services started by scripts/test.sh; they start nothing themselves.

Environment (set by scripts/test.sh):
  HEADROOM_TEST_DATABASE_URL  PostgreSQL migrated to head
  HEADROOM_TEST_REDIS_URL     Redis
  HEADROOM_TEST_AWS_ENDPOINT  the moto server standing in for EC2, STS and CloudWatch
  HEADROOM_TEST_PROMETHEUS_URL a real Prometheus (when a test needs it)
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_REFERENCE = REPO_ROOT.parent / "shared" / "reference"


def _require_env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run the suite through `make test` (scripts/test.sh)", pytrace=False)
    return value


@pytest.fixture(scope="session")
def aws_endpoint_url() -> str:
    """Return the moto server URL, with dummy credentials in the environment for boto3."""
    url = _require_env("HEADROOM_TEST_AWS_ENDPOINT")
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    return url


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT
