"""The weekly advisory email, as pure data in and a subject, a plain-text body and an HTML body out.

No database, no clock, no network: the service (headroom.digest.service) gathers a `DigestData` for one
organisation and `build_digest` renders it. Every piece of user text (organisation, cluster and source names,
finding titles, error messages) is HTML-escaped in the HTML part; the text part carries it as it is.

Layout, per cluster (clusters in name order):
- open findings by severity (critical, warning, info), new and resolved in the reporting window;
- the top findings by impact (`rank_findings`) with their fix and, where the finding carries one, its forecast
  (burst-bucket depletion, days to a ceiling);
then the organisation's unhealthy data sources with their last error, and a link to the dashboard.
An organisation with nothing open and every source healthy gets a short "all clear".
"""

from __future__ import annotations

import datetime as dt
import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

SEVERITIES = ("critical", "warning", "info")
SEVERITY_RANK = {s: i for i, s in enumerate(SEVERITIES)}
# Findings listed per cluster: five keeps a cluster's section on one screen of a mail client; the rest are one
# click away on the dashboard (the count of open findings is always shown in full).
DEFAULT_TOP_N = 5
# A source's last error is cut to this many characters in the email (the full text is on the sources page).
ERROR_EXCERPT_CHARS = 300


@dataclass(frozen=True)
class FindingItem:
    """One open finding as the email shows it."""

    title: str
    severity: str
    entity: str
    impact: str = ""
    fix: Sequence[str] = ()
    forecast: Sequence[str] = ()
    headroom_before_pct: float | None = None
    monthly_cost_delta_usd: float | None = None
    url: str | None = None


@dataclass(frozen=True)
class ClusterDigest:
    """One cluster's week: counts and the open findings (all of them; `build_digest` picks the top ones)."""

    name: str
    url: str
    open_by_severity: Mapping[str, int]
    new_this_week: int
    resolved_this_week: int
    open_findings: Sequence[FindingItem] = ()
    # What the advisor could not judge, e.g. an instance whose type's EBS limits are unknown (inventory.limits).
    limit_notes: Sequence[str] = ()

    @property
    def open_total(self) -> int:
        return sum(self.open_by_severity.get(s, 0) for s in SEVERITIES)


@dataclass(frozen=True)
class SourceProblem:
    """An unhealthy data source: kind ("AWS connection", "Prometheus source"), name and its last error."""

    kind: str
    name: str
    status: str
    last_error: str | None
    last_error_at: dt.datetime | None
    consecutive_failures: int
    last_success_at: dt.datetime | None = None


@dataclass(frozen=True)
class DigestData:
    """Everything one organisation's digest says, for the reporting window [period_start, period_end)."""

    org_name: str
    week_start: dt.date
    period_start: dt.datetime
    period_end: dt.datetime
    dashboard_url: str
    clusters: Sequence[ClusterDigest] = ()
    source_problems: Sequence[SourceProblem] = ()
    settings_url: str | None = None


@dataclass(frozen=True)
class Digest:
    subject: str
    text: str
    html: str
    all_clear: bool = False
    totals: dict[str, int] = field(default_factory=dict)


def iso_week_start(day: dt.date) -> dt.date:
    """Return the Monday of `day`'s ISO week (the digest's idempotency key)."""
    return day - dt.timedelta(days=day.isoweekday() - 1)


def rank_findings(items: Sequence[FindingItem]) -> list[FindingItem]:
    """Order findings by impact: severity, then least headroom left, then largest monthly saving, then title."""

    def key(item: FindingItem) -> tuple[int, float, float, str]:
        headroom = item.headroom_before_pct if item.headroom_before_pct is not None else float("inf")
        # A negative delta is a saving; a bigger saving sorts first. No cost figure sorts after any saving.
        saving = -item.monthly_cost_delta_usd if item.monthly_cost_delta_usd is not None else float("-inf")
        return (SEVERITY_RANK.get(item.severity, len(SEVERITIES)), headroom, -saving, item.title)

    return sorted(items, key=key)


