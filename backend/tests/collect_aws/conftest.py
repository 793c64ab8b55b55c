"""Fixtures for the AWS collector tests: an org with an AWS connection, and boto3 clients on the moto server.

Each test uses its own region so the moto server's shared state (instances, volumes, metric data) of other
tests stays out of its inventory.
"""

from __future__ import annotations

import datetime as dt
import itertools
import uuid
from typing import Any

import boto3
import pytest

AMI = "ami-12c6146b"  # one of moto's built-in Amazon images
_REGIONS = itertools.cycle(["eu-west-3", "ap-south-1", "ca-central-1", "sa-east-1", "eu-north-1", "ap-northeast-2",
                            "ap-southeast-2", "eu-central-1", "us-west-1", "us-east-2", "eu-west-2", "ap-northeast-1"])


def boto(service: str, region: str, endpoint: str) -> Any:
    return boto3.client(service, region_name=region, endpoint_url=endpoint, aws_access_key_id="testing",
                        aws_secret_access_key="testing")


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
    from headroom.store.models import AwsConnection, Organization

    org = Organization(name="AWS test", slug=f"aws-{uuid.uuid4().hex[:10]}", aws_external_id=f"headroom-{uuid.uuid4().hex}")
    db.add(org)
    db.flush()
    conn = AwsConnection(org_id=org.id, name="moto", auth_kind="default_chain", external_id=org.aws_external_id,
                         regions=[region])
    db.add(conn)
    db.flush()
    return org, conn


def put_series(cw: Any, namespace: str, dimension: str, entity_id: str, metric: str,
               values: list[tuple[dt.datetime, float]]) -> None:
    """PutMetricData with explicit timestamps, in chunks (moto keeps every datum as sent)."""
    for k in range(0, len(values), 500):
        cw.put_metric_data(Namespace=namespace, MetricData=[
            {"MetricName": metric, "Dimensions": [{"Name": dimension, "Value": entity_id}], "Timestamp": ts,
             "Value": v, "Unit": "Count"} for ts, v in values[k:k + 500]])


def make_fleet(region: str, endpoint: str, *, nodes: int = 1, instance_type: str = "m5.large") -> dict[str, Any]:
    """Instances tagged as TiKV with a 200 GiB gp2 data volume and a 20 GiB gp3 raft volume each."""
    ec2 = boto("ec2", region, endpoint)
    az = ec2.describe_availability_zones()["AvailabilityZones"][0]["ZoneName"]
    out: dict[str, Any] = {"instances": [], "data": [], "raft": [], "az": az}
    reservation = ec2.run_instances(ImageId=AMI, MinCount=nodes, MaxCount=nodes, InstanceType=instance_type,
                                    Placement={"AvailabilityZone": az},
                                    TagSpecifications=[{"ResourceType": "instance", "Tags": [
                                        {"Key": "tidb_cluster", "Value": "prod"}, {"Key": "component", "Value": "tikv"}]}])
    for inst in reservation["Instances"]:
        data = ec2.create_volume(AvailabilityZone=az, Size=200, VolumeType="gp2")["VolumeId"]
        raft = ec2.create_volume(AvailabilityZone=az, Size=20, VolumeType="gp3", Iops=3000, Throughput=125)["VolumeId"]
        ec2.attach_volume(VolumeId=data, InstanceId=inst["InstanceId"], Device="/dev/sdf")
        ec2.attach_volume(VolumeId=raft, InstanceId=inst["InstanceId"], Device="/dev/sdg")
        out["instances"].append(inst)
        out["data"].append(data)
        out["raft"].append(raft)
    return out


@pytest.fixture()
def settings(aws_endpoint_url: str) -> Any:
    """Test settings pointing boto3 at the moto server (HEADROOM_AWS_ENDPOINT_URL)."""
    from headroom.core.settings import Settings

    return Settings(HEADROOM_ENV="test", HEADROOM_SECRET_KEY="test-secret-key-" + "x" * 32,
                    HEADROOM_AWS_ENDPOINT_URL=aws_endpoint_url)
