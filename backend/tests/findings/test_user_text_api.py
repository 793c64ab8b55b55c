"""What the API says to a user of the demo cluster is in words: no repository path, no metric id, no method code.

The demo cluster is ingested and advised as the advice job does; then every JSON answer a page of the app reads for
it (the findings list, each finding, its evidence charts, a node's metric panels, the cluster overview and the
fleet) is walked, and every string a user can read is scanned. Identifiers the UI fetches or matches by (ids,
metric names, keys, rules) are data, not text, and are left out of the scan; their visible counterparts (titles,
labels) are what is checked.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

import pytest
from advice_support import END, Advised
from helpers import Actor
from jargon import jargon_in

# Data, not text: what the UI fetches or matches by.
IDENTIFIERS = {
    "id", "metric", "metrics", "dedup_key", "rule", "key", "entity_id", "entity_kind", "kind", "target", "labels",
    "status", "statistic", "unit", "cluster_id", "node_id", "finding_id", "finding_ids", "members", "primary",
    "fix", "resolves", "role", "severity", "panel", "panels", "current", "proposed",
}


def texts(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Yield (path, text) for every string a user reads in an answer."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k not in IDENTIFIERS:
                yield from texts(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from texts(v, f"{path}[{i}]")
    elif isinstance(value, str):
        yield path, value


def leaks(answer: Any, where: str) -> list[str]:
    return [f"{where}{path}: {text[:200]}" for path, text in texts(answer)
            if jargon_in(text)]


def test_the_scan_catches_each_kind() -> None:
    answer = {"title": "ec2.ebs_byte_balance fell to 0%", "sources": ["Headroom's threshold (docs/thresholds/burst.md)"],
              "description": "1-minute points; peaks kept in each 13 min (M4)", "method": "fitted (holt; x)",
              "metric": "ebs.burst_balance", "id": "volume:vol-1:derived.counted_iops"}
    assert [line.split(":")[0] for line in leaks(answer, "")] == [".title", ".sources[0]", ".description", ".method"]


@pytest.fixture()
def owner(advised: Advised) -> tuple[Actor, str]:
    return advised.owner, advised.cid


def _get(actor: Actor, url: str, **params: Any) -> Any:
    response = actor.get(url, params=params)
    assert response.status_code == 200, (url, response.text)
    return response.json()


def test_every_answer_of_the_demo_cluster_is_in_words(owner: tuple[Actor, str]) -> None:
    actor, cid = owner
    found: list[str] = []
    read: list[str] = []
    listed = _get(actor, f"/api/v1/clusters/{cid}/findings")
    assert listed["items"], "the demo cluster has findings"
    found += leaks(listed, "findings")
    for item in listed["items"]:
        fid = item["id"]
        detail = _get(actor, f"/api/v1/findings/{fid}")
        charts = _get(actor, f"/api/v1/findings/{fid}/evidence/series")
        found += leaks(detail, f"finding {item['rule']}") + leaks(charts, f"evidence {item['rule']}")
        read += [t for _, t in texts(detail)] + [t for _, t in texts(charts)]
    overview = _get(actor, f"/api/v1/clusters/{cid}/metrics/overview")
    found += leaks(overview, "overview")
    nodes = _get(actor, f"/api/v1/clusters/{cid}/nodes")
    node_ids = [n["id"] for n in (nodes["items"] if isinstance(nodes, dict) else nodes)]
    assert node_ids
    metrics = _get(actor, f"/api/v1/clusters/{cid}/metrics", node_id=node_ids[0],
                   start=(END - dt.timedelta(hours=3)).isoformat(), end=END.isoformat())
    assert metrics["panels"], "the node has metric panels"
    found += leaks(metrics, "metrics")
    found += leaks(_get(actor, "/api/v1/fleet"), "fleet")
    assert found == []
    # the scan read what it is about: Headroom's own pages cited by title, series named in words
    assert any("How Headroom decides: " in t for t in read)
    assert any(t in ("IOPS counted in 256 KiB units", "Throughput", "Burst balance") for t in read), sorted(set(read))[:50]
