"""The moto server scripts/services.sh starts: moto's own, answering DescribeInstanceTypes in pages as EC2 does, and
GetMetricData from each query's own series.

moto 5 ignores MaxResults and NextToken on DescribeInstanceTypes and sends all of its ~1,400 instance types
(about a megabyte of XML) to every call, so each AWS connection test, which asks for 5, cost seconds of moto's CPU
and of the caller's parsing. EC2 returns at most MaxResults (5 to 100) types and a NextToken for the rest
(https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DescribeInstanceTypes.html); a call without
MaxResults is answered whole, as before.

moto 5 answers a GetMetricData query by scanning, for every period of the window, every data point stored in the
region (every volume's and instance's series the tests have put there), so a call costs periods x points and grows
through a run: it was a third of the moto server's CPU in the AWS tests (bench/ci_time.md, "Seventh pass"). Here
each query is answered by moto's own code over the points it would keep anyway (its metric name, and its dimensions,
or its namespace when it names none: moto's own filter), so the answer is the same and the scan is one series long.
Calls with a metric math or Metrics Insights expression, which read the other queries' results or every point, are
moto's own as before.

Usage: python scripts/moto_server.py [moto_server's arguments]
"""

from __future__ import annotations

import sys
import threading
from typing import Any

from moto.cloudwatch.models import CloudWatchBackend, Dimension
from moto.core.responses import ActionResult
from moto.ec2.responses.instances import InstanceResponse
from moto.server import main

_describe_every_type = InstanceResponse.describe_instance_types


def _describe_instance_types_in_pages(self: Any) -> ActionResult:
    answer = _describe_every_type(self)
    max_results = self._get_int_param("MaxResults")
    if max_results is None:
        return answer
    types = answer.result["InstanceTypes"]  # type: ignore[index]
    start = int(self._get_param("NextToken") or 0)
    page: dict[str, Any] = {"InstanceTypes": types[start:start + max_results]}
    if start + max_results < len(types):
        page["NextToken"] = str(start + max_results)
    return ActionResult(page)


InstanceResponse.describe_instance_types = _describe_instance_types_in_pages  # type: ignore[method-assign]

_every_metric = CloudWatchBackend.get_all_metrics
_metric_data_of = CloudWatchBackend.get_metric_data
_query_points = threading.local()  # moto serves each request on a thread of its own


def _metrics_of_the_query(self: Any) -> Any:
    points = getattr(_query_points, "points", None)
    return _every_metric(self) if points is None else points


def _metric_data_per_query(self: Any, queries: list[dict[str, Any]], start_time: Any, end_time: Any,
                           scan_by: str = "TimestampAscending") -> list[dict[str, Any]]:
    if not queries or any("MetricStat" not in q for q in queries):
        return _metric_data_of(self, queries, start_time, end_time, scan_by)
    every = _every_metric(self)
    answers: list[dict[str, Any]] = []
    for query in queries:
        metric = query["MetricStat"]["Metric"]
        wanted = sorted(Dimension(name=d["Name"], value=d["Value"]) for d in metric.get("Dimensions", []))
        # moto's own filter, as it writes it: the name, and the dimensions if the query names some, else the namespace
        _query_points.points = [
            md for md in every if md.name == metric["MetricName"] and (
                sorted(md.dimensions) == wanted if wanted else md.namespace == metric["Namespace"])]
        try:
            answers.extend(_metric_data_of(self, [query], start_time, end_time, scan_by))
        finally:
            _query_points.points = None
    return answers


CloudWatchBackend.get_all_metrics = _metrics_of_the_query  # type: ignore[method-assign]
CloudWatchBackend.get_metric_data = _metric_data_per_query  # type: ignore[method-assign]

if __name__ == "__main__":
    sys.exit(main())
