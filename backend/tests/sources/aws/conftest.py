"""Fixtures for the AWS collector tests: an org with an AWS connection, and boto3 clients on the moto server.

Each test uses its own region so the moto server's shared state (instances, volumes, metric data) of other
tests stays out of its inventory. The moto server is one for the whole run: under pytest-xdist each worker takes
regions no other worker takes (the `region` fixture empties the region it hands out, which would delete the
instances of a test running on another worker at the same moment).
"""

from __future__ import annotations

import itertools
import os
from typing import Any

import pytest
from aws_fixtures import boto, make_org_and_connection
from xdist_workers import worker_index

ALL_REGIONS = ("eu-west-3", "ap-south-1", "ca-central-1", "sa-east-1", "eu-north-1", "ap-northeast-2",
               "ap-southeast-2", "eu-central-1", "us-west-1", "us-east-2", "eu-west-2", "ap-northeast-1")


def worker_regions(index: int | None, workers: int) -> tuple[str, ...]:
    """The regions of xdist worker `index` of `workers` (all of them outside xdist): every `workers`-th one, so no
    two workers share a region while there are at least as many regions as workers."""
    if index is None or workers <= 1:
        return ALL_REGIONS
    return ALL_REGIONS[index::workers] or (ALL_REGIONS[index % len(ALL_REGIONS)],)


_REGIONS = itertools.cycle(worker_regions(worker_index(), int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))))


@pytest.fixture()
def region(aws_endpoint_url: str) -> str:
    """A region emptied of earlier runs' instances and volumes (the moto server lives across runs)."""
    name = next(_REGIONS)
    ec2 = boto("ec2", name, aws_endpoint_url)
    ids = [i["InstanceId"] for r in ec2.describe_instances()["Reservations"] for i in r["Instances"]
           if i["State"]["Name"] != "terminated"]
    if ids:
        ec2.terminate_instances(InstanceIds=ids)
    for v in ec2.describe_volumes()["Volumes"]:
        for a in v.get("Attachments", []):
            ec2.detach_volume(VolumeId=v["VolumeId"], InstanceId=a["InstanceId"], Force=True)
        ec2.delete_volume(VolumeId=v["VolumeId"])
    return name


@pytest.fixture()
def org_and_connection(db: Any, region: str) -> Any:
    return make_org_and_connection(db, region)


@pytest.fixture()
def settings(aws_endpoint_url: str) -> Any:
    """Test settings pointing boto3 at the moto server (HEADROOM_AWS_ENDPOINT_URL)."""
    from headroom.platform.settings import Settings

    return Settings(HEADROOM_ENV="test", HEADROOM_SECRET_KEY="test-secret-key-" + "x" * 32,
                    HEADROOM_AWS_ENDPOINT_URL=aws_endpoint_url)
