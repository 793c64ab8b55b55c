"""The pure PromQL builder: selectors, flavours, the registry's queries and the range splitter."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest
from headroom.domain.snapshot.registry import NODE_EXPORTER_STANDARD, REGISTRY, PrometheusSource
from headroom.domain.tikvconf.change import host_of
from headroom.sources.prometheus.promql import (
    MAX_POINTS_PER_SERIES,
    align_down,
    build_query,
    collection_queries,
    detect_flavour,
    node_exporter_matchers,
    points_in,
    split_range,
    tikv_matchers,
)
from headroom.sources.selector import Matcher, SelectorError, parse_selector, render_selector
from hypothesis import given, settings
from hypothesis import strategies as st

# The metric names the PromQL of TiKV's official Grafana dashboard uses (the file's header names the commit).
DASHBOARD_NAMES = Path(__file__).resolve().parent / "data" / "tikv-dashboard-metric-names.txt"
T0 = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", ()),
        ('tidb_cluster="prod"', (Matcher("tidb_cluster", "=", "prod"),)),
        (
            '{job="tikv", instance=~"10\\\\.0\\\\..*"}',
            (Matcher("job", "=", "tikv"), Matcher("instance", "=~", r"10\.0\..*")),
        ),
        (
            'namespace!="dev",cluster!~"t.*"',
            (Matcher("namespace", "!=", "dev"), Matcher("cluster", "!~", "t.*")),
        ),
        ('a="say \\"hi\\""', (Matcher("a", "=", 'say "hi"'),)),
    ],
)
def test_parse_selector(text: str, expected: tuple[Matcher, ...]) -> None:
    assert parse_selector(text) == expected
    assert parse_selector(render_selector(expected)) == expected  # round trip


@pytest.mark.parametrize("bad", ["tidb_cluster=prod", 'a="x" b="y"', '1a="x"', 'a=~"("', "up{}"])
def test_parse_selector_refuses_non_matchers(bad: str) -> None:
    with pytest.raises(SelectorError):
        parse_selector(bad)


def test_matchers_are_anchored_like_promql() -> None:
    matcher = Matcher("job", "=~", "tikv")
    assert matcher.matches({"job": "tikv"}) and not matcher.matches({"job": "tikv-importer"})
    assert Matcher("x", "!=", "a").matches({}) and not Matcher("x", "=", "a").matches({})


@pytest.mark.parametrize(
    ("labels", "flavour"),
    [
        ([{"job": "tikv", "instance": "10.0.1.5:20180"}], "tiup"),
        ([{"job": "tidb-basic-tikv", "instance": "basic-tikv-0", "component": "tikv"}], "operator"),
        ([{"job": "x", "instance": "basic-tikv-0"}], "operator"),  # a pod name has no port
        ([], "tiup"),
    ],
)
def test_detect_flavour(labels: list[dict[str, str]], flavour: str) -> None:
    assert detect_flavour(labels) == flavour


def test_flavour_matcher_added_unless_the_selector_sets_it() -> None:
    sel = parse_selector('tidb_cluster="prod"')
    assert render_selector(tikv_matchers(sel, "tiup")) == 'tidb_cluster="prod",job="tikv"'
    assert render_selector(tikv_matchers(sel, "operator")) == 'tidb_cluster="prod",component="tikv"'
    own_job = parse_selector('job="tikv-prod"')
    assert tikv_matchers(own_job, "tiup") == own_job


def test_node_exporter_selector_by_host() -> None:
    rendered = render_selector(node_exporter_matchers(["10.0.1.5", "10.0.1.6"]))
    # PromQL string escapes: the regex's \. is written \\. inside the double quotes
    assert rendered == 'instance=~"(10\\\\.0\\\\.1\\\\.5|10\\\\.0\\\\.1\\\\.6):[0-9]+"'
    assert node_exporter_matchers(["10.0.1.5"])[0].matches({"instance": "10.0.1.5:9100"})
    assert not node_exporter_matchers(["10.0.1.5"])[0].matches({"instance": "10.0.1.50:9100"})
    assert host_of("10.0.1.5:20180") == "10.0.1.5" and host_of("basic-tikv-0") == "basic-tikv-0"
    assert host_of("[fd00::1]:20180") == "[fd00::1]"


def test_every_registry_prometheus_series_has_a_query() -> None:
    queries = collection_queries('job="tikv"', 'instance=~"(h):[0-9]+"')
    wanted = [s.name for s in REGISTRY.values() if isinstance(s.source, PrometheusSource)]
    assert [q.metric for q in queries] == wanted
    for query in queries:
        assert "$" not in query.query, query
        assert query.query.count("(") == query.query.count(")")
        assert ("instance, device" in query.query) == (query.by == ("instance", "device"))


def test_queried_metric_names_are_dashboard_or_node_exporter_names() -> None:
    dashboard = {line.strip() for line in DASHBOARD_NAMES.read_text().splitlines() if line and line[0] != "#"}
    names = set()
    for query in collection_queries('job="tikv"', 'instance=~"(h):[0-9]+"'):
        names.update(re.findall(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\{", query.query))
    assert names and names <= dashboard | NODE_EXPORTER_STANDARD, names - dashboard - NODE_EXPORTER_STANDARD


@pytest.mark.parametrize(
    ("metric", "expected"),
    [
        (
            "tikv.thread_cpu.scheduler",
            'sum by (instance) (rate(tikv_thread_cpu_seconds_total{tidb_cluster="p",job="tikv",name=~"sched_.*"}[1m]))',
        ),
        (
            "tikv.wait.unified_read_pool",
            "histogram_quantile(0.99, sum by (instance, le) (rate(tikv_yatp_pool_schedule_wait_duration_bucket"
            '{tidb_cluster="p",job="tikv",name=~"unified-read.*"}[1m])))',
        ),
        ("tikv.memory_rss", 'sum by (instance) (process_resident_memory_bytes{tidb_cluster="p",job="tikv"})'),
        (
            "tikv.write_stall",
            'max by (instance) (tikv_engine_write_stall{tidb_cluster="p",job="tikv",db="kv",'
            'type="write_stall_max"})',
        ),
        (
            "node.disk_reads",
            'sum by (instance, device) (rate(node_disk_reads_completed_total{instance=~"(h):[0-9]+"}[1m]))',
        ),
        (
            "node.cpu_count",
            'count by (instance) (node_cpu_seconds_total{instance=~"(h):[0-9]+",mode="idle"})',
        ),
    ],
)
def test_build_query(metric: str, expected: str) -> None:
    tikv = render_selector(tikv_matchers(parse_selector('tidb_cluster="p"'), "tiup"))
    assert build_query(REGISTRY[metric], tikv, 'instance=~"(h):[0-9]+"').query == expected


def test_operator_process_series_use_the_component_not_job_tikv() -> None:
    tikv = render_selector(tikv_matchers(parse_selector('tidb_cluster="basic"'), "operator"))
    query = build_query(REGISTRY["tikv.cpu"], tikv, "").query
    assert (
        query
        == 'sum by (instance) (rate(process_cpu_seconds_total{tidb_cluster="basic",component="tikv"}[1m]))'
    )


def test_build_query_refuses_cloudwatch_series() -> None:
    with pytest.raises(ValueError, match="not a Prometheus series"):
        build_query(REGISTRY["ebs.read_ops"], "", "")


# --- range splitting -------------------------------------------------------------------------------------


def test_fourteen_days_split_under_the_limit() -> None:
    # 14 days at 60 s = 20,160 minutes + 1 evaluation -> two queries under 11,000 points each
    chunks = split_range(T0, T0 + dt.timedelta(days=14))
    assert [points_in(a, b) for a, b in chunks] == [11_000, 9_161]
    assert chunks[0][0] == T0 and chunks[-1][1] == T0 + dt.timedelta(days=14)
    assert chunks[1][0] == chunks[0][1] + dt.timedelta(minutes=1)


def test_split_aligns_to_the_step_and_handles_empty_ranges() -> None:
    start = T0 + dt.timedelta(seconds=20)
    assert split_range(start, start + dt.timedelta(seconds=30)) == []  # no whole minute inside
    assert split_range(T0, T0) == [(T0, T0)]
    assert split_range(T0 + dt.timedelta(minutes=5), T0) == []
    assert split_range(start, T0 + dt.timedelta(minutes=3, seconds=59))[0] == (
        T0 + dt.timedelta(minutes=1),
        T0 + dt.timedelta(minutes=3),
    )
    assert align_down(T0 + dt.timedelta(seconds=119)) == T0 + dt.timedelta(minutes=1)


@settings(deadline=None, max_examples=60)
@given(
    start_min=st.integers(0, 50_000),
    length=st.integers(0, 25_000),
    max_points=st.integers(1, MAX_POINTS_PER_SERIES),
)
def test_split_covers_every_step_once(start_min: int, length: int, max_points: int) -> None:
    start = T0 + dt.timedelta(minutes=start_min)
    end = start + dt.timedelta(minutes=length)
    chunks = split_range(start, end, 60, max_points)
    steps = [a + dt.timedelta(minutes=i) for a, b in chunks for i in range(points_in(a, b))]
    assert steps == [start + dt.timedelta(minutes=i) for i in range(length + 1)]
    assert all(points_in(a, b) <= max_points for a, b in chunks)
    assert len(chunks) == -(-(length + 1) // max_points)  # as few queries as the limit allows
