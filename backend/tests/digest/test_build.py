"""The digest builder (pure): exact counts, ordering, escaping of user text in the HTML, the short all-clear."""

from __future__ import annotations

import datetime as dt
import html
import re

from headroom.digest.build import (
    CeilingAhead,
    ClusterDigest,
    DigestData,
    FindingItem,
    SourceProblem,
    build_digest,
    for_recipient,
    iso_week_start,
    rank_findings,
)
from headroom.domain.model import Forecast

NOW = dt.datetime(2026, 11, 2, 8, 0, tzinfo=dt.UTC)  # a Monday, 08:00 UTC
_empties_in_35_min = Forecast(kind="burst_empty", within_seconds=35 * 60, balance_pct=40.0, unit="IOPS",
                              method="test")


def _data(clusters: list[ClusterDigest], problems: list[SourceProblem] | None = None, org: str = "Acme") -> DigestData:
    return DigestData(org_name=org, week_start=dt.date(2026, 11, 2), period_start=NOW - dt.timedelta(days=7),
                      period_end=NOW, dashboard_url="https://h.example/clusters", clusters=clusters,
                      source_problems=problems or [], settings_url="https://h.example/settings/digest")


def _item(title: str, severity: str, headroom: float | None = None, delta: float | None = None) -> FindingItem:
    return FindingItem(title=title, severity=severity, entity="volume vol-1", headroom_before_pct=headroom,
                       monthly_cost_delta_usd=delta)


def test_iso_week_start_is_the_monday() -> None:
    assert iso_week_start(dt.date(2026, 11, 2)) == dt.date(2026, 11, 2)  # Monday
    assert iso_week_start(dt.date(2026, 11, 8)) == dt.date(2026, 11, 2)  # Sunday of the same ISO week
    assert iso_week_start(dt.date(2027, 1, 1)) == dt.date(2026, 12, 28)  # a Friday; its week began in 2026


def test_rank_findings_severity_then_least_headroom_then_saving_then_title() -> None:
    items = [
        _item("info big saving", "info", delta=-500.0),
        _item("warn 40% left", "warning", headroom=40.0),
        _item("crit no figures", "critical"),
        _item("crit 5% left", "critical", headroom=5.0),
        _item("warn 10% left", "warning", headroom=10.0),
        _item("warn b saving 20", "warning", delta=-20.0),
        _item("warn a saving 90", "warning", delta=-90.0),
    ]
    assert [i.title for i in rank_findings(items)] == [
        "crit 5% left", "crit no figures", "warn 10% left", "warn 40% left", "warn a saving 90",
        "warn b saving 20", "info big saving",
    ]


def test_no_findings_and_healthy_sources_is_a_short_all_clear() -> None:
    quiet = ClusterDigest(name="prod", url="https://h.example/clusters/1", open_by_severity={}, new_this_week=0,
                          resolved_this_week=2)
    digest = build_digest(_data([quiet]))
    assert digest.all_clear
    assert digest.subject == "Headroom weekly advisory for Acme: all clear (week of 2026-11-02)"
    assert digest.text == (
        "Headroom weekly advisory for Acme, week of 2026-11-02\n"
        "\n"
        "All clear: no open findings on 1 cluster and every data source is healthy.\n"
        "Resolved in the last 7 days (2026-10-26 08:00 UTC to 2026-11-02 08:00 UTC): 2.\n"
        "\n"
        "Dashboard: https://h.example/clusters\n"
        "\n"
        "You get this email because you are a member of Acme in Headroom with a verified address, in a role the "
        "organisation sends its weekly advisory to (Mondays 08:00 UTC).\n"
        "Digest settings: https://h.example/settings/digest\n"
    )
    assert "All clear:" in digest.html and "prod" not in digest.html
    assert "<li" not in digest.html and "data-finding-card" not in digest.html


