"""Helpers for the AWS collector tests (a module of its own: `conftest` names clash across test folders)."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import boto3

AMI = "ami-12c6146b"  # one of moto's built-in Amazon images


def boto(service: str, region: str, endpoint: str) -> Any:
    return boto3.client(service, region_name=region, endpoint_url=endpoint, aws_access_key_id="testing",
                        aws_secret_access_key="testing")


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


def make_org_and_connection(db: Any, region: str, name: str = "AWS test") -> Any:
    """An organisation and its AWS connection (default credential chain, one region), flushed in `db`."""
    from headroom.accounts.models import Organization
    from headroom.sources.models import AwsConnection

    org = Organization(name=name, slug=f"aws-{uuid.uuid4().hex[:10]}", aws_external_id=f"headroom-{uuid.uuid4().hex}")
    db.add(org)
    db.flush()
    conn = AwsConnection(org_id=org.id, name="moto", auth_kind="default_chain", external_id=org.aws_external_id,
                         regions=[region])
    db.add(conn)
    db.flush()
    return org, conn
