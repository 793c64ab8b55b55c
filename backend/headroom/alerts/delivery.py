"""Alert channels and delivery (docs/alerts.md).

Events: an advice run that opens a finding, raises its severity or resolves it calls `queue_events`, which writes
one delivery record per (event, channel) whose rules match (minimum severity, rule families), with the event's
unique key: a repeated run, a redelivered task or two workers can never make a second record for one event.

Quiet hours: an alert below critical recorded inside a channel's quiet hours (UTC) is due when they end; critical
alerts, resolutions and tests go at once. Re-notify: a channel with `renotify_hours` gets a "reminder" of each
finding it announced that is still open, once per interval (`queue_reminders`, run by each delivery pass).

Delivery (`deliver_due`, the every-minute `alerts.deliver` job on its own queue):
each due record is **claimed** (status "sending", a lease of CLAIM_LEASE, FOR UPDATE SKIP LOCKED) and committed
before the request is made, then marked:
- 2xx: sent;
- 429 (with Retry-After) and 5xx / network errors: retried with exponential backoff (RETRY_BASE x 2^attempt,
  at most RETRY_MAX) up to MAX_ATTEMPTS, then failed with the last error;
- another 4xx: failed at once (a permanent error: a revoked webhook, a wrong routing key), shown on the channel.
A worker killed after the claim leaves the record "sending"; when its lease expires it is sent again only to the
services that drop a repeated event themselves (PagerDuty by dedup_key, Alertmanager by labels, a webhook by
X-Headroom-Event-Id); for Slack, which would show it twice, it is marked failed ("interrupted") instead of resent.

Alertmanager (`keep_alive`, after each pass's deliveries): Alertmanager resolves an alert whose endsAt has passed,
so every finding an Alertmanager channel was told about, that is still open (no resolution recorded for that
channel since, and the finding not resolved), and every apply run's stop not yet resolved (its plan's undo done),
is re-posted in one request with endsAt the channel timing's
`firing_for` ahead, as Prometheus re-sends its firing alerts every evaluation. A re-post records nothing (no
delivery record: the job can run any number of times) and notifies nobody again: Alertmanager merges an alert with
the same labels into the one it holds, and notifies by its own group_interval and repeat_interval. Re-notify
(`renotify_hours`) does not apply to Alertmanager channels: their repeat_interval does that.
"""

from __future__ import annotations

import base64
import datetime as dt
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

import httpx
from sqlalchemy import or_, select
from sqlalchemy.dialects.postgresql import distinct_on, insert
from sqlalchemy.orm import Session

from headroom.alerts.models import AlertChannel, AlertDelivery
from headroom.clusters.models import Cluster
from headroom.domain.notify import (
    AlertEvent,
    email_text,
    headline,
    ALERTMANAGER_FIRING_FOR,
    ALERTMANAGER_TEST_FOR,
    alertmanager_alert,
    alertmanager_payload,
    pagerduty_payload,
    severity_at_least,
    slack_payload,
    webhook_body,
    webhook_signature,
)
from headroom.platform.logging import get_logger
from headroom.platform.mail import html_page
from headroom.platform.smtp import SendError, SmtpConfig, compose, send_message
from headroom.platform.outbound import check_url, current_policy, failure_in_words
from headroom.platform.security import SecretBox

log = get_logger("headroom.alerts")

CLAIM_LEASE = dt.timedelta(minutes=2)
RETRY_BASE = dt.timedelta(seconds=30)
RETRY_MAX = dt.timedelta(hours=1)
MAX_ATTEMPTS = 8
TIMEOUT_SECONDS = 10.0
# Receivers that drop a repeated event themselves: safe to send again after a worker died mid-send (an email
# would arrive twice, as a Slack message would be shown twice).
IDEMPOTENT_KINDS = ("pagerduty", "alertmanager", "webhook")
# The events that announce a finding to a channel (a resolution ends it).
ANNOUNCING_KINDS = ("opened", "escalated", "reminder", "forecast")
APPLY_RULE = "apply"  # the rule of an apply run's events (alerts.service.queue_apply_event)