def test_counts_top_findings_fix_forecast_and_sources() -> None:
    findings = [_item(f"warning {n}", "warning", headroom=float(n)) for n in range(1, 6)] + [
        FindingItem(title="gp2 burst bucket drains on vol-9", severity="critical", entity="volume vol-9",
                    impact="6,000 IOPS sustained instead of 3,000. The bucket refills overnight.",
                    fix=("Set the volume type to gp3 (now gp2) on vol-9", "Set the provisioned IOPS to 6,000 IOPS on vol-9"),
                    forecast=(_empties_in_35_min,),
                    url="https://h.example/clusters/1/findings/f9"),
    ]
    prod = ClusterDigest(name="prod", url="https://h.example/clusters/1",
                         open_by_severity={"critical": 1, "warning": 5, "info": 1}, new_this_week=3,
                         resolved_this_week=1, open_findings=findings + [_item("an info", "info")], savings_usd=12.345,
                         nearest=CeilingAhead(what="Volume vol-9 IOPS", ceiling=3000.0, unit="IOPS", days=12.4,
                                              hits_at=dt.datetime(2026, 11, 14, 9, tzinfo=dt.UTC)))
    staging = ClusterDigest(name="staging", url="https://h.example/clusters/2", open_by_severity={},
                            new_this_week=0, resolved_this_week=4, savings_usd=0.0,
                            nearest=CeilingAhead(what="Store tikv-2 disk space", ceiling=500.0, unit="GiB", days=30.0))
    problem = SourceProblem(kind="Prometheus source", name="prom-a", status="failing",
                            last_error="connection refused", last_error_at=NOW - dt.timedelta(hours=1),
                            consecutive_failures=3, last_success_at=None)
    digest = build_digest(_data([staging, prod], [problem]))

    assert not digest.all_clear
    assert digest.totals == {"critical": 1, "warning": 5, "info": 1, "new": 3, "resolved": 5}
    assert digest.subject == "Headroom weekly advisory for Acme: 1 critical, 5 warning, 1 source problem (week of 2026-11-02)"
    text = digest.text
    # the summary first: counts, savings (each cluster's to the cent, then added, as the fleet page adds them),
    # the nearest ceiling of any cluster with its cluster and date
    assert text.startswith(
        "Headroom weekly advisory for Acme, week of 2026-11-02\n\nTHIS WEEK\n"
        "Open findings: 1 critical, 5 warning, 1 info. In the last 7 days (2026-10-26 08:00 UTC to "
        "2026-11-02 08:00 UTC): 3 new, 5 resolved.\n"
        "Savings available: $12.35 a month from the open findings' fixes.\n"
        "Nearest ceiling: Volume vol-9 IOPS on prod: the 3,000 IOPS ceiling in 12 days, around 2026-11-14.\n"
        "Data sources: 1 source failing: the findings may be out of date.\n")
    assert digest.summary is not None and digest.summary.savings_usd == 12.35
    # clusters in name order; the top five by impact, the critical one first, with its fix and forecast
    assert text.index("== Cluster prod ==") < text.index("== Cluster staging ==")
    assert (
        "1. [CRITICAL] gp2 burst bucket drains on vol-9\n"
        "   On: prod · volume vol-9\n"
        "   Impact: 6,000 IOPS sustained instead of 3,000.\n"
        "   Fix: Set the volume type to gp3 (now gp2) on vol-9 (and 1 more change on the finding page)\n"
        "   Forecast: the 40% balance runs out within a day\n"
        "   Open the finding: https://h.example/clusters/1/findings/f9\n"
        "2. [WARNING] warning 1\n"
    ) in text
    assert "5. [WARNING] warning 4\n" in text and "warning 5" not in text and "an info" not in text
    assert "... and 2 more open: https://h.example/clusters/1\n" in text
    assert "Open: 0 critical, 0 warning, 0 info; 0 new, 4 resolved this week.\nAll clear on this cluster.\n" in text
    assert ('- Prometheus source "prom-a" is failing (3 failures in a row; last success never); last error at '
            "2026-11-02 07:00 UTC: connection refused\n") in text
    assert text.endswith("Dashboard: https://h.example/clusters\n\nYou get this email because you are a member of "
                         "Acme in Headroom with a verified address, in a role the organisation sends its weekly "
                         "advisory to (Mondays 08:00 UTC).\nDigest settings: https://h.example/settings/digest\n")
    html_doc = digest.html
    assert html_doc.count("data-finding-card") == 5 and html_doc.count("<li") == 1  # five cards, one source problem
    assert '<div class="stat-number n-critical" data-count="critical"' in html_doc
    # every rule is inlined: table cells carry their style, only the dark-mode and narrow-screen block stays
    assert re.search(r'<td class="card-cell" style="[^"]*padding: 14px 16px', html_doc)
    assert html_doc.count("<style") == 1 and "prefers-color-scheme: dark" in html_doc
    assert '<meta name="color-scheme" content="light dark">' in html_doc
    assert '<meta name="supported-color-schemes" content="light dark">' in html_doc
    assert "max-width: 600px" in html_doc and "sans-serif" in html_doc
    assert ">$12.35 a month from the open findings' fixes<" in html_doc
    assert "Volume vol-9 IOPS on prod: the 3,000 IOPS ceiling in 12 days, around 2026-11-14" in html_doc


