"""The weekly advisory email's shell: settings, each member's preferences, recipients, the data per org (for
headroom.digest.build), the (org, ISO week) send record, email verification and one-click unsubscribe (RFC 8058).
Callers commit; SMTP lives in headroom.platform.smtp.

Each recipient gets their own message: only the clusters they chose, and their own signed unsubscribe link in the
body and in the `List-Unsubscribe` header. A copy the server accepted is recorded (`digest_deliveries`), so a send
retried after a transient failure skips the recipients it already reached.

Idempotency: `claim_week` inserts the week's `digest_sends` row (or takes back a `retrying` one, or a `sending`
one left stale by a killed worker) with one INSERT ... ON CONFLICT DO UPDATE ... WHERE; it returns nothing when
the week is already sent, failed for good, skipped or being sent, and then the caller sends nothing. The claim is
committed before the SMTP conversation, so a duplicated task that runs at the same time finds it taken.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import html
import json
import threading
import time
import uuid
import zlib
from collections import OrderedDict, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from email.message import EmailMessage
from typing import Any, Literal

from sqlalchemy import and_, func, literal, or_, select
from sqlalchemy.dialects.postgresql import aggregate_order_by, insert
from sqlalchemy.orm import Session

from headroom.accounts.models import AuditLog, Membership, Organization, User
from headroom.accounts.service import Principal, audit
from headroom.clusters.models import Cluster
from headroom.digest.build import (
    CeilingAhead,
    ChartImage,
    ClusterDigest,
    Digest,
    DigestData,
    FindingItem,
    SourceProblem,
    build_digest,
    for_recipient,
    iso_week_start,
    top_findings,
)
from headroom.digest.models import (
    DigestDelivery,
    DigestPreference,
    DigestSend,
    EmailVerification,
    OrgDigestSettings,
)
from headroom.domain.model import SEVERITIES, Change
from headroom.domain.units import setting_text
from headroom.findings import service as findings_service
from headroom.findings.service import StoredFinding
from headroom.inventory.limits import resolve_instance_types
from headroom.inventory.models import Instance
from headroom.platform import smtp
from headroom.projections import service as projections_service
from headroom.projections.models import Projection
from headroom.changes import service as changes_service
from headroom.platform.errors import AppError, NotFound
from headroom.platform.jobs.context import JobContext
from headroom.platform.logging import get_logger
from headroom.platform.settings import Settings
from headroom.platform.shared_cache import SharedCache, shared_cache
from headroom.sources.models import AwsConnection, PrometheusSource

# The reporting window: the 7 days before the send (one week, as the email's name says).
PERIOD = dt.timedelta(days=7)
# A `sending` claim older than this belongs to a worker that died mid-send (the Celery hard time limit is 30
# minutes, headroom_worker.celery_app.task_time_limit); it may be claimed again.
STALE_CLAIM = dt.timedelta(minutes=30)
# How long a verification link in a test email stays valid: 7 days, the same as an invitation
# (headroom.accounts.service.INVITATION_TTL).
VERIFY_TTL = dt.timedelta(days=7)
# Fixes listed per finding in the email (its first option's changes; the rest are on the finding page).
FIXES_PER_FINDING = 3
DEFAULT_ROLES = ("owner", "admin")
LAST_SENDS = 10
# Attempts before a transient failure is recorded as `failed`: the first run plus the Celery task's 5 retries
# (headroom_worker.tasks._make_task: max_retries=5).
MAX_ATTEMPTS = 6

log = get_logger("headroom.digest.service")


# --- settings --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DigestPrefs:
    enabled: bool
    include_viewers: bool


def prefs(db: Session, org_id: uuid.UUID) -> DigestPrefs:
    """Return the org's digest settings (defaults when it never changed them: on, admins and owners)."""
    row = db.get(OrgDigestSettings, org_id)
    if row is None:
        return DigestPrefs(enabled=True, include_viewers=False)
    return DigestPrefs(enabled=row.enabled, include_viewers=row.include_viewers)


def update_prefs(
    db: Session, principal: Principal, *, enabled: bool | None, include_viewers: bool | None
) -> DigestPrefs:
    """Change the caller's org digest settings (admin or owner)."""
    principal.require("admin")
    current = prefs(db, principal.org_id)
    values: dict[str, object] = {
        "enabled": current.enabled if enabled is None else enabled,
        "include_viewers": current.include_viewers if include_viewers is None else include_viewers,
    }
    db.execute(
        insert(OrgDigestSettings)
        .values(org_id=principal.org_id, **values)
        .on_conflict_do_update(index_elements=["org_id"], set_={**values, "updated_at": func.now()})
    )
    audit(db, principal, "digest.settings_updated", target_kind="organization", target_id=principal.org_id,
          details=values)
    return DigestPrefs(enabled=bool(values["enabled"]), include_viewers=bool(values["include_viewers"]))


@dataclass(frozen=True)
class Recipient:
    user_id: uuid.UUID
    email: str
    # The clusters they chose (None: every cluster).
    cluster_ids: tuple[uuid.UUID, ...] | None


def recipient_list(db: Session, org_id: uuid.UUID, *, include_viewers: bool) -> list[Recipient]:
    """Return who the org's digest goes to: active members with a verified email, admins and owners (and viewers
    when the org asked for them), except those who turned the weekly email off, in address order."""
    roles = (*DEFAULT_ROLES, "viewer") if include_viewers else DEFAULT_ROLES
    rows = db.execute(
        select(User.id, User.email, DigestPreference.cluster_ids)
        .join(Membership, Membership.user_id == User.id)
        .join(EmailVerification, EmailVerification.user_id == User.id)
        .outerjoin(DigestPreference, and_(DigestPreference.user_id == User.id, DigestPreference.org_id == org_id))
        .where(
            Membership.org_id == org_id,
            Membership.role.in_(roles),
            User.is_active.is_(True),
            func.lower(EmailVerification.email) == func.lower(User.email),
            or_(DigestPreference.user_id.is_(None), DigestPreference.weekly_email.is_(True)),
        )
        .order_by(func.lower(User.email))
    )
    return [Recipient(uid, email, tuple(ids) if ids is not None else None) for uid, email, ids in rows]


