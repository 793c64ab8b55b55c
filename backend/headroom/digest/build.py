"""The weekly advisory email, as pure data in and a subject, a plain-text body and an HTML body out.

No database, no clock, no network: the service (headroom.digest.service) gathers a `DigestData` for one
organisation and `build_digest` renders it with the Jinja2 templates in `templates/` (`digest.txt.j2`,
`digest.html.j2`, and `_lines.j2` for the sentences both say). The HTML is autoescaped: every piece of user
text (organisation, cluster and source names, finding titles, error messages) is HTML-escaped there; the text
part carries it as it is.

Layout (docs/digest.md "Layout"): a summary (`summarise`: open findings by severity, savings available, the
nearest ceiling), then per cluster (clusters in name order):
- open findings by severity (critical, warning, info), new and resolved in the reporting window;
- a card per top finding by impact (`rank_findings`) with its impact in one sentence, its fix and, where the finding carries them, its typed
  forecasts (`headroom.domain.model.Forecast`: burst-bucket depletion and refill, days to a ceiling); findings
  that share a cause (`headroom.domain.model.FindingGroup`) are one entry (`collapse_groups`): the group's
  highest-ranked finding with the primary fix's what-if ("resolves 2 of 2") and the related findings under it;
then the organisation's unhealthy data sources with their last error, a link to the dashboard and a footer (why
the recipient gets it, preferences, unsubscribe). The HTML's styles are inlined (`inline_css`).
An organisation with nothing open and every source healthy gets a short "all clear".
"""

from __future__ import annotations

import base64
import datetime as dt
import html
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import css_inline
from jinja2 import Environment, PackageLoader, StrictUndefined, Template
from markupsafe import Markup

from headroom.domain.model import SEVERITIES, Forecast, severity_rank
from headroom.domain.units import format_days, format_duration_words, format_quantity, round_half_up

# Findings listed per cluster: five keeps a cluster's section on one screen of a mail client; the rest are one
# click away on the dashboard (the count of open findings is always shown in full).
DEFAULT_TOP_N = 5
# A source's last error is cut to this many characters in the email (the full text is on the sources page).
ERROR_EXCERPT_CHARS = 300


@dataclass(frozen=True)
class ChartImage:
    """A finding's evidence chart (headroom.digest.charts): its Content-ID (no angle brackets), the PNG, and what it
    shows in words (the text part says it, and it is the image's alt text)."""

    cid: str
    png: bytes
    alt: str
    words: str


@dataclass(frozen=True)
class FindingItem:
    """One open finding as the email shows it."""

    title: str
    severity: str
    entity: str
    impact: str = ""
    fix: Sequence[str] = ()
    forecast: Sequence[Forecast] = ()
    headroom_before_pct: float | None = None
    monthly_cost_delta_usd: float | None = None
    url: str | None = None
    # The group of findings that share its cause (None: it stands alone): its id, cause and what-if summary;
    # `related` are the other open members' titles, filled in by `collapse_groups`.
    group_id: str | None = None
    group_cause: str = ""
    group_summary: str = ""
    related: Sequence[str] = ()
    chart: ChartImage | None = None


@dataclass(frozen=True)
class CeilingAhead:
    """A cluster's nearest projected ceiling (headroom.projections.service.nearest_by_cluster): what reaches it
    ("Volume vol-0abc IOPS"), the ceiling and its unit, and in how many days (0: reached already)."""

    what: str
    ceiling: float
    unit: str
    days: float
    days_low: float | None = None
    days_high: float | None = None
    hits_at: dt.datetime | None = None


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
    # The nearest projected ceilings, in days (headroom.projections.service.nearest_ceilings).
    next_ceilings: Sequence[str] = ()
    # The week's changes with their measured effect (headroom.changes.service.week_lines).
    changes: Sequence[str] = ()
    # Findings whose severity rose this week, and the monthly savings the open findings' fixes offer.
    worsened_this_week: int = 0
    savings_usd: float = 0.0
    # The cluster's id, which a recipient's preferences choose clusters by (`for_recipient`).
    id: str = ""
    nearest: CeilingAhead | None = None

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
    # One recipient's links (`for_recipient`): the page that unsubscribes them in one click, and their preferences.
    unsubscribe_url: str | None = None
    preferences_url: str | None = None