def test_user_text_is_escaped_in_html_and_kept_out_of_headers() -> None:
    evil = '<script>alert("x")</script>'
    cluster = ClusterDigest(name=f"c{evil}", url='https://h.example/clusters/1?"onmouseover=1',
                            open_by_severity={"warning": 1}, new_this_week=1, resolved_this_week=0,
                            open_findings=[FindingItem(title=f"t{evil}", severity="warning", entity=f"volume {evil}",
                                                       impact=f"i{evil}", fix=(f"f{evil}",))])
    problem = SourceProblem(kind="AWS connection", name=f"n{evil}", status="failing", last_error=f"e{evil}",
                            last_error_at=None, consecutive_failures=4)
    digest = build_digest(_data([cluster], [problem], org="Evil\r\nBcc: victim@example.com <b>"))
    assert "<script>" not in digest.html
    # cluster (heading and card), title, entity, impact, fix, source, error; the CSS inliner writes the document
    # back as an HTML serializer does (quotes are text in a text node, &quot; only inside attributes)
    assert digest.html.count('&lt;script&gt;alert("x")&lt;/script&gt;') == 8
    assert 'href="https://h.example/clusters/1?&quot;onmouseover=1"' in digest.html
    assert "<b>" not in digest.html and "victim@example.com &lt;b&gt;" in digest.html
    assert "\n" not in digest.subject and "\r" not in digest.subject
    assert digest.subject.startswith("Headroom weekly advisory for Evil Bcc: victim@example.com <b>: 1 warning")
    assert f"1. [WARNING] t{evil}\n" in digest.text  # the text part carries it as written


def test_long_errors_are_cut_to_an_excerpt() -> None:
    problem = SourceProblem(kind="AWS connection", name="a", status="failing", last_error="x" * 1000,
                            last_error_at=None, consecutive_failures=1)
    digest = build_digest(_data([], [problem]))
    line = next(line for line in digest.text.splitlines() if line.startswith("- AWS connection"))
    assert line.endswith(": " + "x" * 299 + "…")
    assert "1 failure in a row" in line


