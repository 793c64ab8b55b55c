"""The weekly email's charts: each top finding's evidence against its limit as a PNG related to the HTML part by
its Content-ID, said in words in the text part; sent through the real SMTP server (aiosmtpd) from the demo
cluster's real findings, and checked as a mail client reads the message."""

from __future__ import annotations

import datetime as dt
import io
import re
import uuid
from typing import Any

from digest_seed import verify
from headroom.digest import service
from headroom.digest.charts import describe, finding_chart, peak_use
from headroom.domain.model import EvidenceSeries, Forecast, ReferenceLine
from headroom.domain.snapshot.scenario import load_scenario
from headroom.findings import service as findings
from headroom.sources.demo import service as demo
from helpers import sign_up
from PIL import Image

END = dt.datetime(2026, 11, 9, 7, 45, tzinfo=dt.UTC)  # the last advice run before Monday's send
SEND_AT = dt.datetime(2026, 11, 9, 8, 0, tzinfo=dt.UTC)
T0 = 1_762_000_000 - 1_762_000_000 % 60


def _series(values: list[float | None], *, metric: str = "derived.counted_iops", unit: str = "IOPS",
            lines: tuple[tuple[float, str], ...] = ((3000.0, "IOPS ceiling"),)) -> EvidenceSeries:
    return EvidenceSeries(id=metric, label=metric, unit=unit, entity_kind="volume", entity_id="vol-1",
                          entity_name="vol-1", statistic="avg", step_seconds=60,
                          t=[T0 + 60 * i for i in range(len(values))], values=values, metric=metric,
                          reference_lines=[ReferenceLine(value=v, label=label, unit=unit) for v, label in lines])


def test_the_words_keep_a_one_minute_peak_at_the_ceiling_and_a_balances_time_empty() -> None:
    flat = [1000.0] * 1440
    flat[700] = 3000.0  # one minute at the ceiling in a day
    words = describe(_series(flat), 60)
    assert "peak 3,000 IOPS (100% of 3,000 IOPS: IOPS ceiling)" in words
    assert "0.07% of the time at or above 3,000 IOPS (IOPS ceiling)" in words  # 1 of 1,440 minutes
    assert "over the 24 h to" in words
    balance = [50.0] * 600 + [0.0] * 120 + [None] * 10 + [20.0] * 710
    said = describe(_series(balance, metric="ebs.burst_balance", unit="%", lines=((10.0, "low"),)), 60)
    assert "lowest 0%" in said and "empty for 2 h" in said and "8.39% of the time below 10% (low)" in said  # 120 of 1,430 values
    ahead = Forecast(kind="ceiling", within_seconds=12 * 86400.0, at=dt.datetime(2026, 11, 20, tzinfo=dt.UTC),
                     value=3000.0, unit="IOPS", method="ets")
    assert "projected to reach 3,000 IOPS around 2026-11-20" in describe(_series(flat), 60, [ahead])
    assert finding_chart([_series([None, None])], [], step_seconds=60, cid="x@h") is None


def test_the_words_judge_a_volumes_peak_by_the_ceiling_in_force() -> None:
    # A 350 GiB gp2 volume: 3,000 IOPS while its bucket has credits, its 1,050 IOPS baseline once it is empty
    # (docs/reference/gp2-burst.md#baseline-and-burst). 2,400 IOPS with credits is 80 % of 3,000; 1,200 IOPS on an
    # empty bucket is 114 % of 1,050: the peak use is the latter, as the glance table says, not 2,400 / 3,000.
    chart = _series([2400.0, 1200.0, None], lines=((1050.0, "gp2 baseline"), (3000.0, "gp2 burst"))).model_copy(
        update={"in_force": [3000.0, 1050.0, 1050.0]})
    assert peak_use(chart) == (1200.0 / 1050.0, 1200.0, 1050.0)
    assert "peak 1,200 IOPS (114% of 1,050 IOPS: ceiling in force)" in describe(chart, 60)
    assert peak_use(_series([2400.0])) is None  # a series with no ceiling in force: its lines only


def test_a_chart_is_a_png_of_the_mail_size_with_its_words_as_alt_text() -> None:
    ahead = Forecast(kind="ceiling", within_seconds=40 * 86400.0, at=dt.datetime(2026, 12, 12, tzinfo=dt.UTC),
                     value=3000.0, unit="IOPS", method="ets")
    chart = finding_chart([_series([float(1000 + i) for i in range(1440)])], [ahead], step_seconds=60,
                          cid="finding-1@headroom")
    assert chart is not None and chart.alt == chart.words and chart.cid == "finding-1@headroom"
    image = Image.open(io.BytesIO(chart.png))
    assert image.format == "PNG" and image.size == (840, 285)  # 560 x 190 CSS pixels at 1.5x
    assert len(chart.png) < 80_000


def test_a_chart_drawn_once_is_reused_for_the_same_evidence_and_redrawn_for_new_evidence() -> None:
    values = [float(900 + i % 50) for i in range(1440)]
    first = finding_chart([_series(values)], [], step_seconds=60, cid="finding-a@headroom")
    again = finding_chart([_series(values)], [], step_seconds=60, cid="finding-b@headroom")
    assert first is not None and again is not None
    assert again.png is first.png and again.cid == "finding-b@headroom"  # the same PNG, under this message's id
    moved = finding_chart([_series([*values[1:], 2999.0])], [], step_seconds=60, cid="finding-a@headroom")
    assert moved is not None and moved.png is not first.png and moved.words != first.words


