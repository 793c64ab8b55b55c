"""The Prometheus client's retries and errors, and how collection drops NaN/Inf and out-of-window points.

These use httpx.MockTransport to script failures a real Prometheus won't produce on demand (429, 503, a
NaN from histogram_quantile over an empty histogram, a point outside the asked window).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import httpx
import pytest
from headroom.inventory.models import TikvNode
from headroom.inventory.tikv_status import StatusPortError, advertised_store_address, fetch_config
from headroom.sources.models import PrometheusSource
from headroom.sources.prometheus import ingest
from headroom.sources.prometheus.collector import (
    PrometheusAuth,
    PrometheusClient,
    PrometheusError,
    RetryPolicy,
)
from headroom.timeseries.models import MetricSeries
from headroom.timeseries.repository import read_points
from helpers import sign_up
from sqlalchemy import select

T0 = dt.datetime(2026, 11, 2, 10, 0, tzinfo=dt.UTC)
OK_BUILDINFO = {"status": "success", "data": {"version": "2.42.0"}}


def _client(handler: Any, sleeps: list[float], **kw: Any) -> PrometheusClient:
    return PrometheusClient(
        "http://prom.test:9090/",
        kw.pop("auth", None),
        transport=httpx.MockTransport(handler),
        retry=RetryPolicy(attempts=4, base_seconds=0.5, cap_seconds=8.0),
        sleep=sleeps.append,
        **kw,
    )


@pytest.mark.parametrize("status", [429, 500, 502, 503, 504])
def test_transient_statuses_are_retried_with_jittered_backoff(status: int) -> None:
    calls: list[int] = []
    sleeps: list[float] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        return httpx.Response(status) if len(calls) < 3 else httpx.Response(200, json=OK_BUILDINFO)

    assert _client(handler, sleeps).build_info()["version"] == "2.42.0"
    assert len(calls) == 3 and len(sleeps) == 2
    # full jitter: uniform(0, min(cap, base * 2**attempt)) -> within 0.5 s, then within 1 s
    assert 0 <= sleeps[0] <= 0.5 and 0 <= sleeps[1] <= 1.0 and sleeps[0] != sleeps[1]


def test_network_errors_are_retried_then_reported() -> None:
    sleeps: list[float] = []

    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    client = PrometheusClient(
        "http://user:pw-in-url@prom.test:9090",
        transport=httpx.MockTransport(handler),
        retry=RetryPolicy(attempts=4),
        sleep=sleeps.append,
    )
    with pytest.raises(PrometheusError) as caught:
        client.build_info()
    assert caught.value.kind == "unreachable" and len(sleeps) == 3
    assert caught.value.message == (
        "Could not connect to prom.test:9090: the connection was refused. Check the URL and that the service is running."
    )


def test_auth_failures_are_not_retried_and_never_echo_the_secret() -> None:
    seen: list[httpx.Request] = []
    sleeps: list[float] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(401, text="unauthorized token=top-secret-token")

    client = _client(handler, sleeps, auth=PrometheusAuth("bearer", None, "top-secret-token"))
    with pytest.raises(PrometheusError) as caught:
        client.build_info()
    assert caught.value.kind == "auth" and caught.value.status == 401 and sleeps == []
    assert seen[0].headers["authorization"] == "Bearer top-secret-token"
    assert "top-secret" not in str(caught.value) and "top-secret" not in repr(client._auth)


def test_basic_auth_header() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=OK_BUILDINFO)

    _client(handler, [], auth=PrometheusAuth("basic", "headroom", "pw")).build_info()
    assert seen[0].headers["authorization"] == "Basic aGVhZHJvb206cHc="  # base64("headroom:pw")


def test_bad_query_is_a_query_error() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(400, json={"status": "error", "errorType": "bad_data", "error": "parse error"})

    with pytest.raises(PrometheusError) as caught:
        _client(handler, []).instant("sum(")
    assert caught.value.kind == "query" and "parse error" in caught.value.message


def test_collection_counts_and_drops_non_finite_and_outside_points(client: Any, db: Any) -> None:
    owner = sign_up(client)
    cluster = owner.post("/api/v1/clusters", json={"name": "c", "tikv_version": "v8.5.1"}).json()
    made = owner.post(
        "/api/v1/sources/prometheus",
        json={"name": "p", "base_url": "http://prom.test:9090", "cluster_id": cluster["id"]},
    ).json()
    source = db.get(PrometheusSource, made["id"])
    node = TikvNode(
        org_id=source.org_id,
        cluster_id=source.cluster_id,
        store_address="10.0.0.1:20160",
        status_address="10.0.0.1:20180",
    )
    db.add(node)
    db.flush()
    t = T0.timestamp()
    values = [
        [t, "1.5"],
        [t + 60, "NaN"],
        [t + 120, "+Inf"],
        [t + 180, "-Inf"],
        [t + 240, "2.5"],
        [t + 3600, "9"],
        [t + 90, "4"],
    ]  # an hour after the window; and one off the minute grid

    def handler(request: httpx.Request) -> httpx.Response:
        body = {
            "resultType": "matrix",
            "result": [
                {"metric": {"instance": "10.0.0.1:20180"}, "values": values},
                {"metric": {"instance": "10.9.9.9:20180"}, "values": [[t, "1"]]},  # not a node of this source
            ],
        }
        return httpx.Response(200, json={"status": "success", "data": body})

    discovery = ingest.Discovery(
        "tiup", [ingest.TikvTarget("10.0.0.1:20180", {}, "10.0.0.1:20180")], {"10.0.0.1:20180": node}
    )
    query = next(q for q in ingest.queries_for(source, discovery) if q.metric == "tikv.block_cache_hit")
    stats = ingest.collect_query(
        db, source, _client(handler, []), discovery, query, T0, T0 + dt.timedelta(minutes=10)
    )
    assert stats.dropped_non_finite == 3 and stats.dropped_outside == 2 and stats.unmatched_series == 1
    assert stats.points == 2 and stats.queries == 1 and stats.steps == 11
    series = db.scalar(select(MetricSeries).where(MetricSeries.org_id == source.org_id))
    assert (series.entity_kind, series.entity_id, series.metric, series.unit) == (
        "tikv_node",
        "10.0.0.1:20160",
        "tikv.block_cache_hit",
        "ops/s",
    )
    assert read_points(db, source.org_id, series.id, T0, T0 + dt.timedelta(hours=2)) == [
        (T0, 1.5),
        (T0 + dt.timedelta(minutes=4), 2.5),
    ]


def test_status_port_reader_retries_and_reads_the_advertised_address() -> None:
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(str(request.url))
        if len(calls) == 1:
            return httpx.Response(503)
        return httpx.Response(
            200, json={"server": {"addr": "0.0.0.0:20160", "advertise-addr": "10.0.1.5:20160"}}
        )

    config, raw = fetch_config("10.0.1.5:20180", transport=httpx.MockTransport(handler), sleep=lambda s: None)
    assert calls == ["http://10.0.1.5:20180/config"] * 2
    assert advertised_store_address(config) == "10.0.1.5:20160" and "advertise-addr" in raw
    assert advertised_store_address({"server": {"addr": "0.0.0.0:20160", "advertise-addr": ""}}) is None
    assert advertised_store_address({"server": {"addr": "10.0.1.6:20160"}}) == "10.0.1.6:20160"

    with pytest.raises(StatusPortError, match="HTTP 404"):
        fetch_config(
            "h:1", transport=httpx.MockTransport(lambda r: httpx.Response(404)), sleep=lambda s: None
        )
    with pytest.raises(StatusPortError, match="JSON object"):
        fetch_config("h:1", transport=httpx.MockTransport(lambda r: httpx.Response(200, json=[1])))


def test_a_bad_selector_is_reported_before_any_request() -> None:
    from headroom.sources.prometheus.service import check_connection

    calls: list[httpx.Request] = []
    source = PrometheusSource(base_url="http://prom.test:9090", label_selector="tidb_cluster=prod")
    report = check_connection(_client(lambda r: calls.append(r) or httpx.Response(500), []), source, T0)
    assert report.ok is False and calls == []
    assert report.messages == [
        "label selector: expected name=\"value\" (or !=, =~, !~) at character 1: 'tidb_cluster=prod'"
    ]