@dataclass(frozen=True)
class AlertmanagerTiming:
    """How far ahead an Alertmanager alert's endsAt is: an open finding's (renewed at every pass) and a test's."""

    firing_for: dt.timedelta = ALERTMANAGER_FIRING_FOR
    test_for: dt.timedelta = ALERTMANAGER_TEST_FOR

    @classmethod
    def of(cls, settings: Any) -> AlertmanagerTiming:
        return cls(firing_for=dt.timedelta(seconds=settings.alertmanager_firing_for_seconds),
                   test_for=dt.timedelta(seconds=settings.alertmanager_test_for_seconds))


def split_userinfo(url: str) -> tuple[str, tuple[str, str] | None]:
    """The URL without its `user:password@` (RFC 3986 section 3.2.1 userinfo) and that user and password, if any.

    The userinfo is a credential: it stays only in the encrypted URL and is sent as HTTP Basic authentication
    (RFC 7617), never shown, logged or put in a request line."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, None
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port is not None else "")
    return urlunsplit(parts._replace(netloc=netloc)), (unquote(parts.username or ""), unquote(parts.password or ""))


def url_hint(url: str) -> str:
    """What the UI shows of a channel's URL: scheme and host, never a user:password (a Slack webhook's path is its
    secret, the userinfo of any URL is a credential)."""
    parts = urlsplit(split_userinfo(url)[0])
    return f"{parts.scheme}://{parts.netloc}"


def shown_hint(stored: str) -> str:
    """A stored hint as the API shows it: hints saved before the userinfo was kept out carry `user:pass@`."""
    scheme, sep, rest = stored.partition("://")
    return f"{scheme}{sep}{rest.rpartition('@')[2]}" if sep and "@" in rest else stored


def _rule_family(rule: str, families: dict[str, str]) -> str:
    return families.get(rule, "")


def quiet_until(channel: AlertChannel, at: dt.datetime) -> dt.datetime | None:
    """When the channel's quiet hours that `at` falls in end (UTC), or None outside them (or without any)."""
    start, end = channel.quiet_start_hour, channel.quiet_end_hour
    if start is None or end is None:
        return None
    hour = at.astimezone(dt.UTC).hour
    inside = start <= hour < end if start < end else (hour >= start or hour < end)
    if not inside:
        return None
    day = at.astimezone(dt.UTC).replace(minute=0, second=0, microsecond=0)
    until = day.replace(hour=end)
    return until if until > at else until + dt.timedelta(days=1)


def _due(channel: AlertChannel, event: AlertEvent, now: dt.datetime) -> dt.datetime:
    """Critical alerts and resolutions go at once; the rest wait for the end of the channel's quiet hours."""
    if event.severity == "critical" or event.kind in ("resolved", "test"):
        return now
    return quiet_until(channel, now) or now


def pending(channel: AlertChannel, event: AlertEvent, now: dt.datetime) -> dict[str, Any]:
    """A delivery record of an event for a channel, due now or when the channel's quiet hours end."""
    return {"org_id": channel.org_id, "channel_id": channel.id, "event_key": event.key, "event": event.to_json(),
            "status": "pending", "attempts": 0, "next_attempt_at": _due(channel, event, now), "created_at": now}


def insert_pending(db: Session, rows: list[dict[str, Any]]) -> int:
    """Insert delivery records; one already there (same channel and event key) is left alone. Returns the new ones."""
    if not rows:
        return 0
    return len(db.execute(insert(AlertDelivery).values(rows)
                          .on_conflict_do_nothing(index_elements=["channel_id", "event_key"])
                          .returning(AlertDelivery.id)).all())


def queue_events(db: Session, org_id: uuid.UUID, events: Sequence[AlertEvent], *, now: dt.datetime,
                 families: dict[str, str]) -> int:
    """Record one delivery per (event, matching channel); an event already recorded for a channel is skipped.
    `families`: rule id -> family (the advisor's rule catalog). Returns the records created."""
    if not events:
        return 0
    channels = list(db.scalars(select(AlertChannel).where(AlertChannel.org_id == org_id, AlertChannel.enabled)))
    # a resolution goes where the finding was announced (a warning under a channel's minimum never was; a forecast
    # alert announced it too)
    resolved_ids = [e.finding_id for e in events if e.kind == "resolved" and e.finding_id]
    announced = {(channel_id, finding_id) for channel_id, finding_id in db.execute(
        select(AlertDelivery.channel_id, AlertDelivery.event["finding_id"].astext)
        .where(AlertDelivery.org_id == org_id, AlertDelivery.event["finding_id"].astext.in_(resolved_ids),
               AlertDelivery.event["kind"].astext.in_(ANNOUNCING_KINDS)))} if resolved_ids else set()
    rows = []
    for channel in channels:
        for event in events:
            if event.kind == "resolved":
                if (channel.id, event.finding_id) not in announced:
                    continue
            elif not severity_at_least(event.severity, channel.min_severity):
                continue
            if channel.families and _rule_family(event.rule, families) not in channel.families:
                continue
            rows.append(pending(channel, event, now))
    return insert_pending(db, rows)