def test_the_weekly_email_carries_each_top_findings_chart_as_a_related_part(
        client: Any, sessions: Any, smtp_server: Any, smtp_settings: Any, job_context: Any) -> None:
    owner = sign_up(client, org="Charts Org", email="owner@charts-org.example.com")
    verify(sessions, owner.session["user"]["id"])
    with sessions() as db:
        cluster = demo.seed_demo_cluster(db, uuid.UUID(owner.org_id))
        demo.ingest_window(db, cluster, load_scenario(demo.default_scenario_path()), END - dt.timedelta(hours=25), END)
        db.commit()
        summary = findings.advise_cluster(db, cluster, now=END)
        db.commit()
        assert summary.opened >= 3

    result = service.send_weekly(job_context(smtp_settings), SEND_AT)
    assert [r["status"] for r in result["orgs"] if r["org_id"] == owner.org_id] == ["sent"]
    (got,) = [m for m in smtp_server.received if "Charts Org" in str(m.message["Subject"])]
    msg = got.message
    # multipart/alternative: the text, then the HTML with its images (multipart/related, RFC 2387)
    assert msg.get_content_type() == "multipart/alternative"
    text_part, related = msg.get_payload()
    assert text_part.get_content_type() == "text/plain" and related.get_content_type() == "multipart/related"
    html_part, *images = related.get_payload()
    assert html_part.get_content_type() == "text/html"
    html = html_part.get_content()
    cids = re.findall(r'src="cid:([^"]+)"', html)
    assert 2 <= len(cids) == len(images) <= service.CHARTS_PER_CLUSTER
    import os

    if out := os.environ.get("HEADROOM_TEST_ARTEFACTS"):  # kept for a person to look at (CI keeps the directory)
        for part in images:
            with open(os.path.join(out, part["Content-ID"].strip("<>").split("@")[0] + ".png"), "wb") as f:
                f.write(part.get_content())
        with open(os.path.join(out, "weekly-email.txt"), "w") as f:
            f.write(text_part.get_content())
    assert {i["Content-ID"].strip("<>") for i in images} == set(cids)
    for part in images:
        assert part.get_content_type() == "image/png" and part.get_content_disposition() == "inline"
        assert Image.open(io.BytesIO(part.get_content())).size == (840, 285)
    # every image has its words as alt text, and the text part says each chart in the same words
    text = text_part.get_content().replace("\r\n", "\n")
    alts = re.findall(r'<img [^>]*src="cid:[^"]+" alt="([^"]+)"', html)
    charts = re.findall(r"^   Chart: (.+)$", text, flags=re.M)
    assert len(alts) == len(charts) == len(cids)
    import html as html_lib

    assert [html_lib.unescape(a) for a in alts] == charts
    assert all(" over the " in c and "UTC: " in c for c in charts)
    # the burst finding's chart is its balance with the time it sat empty
    assert any(c.startswith("ebs.burst_balance") or "empty for" in c or "never empty" in c for c in charts)


def test_the_weekly_email_says_every_value_in_its_unit_rounded_as_the_app_does(
        client: Any, sessions: Any, smtp_server: Any, smtp_settings: Any, job_context: Any) -> None:
    # The demo's gp3 volume at its 125 MiB/s ceiling: the 90 % line is 112.5 MiB/s, which the app shows as
    # 113 MiB/s (Intl.NumberFormat rounds half up; docs/number-formats.md); its fix raises the throughput to 300 MiB/s,
    # and the gp2 volume's fix sets a throughput the volume did not have. The email as sent says each in its unit.
    owner = sign_up(client, org="Units Org", email="owner@units-org.example.com")
    verify(sessions, owner.session["user"]["id"])
    with sessions() as db:
        cluster = demo.seed_demo_cluster(db, uuid.UUID(owner.org_id))
        demo.ingest_window(db, cluster, load_scenario(demo.default_scenario_path()), END - dt.timedelta(hours=25), END)
        db.commit()
        findings.advise_cluster(db, cluster, now=END)
        db.commit()
    service.send_weekly(job_context(smtp_settings), SEND_AT)
    (got,) = [m for m in smtp_server.received if "Units Org" in str(m.message["Subject"])]
    text_part, related = got.message.get_payload()
    text = text_part.get_content().replace("\r\n", "\n")
    html = related.get_payload()[0].get_content()
    # a fix is one line in words, each value in its unit: the first change, and how many more the finding lists
    assert "Fix: Set the provisioned throughput to 300 MiB/s (now 125 MiB/s) on vol-" in text
    assert re.search(r"Fix: Set the volume type to gp3 \(now gp2\) on vol-\w+ \(and \d more changes on the finding page\)",
                     text), text
    assert "at or above 113 MiB/s (90% of ceiling)" in text
    for part in (text, html):
        # no raw Python float ("250.0", "125.0"), no None, and one way to write a percentage
        assert not re.findall(r"(?<![\d.])\d+\.0(?![\d.%])", part.split("Unsubscribe")[0])
        assert "None" not in part and not re.search(r"\d %", part)
        assert "headroom.domain" not in part and "docs/" not in part and "volume.throughput" not in part