def recipients(db: Session, org_id: uuid.UUID, *, include_viewers: bool) -> list[str]:
    """Return the emails the org's digest goes to (see `recipient_list`)."""
    return [r.email for r in recipient_list(db, org_id, include_viewers=include_viewers)]


# --- a member's own preferences --------------------------------------------------------------------------


@dataclass(frozen=True)
class MemberPrefs:
    weekly_email: bool
    # None: every cluster, including ones added later.
    cluster_ids: tuple[uuid.UUID, ...] | None
    unsubscribed_at: dt.datetime | None


def member_prefs(db: Session, user_id: uuid.UUID, org_id: uuid.UUID) -> MemberPrefs:
    """Return one member's choices for the org's weekly email (defaults when they never chose: on, every cluster)."""
    row = db.get(DigestPreference, (user_id, org_id))
    if row is None:
        return MemberPrefs(weekly_email=True, cluster_ids=None, unsubscribed_at=None)
    ids = tuple(row.cluster_ids) if row.cluster_ids is not None else None
    return MemberPrefs(weekly_email=row.weekly_email, cluster_ids=ids, unsubscribed_at=row.unsubscribed_at)


def update_member_prefs(
    db: Session, principal: Principal, *, weekly_email: bool, cluster_ids: Sequence[uuid.UUID] | None
) -> MemberPrefs:
    """Replace the caller's choices for their org's weekly email; every chosen cluster must be the org's."""
    user = caller_user(db, principal)
    chosen: list[uuid.UUID] | None = None
    if cluster_ids is not None:
        chosen = list(dict.fromkeys(cluster_ids))
        known = set(db.scalars(select(Cluster.id).where(Cluster.org_id == principal.org_id, Cluster.id.in_(chosen))))
        missing = [str(c) for c in chosen if c not in known]
        if missing:
            raise NotFound("No such cluster in your organisation.", details={"cluster_ids": missing})
    values: dict[str, object] = {"weekly_email": weekly_email, "cluster_ids": chosen}
    if weekly_email:
        values["unsubscribed_at"] = None
    db.execute(
        insert(DigestPreference)
        .values(user_id=user.id, org_id=principal.org_id, **values)
        .on_conflict_do_update(index_elements=["user_id", "org_id"], set_={**values, "updated_at": func.now()})
    )
    audit(db, principal, "digest.preferences_updated", target_kind="user", target_id=user.id,
          details={"weekly_email": weekly_email, "clusters": "all" if chosen is None else len(chosen)})
    return member_prefs(db, user.id, principal.org_id)


def last_sends(db: Session, org_id: uuid.UUID, limit: int = LAST_SENDS) -> list[DigestSend]:
    return list(
        db.scalars(
            select(DigestSend).where(DigestSend.org_id == org_id).order_by(DigestSend.week_start.desc()).limit(limit)
        )
    )


# --- gathering -------------------------------------------------------------------------------------------


# The AWS attributes a change sets, in words (EC2 ModifyVolume's VolumeType, Iops, Throughput and Size:
# https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_ModifyVolume.html; ModifyInstanceAttribute's
# InstanceType: https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_ModifyInstanceAttribute.html).
_AWS_SETTING_WORDS = {
    "volume.type": "the volume type",
    "volume.iops": "the provisioned IOPS",
    "volume.throughput": "the provisioned throughput",
    "volume.size": "the volume size",
    "volume.raid0-stripes": "the RAID 0 stripes",
    "volume.create": "a new volume",
    "instance.type": "the instance type",
}


def _fix_line(change: Change) -> str:
    """A change as one sentence: "Set the provisioned throughput to 300 MiB/s (now 125 MiB/s) on vol-0abc"; a
    tikv.toml key keeps its name, the setting an SRE types into the file."""
    proposed = setting_text(change.key, change.proposed)
    where = change.applies_to()
    if change.target == "aws":
        what = _AWS_SETTING_WORDS.get(change.key, change.key.replace(".", " ").replace("-", " "))
        line = f"Create {what}: {proposed}" if change.key == "volume.create" else f"Set {what} to {proposed}"
    else:
        line = f"Set {change.key} to {proposed} in tikv.toml"
        where = where or "every TiKV node"
    if change.current is not None:
        line += f" (now {setting_text(change.key, change.current)})"
    return f"{line} on {where}" if where else line


def _item(finding: StoredFinding, fixes: Sequence[str], url: str) -> FindingItem:
    evidence, group = finding.evidence, finding.group
    return FindingItem(
        title=finding.title,
        severity=finding.severity,
        entity=f"{finding.entity_kind.replace('_', ' ')} {finding.entity_id}",
        impact=finding.impact_summary or "",
        fix=tuple(fixes),
        forecast=tuple(evidence.forecasts) if evidence is not None else (),
        headroom_before_pct=finding.headroom_before_pct,
        monthly_cost_delta_usd=finding.monthly_cost_delta_usd,
        url=url,
        group_id=group.id if group is not None else None,
        group_cause=group.cause if group is not None else "",
        group_summary=group.summary if group is not None else "",
    )


# Charts per cluster: the first three of its top findings (each about 20-40 KB of PNG; the email stays small).
CHARTS_PER_CLUSTER = 3


