"""POST /sources/aws/{id}/test, the backfill progress and the sweeps list, through the real API."""

from __future__ import annotations

import datetime as dt
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from headroom.sources.aws.service import REQUIRED_ACTIONS, check_permissions
from headroom.sources.aws.session import AwsClients, client_config
from helpers import sign_up


def _connect(owner: Any, region: str) -> dict[str, Any]:
    created = owner.post("/api/v1/sources/aws", json={
        "name": "moto", "auth_kind": "static_keys", "regions": [region],
        "access_key_id": "AKIAIOSFODNN7EXAMPLE", "secret_access_key": "moto-secret-never-shown"})
    assert created.status_code == 201, created.text
    return created.json()


def test_connection_test_against_moto_reports_every_permission_ok(client: Any, region: str) -> None:
    owner = sign_up(client)
    conn = _connect(owner, region)
    response = owner.post(f"/api/v1/sources/aws/{conn['id']}/test")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["ok"] is True and body["missing"] == [] and body["region"] == region
    assert [c["action"] for c in body["checks"]] == list(REQUIRED_ACTIONS)
    assert "moto-secret-never-shown" not in response.text
    health = owner.get(f"/api/v1/sources/aws/{conn['id']}").json()["health"]
    assert health["status"] == "ok" and health["last_success_at"] is not None


class _StubbedClients(AwsClients):
    def __init__(self, ec2: Any, cloudwatch: Any) -> None:
        self._ec2, self._cw = ec2, cloudwatch
        self.region = "us-east-1"

    def ec2(self) -> Any:
        return self._ec2

    def cloudwatch(self) -> Any:
        return self._cw


def _stubbed(denied: dict[str, str]) -> tuple[_StubbedClients, list[Stubber]]:
    """Clients answering each probe, with `denied` operations failing with the given error code.

    moto's server does not enforce IAM unless started with INITIAL_NO_AUTH_ACTION_COUNT, which the shared
    test server is not, so the AccessDenied mapping is tested with botocore's Stubber.
    """
    session = boto3.session.Session(aws_access_key_id="x", aws_secret_access_key="x", region_name="us-east-1")
    ec2 = session.client("ec2", config=client_config(1))
    cw = session.client("cloudwatch", config=client_config(1))
    answers = {"describe_instances": {"Reservations": []}, "describe_volumes": {"Volumes": []},
               "describe_instance_types": {"InstanceTypes": []}, "get_metric_data": {"MetricDataResults": []},
               "list_metrics": {"Metrics": []}}
    stubs = [Stubber(ec2), Stubber(cw)]
    for op, answer in answers.items():
        stub = stubs[0] if op.startswith("describe") else stubs[1]
        if op in denied:
            stub.add_client_error(op, service_error_code=denied[op], http_status_code=403)
        else:
            stub.add_response(op, answer)
    for s in stubs:
        s.activate()
    return _StubbedClients(ec2, cw), stubs


def test_denied_calls_map_to_the_missing_iam_action() -> None:
    clients, _ = _stubbed({"describe_volumes": "UnauthorizedOperation", "list_metrics": "AccessDenied"})
    checks = {c.action: c for c in check_permissions(clients, dt.datetime(2026, 11, 2, tzinfo=dt.UTC))}
    assert not checks["ec2:DescribeVolumes"].ok and checks["ec2:DescribeVolumes"].error_code == "UnauthorizedOperation"
    assert not checks["cloudwatch:ListMetrics"].ok
    assert all(checks[a].ok for a in ("ec2:DescribeInstances", "ec2:DescribeInstanceTypes", "cloudwatch:GetMetricData"))


def test_api_reports_missing_permissions_and_marks_the_source(client: Any, region: str,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    owner = sign_up(client)
    conn = _connect(owner, region)
    import headroom.sources.aws.router as router

    for _ in range(3):  # FAILING_AFTER consecutive failures flip the status
        clients, _ = _stubbed({"get_metric_data": "AccessDenied"})
        monkeypatch.setattr(router, "clients_for", lambda *_a, _c=clients, **_k: _c)
        body = owner.post(f"/api/v1/sources/aws/{conn['id']}/test").json()
        assert body["ok"] is False and body["missing"] == ["cloudwatch:GetMetricData"]
    health = owner.get(f"/api/v1/sources/aws/{conn['id']}").json()["health"]
    assert health["status"] == "failing" and "cloudwatch:GetMetricData" in health["last_error"]


def test_backfill_is_queued_on_connect_and_can_be_requested_again(client: Any, region: str) -> None:
    owner = sign_up(client)
    conn = _connect(owner, region)
    progress = owner.get(f"/api/v1/sources/aws/{conn['id']}/backfill").json()
    # Connecting an account queues its history import at once.
    assert progress["state"] == "queued" and progress["points_done"] == 0
    started = owner.post(f"/api/v1/sources/aws/{conn['id']}/backfill", json={"days": 2})
    assert started.status_code == 202 and started.json()["state"] == "queued" and started.json()["days"] == 2
    assert owner.post(f"/api/v1/sources/aws/{conn['id']}/backfill", json={"days": 16}).status_code == 422
    assert owner.get(f"/api/v1/sources/aws/{conn['id']}/sweeps").json() == []
