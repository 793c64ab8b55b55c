"""CloudWatch collector: which metrics to ask for each volume and instance (pure), and the GetMetricData shell.

Only GetMetricData is used, planned by `aws_metric_plan` (500 queries and 100,800 datapoints per call,
NextToken pages). Every query is a plain `MetricStat` with the statistic of the metric registry
(`headroom.domain.snapshot.registry`, docs/reference/cloudwatch.md#volume-metrics, docs/reference/cloudwatch.md#instance-ebs-metrics): Sum for ops, bytes and times, Average for the queue length,
Minimum for balances, Maximum for the 0/1 checks. No metric math: IOPS = Sum / period and the like are derived
by Headroom when a view reads the raw Sum (moto does not evaluate expressions either).
"""

from __future__ import annotations

import datetime as dt
import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from headroom.domain.snapshot import metric_ids as mid
from headroom.domain.snapshot.registry import REGISTRY_LIST, CloudWatchSource, MetricSpec
from headroom.platform.retry import RetryPolicy, call_with_retries
from headroom.sources.aws.metric_plan import MAX_DATAPOINTS, PlannedRequest, SweepPlan

EBS_SPECS: tuple[MetricSpec, ...] = tuple(
    s for s in REGISTRY_LIST if isinstance(s.source, CloudWatchSource) and s.source.namespace == "AWS/EBS"
)
EC2_SPECS: tuple[MetricSpec, ...] = tuple(
    s for s in REGISTRY_LIST if isinstance(s.source, CloudWatchSource) and s.source.namespace == "AWS/EC2"
)
# docs/reference/cloudwatch.md#volume-metrics: BurstBalance is reported for gp2/st1/sc1 only (absent for gp3, io1, io2).
BURST_BALANCE_TYPES = frozenset({"gp2", "st1", "sc1"})
# docs/reference/cloudwatch.md#volume-metrics: the Exceeded checks exist for every type except `standard` (magnetic), on Nitro.
NO_EXCEEDED_CHECK_TYPES = frozenset({"standard"})
EXCEEDED_CHECKS = frozenset({mid.EBS_IOPS_EXCEEDED_CHECK, mid.EBS_THROUGHPUT_EXCEEDED_CHECK})
INSTANCE_BALANCES = frozenset({mid.EC2_EBS_IO_BALANCE, mid.EC2_EBS_BYTE_BALANCE})
# docs/reference/cloudwatch.md#volume-metrics: every EBS volume sends 1-minute metrics. docs/reference/cloudwatch.md#instance-ebs-metrics: EC2 metrics are 5-minute on basic monitoring,
# 1-minute with detailed monitoring.
EBS_PERIOD = 60
EC2_BASIC_PERIOD = 300
EC2_DETAILED_PERIOD = 60
# Partial failures botocore cannot see (a query's StatusCode InternalError in a 200 answer), or a call still
# throttled after botocore's own retries, re-run the whole request this many times with the one retry helper
# (full-jitter exponential backoff); botocore's standard mode retries each call first (aws_session).
REQUEST_ATTEMPTS = 5
BACKOFF_BASE_SECONDS = 1.0
BACKOFF_CAP_SECONDS = 30.0
REQUEST_RETRY = RetryPolicy(attempts=REQUEST_ATTEMPTS, base_seconds=BACKOFF_BASE_SECONDS, cap_seconds=BACKOFF_CAP_SECONDS)
THROTTLE_CODES = frozenset({"Throttling", "ThrottlingException", "TooManyRequestsException",
                            "RequestLimitExceeded", "LimitExceededException"})


@dataclass(frozen=True)
class MetricQuery:
    """One CloudWatch series to read: canonical name, the entity, and how to ask for it."""

    metric: str  # canonical name (headroom.domain.snapshot.registry)
    entity_kind: str  # volume | instance
    entity_id: str  # vol-... | i-...
    namespace: str
    metric_name: str
    dimension: str
    statistic: str
    period: int
    unit: str

    def to_api(self, query_id: str) -> dict[str, Any]:
        return {
            "Id": query_id,
            "MetricStat": {
                "Metric": {
                    "Namespace": self.namespace,
                    "MetricName": self.metric_name,
                    "Dimensions": [{"Name": self.dimension, "Value": self.entity_id}],
                },
                "Period": self.period,
                "Stat": self.statistic,
            },
            "ReturnData": True,
        }


def _query(spec: MetricSpec, entity_kind: str, entity_id: str, period: int) -> MetricQuery:
    src = spec.source
    assert isinstance(src, CloudWatchSource)
    return MetricQuery(spec.name, entity_kind, entity_id, src.namespace, src.metric_name, src.dimension,
                       src.statistic, period, spec.unit)


def queries_for_volume(volume_id: str, volume_type: str) -> list[MetricQuery]:
    """The AWS/EBS series worth asking for a volume of this type (absent series still cost a metric)."""
    out = []
    for spec in EBS_SPECS:
        if spec.name == mid.EBS_BURST_BALANCE and volume_type not in BURST_BALANCE_TYPES:
            continue
        if spec.name in EXCEEDED_CHECKS and volume_type in NO_EXCEEDED_CHECK_TYPES:
            continue
        out.append(_query(spec, "volume", volume_id, EBS_PERIOD))
    return out