# A finding's chart by its evidence (the window and series the advisor judged, and its forecasts): the evidence
# changes when the advisor runs again, and a closed window's stored points do not, so between runs the settings
# page's preview, a test send and Monday's send chart a finding once. Reading the evidence series (a snapshot of
# the window) takes 0.2-0.4 s a finding and drawing it 0.5-1 s; a hit takes a hash of the evidence.
EVIDENCE_CHART_CACHE = 256
_charted: OrderedDict[tuple[uuid.UUID, str], ChartImage | None] = OrderedDict()
_charted_lock = threading.Lock()


def _chart_of(db: Session, row: StoredFinding, item: FindingItem) -> ChartImage | None:
    from headroom.digest.charts import finding_chart
    from headroom.findings.evidence_series import evidence_series

    evidence = row.evidence
    key = (row.id, hashlib.sha256(evidence.model_dump_json().encode()).hexdigest() if evidence else "")
    with _charted_lock:
        if key in _charted:
            _charted.move_to_end(key)
            return _charted[key]
    try:
        series = evidence_series(db, row)
    except NotFound:  # no evidence window to chart
        chart = None
    else:
        chart = finding_chart(series.series, item.forecast, step_seconds=series.step_seconds,
                              cid=f"finding-{row.id}@headroom")
    with _charted_lock:
        _charted[key] = chart
        while len(_charted) > EVIDENCE_CHART_CACHE:
            _charted.popitem(last=False)
    return chart


def _with_charts(db: Session, items: list[FindingItem], rows: dict[str, StoredFinding]) -> list[FindingItem]:
    """The cluster's items, its first top findings with their evidence chart (headroom.digest.charts)."""
    charted = {}
    for item in top_findings(items, CHARTS_PER_CLUSTER):
        row = rows.get(item.url or "")
        if row is None:
            continue
        chart = _chart_of(db, row, item)
        if chart is not None:
            charted[item.url] = replace(item, chart=chart)
    return [charted.get(item.url, item) for item in items]


def _limit_notes(db: Session, org_id: uuid.UUID) -> dict[uuid.UUID, list[str]]:
    """Per cluster: its instances whose EBS limits are unknown, with the resolver's note (no finding judges them)."""
    instances = list(db.scalars(select(Instance).where(Instance.org_id == org_id, Instance.cluster_id.is_not(None))
                                .order_by(Instance.instance_id)))
    resolved = resolve_instance_types(db, {i.instance_type for i in instances})
    notes: dict[uuid.UUID, list[str]] = defaultdict(list)
    for inst in instances:
        limits = resolved[inst.instance_type]
        if not limits.known and inst.cluster_id is not None:
            notes[inst.cluster_id].append(f"instance {inst.instance_id}: {limits.note}")
    return notes


def _ceiling_ahead(row: Projection | None) -> CeilingAhead | None:
    if row is None:
        return None
    return CeilingAhead(what=projections_service.ceiling_subject(row), ceiling=row.ceiling, unit=row.unit,
                        days=row.days or 0.0, days_low=row.days_low, days_high=row.days_high, hits_at=row.hits_at)


def gather(db: Session, org_id: uuid.UUID, *, now: dt.datetime, public_url: str) -> DigestData:
    """Collect one org's digest data for the 7 days before `now`."""
    org = db.get(Organization, org_id)
    if org is None:
        raise NotFound("No such organisation.")
    base = public_url.rstrip("/")
    start = now - PERIOD
    clusters = list(db.scalars(select(Cluster).where(Cluster.org_id == org_id).order_by(Cluster.name)))

    open_rows = findings_service.findings_active_at(db, org_id, now=now)
    fixes = {fid: [_fix_line(c) for c in changes[:FIXES_PER_FINDING]] for fid, changes in
             findings_service.recommended_changes(db, org_id, [f.id for f in open_rows]).items()}
    week = findings_service.counts_in_period(db, org_id, start=start, end=now)
    new_counts, resolved_counts = week.opened, week.resolved

    # severity rose this week: the advice runs' "finding.escalated" audit events (their own time in details.at)
    worsened: dict[uuid.UUID, int] = defaultdict(int)
    escalated_ids = set()
    for target_id, details in db.execute(select(AuditLog.target_id, AuditLog.details).where(
            AuditLog.org_id == org_id, AuditLog.action == "finding.escalated")):
        at = (details or {}).get("at")
        if at and start <= dt.datetime.fromisoformat(at) < now and target_id:
            escalated_ids.add(uuid.UUID(target_id))
    for cid in findings_service.cluster_ids_of(db, org_id, list(escalated_ids)):
        worsened[cid] += 1

    by_cluster: dict[uuid.UUID, list[StoredFinding]] = defaultdict(list)
    for f in open_rows:
        by_cluster[f.cluster_id].append(f)
    limit_notes = _limit_notes(db, org_id)
    nearest = projections_service.nearest_by_cluster(db, org_id)
    cluster_digests = []
    for cluster in clusters:
        rows = by_cluster.get(cluster.id, [])
        counts: dict[str, int] = dict.fromkeys(SEVERITIES, 0)
        for f in rows:
            counts[f.severity] = counts.get(f.severity, 0) + 1
        cluster_url = f"{base}/clusters/{cluster.id}"
        # The finding's own page (frontend/src/router.tsx: /clusters/:clusterId/findings/:findingId)
        items = [_item(f, fixes.get(f.id, ()), f"{cluster_url}/findings/{f.id}") for f in rows]
        items = _with_charts(db, items, {f"{cluster_url}/findings/{f.id}": f for f in rows})
        cluster_digests.append(
            ClusterDigest(
                name=cluster.name,
                url=cluster_url,
                open_by_severity=counts,
                new_this_week=int(new_counts.get(cluster.id, 0)),
                resolved_this_week=int(resolved_counts.get(cluster.id, 0)),
                open_findings=items,
                limit_notes=limit_notes.get(cluster.id, ()),
                next_ceilings=tuple(projections_service.nearest_ceilings(db, org_id, cluster.id)),
                changes=tuple(changes_service.week_lines(db, org_id, cluster.id, now=now)),
                worsened_this_week=worsened.get(cluster.id, 0),
                savings_usd=round(sum(f.monthly_saving_usd for f in rows), 2),
                id=str(cluster.id),
                nearest=_ceiling_ahead(nearest.get(cluster.id)),
            )
        )

    problems: list[SourceProblem] = []
    failing: list[tuple[str, Sequence[AwsConnection | PrometheusSource]]] = [
        ("AWS connection", db.scalars(select(AwsConnection).where(
            AwsConnection.org_id == org_id, AwsConnection.status == "failing").order_by(AwsConnection.name)).all()),
        ("Prometheus source", db.scalars(select(PrometheusSource).where(
            PrometheusSource.org_id == org_id, PrometheusSource.status == "failing").order_by(PrometheusSource.name)
        ).all()),
    ]
    for kind, sources in failing:
        for src in sources:
            problems.append(
                SourceProblem(kind=kind, name=src.name, status=src.status, last_error=src.last_error,
                              last_error_at=src.last_error_at, consecutive_failures=src.consecutive_failures,
                              last_success_at=src.last_success_at)
            )

    return DigestData(
        org_name=org.name,
        week_start=iso_week_start(now.astimezone(dt.UTC).date()),
        period_start=start,
        period_end=now,
        dashboard_url=f"{base}/clusters",
        clusters=cluster_digests,
        source_problems=problems,
        settings_url=f"{base}/settings/digest",
    )