@dataclass(frozen=True)
class Summary:
    """The top of the email: open findings by severity, the monthly savings the fixes offer, the nearest ceiling
    (with its cluster's name), over the clusters the email covers."""

    totals: Mapping[str, int]
    savings_usd: float
    nearest: CeilingAhead | None
    nearest_cluster: str = ""


def summarise(data: DigestData) -> Summary:
    """Sum the clusters' figures the way the fleet page does: savings per cluster rounded to the cent, then added;
    the nearest ceiling is the fewest days of any cluster's nearest (ties: cluster name)."""
    clusters = sorted(data.clusters, key=lambda c: c.name)
    ahead = [(c.nearest.days, c.name, c.nearest) for c in clusters if c.nearest is not None]
    nearest = min(ahead, key=lambda x: (x[0], x[1])) if ahead else None
    return Summary(totals=_totals(data), savings_usd=round(sum(round(c.savings_usd, 2) for c in clusters), 2),
                   nearest=nearest[2] if nearest else None, nearest_cluster=nearest[1] if nearest else "")


@dataclass(frozen=True)
class Digest:
    subject: str
    text: str
    html: str
    all_clear: bool = False
    totals: dict[str, int] = field(default_factory=dict)
    # The charts the HTML shows (src="cid:<cid>"), to be attached as related parts; the text part says them in words.
    images: tuple[ChartImage, ...] = ()
    summary: Summary | None = None

    def html_inline(self) -> str:
        """The HTML with each chart inline (a data: URI), for a browser preview that has no message around it."""
        out = self.html
        for image in self.images:
            out = out.replace(f'src="cid:{image.cid}"', f'src="data:image/png;base64,{base64.b64encode(image.png).decode()}"')
        return out


def for_recipient(
    data: DigestData, *, cluster_ids: Sequence[str] | None, unsubscribe_url: str, preferences_url: str
) -> DigestData:
    """Return one recipient's digest: only the clusters they chose (None: every cluster), with their links."""
    chosen = None if cluster_ids is None else set(cluster_ids)
    clusters = [c for c in data.clusters if chosen is None or c.id in chosen]
    return replace(data, clusters=clusters, unsubscribe_url=unsubscribe_url, preferences_url=preferences_url)


def iso_week_start(day: dt.date) -> dt.date:
    """Return the Monday of `day`'s ISO week (the digest's idempotency key)."""
    return day - dt.timedelta(days=day.isoweekday() - 1)


def rank_findings(items: Sequence[FindingItem]) -> list[FindingItem]:
    """Order findings by impact: severity, then least headroom left, then largest monthly saving, then title."""

    def key(item: FindingItem) -> tuple[int, float, float, str]:
        headroom = item.headroom_before_pct if item.headroom_before_pct is not None else float("inf")
        # A negative delta is a saving; a bigger saving sorts first. No cost figure sorts after any saving.
        saving = -item.monthly_cost_delta_usd if item.monthly_cost_delta_usd is not None else float("-inf")
        return (severity_rank(item.severity), headroom, -saving, item.title)

    return sorted(items, key=key)


def collapse_groups(ranked: Sequence[FindingItem]) -> list[FindingItem]:
    """Return one entry per group (its highest-ranked open finding, with the others' titles as `related`) and
    every finding without a group, in the given order."""
    members: dict[str, list[FindingItem]] = {}
    for item in ranked:
        if item.group_id is not None:
            members.setdefault(item.group_id, []).append(item)
    out: list[FindingItem] = []
    for item in ranked:
        if item.group_id is None:
            out.append(item)
        elif members[item.group_id][0] is item:
            out.append(replace(item, related=tuple(m.title for m in members[item.group_id][1:])))
    return out


def _totals(data: DigestData) -> dict[str, int]:
    totals = dict.fromkeys(SEVERITIES, 0) | {"new": 0, "resolved": 0}
    for cluster in data.clusters:
        for s in SEVERITIES:
            totals[s] += cluster.open_by_severity.get(s, 0)
        totals["new"] += cluster.new_this_week
        totals["resolved"] += cluster.resolved_this_week
    return totals


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def _when(at: dt.datetime | None) -> str:
    return at.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC") if at is not None else "never"


def _ahead(seconds: float) -> str:
    """A time ahead on a weekly email's scale: "within a day", "in about 12 days"."""
    days = seconds / 86400
    return "within a day" if days < 1 else "in about 1 day" if days < 1.5 else f"in about {round_half_up(days):,} days"


