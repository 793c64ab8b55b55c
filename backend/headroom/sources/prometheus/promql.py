"""Pure PromQL building for the Prometheus collector: deployment flavours, queries, range splits (the label
selector syntax is `headroom.sources.selector`).

No network and no clock. The collector (`headroom.sources.prometheus.collector`) sends what this module builds.

Two ways TiDB clusters label their TiKV targets:

* TiUP (pingcap/tiup `embed/templates/config/prometheus.yml.tpl`): `job="tikv"`, `instance="<host>:20180"`
  (the status address). TiUP's `cluster` label is an *external* label, so it is not on the series a query
  of that Prometheus returns (only on federated / remote-written copies); users often add a `tidb_cluster`
  label themselves. node_exporter runs as `job="node_exporter"` on `<host>:9100`.
* TiDB Operator (TidbMonitor, pingcap/tidb-operator `pkg/monitor/monitor/util.go` `scrapeJob`):
  `job="<namespace>-<cluster>-tikv"`, `instance="<pod name>"`, `component="tikv"`, `cluster="<cluster>"`,
  `kubernetes_namespace="<namespace>"`, `tidb_cluster="<namespace>-<cluster>"`; the status address
  (`<pod IP>:20180`) is only in the target's scrape URL.

The source's label selector picks one TiDB cluster (e.g. `tidb_cluster="prod-basic"` for the Operator, empty or
`tidb_cluster="prod"` for TiUP). The flavour is detected from the TiKV series' labels (`detect_flavour`); we
then add the flavour's TiKV matcher (`job="tikv"` for TiUP, `component="tikv"` for the Operator) unless the
selector already constrains that label. node_exporter series are selected by host instead
(`instance=~"(<host>|...):[0-9]+"` for the hosts the TiKV status addresses are on), because node_exporter
targets rarely carry the cluster label. On Kubernetes this only finds node_exporter when the TiKV pods use
the host network (pod IP = node IP); otherwise the node series are simply absent.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from headroom.domain.snapshot.registry import REGISTRY_LIST, MetricSpec, PrometheusSource
from headroom.domain.tikvconf.change import has_port
from headroom.sources.selector import Matcher

Flavour = Literal["tiup", "operator"]

# Prometheus refuses a range query returning more than 11,000 points per series
# (prometheus/prometheus web/api/v1/api.go: "exceeded maximum resolution of 11,000 points per timeseries").
MAX_POINTS_PER_SERIES = 11_000
STEP_SECONDS = 60  # the store's resolution: metric_points holds one-minute slots (timeseries/repository.py)

def detect_flavour(label_sets: Iterable[Mapping[str, str]]) -> Flavour:
    """Tell a TiDB Operator cluster from a TiUP one by the labels of its TiKV series.

    Operator targets carry `component="tikv"` and a pod name as `instance` (no port); TiUP targets carry
    `job="tikv"` and `instance="host:port"`.
    """
    operator = tiup = 0
    for labels in label_sets:
        instance = labels.get("instance", "")
        if labels.get("component") == "tikv" or (instance and not has_port(instance)):
            operator += 1
        else:
            tiup += 1
    return "operator" if operator > tiup else "tiup"


def tikv_matchers(selector: Sequence[Matcher], flavour: Flavour) -> tuple[Matcher, ...]:
    """Return the source's matchers plus the flavour's TiKV matcher (unless the selector sets that label)."""
    names = {m.name for m in selector}
    if flavour == "tiup" and "job" not in names:
        return (*selector, Matcher("job", "=", "tikv"))
    if flavour == "operator" and "component" not in names:
        return (*selector, Matcher("component", "=", "tikv"))
    return tuple(selector)


def node_exporter_matchers(hosts: Iterable[str]) -> tuple[Matcher, ...]:
    """Select node_exporter series of the given hosts, whatever their job is called."""
    alternatives = sorted({re.escape(h) for h in hosts})
    if not alternatives:
        raise ValueError("no hosts: discover the TiKV nodes first")
    return (Matcher("instance", "=~", f"({'|'.join(alternatives)}):[0-9]+"),)


# --- queries ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CollectionQuery:
    """One PromQL query that collects a registry series for every node of a cluster at once."""

    metric: str  # canonical series name (domain.snapshot.registry.REGISTRY)
    unit: str
    target: Literal["tikv", "node_exporter"]
    query: str
    by: tuple[str, ...]  # labels identifying one result series: ("instance",) or ("instance", "device")


_INSTANCE = 'instance="$instance"'
_AGGREGATION = re.compile(r"^(sum|max|count)\((.*)\)$", re.S)
_QUANTILE = re.compile(r"^histogram_quantile\(([0-9.]+), sum\((.*)\) by \(le\)\)$", re.S)


def _fill(template: str, selector: str) -> str:
    if _INSTANCE not in template:
        raise ValueError(f"registry query without {_INSTANCE}: {template}")
    # The registry pins TiKV process series with job="tikv" (TiUP's job name); the flavour matcher replaces it.
    inner = template.replace(f'{_INSTANCE},job="tikv"', _INSTANCE)
    if not selector:
        return inner.replace(f"{_INSTANCE},", "").replace(_INSTANCE, "")
    return inner.replace(_INSTANCE, selector)


def build_query(spec: MetricSpec, tikv_selector: str, node_selector: str) -> CollectionQuery:
    """Turn a registry entry (written for one `$instance`) into a query over all of a cluster's nodes."""
    source = spec.source
    if not isinstance(source, PrometheusSource):
        raise ValueError(f"{spec.name} is not a Prometheus series")
    is_node = all(m.startswith("node_") for m in source.metrics)
    # `label="$label"` placeholders (device, mountpoint) become grouping labels: one result series per value.
    template = source.query
    by: tuple[str, ...] = ("instance",)
    for label in re.findall(r',([a-z_]+)="\$\1"', source.query):
        template = template.replace(f',{label}="${label}"', "")
        by = (*by, label)
    body = _fill(template, node_selector if is_node else tikv_selector)
    group = ", ".join(by)
    quantile = _QUANTILE.match(body)
    aggregation = _AGGREGATION.match(body)
    if quantile:
        query = f"histogram_quantile({quantile.group(1)}, sum by ({group}, le) ({quantile.group(2)}))"
    elif aggregation:
        query = f"{aggregation.group(1)} by ({group}) ({aggregation.group(2)})"
    else:  # a bare selector or rate(): one series per target already; sum keeps only the grouping labels
        query = f"sum by ({group}) ({body})"
    return CollectionQuery(spec.name, spec.unit, "node_exporter" if is_node else "tikv", query, by)


