"""GetMetricData shell: NextToken pages, throttling and partial failures retried with backoff, bad points
dropped and counted. botocore's Stubber stands in for CloudWatch (moto neither pages nor throttles)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import boto3
import pytest
from botocore.stub import ANY, Stubber
from headroom.sources.aws import cloudwatch as cw
from headroom.sources.aws.metric_plan import plan_sweep

T0 = dt.datetime(2026, 11, 2, 12, 0, tzinfo=dt.UTC)
T1 = T0 + dt.timedelta(minutes=5)


def _client() -> Any:
    return boto3.client("cloudwatch", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")


def _queries() -> list[cw.MetricQuery]:
    return cw.queries_for_volume("vol-1", "gp3")[:2]  # ebs.read_ops, ebs.write_ops


def _result(qid: str, minutes: list[int], values: list[float], status: str = "Complete") -> dict[str, Any]:
    return {"Id": qid, "Label": qid, "Timestamps": [T0 + dt.timedelta(minutes=m) for m in minutes],
            "Values": values, "StatusCode": status}


def _expected(token: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"MetricDataQueries": ANY, "StartTime": T0, "EndTime": T1,
                              "ScanBy": "TimestampAscending", "MaxDatapoints": 100_800}
    if token:
        params["NextToken"] = token
    return params


def test_queries_follow_the_registry_statistics() -> None:
    by_name = {q.metric: q for q in cw.queries_for_volume("vol-1", "gp2")}
    assert by_name["ebs.read_ops"].statistic == "Sum" and by_name["ebs.read_ops"].period == 60
    assert by_name["ebs.queue_length"].statistic == "Average"
    assert by_name["ebs.burst_balance"].statistic == "Minimum"
    assert "ebs.burst_balance" not in {q.metric for q in cw.queries_for_volume("vol-1", "gp3")}  # docs/reference/cloudwatch.md#volume-metrics
    basic = cw.queries_for_instance("i-1", detailed_monitoring=False, bursts=False)
    assert {q.period for q in basic} == {300}  # docs/reference/cloudwatch.md#instance-ebs-metrics basic monitoring: 5-minute
    assert {q.metric for q in basic} == {"ec2.ebs_read_ops", "ec2.ebs_write_ops", "ec2.ebs_read_bytes",
                                         "ec2.ebs_write_bytes"}  # no balances on non-burst sizes
    assert cw.queries_for_instance("i-1", detailed_monitoring=True, bursts=True)[0].period == 60
    assert cw.queries_for_instance("i-1", detailed_monitoring=True, bursts=True, bare_metal=True) == []


def test_instance_balances_are_five_minute_even_with_detailed_monitoring() -> None:
    # docs/reference/cloudwatch.md#instance-ebs-metrics: EBSIOBalance% / EBSByteBalance% are "basic monitoring only" (5-minute); the EBS sums follow
    # the instance's monitoring (60 s detailed, 300 s basic).
    for detailed, sums in ((True, 60), (False, 300)):
        periods = {q.metric: q.period for q in cw.queries_for_instance("i-1", detailed_monitoring=detailed,
                                                                      bursts=True)}
        assert periods == {"ec2.ebs_read_ops": sums, "ec2.ebs_write_ops": sums, "ec2.ebs_read_bytes": sums,
                           "ec2.ebs_write_bytes": sums, "ec2.ebs_io_balance": 300, "ec2.ebs_byte_balance": 300}


def test_next_token_pages_are_followed_and_counted() -> None:
    client = _client()
    stub = Stubber(client)
    stub.add_response("get_metric_data", {"MetricDataResults": [_result("q0", [0, 1], [1.0, 2.0])],
                                          "NextToken": "page2"}, _expected())
    stub.add_response("get_metric_data", {"MetricDataResults": [_result("q0", [2], [3.0]),
                                                                _result("q1", [0], [9.0])]}, _expected("page2"))
    counters = cw.SweepCounters()
    with stub:
        results = list(cw.fetch_sweep(client, _queries(), plan_sweep([60, 60], 300), T0, T1, counters=counters))
    assert [p[1] for p in results[0].points[0]] == [1.0, 2.0, 3.0]
    assert results[0].points[1] == [(T0, 9.0)]
    assert counters.api_calls == 2 and counters.metrics_requested == 4 and counters.datapoints == 4


def test_throttling_and_partial_failures_are_retried_with_backoff() -> None:
    client = _client()
    stub = Stubber(client)
    stub.add_client_error("get_metric_data", service_error_code="Throttling", http_status_code=400)
    stub.add_response("get_metric_data", {"MetricDataResults": [_result("q0", [0], [1.0], "InternalError")]})
    stub.add_response("get_metric_data", {"MetricDataResults": [_result("q0", [0], [1.0]),
                                                                _result("q1", [0], [2.0])]})
    sleeps: list[float] = []
    counters = cw.SweepCounters()
    with stub:
        results = list(cw.fetch_sweep(client, _queries(), plan_sweep([60, 60], 300), T0, T1, counters=counters,
                                      sleep=sleeps.append))
    assert results[0].points == {0: [(T0, 1.0)], 1: [(T0, 2.0)]}
    assert counters.retries == 2 and len(sleeps) == 2 and counters.api_calls == 3
    assert all(0 <= s <= cw.BACKOFF_CAP_SECONDS for s in sleeps)


def test_giving_up_after_the_attempts_raises() -> None:
    client = _client()
    stub = Stubber(client)
    for _ in range(cw.REQUEST_ATTEMPTS):
        stub.add_client_error("get_metric_data", service_error_code="Throttling", http_status_code=400)
    with stub, pytest.raises(cw.RequestFailed):
        list(cw.fetch_sweep(client, _queries(), plan_sweep([60, 60], 300), T0, T1, sleep=lambda _s: None))


def test_access_denied_names_the_permission() -> None:
    client = _client()
    stub = Stubber(client)
    stub.add_client_error("get_metric_data", service_error_code="AccessDenied", http_status_code=403)
    with stub, pytest.raises(cw.Forbidden, match="cloudwatch:GetMetricData"):
        list(cw.fetch_sweep(client, _queries(), plan_sweep([60, 60], 300), T0, T1, sleep=lambda _s: None))


def test_nan_and_out_of_window_points_are_dropped_and_counted() -> None:
    client = _client()
    stub = Stubber(client)
    stub.add_response("get_metric_data", {"MetricDataResults": [
        _result("q0", [-1, 0, 1, 5], [1.0, float("nan"), 2.0, 3.0]), _result("q1", [], [])]})
    counters = cw.SweepCounters()
    with stub:
        results = list(cw.fetch_sweep(client, _queries(), plan_sweep([60, 60], 300), T0, T1, counters=counters))
    assert results[0].points[0] == [(T0 + dt.timedelta(minutes=1), 2.0)]
    assert results[0].dropped_outside == 2 and results[0].dropped_non_finite == 1 and counters.dropped == 3


def test_a_request_error_that_is_not_transient_is_not_retried() -> None:
    client = _client()
    stub = Stubber(client)
    stub.add_client_error("get_metric_data", service_error_code="ValidationError", http_status_code=400)
    sleeps: list[float] = []
    counters = cw.SweepCounters()
    with stub, pytest.raises(cw.RequestFailed, match="ValidationError"):
        list(cw.fetch_sweep(client, _queries(), plan_sweep([60, 60], 300), T0, T1, counters=counters,
                            sleep=sleeps.append))
    assert sleeps == [] and counters.retries == 0 and counters.api_calls == 1


def test_aws_clients_use_botocores_standard_retry_mode() -> None:
    from headroom.sources.aws.session import MAX_ATTEMPTS, client_config

    assert client_config().retries == {"mode": "standard", "max_attempts": MAX_ATTEMPTS}
    assert client_config(3).retries == {"mode": "standard", "max_attempts": 3}
