"""The weekly advisory email's shell: settings, recipients, the data per org (for headroom.digest.build), the
(org, ISO week) send record and email verification. Callers commit; SMTP lives in headroom.platform.smtp.

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
import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import and_, func, or_, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from headroom.accounts.models import Membership, Organization, User
from headroom.accounts.service import Principal, audit
from headroom.clusters.models import Cluster
from headroom.digest.build import (
    ClusterDigest,
    Digest,
    DigestData,
    FindingItem,
    SourceProblem,
    build_digest,
    iso_week_start,
)
from headroom.digest.models import DigestSend, EmailVerification, OrgDigestSettings
from headroom.domain.model import SEVERITIES, Change
from headroom.findings.models import FindingRecord, Recommendation
from headroom.findings.service import stored_evidence, stored_group, stored_impact
from headroom.inventory.limits import resolve_instance_types
from headroom.inventory.models import Instance
from headroom.platform import smtp
from headroom.projections import service as projections_service
from headroom.changes import service as changes_service
from headroom.platform.errors import NotFound
from headroom.platform.jobs.context import JobContext
from headroom.platform.logging import get_logger
from headroom.platform.settings import Settings
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


def recipients(db: Session, org_id: uuid.UUID, *, include_viewers: bool) -> list[str]:
    """Return the emails the org's digest goes to: active members with a verified email, admins and owners (and
    viewers when the org asked for them), in address order."""
    roles = (*DEFAULT_ROLES, "viewer") if include_viewers else DEFAULT_ROLES
    rows = db.scalars(
        select(User.email)
        .join(Membership, Membership.user_id == User.id)
        .join(EmailVerification, EmailVerification.user_id == User.id)
        .where(
            Membership.org_id == org_id,
            Membership.role.in_(roles),
            User.is_active.is_(True),
            func.lower(EmailVerification.email) == func.lower(User.email),
        )
        .order_by(func.lower(User.email))
    )
    return list(rows)


def last_sends(db: Session, org_id: uuid.UUID, limit: int = LAST_SENDS) -> list[DigestSend]:
    return list(
        db.scalars(
            select(DigestSend).where(DigestSend.org_id == org_id).order_by(DigestSend.week_start.desc()).limit(limit)
        )
    )


# --- gathering -------------------------------------------------------------------------------------------


def _fix_line(change: Change) -> str:
    what = (f"{change.key} = {change.proposed}" if change.current is None
            else f"{change.key}: {change.current} -> {change.proposed}")
    where = change.applies_to()
    return f"{what} on {where}" if where else what


def _item(finding: FindingRecord, fixes: Sequence[str], url: str) -> FindingItem:
    impact = stored_impact(finding)
    evidence = stored_evidence(finding).evidence
    group = stored_group(finding)
    return FindingItem(
        title=finding.title,
        severity=finding.severity,
        entity=f"{finding.entity_kind.replace('_', ' ')} {finding.entity_id}",
        impact=impact.summary if impact is not None else "",
        fix=tuple(fixes),
        forecast=tuple(evidence.forecasts) if evidence is not None else (),
        headroom_before_pct=impact.headroom_before_pct if impact is not None else None,
        monthly_cost_delta_usd=impact.monthly_cost_delta_usd if impact is not None else None,
        url=url,
        group_id=group.id if group is not None else None,
        group_cause=group.cause if group is not None else "",
        group_summary=group.summary if group is not None else "",
    )


def _active(now: dt.datetime) -> Any:
    return or_(
        FindingRecord.status.in_(("open", "acknowledged")),
        and_(FindingRecord.status == "snoozed", FindingRecord.snoozed_until <= now),
    )


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


def gather(db: Session, org_id: uuid.UUID, *, now: dt.datetime, public_url: str) -> DigestData:
    """Collect one org's digest data for the 7 days before `now`."""
    org = db.get(Organization, org_id)
    if org is None:
        raise NotFound("No such organisation.")
    base = public_url.rstrip("/")
    start = now - PERIOD
    clusters = list(db.scalars(select(Cluster).where(Cluster.org_id == org_id).order_by(Cluster.name)))

    open_rows = list(db.scalars(select(FindingRecord).where(FindingRecord.org_id == org_id, _active(now))))
    fixes: dict[uuid.UUID, list[str]] = defaultdict(list)
    if open_rows:
        recs = db.scalars(
            select(Recommendation)
            .where(Recommendation.org_id == org_id, Recommendation.finding_id.in_([f.id for f in open_rows]))
            .order_by(Recommendation.finding_id, Recommendation.position)
        )
        for rec in recs:
            if len(fixes[rec.finding_id]) < FIXES_PER_FINDING:
                fixes[rec.finding_id].append(_fix_line(rec.change))

    new_counts: dict[uuid.UUID, int] = {
        cid: n
        for cid, n in db.execute(
            select(FindingRecord.cluster_id, func.count())
            .where(FindingRecord.org_id == org_id, FindingRecord.first_seen_at >= start, FindingRecord.first_seen_at < now)
            .group_by(FindingRecord.cluster_id)
        )
    }
    resolved_counts: dict[uuid.UUID, int] = {
        cid: n
        for cid, n in db.execute(
            select(FindingRecord.cluster_id, func.count())
            .where(FindingRecord.org_id == org_id, FindingRecord.status == "resolved", FindingRecord.resolved_at >= start,
                   FindingRecord.resolved_at < now)
            .group_by(FindingRecord.cluster_id)
        )
    }

    by_cluster: dict[uuid.UUID, list[FindingRecord]] = defaultdict(list)
    for f in open_rows:
        by_cluster[f.cluster_id].append(f)
    limit_notes = _limit_notes(db, org_id)
    cluster_digests = []
    for cluster in clusters:
        rows = by_cluster.get(cluster.id, [])
        counts: dict[str, int] = dict.fromkeys(SEVERITIES, 0)
        for f in rows:
            counts[f.severity] = counts.get(f.severity, 0) + 1
        cluster_url = f"{base}/clusters/{cluster.id}"
        items = [_item(f, fixes.get(f.id, ()), f"{cluster_url}?finding={f.id}") for f in rows]
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
    """Gather and build one org's digest for the week of `now`."""
    return build_digest(gather(db, org_id, now=now, public_url=public_url))


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