def render(db: Session, org_id: uuid.UUID, *, now: dt.datetime, public_url: str) -> Digest:
    """Gather and build one org's digest for the week of `now` (every cluster, no recipient's links)."""
    return build_digest(gather(db, org_id, now=now, public_url=public_url))


@dataclass(frozen=True)
class Preview:
    """This week's email as the settings page shows it: the charts inline in the HTML (Digest.html_inline)."""

    week_start: dt.date
    subject: str
    text: str
    html: str
    all_clear: bool


# The rendered preview of an org, stored where every API process and worker finds it (platform.shared_cache: Redis,
# else this process's memory): ~140 KB of HTML a render that reads every open finding, its fixes, charts,
# projections and changes (0.2 s warm, seconds cold or under load). It is rendered when its inputs change (the
# digest.preview job, queued when an advice run ends) and on a miss; one slot per org holds the latest version
# (preview_version), so Redis keeps at most one preview per org, each for at most PREVIEW_TTL.
#
# The version includes the hour (the reporting window ends now), so a stored preview is never served after its
# hour; the TTL frees the slot of an org nobody looks at an hour later.
PREVIEW_TTL = dt.timedelta(hours=1)

# Rendered ahead only for an org whose Weekly email page was opened within WATCHED_FOR: an org nobody looks at
# costs no render every advice round (0.08-0.2 s each; at 1,000 orgs, 1,000 renders every 15 minutes that nobody
# read, docs/scaling.md), and gets its preview rendered on its next visit. A day: someone who checks the page keeps
# it ready through the day's rounds.
WATCHED_FOR = dt.timedelta(days=1)


def preview_version(db: Session, org_id: uuid.UUID, *, now: dt.datetime) -> tuple[Any, ...]:
    """What this week's email of the org is built from, in a few cheap reads: its findings (findings.service
    version), its clusters and their last advice run, its audit log (every member's action: a finding acknowledged,
    a setting changed, a change applied), its failing sources, its projections' last fit, and the hour."""
    clusters = db.execute(select(func.count(), func.max(Cluster.advised_at), func.max(Cluster.updated_at),
                                 func.string_agg(Cluster.name, aggregate_order_by(literal("|"), Cluster.id)))
                          .where(Cluster.org_id == org_id)).one()
    audited = db.scalar(select(func.max(AuditLog.id)).where(AuditLog.org_id == org_id))
    fitted = db.scalar(select(func.max(Projection.fitted_at)).where(Projection.org_id == org_id))
    failing = tuple(db.execute(select(func.count(), func.max(source.last_error_at)).where(
        source.org_id == org_id, source.status == "failing")).one() for source in (AwsConnection, PrometheusSource))
    org_name = db.scalar(select(Organization.name).where(Organization.id == org_id))
    hour = now.astimezone(dt.UTC).replace(minute=0, second=0, microsecond=0)
    return (findings_service.version(db, org_id), tuple(clusters), audited, fitted, failing, org_name, hour)


def _stable(value: Any) -> Any:
    """`value` in words every process writes alike (an instant in UTC whatever the session's time zone)."""
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).isoformat()
    if isinstance(value, tuple | list):
        return [_stable(v) for v in value]
    return value if value is None or isinstance(value, int | float | str | bool) else str(value)


def version_digest(org_id: uuid.UUID, version: tuple[Any, ...], public_url: str) -> str:
    """The stored preview's version: its org, its inputs' version and the address its links point to."""
    words = json.dumps([str(org_id), public_url, _stable(version)], separators=(",", ":"))
    return hashlib.sha256(words.encode()).hexdigest()


def _slot(org_id: uuid.UUID) -> str:
    return f"digest-preview:{org_id}"


def _watched_slot(org_id: uuid.UUID) -> str:
    return f"digest-preview-watched:{org_id}"


def _watched(cache: SharedCache, org_id: uuid.UUID) -> bool:
    """Whether the org's Weekly email page was opened within WATCHED_FOR (its preview is worth rendering ahead)."""
    return cache.get(_watched_slot(org_id)) is not None


def _pack(org_id: uuid.UUID, digest: str, made: Preview) -> bytes:
    body = {"org_id": str(org_id), "version": digest, "week_start": made.week_start.isoformat(),
            "subject": made.subject, "text": made.text, "html": made.html, "all_clear": made.all_clear}
    return digest.encode() + b"\n" + zlib.compress(json.dumps(body).encode(), 6)