# A forecast that dips in and out of a channel's horizon alerts once a day at most (docs/alerts.md).
FORECAST_REPEAT = dt.timedelta(hours=24)


@dataclass(frozen=True)
class Crossing:
    """One finding's forecast of `kind` ("burst_empty", "ceiling"): soonest seconds before the run (None: it had
    none, or the finding just opened) and after it, with the event that announces it."""

    event: AlertEvent
    kind: str
    before: float | None
    after: float


def horizon_seconds(channel: AlertChannel, kind: str) -> float | None:
    """The channel's horizon for a forecast kind (None: the channel does not alert on it)."""
    if kind == "burst_empty" and channel.burst_horizon_hours is not None:
        return channel.burst_horizon_hours * 3600.0
    if kind == "ceiling" and channel.ceiling_horizon_days is not None:
        return channel.ceiling_horizon_days * 86400.0
    return None


def queue_crossings(db: Session, org_id: uuid.UUID, crossings: Sequence[Crossing], *, now: dt.datetime,
                    families: dict[str, str], announced: set[str]) -> int:
    """Record a "forecast" delivery for each channel whose horizon a forecast just came within (it was beyond it,
    or had none, before this run). The horizon is the channel's own choice, so the minimum severity does not
    apply to it (the rule families do). Skipped: a channel that gets this run's opened or escalated alert of the
    same finding (it says the forecast), and a forecast of the same finding and kind sent there in the last
    FORECAST_REPEAT."""
    channels = [c for c in db.scalars(select(AlertChannel).where(AlertChannel.org_id == org_id, AlertChannel.enabled))
                if c.burst_horizon_hours is not None or c.ceiling_horizon_days is not None]
    if not crossings or not channels:
        return 0
    recent = set()  # (channel, "<finding id>:<kind>") of the forecasts sent lately; keys: <id>:forecast:<kind>:<at>
    for channel_id, key in db.execute(select(AlertDelivery.channel_id, AlertDelivery.event_key)
                                      .where(AlertDelivery.org_id == org_id,
                                             AlertDelivery.event["kind"].astext == "forecast",
                                             AlertDelivery.created_at > now - FORECAST_REPEAT)):
        finding_id, _, rest = key.partition(":forecast:")
        recent.add((channel_id, f"{finding_id}:{rest.split(':', 1)[0]}"))
    rows = []
    for channel in channels:
        for c in crossings:
            horizon = horizon_seconds(channel, c.kind)
            if horizon is None or c.after > horizon or (c.before is not None and c.before <= horizon):
                continue
            if channel.families and _rule_family(c.event.rule, families) not in channel.families:
                continue
            if c.event.finding_id in announced and severity_at_least(c.event.severity, channel.min_severity):
                continue
            if (channel.id, f"{c.event.finding_id}:{c.kind}") in recent:
                continue
            rows.append(pending(channel, c.event, now))
    return insert_pending(db, rows)