def _utc(at: dt.datetime, fmt: str) -> str:
    return at.astimezone(dt.UTC).strftime(fmt)


def first_sentence(text: str) -> str:
    """The first sentence of `text` (a card says a finding's impact in one): up to the first ". ", "! " or "? "."""
    flat = " ".join(text.split())
    match = re.search(r"[.!?](?=\s)", flat)
    return flat[: match.end()] if match else flat


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


@dataclass(frozen=True)
class _ClusterSection:
    cluster: ClusterDigest
    top: Sequence[FindingItem]
    more: int


def _escape(value: object) -> object:
    # html.escape (quotes as &quot;), as this email always had; autoescaping stays on underneath as well.
    return value if isinstance(value, Markup) else Markup(html.escape(str(value), quote=True))


def _environment(*, html_part: bool) -> Environment:
    # One environment per part, so the shared macros (_lines.j2) are compiled escaping in the HTML and as
    # written in the text: a macro's output is trusted by the template that calls it.
    env = Environment(
        loader=PackageLoader("headroom.digest", "templates"),
        autoescape=html_part,
        finalize=_escape if html_part else None,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(
        thousands=lambda n: f"{n:,}",
        quantity=format_quantity,
        usd=lambda x: format_quantity(x, "USD"),
        # whole hours (at least one): the email is read days later, minutes would be false precision
        hours=lambda seconds: format_duration_words(3600 * max(1, int(round_half_up(seconds / 3600)))),
        ahead=_ahead,
        plural=_plural,
        when=_when,
        utc=_utc,
        excerpt=_excerpt,
        sentence=first_sentence,
        days=format_days,
    )
    return env


_TEXT = _environment(html_part=False).get_template("digest.txt.j2")
_HTML = _environment(html_part=True).get_template("digest.html.j2")


def top_findings(items: Sequence[FindingItem], top_n: int = DEFAULT_TOP_N) -> list[FindingItem]:
    """The findings a cluster's section lists: one per group, by impact, the first `top_n`."""
    return collapse_groups(rank_findings(items))[:top_n]


def _sections(data: DigestData, top_n: int) -> list[_ClusterSection]:
    sections = []
    for cluster in sorted(data.clusters, key=lambda c: c.name):
        top = top_findings(cluster.open_findings, top_n)
        shown = sum(1 + len(item.related) for item in top)
        sections.append(_ClusterSection(cluster, top, cluster.open_total - shown))
    return sections


def _render(template: Template, data: DigestData, summary: Summary, all_clear: bool, top_n: int) -> str:
    sections = _sections(data, top_n)
    return template.render(
        data=data,
        summary=summary,
        totals=summary.totals,
        all_clear=all_clear,
        period=f"{_when(data.period_start)} to {_when(data.period_end)}",
        sections=sections,
        severities=SEVERITIES,
    )


# Mail clients drop <style> blocks or the rules they do not support (Gmail keeps a <style> in the head but not
# every selector; Outlook's Word engine reads only inline styles), so every rule is copied into the style
# attributes. The dark-mode block (data-css-inline="keep") stays in a <style>: a media query cannot be inlined,
# and the clients that honour prefers-color-scheme read it there. css-inline (a Rust HTML/CSS engine) inlines a
# demo organisation's email in about 2 ms.
_INLINER = css_inline.CSSInliner(keep_style_tags=False, load_remote_stylesheets=False)


def inline_css(document: str) -> str:
    """Copy the document's <style> rules into its elements' style attributes (the kept block stays as it is)."""
    return _INLINER.inline(document)


def build_digest(data: DigestData, *, top_n: int = DEFAULT_TOP_N) -> Digest:
    """Render one organisation's weekly digest: subject, plain text and HTML."""
    summary = summarise(data)
    totals = dict(summary.totals)
    open_total = sum(totals[s] for s in SEVERITIES)
    all_clear = (open_total == 0 and not data.source_problems
                 and not any(c.limit_notes or c.next_ceilings for c in data.clusters))
    return Digest(
        subject=_one_line(_subject(data, totals, all_clear)),
        text=_render(_TEXT, data, summary, all_clear, top_n),
        html=inline_css(_render(_HTML, data, summary, all_clear, top_n)),
        all_clear=all_clear,
        totals=totals,
        summary=summary,
        images=() if all_clear else tuple(item.chart for section in _sections(data, top_n) for item in section.top
                                          if item.chart is not None),
    )