def queries_for_instance(instance_id: str, *, detailed_monitoring: bool, bursts: bool | None,
                         bare_metal: bool = False) -> list[MetricQuery]:
    """The AWS/EC2 EBS series of an instance: none on bare metal; balances only for burst-capable sizes (docs/reference/cloudwatch.md#instance-ebs-metrics)."""
    if bare_metal:
        return []
    period = EC2_DETAILED_PERIOD if detailed_monitoring else EC2_BASIC_PERIOD
    # docs/reference/cloudwatch.md#instance-ebs-metrics: EBSIOBalance% / EBSByteBalance% are "basic monitoring only": 5-minute even with detailed monitoring.
    return [
        _query(spec, "instance", instance_id, EC2_BASIC_PERIOD if spec.name in INSTANCE_BALANCES else period)
        for spec in EC2_SPECS
        if not (spec.name in INSTANCE_BALANCES and bursts is False)
    ]


@dataclass
class RequestResult:
    """What one planned request returned: points per query index, and what it cost."""

    request: PlannedRequest
    points: dict[int, list[tuple[dt.datetime, float]]]
    calls: int
    datapoints: int
    dropped_outside: int = 0
    dropped_non_finite: int = 0


@dataclass
class SweepCounters:
    api_calls: int = 0
    metrics_requested: int = 0
    datapoints: int = 0
    dropped: int = 0
    retries: int = 0
    errors: list[str] = field(default_factory=list)


class RequestFailed(RuntimeError):
    """A request failed: `transient` when another attempt may succeed (throttled, 5xx, a query's InternalError);
    raised to the caller once REQUEST_ATTEMPTS attempts failed."""

    def __init__(self, message: str, *, transient: bool = True) -> None:
        super().__init__(message)
        self.transient = transient


class Forbidden(RuntimeError):
    """CloudWatch answered AccessDenied / Forbidden: the role lacks cloudwatch:GetMetricData."""


def _as_utc(ts: dt.datetime) -> dt.datetime:
    return ts.replace(tzinfo=dt.UTC) if ts.tzinfo is None else ts.astimezone(dt.UTC)


def _run_request(
    cloudwatch: Any,
    queries: Sequence[MetricQuery],
    request: PlannedRequest,
    start: dt.datetime,
    end: dt.datetime,
) -> RequestResult:
    api = [queries[i].to_api(f"q{i}") for i in request.series]
    points: dict[int, list[tuple[dt.datetime, float]]] = {i: [] for i in request.series}
    calls = datapoints = outside = non_finite = 0
    token: str | None = None
    while True:
        kwargs: dict[str, Any] = {"MetricDataQueries": api, "StartTime": start, "EndTime": end,
                                  "ScanBy": "TimestampAscending", "MaxDatapoints": MAX_DATAPOINTS}
        if token:
            kwargs["NextToken"] = token
        response = cloudwatch.get_metric_data(**kwargs)
        calls += 1
        for result in response.get("MetricDataResults", []):
            status = result.get("StatusCode", "Complete")
            if status == "Forbidden":
                raise Forbidden(result.get("Messages") or "GetMetricData returned Forbidden")
            if status == "InternalError":
                raise RequestFailed(f"query {result.get('Id')} returned InternalError")
            index = int(str(result["Id"])[1:])
            for ts, value in zip(result.get("Timestamps", []), result.get("Values", []), strict=False):
                datapoints += 1
                ts = _as_utc(ts)
                if not math.isfinite(value):
                    non_finite += 1
                elif not (start <= ts < end):
                    outside += 1
                else:
                    points[index].append((ts, float(value)))
        token = response.get("NextToken")
        if not token:
            break
    return RequestResult(request, points, calls, datapoints, outside, non_finite)


def fetch_sweep(
    cloudwatch: Any,
    queries: Sequence[MetricQuery],
    plan: SweepPlan,
    start: dt.datetime,
    end: dt.datetime,
    *,
    counters: SweepCounters | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[RequestResult]:
    """Run a plan's requests over [start, end), yielding each request's points as it completes."""
    counters = counters if counters is not None else SweepCounters()
    for request in plan.requests:

        def attempt(request: PlannedRequest = request) -> RequestResult:
            try:
                return _run_request(cloudwatch, queries, request, start, end)
            except ClientError as exc:
                counters.api_calls += 1
                counters.metrics_requested += len(request.series)
                code = exc.response.get("Error", {}).get("Code", "")
                status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
                if code in ("AccessDenied", "AccessDeniedException", "UnauthorizedOperation"):
                    raise Forbidden(f"{code}: cloudwatch:GetMetricData") from exc
                # still throttled (or 5xx) after botocore's own retries: the request is worth another go later
                transient = code in THROTTLE_CODES or status in (429, 500, 502, 503, 504)
                raise RequestFailed(f"{code or status}: {exc}", transient=transient) from exc
            except RequestFailed:
                counters.api_calls += 1
                counters.metrics_requested += len(request.series)
                raise

        def count_retry(_error: BaseException, _attempt: int) -> None:
            counters.retries += 1

        result = call_with_retries(
            attempt,
            policy=REQUEST_RETRY,
            transient=lambda error: isinstance(error, RequestFailed) and error.transient,
            sleep=sleep,
            on_retry=count_retry,
        )
        counters.api_calls += result.calls
        counters.metrics_requested += result.calls * len(request.series)
        counters.datapoints += result.datapoints
        counters.dropped += result.dropped_outside + result.dropped_non_finite
        yield result