def _unpack(org_id: uuid.UUID, digest: str, stored: bytes) -> Preview | None:
    """The stored preview when it is this org's at this version, else None."""
    head, _, packed = stored.partition(b"\n")
    if head != digest.encode():
        return None
    body = json.loads(zlib.decompress(packed))
    if body["org_id"] != str(org_id) or body["version"] != digest:  # the slot's key says so; checked all the same
        return None
    return Preview(week_start=dt.date.fromisoformat(body["week_start"]), subject=body["subject"], text=body["text"],
                   html=body["html"], all_clear=body["all_clear"])


def warm_up() -> None:
    """Import what a render loads on first use and draw one chart, so a process's first preview or send is as fast
    as its next (a fresh process otherwise spends 2 s of CPU on them, 5-10 s of wall time on a busy 2-core
    machine: bench/README.md)."""
    from headroom.digest.charts import warm_up as warm_up_charts
    from headroom.findings import evidence_series  # noqa: F401 - imported for its import cost

    warm_up_charts()


def _render_preview(db: Session, org_id: uuid.UUID, *, now: dt.datetime, public_url: str) -> Preview:
    started = time.perf_counter()
    digest = render(db, org_id, now=now, public_url=public_url)
    made = Preview(week_start=iso_week_start(now.astimezone(dt.UTC).date()), subject=digest.subject,
                   text=digest.text, html=digest.html_inline(), all_clear=digest.all_clear)
    log.info("digest.preview_rendered", org_id=str(org_id), ms=round((time.perf_counter() - started) * 1000))
    return made


def preview(db: Session, org_id: uuid.UUID, *, now: dt.datetime, public_url: str,
            cache: SharedCache | None = None, watched: bool = True) -> Preview:
    """This week's email of the org as it would be sent now: the stored one when it is of the current data version
    (preview_version), else rendered once (whoever asks at the same time waits for that render) and stored.
    `watched`: someone is looking (the page), so the advice rounds of the next WATCHED_FOR render it ahead."""
    cache = cache or shared_cache(None)
    if watched:
        cache.put(_watched_slot(org_id), b"1", ttl_seconds=WATCHED_FOR.total_seconds())
    digest = version_digest(org_id, preview_version(db, org_id, now=now), public_url)
    made: list[Preview] = []

    def make() -> bytes:
        made.append(_render_preview(db, org_id, now=now, public_url=public_url))
        return _pack(org_id, digest, made[0])

    stored = cache.get_or_make(_slot(org_id), make, ttl_seconds=PREVIEW_TTL.total_seconds(),
                               fresh=lambda value: value.startswith(digest.encode() + b"\n"),
                               lock_key=f"{_slot(org_id)}:{digest}")
    if made:
        return made[0]
    found = _unpack(org_id, digest, stored)
    if found is None:  # cannot happen while `fresh` holds; rendering is the safe answer
        return _render_preview(db, org_id, now=now, public_url=public_url)
    return found


def prepare_preview(ctx: JobContext, now: dt.datetime, *, org_id: str | None) -> dict[str, Any]:
    """Render and store the org's preview of this week's email unless the stored one is current or nobody opened
    the page within WATCHED_FOR (digest.preview)."""
    if org_id is None:  # the in-process scheduler's start-up pass runs every job once without parameters
        return {"status": "skipped", "reason": "no organisation given"}
    org_uuid = uuid.UUID(org_id)
    cache = shared_cache(ctx.settings.redis_url)
    if not _watched(cache, org_uuid):
        return {"org_id": org_id, "status": "skipped", "reason": "nobody opened the Weekly email page today"}
    with ctx.unit() as db:
        if db.get(Organization, org_uuid) is None:
            return {"org_id": org_id, "status": "skipped", "reason": "organisation deleted"}
        before = time.perf_counter()
        preview(db, org_uuid, now=now, public_url=ctx.settings.public_url, cache=cache, watched=False)
    return {"org_id": org_id, "status": "ready", "ms": round((time.perf_counter() - before) * 1000)}


@dataclass(frozen=True)
class PersonalDigest:
    digest: Digest
    one_click_url: str


def personal_digest(
    data: DigestData, org_id: uuid.UUID, user_id: uuid.UUID, cluster_ids: Sequence[uuid.UUID] | None,
    settings: Settings,
) -> PersonalDigest:
    """Build one recipient's digest from the org's data: their clusters, their unsubscribe and preferences links."""
    token = unsubscribe_token(settings.secret_key, user_id, org_id)
    one_click, page = unsubscribe_urls(settings.public_url, token)
    mine = for_recipient(
        data,
        cluster_ids=None if cluster_ids is None else [str(c) for c in cluster_ids],
        unsubscribe_url=page,
        preferences_url=f"{settings.public_url.rstrip('/')}/settings/digest",
    )
    return PersonalDigest(build_digest(mine), one_click)


# RFC 5322 section 2.1.1: "Each line of characters MUST be no more than 998 characters ... excluding the CRLF."
MAX_HEADER_LINE = 998