def collection_queries(tikv_selector: str, node_selector: str) -> list[CollectionQuery]:
    """Return the queries for every Prometheus series of the registry, in registry order."""
    return [
        build_query(spec, tikv_selector, node_selector)
        for spec in REGISTRY_LIST
        if isinstance(spec.source, PrometheusSource)
    ]


# --- time ranges -----------------------------------------------------------------------------------------


def align_down(ts: dt.datetime, step_seconds: int = STEP_SECONDS) -> dt.datetime:
    """Floor a timestamp to the step grid (UTC epoch multiples)."""
    epoch = int(ts.timestamp())
    return dt.datetime.fromtimestamp(epoch - epoch % step_seconds, dt.UTC)


def split_range(
    start: dt.datetime,
    end: dt.datetime,
    step_seconds: int = STEP_SECONDS,
    max_points: int = MAX_POINTS_PER_SERIES,
) -> list[tuple[dt.datetime, dt.datetime]]:
    """Split [start, end] (both evaluated, step-aligned) into back-to-back chunks of at most max_points each.

    A range query evaluates start, start+step, ..., end: (end - start) / step + 1 points. Chunks never share
    an evaluation timestamp, so concatenating their results has no duplicates and no gaps.
    """
    if step_seconds <= 0 or max_points < 1:
        raise ValueError("step_seconds and max_points must be positive")
    first, last = align_down(start, step_seconds), align_down(end, step_seconds)
    if first < start:
        first += dt.timedelta(seconds=step_seconds)
    if last < first:
        return []
    chunks: list[tuple[dt.datetime, dt.datetime]] = []
    span = dt.timedelta(seconds=step_seconds * (max_points - 1))
    step = dt.timedelta(seconds=step_seconds)
    cursor = first
    while cursor <= last:
        chunk_end = min(cursor + span, last)
        chunks.append((cursor, chunk_end))
        cursor = chunk_end + step
    return chunks


def points_in(start: dt.datetime, end: dt.datetime, step_seconds: int = STEP_SECONDS) -> int:
    """Return how many evaluation steps a range query over [start, end] has."""
    if end < start:
        return 0
    return int((end - start).total_seconds()) // step_seconds + 1
