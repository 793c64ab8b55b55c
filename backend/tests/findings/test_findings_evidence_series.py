"""GET /findings/{id}/evidence/series: the points of the series a finding's evidence names, read from the store
over the evidence window (real PostgreSQL, findings the real advisor made of the demo cluster's data)."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from advice_support import END, Advised, DemoCluster
from headroom.findings import service as findings_service
from headroom.domain.model import Evidence, ReferenceLine, SeriesRef
from headroom.findings.models import FindingRecord
from headroom.findings.stored import StoredEvidence
from helpers import sign_up


def _epoch(text: str) -> int:
    return int(dt.datetime.fromisoformat(text).timestamp())


def test_gp2_burst_finding_charts_its_balance_and_iops_against_the_ceilings(
    advised: Advised, make_client: Any, db: Any, clock: Any
) -> None:
    owner, demo = advised.owner, advised.demo
    listed = owner.get(f"/api/v1/clusters/{demo.cluster.id}/findings", params={"rule": "gp2-burst-depletion"})
    finding = listed.json()["items"][0]
    detail = owner.get(f"/api/v1/findings/{finding['id']}").json()
    response = owner.get(f"/api/v1/findings/{finding['id']}/evidence/series")
    assert response.status_code == 200, response.text
    chart = response.json()

    evidence = detail["evidence"]
    start, end, step = _epoch(evidence["window_start"]), _epoch(evidence["window_end"]), evidence["step_seconds"]
    assert (_epoch(chart["window_start"]), _epoch(chart["window_end"]), chart["step_seconds"]) == (start, end, step)
    assert [s["metric"] for s in chart["series"]] == [s["metric"] for s in evidence["series"]]
    by_metric = {s["metric"]: s for s in chart["series"]}
    for series in chart["series"]:
        assert series["found"] is True
        assert series["t"] == list(range(start, end, step))  # one point per step over the whole window
        assert len(series["values"]) == len(series["t"])

    balance = by_metric["ebs.burst_balance"]
    assert balance["unit"] == "Percent"
    points = [v for v in balance["values"] if v is not None]
    assert points and all(0 <= v <= 100 for v in points)
    # the rule found the bucket empty: the chart must show it reaching 0 % (docs/reference/cloudwatch.md#volume-metrics BurstBalance)
    assert min(points) == 0
    assert {(line["label"], line["value"]) for line in balance["reference_lines"]} == {("low", 10.0)}

    iops = by_metric["derived.counted_iops"]
    assert iops["unit"] == "IOPS"
    # gp2 350 GiB: baseline 3 IOPS/GiB = 1,050, burst 3,000 (docs/reference/gp2-burst.md#baseline-and-burst)
    assert {line["value"] for line in iops["reference_lines"]} == {1050.0, 3000.0}
    # the drained volume is held at its baseline: every point within a rounding step of 1,050 IOPS
    assert all(abs(v - 1050) < 1 for v in iops["values"] if v is not None)

    # each series names its volume with the store it serves (the legend of a chart of several entities)
    volume = finding["entity_id"]
    assert all(s["entity_name"].endswith(f" {volume}") and ":20160 " in s["entity_name"] for s in chart["series"])
    if "derived.read_latency_ms" in by_metric:
        # a volume serving I/O has a latency above 0 ms; a minute without data is null, never 0
        latency = by_metric["derived.read_latency_ms"]
        assert latency["label"] == "Read latency"
        for lat, io in zip(latency["values"], iops["values"], strict=True):
            assert lat is None or lat > 0
            if io is not None and io > 0:
                assert lat is not None

    # another org's finding is a 404, like any other finding route
    stranger = sign_up(make_client(), org="Stranger Org")
    assert stranger.get(f"/api/v1/findings/{finding['id']}/evidence/series").status_code == 404
    assert owner.get(f"/api/v1/findings/{uuid.uuid4()}/evidence/series").status_code == 404


def test_a_series_the_store_lacks_is_reported_not_found(client: Any, db: Any) -> None:
    owner = sign_up(client, org="Sparse Org")
    cid = owner.post("/api/v1/clusters", json={"name": "bare", "tikv_version": "v8.5.1"}).json()["id"]
    t0 = dt.datetime(2026, 11, 2, 12, 0, tzinfo=dt.UTC)
    ref = SeriesRef(entity_kind="volume", entity_id="vol-gone", metric="derived.counted_iops", label="IOPS",
                    reference_lines=[ReferenceLine(value=3000, label="ceiling", unit="IOPS")])
    evidence = Evidence(window_start=t0 - dt.timedelta(hours=1), window_end=t0, step_seconds=60, condition="probe",
                        series=[ref])
    with_window = FindingRecord(org_id=uuid.UUID(owner.org_id), cluster_id=uuid.UUID(cid), rule="probe", entity_kind="volume",
                          entity_id="vol-gone", severity="info", title="probe", dedup_key="probe:1",
                          stored_evidence=StoredEvidence(evidence=evidence), first_seen_at=t0, last_seen_at=t0)
    no_window = FindingRecord(org_id=uuid.UUID(owner.org_id), cluster_id=uuid.UUID(cid), rule="probe", entity_kind="volume",
                        entity_id="vol-gone", severity="info", title="probe", dedup_key="probe:2",
                        stored_evidence=StoredEvidence(), first_seen_at=t0, last_seen_at=t0)
    db.add_all([with_window, no_window])
    db.commit()

    chart = owner.get(f"/api/v1/findings/{with_window.id}/evidence/series").json()
    (series,) = chart["series"]
    assert (series["found"], series["t"], series["values"], series["unit"]) == (False, [], [], "IOPS")
    assert series["reference_lines"] == [{"value": 3000.0, "label": "ceiling", "unit": "IOPS", "kind": None, "source": None}]

    missing = owner.get(f"/api/v1/findings/{no_window.id}/evidence/series")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "no_evidence_window"


def test_each_findings_chart_reads_only_its_hosts_series_and_draws_what_the_whole_snapshot_draws(
    demo_cluster: DemoCluster, db: Any
) -> None:
    """The chart reads the series of the hosts its evidence names (build_snapshot hosts_of), and of those only the
    metrics it draws or derives from, not the cluster's hundreds; for every finding the real advisor made of the
    demo cluster, and for each of its series charted alone (a derived view without the balance beside it), the
    points are exactly those read from the whole cluster's snapshot."""
    from types import SimpleNamespace

    from headroom.findings.evidence_series import chart_series, evidence_series, metrics_read
    from headroom.timeseries.snapshots import build_snapshot
    from sqlalchemy import select

    demo = demo_cluster
    findings_service.advise_cluster(db, demo.cluster, now=END)
    rows = list(db.scalars(select(FindingRecord).where(FindingRecord.cluster_id == demo.cluster.id)))
    charted = 0
    read: list[tuple[int, int]] = []
    for row in rows:
        evidence = row.evidence
        if evidence is None or not evidence.series:
            continue
        chart = evidence_series(db, row)
        whole = build_snapshot(db, row.org_id, row.cluster_id, start=chart.window_start, end=chart.window_end,
                               step_seconds=chart.step_seconds)
        named = [(ref.entity_kind, ref.entity_id) for ref in evidence.series]
        part = build_snapshot(db, row.org_id, row.cluster_id, start=chart.window_start, end=chart.window_end,
                              step_seconds=chart.step_seconds, hosts_of=named, metrics=metrics_read(evidence.series))
        assert chart.series == chart_series(whole, evidence.series), row.dedup_key
        for ref in evidence.series:
            alone = SimpleNamespace(id=row.id, org_id=row.org_id, cluster_id=row.cluster_id,
                                    evidence=evidence.model_copy(update={"series": [ref]}))
            assert evidence_series(db, alone).series == chart_series(whole, [ref]), (row.dedup_key, ref.metric)
        assert 0 < len(part.series) <= len(whole.series), row.dedup_key
        read.append((len(part.series), len(whole.series)))
        charted += 1
    assert charted >= 5
    # a finding on one host reads a fraction of the cluster's series (one on several stores reads more)
    assert min(p / w for p, w in read) < 0.2 and sum(p for p, _ in read) < 0.6 * sum(w for _, w in read), read