def _totals(data: DigestData) -> dict[str, int]:
    totals = {s: 0 for s in SEVERITIES} | {"new": 0, "resolved": 0}
    for cluster in data.clusters:
        for s in SEVERITIES:
            totals[s] += cluster.open_by_severity.get(s, 0)
        totals["new"] += cluster.new_this_week
        totals["resolved"] += cluster.resolved_this_week
    return totals


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def _severity_counts(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{counts.get(s, 0):,} {s}" for s in SEVERITIES)


def _when(at: dt.datetime | None) -> str:
    return at.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC") if at is not None else "never"


def _excerpt(text: str | None) -> str:
    flat = " ".join((text or "no error recorded").split())
    return flat if len(flat) <= ERROR_EXCERPT_CHARS else flat[: ERROR_EXCERPT_CHARS - 1] + "…"


def _subject(data: DigestData, totals: Mapping[str, int], all_clear: bool) -> str:
    week = f"week of {data.week_start.isoformat()}"
    if all_clear:
        return f"Headroom weekly advisory for {data.org_name}: all clear ({week})"
    parts = []
    if totals["critical"]:
        parts.append(f"{totals['critical']:,} critical")
    if totals["warning"]:
        parts.append(f"{totals['warning']:,} warning")
    if not parts:
        parts.append(f"{totals['info']:,} info" if totals["info"] else "0 open")
    problems = len(data.source_problems)
    if problems:
        parts.append(_plural(problems, "source problem"))
    return f"Headroom weekly advisory for {data.org_name}: {', '.join(parts)} ({week})"


def _one_line(text: str) -> str:
    # A header is one line: user text with a newline must not add headers (or break the message).
    return " ".join(text.split())


def _source_line(p: SourceProblem) -> str:
    return (
        f'{p.kind} "{p.name}" is {p.status} ({_plural(p.consecutive_failures, "failure")} in a row; '
        f"last success {_when(p.last_success_at)}); last error at {_when(p.last_error_at)}: {_excerpt(p.last_error)}"
    )


def _text(data: DigestData, totals: Mapping[str, int], all_clear: bool, top_n: int) -> str:
    period = f"{_when(data.period_start)} to {_when(data.period_end)}"
    lines = [f"Headroom weekly advisory for {data.org_name}, week of {data.week_start.isoformat()}", ""]
    if all_clear:
        lines += [
            f"All clear: no open findings on {_plural(len(data.clusters), 'cluster')} and every data source is healthy.",
            f"Resolved in the last 7 days ({period}): {totals['resolved']:,}.",
            "",
            f"Dashboard: {data.dashboard_url}",
        ]
        return "\n".join(lines) + "\n"
    lines.append(
        f"Open findings: {_severity_counts(totals)}. In the last 7 days ({period}): "
        f"{totals['new']:,} new, {totals['resolved']:,} resolved."
    )
    for cluster in sorted(data.clusters, key=lambda c: c.name):
        lines += ["", f"== Cluster {cluster.name} =="]
        lines.append(
            f"Open: {_severity_counts(cluster.open_by_severity)}; {cluster.new_this_week:,} new, "
            f"{cluster.resolved_this_week:,} resolved this week."
        )
        if cluster.open_total == 0:
            lines.append("All clear on this cluster.")
        top = rank_findings(cluster.open_findings)[:top_n]
        if top:
            lines.append("Top findings by impact:")
        for i, item in enumerate(top, 1):
            lines.append(f"{i}. [{item.severity.upper()}] {item.title}")
            lines.append(f"   On: {item.entity}")
            if item.impact:
                lines.append(f"   Impact: {item.impact}")
            for fix in item.fix:
                lines.append(f"   Fix: {fix}")
            for forecast in item.forecast:
                lines.append(f"   Forecast: {forecast}")
            if item.url:
                lines.append(f"   Details: {item.url}")
        more = cluster.open_total - len(top)
        if top and more > 0:
            lines.append(f"... and {more:,} more open: {cluster.url}")
        if cluster.limit_notes:
            lines.append("Not judged:")
            lines += [f"- {note}" for note in cluster.limit_notes]
        lines.append(f"Cluster page: {cluster.url}")
    if data.source_problems:
        lines += ["", "== Data source problems =="]
        lines += [f"- {_source_line(p)}" for p in data.source_problems]
    lines += ["", f"Dashboard: {data.dashboard_url}"]
    if data.settings_url:
        lines.append(f"Digest settings: {data.settings_url}")
    return "\n".join(lines) + "\n"


_SEVERITY_COLOUR = {"critical": "#b42318", "warning": "#b54708", "info": "#175cd3"}


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _a(url: str, label: str) -> str:
    return f'<a href="{_e(url)}">{_e(label)}</a>'


def _html(data: DigestData, totals: Mapping[str, int], all_clear: bool, top_n: int) -> str:
    period = f"{_when(data.period_start)} to {_when(data.period_end)}"
    out = [
        '<!DOCTYPE html><html><head><meta charset="utf-8">',
        f"<title>{_e('Headroom weekly advisory for ' + data.org_name)}</title></head>",
        '<body style="font-family:Arial,Helvetica,sans-serif;color:#101828;max-width:680px">',
        f"<h1 style=\"font-size:20px\">Headroom weekly advisory for {_e(data.org_name)}</h1>",
        f"<p>Week of {_e(data.week_start.isoformat())}</p>",
    ]
    if all_clear:
        out += [
            f"<p><strong>All clear:</strong> no open findings on {_e(_plural(len(data.clusters), 'cluster'))} "
            "and every data source is healthy.</p>",
            f"<p>Resolved in the last 7 days ({_e(period)}): {totals['resolved']:,}.</p>",
            f"<p>{_a(data.dashboard_url, 'Open the dashboard')}</p>",
            "</body></html>",
        ]
        return "\n".join(out) + "\n"
    out.append(
        f"<p>Open findings: {_e(_severity_counts(totals))}. In the last 7 days ({_e(period)}): "
        f"{totals['new']:,} new, {totals['resolved']:,} resolved.</p>"
    )
    for cluster in sorted(data.clusters, key=lambda c: c.name):
        out.append(f'<h2 style="font-size:17px">Cluster {_a(cluster.url, cluster.name)}</h2>')
        out.append(
            f"<p>Open: {_e(_severity_counts(cluster.open_by_severity))}; {cluster.new_this_week:,} new, "
            f"{cluster.resolved_this_week:,} resolved this week.</p>"
        )
        if cluster.open_total == 0:
            out.append("<p>All clear on this cluster.</p>")
        top = rank_findings(cluster.open_findings)[:top_n]
        if top:
            out.append("<ol>")
        for item in top:
            colour = _SEVERITY_COLOUR.get(item.severity, "#101828")
            title = _a(item.url, item.title) if item.url else _e(item.title)
            parts = [
                f'<li><strong style="color:{colour}">{_e(item.severity.upper())}</strong> {title}<br>',
                f"On: {_e(item.entity)}",
            ]
            if item.impact:
                parts.append(f"<br>Impact: {_e(item.impact)}")
            parts += [f"<br>Fix: {_e(fix)}" for fix in item.fix]
            parts += [f"<br>Forecast: {_e(fc)}" for fc in item.forecast]
            parts.append("</li>")
            out.append("".join(parts))
        if top:
            out.append("</ol>")
        more = cluster.open_total - len(top)
        if top and more > 0:
            out.append(f"<p>… and {more:,} more open on the {_a(cluster.url, 'cluster page')}.</p>")
        if cluster.limit_notes:
            out.append("<p>Not judged:</p><ul>")
            out += [f"<li>{_e(note)}</li>" for note in cluster.limit_notes]
            out.append("</ul>")
    if data.source_problems:
        out.append('<h2 style="font-size:17px">Data source problems</h2><ul>')
        out += [f"<li>{_e(_source_line(p))}</li>" for p in data.source_problems]
        out.append("</ul>")
    out.append(f"<p>{_a(data.dashboard_url, 'Open the dashboard')}</p>")
    if data.settings_url:
        out.append(f'<p style="font-size:12px;color:#667085">{_a(data.settings_url, "Digest settings")}</p>')
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def build_digest(data: DigestData, *, top_n: int = DEFAULT_TOP_N) -> Digest:
    """Render one organisation's weekly digest: subject, plain text and HTML."""
    totals = _totals(data)
    open_total = sum(totals[s] for s in SEVERITIES)
    all_clear = open_total == 0 and not data.source_problems and not any(c.limit_notes for c in data.clusters)
    return Digest(
        subject=_one_line(_subject(data, totals, all_clear)),
        text=_text(data, totals, all_clear, top_n),
        html=_html(data, totals, all_clear, top_n),
        all_clear=all_clear,
        totals=totals,
    )