def queue_reminders(db: Session, *, now: dt.datetime) -> int:
    """For each channel with a re-notify interval: a "reminder" for every finding it announced that is still open
    (no resolution recorded for that channel since) and was last sent there more than the interval ago. The key
    holds the interval's number since the epoch, so a reminder is recorded once per interval whatever runs it."""
    channels = list(db.scalars(select(AlertChannel).where(AlertChannel.renotify_hours.is_not(None),
                                                          AlertChannel.kind != "alertmanager",
                                                          AlertChannel.enabled)))
    rows = []
    for channel in channels:
        assert channel.renotify_hours is not None
        interval = dt.timedelta(hours=channel.renotify_hours)
        last: dict[str, AlertDelivery] = {}
        resolved: set[str] = set()
        for d in db.scalars(select(AlertDelivery).where(AlertDelivery.channel_id == channel.id)
                            .order_by(AlertDelivery.created_at, AlertDelivery.id)):
            fid = d.event.get("finding_id")
            if not fid or d.event.get("rule") == APPLY_RULE:  # an apply run's events are no finding's
                continue
            if d.event.get("kind") == "resolved":
                resolved.add(fid)
                last.pop(fid, None)
            elif d.event.get("kind") in ("opened", "escalated", "reminder"):
                resolved.discard(fid)
                last[fid] = d
        bucket = int(now.timestamp() // interval.total_seconds())
        for fid, d in last.items():
            if fid in resolved or d.status != "sent" or d.sent_at is None or now - d.sent_at < interval:
                continue
            event = AlertEvent.from_json(d.event)
            reminder = AlertEvent(**{**vars(event), "kind": "reminder", "at": now,
                                     "key": f"{fid}:reminder:{channel.renotify_hours}h:{bucket}"})
            rows.append(pending(channel, reminder, now))
    return insert_pending(db, rows)


@dataclass(frozen=True)
class Sent:
    status_code: int | None
    error: str | None
    retry_after: float | None = None
    permanent: bool = False  # an error not worth retrying whatever its code (an SMTP 5xx, no mail server)


Post = Callable[[str, bytes, dict[str, str]], httpx.Response]


def default_post(url: str, body: bytes, headers: dict[str, str]) -> httpx.Response:
    with httpx.Client(timeout=TIMEOUT_SECONDS, follow_redirects=False) as client:
        return client.post(url, content=body, headers=headers)


def request_for(channel: AlertChannel, event: AlertEvent, box: SecretBox, *, now: dt.datetime,
                alertmanager: AlertmanagerTiming = AlertmanagerTiming()) -> tuple[str, bytes, dict[str, str]]:
    """The URL, body and headers one channel kind expects for an event."""
    import json

    url, userinfo = split_userinfo(box.decrypt(channel.url_enc))
    secret = box.decrypt(channel.secret_enc) if channel.secret_enc else None
    headers = {"Content-Type": "application/json", "User-Agent": "Headroom-Alerts/1"}
    if userinfo is not None:
        # RFC 7617: base64 of user ":" password, UTF-8 (its section 2.1 charset); an Alertmanager or a webhook
        # behind a reverse proxy with basic auth is reached as `https://user:password@host/`.
        headers["Authorization"] = "Basic " + base64.b64encode(f"{userinfo[0]}:{userinfo[1]}".encode()).decode()
    if channel.kind == "slack":
        return url, json.dumps(slack_payload(event)).encode(), headers
    if channel.kind == "pagerduty":
        return url, json.dumps(pagerduty_payload(event, secret or "")).encode(), headers
    # The receivers compare times with their own clocks: the wall clock, not the run's `now`.
    wall = dt.datetime.now(dt.UTC)
    if channel.kind == "alertmanager":
        alerts = alertmanager_payload(event, wall, firing_for=alertmanager.firing_for, test_for=alertmanager.test_for)
        return url.rstrip("/") + "/api/v2/alerts", json.dumps(alerts).encode(), headers
    body = webhook_body(event)
    stamp = str(int(wall.timestamp()))
    headers |= {"X-Headroom-Event-Id": event.key, "X-Headroom-Timestamp": stamp}
    if secret:
        headers["X-Headroom-Signature"] = webhook_signature(secret, stamp, body)
    return url, body, headers


def _email(channel: AlertChannel, event: AlertEvent, box: SecretBox, smtp: SmtpConfig | None) -> Sent:
    if smtp is None:
        return Sent(None, "No mail server is configured for Headroom: set HEADROOM_SMTP_HOST (and HEADROOM_SMTP_PORT, "
                    "HEADROOM_SMTP_USERNAME and HEADROOM_SMTP_PASSWORD if the server needs them), then restart "
                    "Headroom.", permanent=True)
    recipients = [a.strip() for a in box.decrypt(channel.url_enc).split(",") if a.strip()]
    text = email_text(event)
    message = compose(smtp.sender, recipients, headline(event), text, html_page(text))
    message["Auto-Submitted"] = "auto-generated"  # RFC 3834: no out-of-office replies to an alert
    try:
        send_message(smtp, message, recipients)
    except SendError as exc:
        return Sent(exc.code, f"Mail not sent{f' (SMTP {exc.code})' if exc.code else ''}: {exc}",
                    permanent=not exc.transient)
    return Sent(250, None)


def send(channel: AlertChannel, event: AlertEvent, box: SecretBox, *, now: dt.datetime,
         post: Post = default_post, smtp: SmtpConfig | None = None,
         alertmanager: AlertmanagerTiming = AlertmanagerTiming()) -> Sent:
    """Make the request for one event; never raises (the outcome is recorded)."""
    if channel.kind == "email":
        return _email(channel, event, box, smtp)
    url, body, headers = request_for(channel, event, box, now=now, alertmanager=alertmanager)
    return _post(url, body, headers, post)


def _post(url: str, body: bytes, headers: dict[str, str], post: Post) -> Sent:
    refused = check_url(url, current_policy())
    if refused is not None:
        return Sent(None, f"Headroom's outbound policy refuses this address: {refused}.", permanent=True)
    try:
        response = post(url, body, headers)
    except httpx.HTTPError as exc:
        return Sent(None, failure_in_words(exc, url))
    if 200 <= response.status_code < 300:
        return Sent(response.status_code, None)
    retry_after = None
    raw = response.headers.get("Retry-After")
    if raw is not None:
        try:
            retry_after = max(0.0, float(raw))
        except ValueError:
            retry_after = None
    text = response.text[:300].strip()
    host = httpx.URL(url).host
    return Sent(response.status_code, f"{host} answered HTTP {response.status_code}{': ' + text if text else ''}",
                retry_after)


def _claim(db: Session, now: dt.datetime, limit: int) -> list[tuple[int, str]]:
    """Claim the due records (pending and due, or a lapsed claim): status "sending" with a lease; committed by the
    caller before anything is sent."""
    rows = list(db.execute(
        select(AlertDelivery, AlertChannel.kind).join(AlertChannel, AlertChannel.id == AlertDelivery.channel_id)
        .where(or_((AlertDelivery.status == "pending") & (AlertDelivery.next_attempt_at <= now),
                   (AlertDelivery.status == "sending") & (AlertDelivery.claimed_until < now)))
        .order_by(AlertDelivery.next_attempt_at, AlertDelivery.id)
        .limit(limit).with_for_update(of=AlertDelivery, skip_locked=True)).all())
    claimed = []
    for row, kind in rows:
        if row.status == "sending" and kind not in IDEMPOTENT_KINDS:
            row.status, row.claimed_until = "failed", None
            row.last_error = ("interrupted: the worker stopped while sending; not sent again, as this channel would "
                              "show it twice")
            continue
        row.status, row.claimed_until = "sending", now + CLAIM_LEASE
        row.attempts += 1
        claimed.append((row.id, kind))
    return claimed


def record(row: AlertDelivery, outcome: Sent, now: dt.datetime) -> None:
    row.last_status_code, row.claimed_until = outcome.status_code, None
    if outcome.error is None:
        row.status, row.sent_at, row.last_error = "sent", now, None
        return
    row.last_error = outcome.error
    transient = not outcome.permanent and (outcome.status_code is None or outcome.status_code == 429
                                           or outcome.status_code >= 500)
    if not transient or row.attempts >= MAX_ATTEMPTS:
        row.status = "failed"
        return
    backoff = min(RETRY_BASE * (2 ** (row.attempts - 1)), RETRY_MAX)
    if outcome.retry_after is not None:
        backoff = max(backoff, dt.timedelta(seconds=outcome.retry_after))
    row.status, row.next_attempt_at = "pending", now + backoff


def deliver_due(units: Callable[[], Any], box: SecretBox, *, now: Callable[[], dt.datetime],
                post: Post = default_post, smtp: SmtpConfig | None = None, limit: int = 100,
                alertmanager: AlertmanagerTiming = AlertmanagerTiming()) -> dict[str, int]:
    """Claim, send and record every due delivery (see the module); each claim is committed before its request.
    Then re-post every open finding's alert to each Alertmanager channel (`keep_alive`)."""
    counts = {"sent": 0, "retrying": 0, "failed": 0}
    with units() as db:
        queue_reminders(db, now=now())
    with units() as db:
        claimed = _claim(db, now(), limit)
    for delivery_id, _kind in claimed:
        with units() as db:  # read what to send; no connection is held while the receiver answers
            row = db.get(AlertDelivery, delivery_id)
            channel = db.get(AlertChannel, row.channel_id) if row is not None else None
            if row is None or channel is None:
                continue
            event = AlertEvent.from_json(row.event)
            db.expunge(channel)
        started = time.monotonic()
        outcome = send(channel, event, box, now=now(), post=post, smtp=smtp, alertmanager=alertmanager)
        with units() as db:
            row = db.get(AlertDelivery, delivery_id)
            if row is None:
                continue
            record(row, outcome, now())
            counts["sent" if row.status == "sent" else "retrying" if row.status == "pending" else "failed"] += 1
            log.info("alerts.delivery", channel=str(channel.id), kind=channel.kind, event_kind=event.kind,
                     status=row.status, code=outcome.status_code, seconds=round(time.monotonic() - started, 3))
    counts["reposted"] = keep_alive(units, box, post=post, alertmanager=alertmanager)
    return counts


def open_alerts(db: Session, channel: AlertChannel) -> list[AlertEvent]:
    """The last event sent to the channel of each finding it was told about and not told is resolved since (a
    resolution recorded for it, sent or not yet, ends it: the advisor's, or a person's in Headroom), of a cluster
    that still exists."""
    finding_id = AlertDelivery.event["finding_id"].astext
    kind = AlertDelivery.event["kind"].astext
    dedup_key = AlertDelivery.event["dedup_key"].astext
    is_apply = AlertDelivery.event["rule"].astext == APPLY_RULE
    mine = (AlertDelivery.org_id == channel.org_id, AlertDelivery.channel_id == channel.id)
    last = list(db.scalars(
        select(AlertDelivery).ext(distinct_on(finding_id))
        .where(*mine, finding_id.is_not(None), ~is_apply,
               or_(kind == "resolved", (kind.in_(ANNOUNCING_KINDS)) & (AlertDelivery.status == "sent")))
        .order_by(finding_id, AlertDelivery.created_at.desc(), AlertDelivery.id.desc())))
    # an apply run's stop is open until its plan's resolution (one alert per plan, by its dedup key)
    last += list(db.scalars(
        select(AlertDelivery).ext(distinct_on(dedup_key))
        .where(*mine, is_apply, or_(kind == "resolved", (kind == "apply") & (AlertDelivery.status == "sent")))
        .order_by(dedup_key, AlertDelivery.created_at.desc(), AlertDelivery.id.desc())))
    events = [AlertEvent.from_json(d.event) for d in last if d.event["kind"] != "resolved"]
    if not events:
        return []
    clusters = {str(c) for c in db.scalars(select(Cluster.id).where(
        Cluster.org_id == channel.org_id, Cluster.id.in_([uuid.UUID(e.cluster_id) for e in events])))}
    return [e for e in events if e.cluster_id in clusters]


def keep_alive(units: Callable[[], Any], box: SecretBox, *, post: Post = default_post,
               alertmanager: AlertmanagerTiming = AlertmanagerTiming()) -> int:
    """Re-post every open finding's alert to each enabled Alertmanager channel, one request per channel, with
    endsAt `alertmanager.firing_for` ahead (see the module). Records nothing; a failure is logged and the next pass
    (a minute later, well inside endsAt) tries again. Returns the alerts re-posted."""
    import json

    with units() as db:
        work = []
        for channel in db.scalars(select(AlertChannel).where(AlertChannel.kind == "alertmanager",
                                                             AlertChannel.enabled)
                                  .order_by(AlertChannel.created_at, AlertChannel.id)):
            events = open_alerts(db, channel)
            if events:
                work.append((channel.id, box.decrypt(channel.url_enc), events))
    reposted = 0
    for channel_id, url, events in work:
        wall = dt.datetime.now(dt.UTC)  # Alertmanager compares endsAt with its own clock
        body = [alertmanager_alert(e, wall, firing_for=alertmanager.firing_for, test_for=alertmanager.test_for)
                for e in events]
        headers = {"Content-Type": "application/json", "User-Agent": "Headroom-Alerts/1"}
        outcome = _post(url.rstrip("/") + "/api/v2/alerts", json.dumps(body).encode(), headers, post)
        if outcome.error is None:
            reposted += len(events)
        log.info("alerts.reposted", channel=str(channel_id), alerts=len(events), code=outcome.status_code,
                 error=outcome.error)
    return reposted