def compose_personal(sender: str, to: str, subject: str, text: str, html_body: str, one_click_url: str,
                     images: Sequence[ChartImage] = ()) -> EmailMessage:
    """Compose one recipient's message with the one-click unsubscribe headers of RFC 8058 section 3.1, and the
    charts as parts related to the HTML (multipart/alternative: text/plain, multipart/related: text/html + PNGs
    with their Content-ID, RFC 2387 / RFC 2392)."""
    message = smtp.compose(sender, [to], subject, text, html_body)
    html_part = message.get_body(preferencelist=("html",))
    assert html_part is not None
    for image in images:
        html_part.add_related(image.png, maintype="image", subtype="png", cid=f"<{image.cid}>",
                              filename=f"{image.cid.split('@')[0]}.png", disposition="inline")
    message["List-Unsubscribe"] = f"<{one_click_url}>"
    message["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    # The header must reach the mail client as plain `<https://...>` (RFC 2369 section 2, RFC 8058 section 3.1):
    # folding it at 78 columns makes Python's email package write the unbroken URL as RFC 2047 encoded-words
    # (`=?utf-8?q?=3Chttps=3A//...?=`), which Gmail and Yahoo do not read as a one-click unsubscribe. Headers are
    # folded only past RFC 5322's hard limit of 998 characters instead (section 2.1.1); the URL is far shorter.
    if len(one_click_url) > MAX_HEADER_LINE - len("List-Unsubscribe: <>"):
        raise ValueError(f"the unsubscribe URL is {len(one_click_url)} characters, too long for one header line")
    message.policy = message.policy.clone(max_line_length=MAX_HEADER_LINE)
    return message


# --- the (org, week) send record -------------------------------------------------------------------------


def claim_week(db: Session, org_id: uuid.UUID, week_start: dt.date, *, now: dt.datetime) -> DigestSend | None:
    """Claim the org's send for the week; None when it is sent, failed for good, skipped or in progress."""
    # Claim times are the database's clock, not `now`: a task redelivered after its worker died carries the
    # original `now`, and must still see the old claim as stale.
    stmt = (
        insert(DigestSend)
        .values(id=uuid.uuid4(), org_id=org_id, week_start=week_start, status="sending", attempts=1,
                claimed_at=func.now())
        .on_conflict_do_update(
            index_elements=["org_id", "week_start"],
            set_={"status": "sending", "claimed_at": func.now(), "attempts": DigestSend.attempts + 1},
            where=or_(
                DigestSend.status == "retrying",
                and_(DigestSend.status == "sending", DigestSend.claimed_at < func.now() - STALE_CLAIM),
            ),
        )
        .returning(DigestSend.id)
    )
    claimed = db.execute(stmt).scalar_one_or_none()
    return db.get(DigestSend, claimed, populate_existing=True) if claimed is not None else None


def finish(
    db: Session, send_id: uuid.UUID, *, status: str, now: dt.datetime, recipients: int = 0, error: str | None = None
) -> DigestSend:
    """Record how the claimed send ended: sent, retrying (transient), failed (permanent) or skipped."""
    row = db.get_one(DigestSend, send_id, with_for_update=True)
    row.status = status
    row.recipients = recipients
    row.error = error[:2000] if error else None
    if status == "sent":
        row.sent_at = now
    return row


# --- email verification ----------------------------------------------------------------------------------


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _email_hash(email: str) -> str:
    return hashlib.sha256(email.strip().lower().encode()).hexdigest()[:32]


# What a token is for: part of the signed bytes, so a token signed for one purpose never passes as another.
VERIFY_PURPOSE = "digest-verify"
UNSUBSCRIBE_PURPOSE = "digest-unsubscribe"


def _signature(secret_key: str, payload: str, *, purpose: str = VERIFY_PURPOSE) -> str:
    message = f"{purpose}:{payload}".encode()
    return _b64(hmac.new(secret_key.encode(), message, hashlib.sha256).digest())


def _signed_payload(token: str, secret_key: str, *, purpose: str) -> str | None:
    """The token's payload when its signature is this server's for `purpose`, else None."""
    payload, _, signature = token.partition(".")
    # bytes: compare_digest refuses str with non-ASCII characters, and a link can carry any
    if not payload or not hmac.compare_digest(_signature(secret_key, payload, purpose=purpose).encode(),
                                              signature.encode()):
        return None
    return payload


def verification_token(secret_key: str, user_id: uuid.UUID, email: str, *, now: dt.datetime) -> str:
    """A signed, expiring token that proves whoever holds it read mail sent to `email`."""
    expires = int((now + VERIFY_TTL).timestamp())
    payload = _b64(f"{user_id}.{_email_hash(email)}.{expires}".encode())
    return f"{payload}.{_signature(secret_key, payload)}"


def verify_email(db: Session, principal: Principal, token: str, *, secret_key: str, now: dt.datetime) -> str:
    """Mark the caller's current email verified with a token from a test digest; return the email.

    Any token that is not the caller's own, current and unexpired is a 404 (it names nothing of anyone else)."""
    not_found = NotFound("This verification link is unknown, expired or for another account or address.")
    payload = _signed_payload(token, secret_key, purpose=VERIFY_PURPOSE)
    if payload is None:
        raise not_found
    try:
        user_id, email_hash, expires = _unb64(payload).decode().split(".")
    except (ValueError, UnicodeDecodeError):
        raise not_found from None
    user = db.get(User, principal.user_id) if principal.user_id else None
    if (user is None or str(user.id) != user_id or _email_hash(user.email) != email_hash
            or int(expires) < now.timestamp()):
        raise not_found
    db.execute(
        insert(EmailVerification)
        .values(user_id=user.id, email=user.email, verified_at=now)
        .on_conflict_do_update(index_elements=["user_id"], set_={"email": user.email, "verified_at": now})
    )
    audit(db, principal, "digest.email_verified", target_kind="user", target_id=user.id)
    return user.email


# --- one-click unsubscribe (RFC 8058) ---------------------------------------------------------------------


class InvalidUnsubscribeToken(AppError):
    status_code = 400
    code = "invalid_unsubscribe_token"


@dataclass(frozen=True)
class Unsubscribed:
    email: str
    org_name: str
    # False: they had already unsubscribed (the link is idempotent).
    changed: bool


def unsubscribe_token(secret_key: str, user_id: uuid.UUID, org_id: uuid.UUID) -> str:
    """A signed token that turns off `user_id`'s weekly email from `org_id`, for whoever holds it (no expiry, so
    an old email's link keeps working: our choice, docs/digest.md)."""
    payload = _b64(user_id.bytes + org_id.bytes)
    return f"{payload}.{_signature(secret_key, payload, purpose=UNSUBSCRIBE_PURPOSE)}"


def unsubscribe_urls(public_url: str, token: str) -> tuple[str, str]:
    """The one-click URL mail clients POST to (List-Unsubscribe) and the page a person opens from the email."""
    base = public_url.rstrip("/")
    return f"{base}/api/v1/digest/unsubscribe?token={token}", f"{base}/unsubscribe?token={token}"


def unsubscribe(db: Session, token: str, *, secret_key: str, now: dt.datetime) -> Unsubscribed:
    """Turn off the token's member's weekly email from the token's org; doing it again changes nothing."""
    if "." not in token:
        raise InvalidUnsubscribeToken("This unsubscribe link is incomplete: the token has no signature. Copy the "
                                      "whole link from the email.")
    payload = _signed_payload(token, secret_key, purpose=UNSUBSCRIBE_PURPOSE)
    if payload is None:
        raise InvalidUnsubscribeToken("This unsubscribe link's signature does not match: the link was changed or "
                                      "cut short, or it was not made by this Headroom. Copy the whole link from "
                                      "the email.")
    try:
        raw = _unb64(payload)
    except ValueError:
        raw = b""
    if len(raw) != 32:
        raise InvalidUnsubscribeToken("This unsubscribe link is malformed.")
    user_id, org_id = uuid.UUID(bytes=raw[:16]), uuid.UUID(bytes=raw[16:])
    user, org = db.get(User, user_id), db.get(Organization, org_id)
    if user is None or org is None:
        raise NotFound("This unsubscribe link is for an account or organisation that no longer exists; it gets "
                       "no email.")
    # One statement, so two clicks at once (a mail client and a person) cannot both insert; a row that is already
    # off is left as it is (its unsubscribed_at keeps the first time) and returns nothing.
    turned_off = db.execute(
        insert(DigestPreference)
        .values(user_id=user_id, org_id=org_id, weekly_email=False, cluster_ids=None, unsubscribed_at=now)
        .on_conflict_do_update(
            index_elements=["user_id", "org_id"],
            set_={"weekly_email": False, "unsubscribed_at": now, "updated_at": func.now()},
            where=DigestPreference.weekly_email.is_(True),
        )
        .returning(DigestPreference.user_id)
    ).scalar_one_or_none()
    changed = turned_off is not None
    if changed:
        audit(db, org_id, "digest.unsubscribed", target_kind="user", target_id=user_id, actor_user_id=user_id,
              details={"via": "one-click link"})
    log.info("digest.unsubscribed", org_id=str(org_id), user_id=str(user_id), changed=changed)
    return Unsubscribed(email=user.email, org_name=org.name, changed=changed)


def is_verified(db: Session, user: User) -> bool:
    row = db.get(EmailVerification, user.id)
    return row is not None and row.email.lower() == user.email.lower()


def caller_user(db: Session, principal: Principal) -> User:
    user = db.get(User, principal.user_id) if principal.user_id else None
    if user is None:
        raise NotFound("This action needs a user (an API token without a user has no mailbox).")
    return user


def audit_test_send(db: Session, principal: Principal) -> None:
    audit(db, principal, "digest.test_sent", target_kind="user", target_id=principal.user_id)


# --- sending ---------------------------------------------------------------------------------------------


def send_weekly(ctx: JobContext, now: dt.datetime) -> dict[str, Any]:
    """Send (or queue, with a broker) every organisation's digest for the ISO week of `now`."""
    if smtp.config_from_settings(ctx.settings) is None:
        log.info("digest.skipped", reason="smtp not configured (HEADROOM_SMTP_HOST is unset)")
        return {"skipped": "smtp not configured"}
    week = iso_week_start(now.astimezone(dt.UTC).date()).isoformat()
    with ctx.unit() as db:
        org_ids = [str(i) for i in db.scalars(select(Organization.id).order_by(Organization.created_at))]
    if ctx.settings.redis_url:
        for org_id in org_ids:
            ctx.enqueue("digest.send_org", org_id=org_id, week_start=week, now_iso=now.isoformat())
        log.info("digest.fanned_out", orgs=len(org_ids), week_start=week)
        return {"queued": len(org_ids), "week_start": week}
    results = []
    for org_id in org_ids:
        try:
            results.append(send_week(ctx, now, org_id=org_id, week_start=week))
        except Exception:  # noqa: BLE001 - one org's failure must not stop the others; recorded and logged
            log.exception("digest.org_failed", org_id=org_id)
            results.append({"org_id": org_id, "status": "retrying"})
    return {"orgs": results, "week_start": week}


def send_week(ctx: JobContext, now: dt.datetime, *, org_id: str | None, week_start: str | None = None) -> dict[str, Any]:
    """Send one org's digest for one ISO week, at most once (see headroom.digest.jobs)."""
    if org_id is None:  # the in-process scheduler's start-up pass runs every job once without parameters
        return {"status": "skipped", "reason": "no organisation given"}
    config = smtp.config_from_settings(ctx.settings)
    if config is None:
        log.info("digest.skipped", org_id=org_id, reason="smtp not configured (HEADROOM_SMTP_HOST is unset)")
        return {"org_id": org_id, "status": "skipped", "reason": "smtp not configured"}
    org_uuid = uuid.UUID(org_id)
    week = dt.date.fromisoformat(week_start) if week_start else iso_week_start(now.astimezone(dt.UTC).date())
    summary: dict[str, Any] = {"org_id": org_id, "week_start": week.isoformat()}

    with ctx.unit() as db:
        if db.get(Organization, org_uuid) is None:
            return summary | {"status": "skipped", "reason": "organisation deleted"}
        settings = prefs(db, org_uuid)
        if not settings.enabled:
            return summary | {"status": "skipped", "reason": "disabled by the organisation"}
        claim = claim_week(db, org_uuid, week, now=now)
        if claim is None:
            existing = db.scalar(
                select(DigestSend.status).where(DigestSend.org_id == org_uuid, DigestSend.week_start == week)
            )
            log.info("digest.already_claimed", org_id=org_id, week_start=week.isoformat(), status=existing)
            return summary | {"status": "skipped", "reason": f"already {existing}"}
        send_id, attempts = claim.id, claim.attempts
        to = recipient_list(db, org_uuid, include_viewers=settings.include_viewers)
        if not to:
            finish(db, send_id, status="skipped", now=now,
                   error="no member with a verified email in the recipient roles who wants the weekly email")
            return summary | {"status": "skipped", "reason": "no recipients"}
        delivered = set(db.scalars(select(DigestDelivery.user_id).where(DigestDelivery.send_id == send_id)))
        data = gather(db, org_uuid, now=now, public_url=ctx.settings.public_url)
    # The claim is committed: a duplicate of this task now finds the week taken.
    if not ctx.settings.public_url.startswith("https://"):
        # RFC 8058 section 3.1: the one-click URI must be HTTPS; the header is still sent (docs/digest.md).
        log.warning("digest.unsubscribe_not_https", org_id=org_id, public_url=ctx.settings.public_url)

    accepted = len(delivered)
    refused: dict[str, str] = {}
    for recipient in to:
        if recipient.user_id in delivered:  # reached by an earlier attempt of this week's send
            continue
        mine = personal_digest(data, org_uuid, recipient.user_id, recipient.cluster_ids, ctx.settings)
        message = compose_personal(config.sender, recipient.email, mine.digest.subject, mine.digest.text,
                                   mine.digest.html, mine.one_click_url, mine.digest.images)
        try:
            smtp.send_message(config, message, [recipient.email], sleep=ctx.sleep)
        except smtp.TransientSendError as exc:
            final = attempts >= MAX_ATTEMPTS
            with ctx.unit() as db:
                finish(db, send_id, status="failed" if final else "retrying", now=now, recipients=accepted,
                       error=f"attempt {attempts}: {exc}")
            log.warning("digest.send_transient", org_id=org_id, attempt=attempts, final=final, error=str(exc))
            if final:
                return summary | {"status": "failed", "error": str(exc)}
            raise  # a ConnectionError: the Celery task retries it with backoff
        except smtp.PermanentSendError as exc:
            refused[recipient.email] = str(exc)
            log.warning("digest.recipient_refused", org_id=org_id, error=str(exc))
            continue
        with ctx.unit() as db:
            db.execute(insert(DigestDelivery).values(send_id=send_id, user_id=recipient.user_id, org_id=org_uuid)
                       .on_conflict_do_nothing())
        accepted += 1

    if accepted == 0 and refused:
        reasons = sorted(set(refused.values()))
        error = reasons[0] if len(reasons) == 1 else "; ".join(f"{r}: {why}" for r, why in sorted(refused.items()))
        with ctx.unit() as db:
            finish(db, send_id, status="failed", now=now, error=error)
        log.warning("digest.send_failed", org_id=org_id, error=error)
        return summary | {"status": "failed", "error": error}
    detail = "; ".join(f"{rcpt}: {why}" for rcpt, why in sorted(refused.items())) or None
    with ctx.unit() as db:
        finish(db, send_id, status="sent", now=now, recipients=accepted,
               error=f"refused: {detail}" if detail else None)
    log.info("digest.sent", org_id=org_id, week_start=week.isoformat(), recipients=accepted)
    return summary | {"status": "sent", "recipients": accepted}


@dataclass(frozen=True)
class TrialSend:
    status: Literal["sent", "skipped", "failed"]
    to: str
    detail: str


def smtp_configured(settings: Settings) -> bool:
    """Whether this installation has a mail server (HEADROOM_SMTP_HOST)."""
    return smtp.config_from_settings(settings) is not None


def send_test(db: Session, principal: Principal, settings: Settings, *, now: dt.datetime) -> TrialSend:
    """Send this week's email to the caller now, with a link that verifies their address (one attempt: the
    caller waits for the answer)."""
    user = caller_user(db, principal)
    config = smtp.config_from_settings(settings)
    if config is None:
        log.info("digest.test_skipped", reason="smtp not configured (HEADROOM_SMTP_HOST is unset)")
        return TrialSend("skipped", user.email, "No mail server is configured (HEADROOM_SMTP_HOST); nothing was sent.")
    # What this member gets on Mondays: their clusters, their own unsubscribe link and headers.
    choice = member_prefs(db, user.id, principal.org_id)
    data = gather(db, principal.org_id, now=now, public_url=settings.public_url)
    mine = personal_digest(data, principal.org_id, user.id, choice.cluster_ids, settings)
    digest = mine.digest
    token = verification_token(settings.secret_key, user.id, user.email, now=now)
    link = f"{settings.public_url.rstrip('/')}/settings/digest?verify={token}"
    text = f"{digest.text}\nThis is a test send. Confirm that you read this address to get the weekly email: {link}\n"
    body_html = digest.html.replace(
        "</body>",
        f'<p>This is a test send. <a href="{html.escape(link)}">Confirm that you read this address</a> to get the weekly '
        "email.</p></body>",
    )
    message = compose_personal(config.sender, user.email, f"Test send: {digest.subject}", text, body_html,
                               mine.one_click_url, digest.images)
    try:
        smtp.send_message(config, message, [user.email], retry=smtp.NO_RETRY)
    except smtp.SendError as exc:
        return TrialSend("failed", user.email, str(exc))
    audit_test_send(db, principal)
    return TrialSend("sent", user.email, "Sent; follow its link to verify your address.")