def test_the_forecast_line_is_read_from_the_typed_forecast_and_user_text_is_escaped() -> None:
    # a gp2 bucket of 350 GiB at 40 %: 0.4 × 5.4e6 credits / (2,500 − 1,050) IOPS = 1,490 s (docs/reference/gp2-burst.md#the-credit-bucket)
    empties = Forecast(kind="burst_empty", within_seconds=1490.0, at=NOW + dt.timedelta(seconds=1490),
                       earliest=NOW + dt.timedelta(minutes=17), latest=None, value=1050.0, unit="IOPS",
                       demand=2500.0, balance_pct=40.0, method="physics", source="headroom.domain.forecast.burst")
    refill = Forecast(kind="refill", within_seconds=7200.0, unit="IOPS", demand=300.0, method="physics")
    steady = Forecast(kind="burst_empty", within_seconds=None, value=1050.0, unit="IOPS", demand=498.0,
                      balance_pct=80.0, method="physics", source="headroom.domain.forecast.burst")
    ceiling = Forecast(kind="ceiling", within_seconds=9 * 86400.0, label="sustained IOPS <ceiling>", value=3000.0,
                       unit="IOPS", method="ets-daily", source="headroom.domain.forecast.growth")
    item = FindingItem(title='gp2 <script>alert("x")</script> drains', severity="critical", entity="volume vol-9",
                       forecast=(empties, refill, steady, ceiling))
    cluster = ClusterDigest(name="prod", url="https://h.example/clusters/1", open_by_severity={"critical": 1},
                            new_this_week=1, resolved_this_week=0, open_findings=[item])
    digest = build_digest(_data([cluster]))

    lines = [
        # a weekly email is read days later: no clock time, no minutes (the alert carried those)
        "at 2,500 IOPS the 40% balance runs out within a day, then at most 1,050 IOPS",
        "refill at the off-peak 300 IOPS: about 2 h",
        "at the recent 498 IOPS (<= the 1,050 IOPS baseline) the 80% balance is not draining",
        "sustained IOPS <ceiling> (3,000 IOPS) reached in about 9 days at the current growth",
    ]
    assert "".join(f"   Forecast: {line}\n" for line in lines) in digest.text
    html_lines = re.findall(r'<p class="note"[^>]*>Forecast: ([^<]*)</p>', digest.html)
    assert html_lines == [html.escape(line, quote=False) for line in lines]
    assert "headroom.domain" not in digest.text + digest.html  # no module path reaches a reader
    # the sentence follows the typed fields, not a stored text
    sooner = build_digest(_data([ClusterDigest(
        name="prod", url="https://h.example/clusters/1", open_by_severity={"critical": 1}, new_this_week=1,
        resolved_this_week=0, open_findings=[FindingItem(title="t", severity="critical", entity="volume vol-9",
                                                         forecast=(empties.model_copy(update={"within_seconds": 0.0}),))],
    )]))
    assert "   Forecast: the bucket was empty at the last check: serving at most the 1,050 IOPS baseline\n" in sooner.text
    later = build_digest(_data([ClusterDigest(
        name="prod", url="https://h.example/clusters/1", open_by_severity={"critical": 1}, new_this_week=1,
        resolved_this_week=0, open_findings=[FindingItem(title="t", severity="critical", entity="volume vol-9",
                                                         forecast=(empties.model_copy(update={"within_seconds": 3.2 * 86400}),))],
    )]))
    assert "the 40% balance runs out in about 3 days, then at most 1,050 IOPS\n" in later.text
    assert " min" not in later.text + digest.text

    # the title is escaped in the HTML (and kept as written in the text); so is text the forecast carries
    assert "<script>" not in digest.html and "<ceiling>" not in digest.html
    assert 'gp2 &lt;script&gt;alert("x")&lt;/script&gt; drains' in digest.html
    assert "(&lt;= the 1,050 IOPS baseline)" in digest.html
    assert '1. [CRITICAL] gp2 <script>alert("x")</script> drains\n' in digest.text