def _signature(secret_key: str, payload: str) -> str:
    return _b64(hmac.new(secret_key.encode(), b"digest-verify:" + payload.encode(), hashlib.sha256).digest())


def verification_token(secret_key: str, user_id: uuid.UUID, email: str, *, now: dt.datetime) -> str:
    """A signed, expiring token that proves whoever holds it read mail sent to `email`."""
    expires = int((now + VERIFY_TTL).timestamp())
    payload = _b64(f"{user_id}.{_email_hash(email)}.{expires}".encode())
    return f"{payload}.{_signature(secret_key, payload)}"


def verify_email(db: Session, principal: Principal, token: str, *, secret_key: str, now: dt.datetime) -> str:
    """Mark the caller's current email verified with a token from a test digest; return the email.

    Any token that is not the caller's own, current and unexpired is a 404 (it names nothing of anyone else)."""
    not_found = NotFound("This verification link is unknown, expired or for another account or address.")
    payload, _, signature = token.partition(".")
    # bytes: compare_digest refuses str with non-ASCII characters, and a link can carry any
    if not payload or not hmac.compare_digest(_signature(secret_key, payload).encode(), signature.encode()):
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
        to = recipients(db, org_uuid, include_viewers=settings.include_viewers)
        if not to:
            finish(db, send_id, status="skipped", now=now,
                   error="no member with a verified email in the recipient roles")
            return summary | {"status": "skipped", "reason": "no recipients"}
        digest = render(db, org_uuid, now=now, public_url=ctx.settings.public_url)
    # The claim is committed: a duplicate of this task now finds the week taken.

    message = smtp.compose(config.sender, to, digest.subject, digest.text, digest.html)
    try:
        result = smtp.send_message(config, message, to, sleep=ctx.sleep)
    except smtp.TransientSendError as exc:
        final = attempts >= MAX_ATTEMPTS
        with ctx.unit() as db:
            finish(db, send_id, status="failed" if final else "retrying", now=now, error=f"attempt {attempts}: {exc}")
        log.warning("digest.send_transient", org_id=org_id, attempt=attempts, final=final, error=str(exc))
        if final:
            return summary | {"status": "failed", "error": str(exc)}
        raise  # a ConnectionError: the Celery task retries it with backoff
    except smtp.PermanentSendError as exc:
        with ctx.unit() as db:
            finish(db, send_id, status="failed", now=now, error=str(exc))
        log.warning("digest.send_failed", org_id=org_id, error=str(exc))
        return summary | {"status": "failed", "error": str(exc)}
    refused = "; ".join(f"{rcpt}: {why}" for rcpt, why in sorted(result.refused.items())) or None
    with ctx.unit() as db:
        finish(db, send_id, status="sent", now=now, recipients=len(result.accepted),
               error=f"refused: {refused}" if refused else None)
    log.info("digest.sent", org_id=org_id, week_start=week.isoformat(), recipients=len(result.accepted))
    return summary | {"status": "sent", "recipients": len(result.accepted)}


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
    digest = render(db, principal.org_id, now=now, public_url=settings.public_url)
    token = verification_token(settings.secret_key, user.id, user.email, now=now)
    link = f"{settings.public_url.rstrip('/')}/settings/digest?verify={token}"
    text = f"{digest.text}\nThis is a test send. Confirm that you read this address to get the weekly email: {link}\n"
    body_html = digest.html.replace(
        "</body>",
        f'<p>This is a test send. <a href="{html.escape(link)}">Confirm that you read this address</a> to get the weekly '
        "email.</p></body>",
    )
    message = smtp.compose(config.sender, [user.email], f"Test send: {digest.subject}", text, body_html)
    try:
        smtp.send_message(config, message, [user.email], retry=smtp.NO_RETRY)
    except smtp.SendError as exc:
        return TrialSend("failed", user.email, str(exc))
    audit_test_send(db, principal)
    return TrialSend("sent", user.email, "Sent; follow its link to verify your address.")