def test_an_exceeded_check_is_a_yes_no_series_not_a_count_beside_the_queue_length(
    advised: Advised
) -> None:
    # VolumeIOPSExceededCheck / VolumeThroughputExceededCheck read 1 in a minute demand exceeded the volume, else 0
    # (https://docs.aws.amazon.com/ebs/latest/userguide/using_cloudwatch_ebs.html): charted as yes/no ("bool"),
    # never in VolumeQueueLength's unit
    owner, demo = advised.owner, advised.demo
    items = owner.get(f"/api/v1/clusters/{demo.cluster.id}/findings", params={"limit": 200}).json()["items"]
    checked = 0
    for finding in items:
        detail = owner.get(f"/api/v1/findings/{finding['id']}").json()
        metrics = {s["metric"] for s in (detail.get("evidence") or {}).get("series", [])}
        if not metrics & {"ebs.iops_exceeded_check", "ebs.throughput_exceeded_check"}:
            continue
        chart = owner.get(f"/api/v1/findings/{finding['id']}/evidence/series").json()
        for series in chart["series"]:
            if series["metric"].endswith("_exceeded_check"):
                assert series["unit"] == "bool"
                assert series["label"] in ("Asked for more IOPS than the volume provides", "Asked for more throughput than the volume provides")
                assert {v for v in series["values"] if v is not None} <= {0.0, 1.0}
                checked += 1
            if series["metric"] == "ebs.queue_length":
                assert series["unit"] == "Count"
    assert checked > 0