def test_a_recipients_digest_has_their_clusters_and_their_links() -> None:
    def cluster(name: str, cid: str) -> ClusterDigest:
        return ClusterDigest(name=name, url=f"https://h.example/clusters/{cid}", id=cid,
                             open_by_severity={"critical": 0, "warning": 1, "info": 0}, new_this_week=1,
                             resolved_this_week=0, open_findings=[_item(f"{name} near its IOPS ceiling", "warning")])

    data = _data([cluster("east", "c-east"), cluster("west", "c-west")])
    links = {"unsubscribe_url": "https://h.example/unsubscribe?token=a.b&x=1",
             "preferences_url": "https://h.example/settings/digest"}
    west = build_digest(for_recipient(data, cluster_ids=["c-west"], **links))
    assert "== Cluster west ==" in west.text and "east" not in west.text
    assert west.totals["warning"] == 1
    assert "Unsubscribe from this weekly email: https://h.example/unsubscribe?token=a.b&x=1\n" in west.text
    assert re.search(r'<a href="https://h\.example/unsubscribe\?token=a\.b&amp;x=1" style="[^"]*">Unsubscribe</a>', west.html)
    every = build_digest(for_recipient(data, cluster_ids=None, **links))
    assert every.totals["warning"] == 2
    nothing = build_digest(for_recipient(data, cluster_ids=[], **links))
    assert nothing.all_clear and "Unsubscribe from this weekly email:" in nothing.text
    assert "Unsubscribe" not in build_digest(data).text  # the org-wide preview has no recipient


def test_worse_this_week_and_the_savings_on_offer_are_said_when_there_are_some() -> None:
    import dataclasses

    cluster = ClusterDigest(name="prod", url="https://headroom.example.com/clusters/c1",
                            open_by_severity={"critical": 1, "warning": 0, "info": 0}, new_this_week=0,
                            resolved_this_week=0, worsened_this_week=2, savings_usd=1234.4)
    data = DigestData(org_name="Acme", week_start=dt.date(2026, 11, 2),
                      period_start=dt.datetime(2026, 10, 26, 8, tzinfo=dt.UTC),
                      period_end=dt.datetime(2026, 11, 2, 8, tzinfo=dt.UTC),
                      dashboard_url="https://headroom.example.com/clusters", clusters=[cluster])
    digest = build_digest(data)
    assert "Worse this week (severity rose): 2.\n" in digest.text
    # dollars as everywhere (docs/number-formats.md): two decimals
    assert "Savings the open findings' fixes offer: $1,234.40 a month.\n" in digest.text
    assert "<strong>$1,234.40</strong> a month" in digest.html
    assert "Savings available: $1,234.40 a month from the open findings' fixes.\n" in digest.text
    quiet = build_digest(dataclasses.replace(data, clusters=[dataclasses.replace(cluster, worsened_this_week=0,
                                                                                savings_usd=0.0)]))
    assert "Worse this week" not in quiet.text and "Savings the open" not in quiet.text


def test_the_emails_one_style_block_is_allowed_by_the_dashboards_policy_by_its_hash() -> None:
    # The preview frame inherits the dashboard's CSP (a srcdoc document); its one <style> block (dark mode, narrow
    # screens) is allowed by its SHA-256 and nothing else is: a changed block needs the new hash in the policy.
    import base64
    import hashlib

    from headroom.platform.security_headers import APP_CSP_DIRECTIVES, WEEKLY_EMAIL_STYLE_HASH

    cluster = ClusterDigest(name="prod", url="https://h.example/clusters/1", open_by_severity={"warning": 1},
                            new_this_week=1, resolved_this_week=0, open_findings=[_item("w", "warning")])
    for digest in (build_digest(_data([cluster])), build_digest(_data([]))):
        (block,) = re.findall(r'<style data-css-inline="keep">(.*?)</style>', digest.html, flags=re.S)
        assert "<style" not in digest.html.replace('<style data-css-inline="keep">', "")
        found = "'sha256-" + base64.b64encode(hashlib.sha256(block.encode()).digest()).decode() + "'"
        assert found == WEEKLY_EMAIL_STYLE_HASH
    assert WEEKLY_EMAIL_STYLE_HASH in dict(APP_CSP_DIRECTIVES)["style-src"]
