"""Alerts (docs/alerts.md): the organisation's channels (Slack, a signed webhook, PagerDuty Events v2,
its own Alertmanager), the events of the advice runs queued to them (headroom.alerts.delivery sends them), and the
cluster's Prometheus alerting rules: Headroom's thresholds with the cluster's own limits (its volumes' sustained
IOPS and MiB/s, its thread pools' configured sizes, PD's space lines), built from the cluster's last hour of
inventory, config and series (headroom.domain.promrules)."""

from __future__ import annotations

import datetime as dt
import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Protocol
from urllib.parse import urlsplit

from sqlalchemy import select
from sqlalchemy.orm import Session

from headroom.alerts import delivery
from headroom.alerts.models import AlertChannel, AlertDelivery
from headroom.alerts.schemas import ChannelCreate, ChannelRead, DeliveryRead
from headroom.clusters import service as clusters_service
from headroom.clusters.models import Cluster
from headroom.domain.model import Evidence, Forecast, Impact, Severity
from headroom.domain.notify import AlertEvent, forecast_sentence
from headroom.domain.words import duration_text
from headroom.domain.promrules import alert_rules
from headroom.platform.errors import InvalidInput, NotFound
from headroom.platform.outbound import require_allowed_url
from headroom.platform.principal import Principal
from headroom.platform.security import SecretBox
from headroom.platform.settings import Settings, get_settings
from headroom.platform.smtp import SmtpConfig

WINDOW = dt.timedelta(hours=1)  # enough to see which filesystems node_exporter reports for each store


@dataclass(frozen=True)
class RuleDownload:
    filename: str
    text: str
    notes: list[str]


def prometheus_rules(db: Session, principal: Principal, cluster_id: uuid.UUID, *, now: dt.datetime) -> RuleDownload:
    """The cluster's rule file (another org's cluster is NotFound)."""
    from headroom.timeseries.snapshots import build_snapshot

    cluster = clusters_service.get_cluster(db, principal, cluster_id)
    end = now.astimezone(dt.UTC).replace(second=0, microsecond=0)
    snapshot = build_snapshot(db, cluster.org_id, cluster.id, start=end - WINDOW, end=end)
    rules = alert_rules(snapshot)
    if not snapshot.nodes:
        rules.notes.append("The cluster has no TiKV node mapped to an EC2 instance yet: no rules.")
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", cluster.name).strip("-") or "cluster"
    return RuleDownload(filename=f"headroom-{slug}.rules.yml", text=rules.to_yaml(), notes=rules.notes)


# --- channels and events (headroom.alerts.delivery does the sending) ---------------------------------------




LAST_DELIVERIES = 10
MAX_EMAIL_RECIPIENTS = 20
EMAIL = re.compile(r"[^@\s,]+@[^@\s,]+\.[^@\s,]+")
PAGERDUTY_EVENTS_URL = "https://events.pagerduty.com/v2/enqueue"


# The test alert's own title says the channel works, which is true where it arrives; the channel's list of
# deliveries says whether it did arrive, so there it is only named.
TEST_TITLE = "Test alert from Headroom: this channel works"
TEST_TITLE_SHOWN = "Test alert"


def delivery_result(event: str, status: str, error: str | None) -> str:
    """A delivery's outcome in one sentence: a test says the channel works only once it was delivered."""
    if status == "sent":
        return "Delivered: this channel works." if event == "test" else "Delivered."
    if status == "sending":
        return "Sending now."
    reason = f": {error}" if error else "."
    if status == "pending":
        return f"Not delivered yet{reason} Headroom tries again by itself."
    return f"Not delivered{reason}"


@dataclass(frozen=True)
class ServiceUrl:
    """Where a service's channel kind posts: the hosts and path its own documentation gives."""

    label: str  # the field in words
    hosts: tuple[str, ...]
    path_prefix: str
    example: str
    where: str  # where the user finds the right URL


# Slack incoming webhooks are https://hooks.slack.com/services/T.../B.../... (https://api.slack.com/messaging/webhooks).
# PagerDuty's Events API v2 takes events at https://events.pagerduty.com/v2/enqueue
# (https://developer.pagerduty.com/docs/events-api-v2/trigger-events/), and at events.eu.pagerduty.com for an
# account in the EU service region (https://support.pagerduty.com/main/docs/service-regions). Headroom has no
# setting for a self-hosted or proxied Slack or PagerDuty, so any other address is refused: a webhook channel
# is the kind for an address of one's own.
SERVICE_URLS = {
    "slack": ServiceUrl("Slack webhook URL", ("hooks.slack.com",), "/services/",
                        "https://hooks.slack.com/services/…", "the Incoming Webhooks page of your Slack app"),
    "pagerduty": ServiceUrl("PagerDuty Events API URL", ("events.pagerduty.com", "events.eu.pagerduty.com"),
                            "/v2/enqueue", PAGERDUTY_EVENTS_URL,
                            "PagerDuty's Events API v2 documentation (events.eu.pagerduty.com in the EU region)"),
}


def _require_service_url(kind: str, url: str) -> None:
    """Refuse a Slack or PagerDuty channel whose URL is not that service's (a 422 naming the field in words)."""
    rule = SERVICE_URLS.get(kind)
    if rule is None:
        return
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").lower()
    if parts.scheme == "https" and host in rule.hosts and parts.path.startswith(rule.path_prefix) and not parts.port:
        return
    got = "" if not host else f"; this one points at {host}" if host not in rule.hosts else ""
    raise InvalidInput(
        f"{rule.label}: it must be {rule.example}{got}. Copy it from {rule.where}; for another address, add a "
        "webhook channel.",
        code="not_a_service_url",
        details=[{"field": "url", "loc": ["body", "url"], "message": f"not a {rule.label}"}],
    )


def _channel_read(db: Session, channel: AlertChannel) -> ChannelRead:
    rows = db.scalars(select(AlertDelivery).where(AlertDelivery.org_id == channel.org_id,
                                                  AlertDelivery.channel_id == channel.id)
                      .order_by(AlertDelivery.id.desc()).limit(LAST_DELIVERIES))
    return ChannelRead(
        id=channel.id, name=channel.name, kind=channel.kind,
        url_hint=channel.url_hint if channel.kind == "email" else delivery.shown_hint(channel.url_hint),
        has_secret=channel.secret_enc is not None, min_severity=channel.min_severity,
        families=list(channel.families), enabled=channel.enabled, created_at=channel.created_at,
        quiet_hours=[channel.quiet_start_hour, channel.quiet_end_hour]
        if channel.quiet_start_hour is not None and channel.quiet_end_hour is not None else None,
        renotify_hours=channel.renotify_hours, burst_horizon_hours=channel.burst_horizon_hours,
        ceiling_horizon_days=channel.ceiling_horizon_days,
        last_deliveries=[DeliveryRead(
            id=r.id, event=r.event["kind"], forecast=r.event.get("forecast"),
            title=r.event["title"].replace(TEST_TITLE, TEST_TITLE_SHOWN) if r.event["kind"] == "test" else r.event["title"],
            severity=r.event["severity"], status=r.status, result=delivery_result(r.event["kind"], r.status, r.last_error),
            attempts=r.attempts, last_status_code=r.last_status_code, last_error=r.last_error,
            created_at=r.created_at, sent_at=r.sent_at,
            next_attempt_at=r.next_attempt_at if r.status == "pending" else None) for r in rows])


def list_channels(db: Session, principal: Principal) -> list[ChannelRead]:
    rows = db.scalars(select(AlertChannel).where(AlertChannel.org_id == principal.org_id)
                      .order_by(AlertChannel.created_at))
    return [_channel_read(db, c) for c in rows]


def _get(db: Session, principal: Principal, channel_id: uuid.UUID) -> AlertChannel:
    row = db.scalar(select(AlertChannel).where(AlertChannel.id == channel_id, AlertChannel.org_id == principal.org_id))
    if row is None:
        raise NotFound("Alert channel not found.")
    return row


def create_channel(db: Session, principal: Principal, body: ChannelCreate, box: SecretBox) -> ChannelRead:
    """Add a channel (admin). The URL must pass the outbound policy; PagerDuty needs its routing key."""
    principal.require("admin")
    if body.kind == "email":
        addresses = [a.strip() for a in body.url.split(",") if a.strip()]
        bad = [a for a in addresses if not EMAIL.fullmatch(a)]
        if not addresses or bad or len(addresses) > MAX_EMAIL_RECIPIENTS:
            raise InvalidInput(f"Email addresses: give 1 to {MAX_EMAIL_RECIPIENTS} email addresses, comma-separated"
                               + (f" ({', '.join(bad[:3])} is not one)" if bad else ""),
                               details=[{"field": "url", "message": "not a list of email addresses"}])
        body = body.model_copy(update={"url": ", ".join(addresses)})
    else:
        _require_service_url(body.kind, body.url)
        require_allowed_url(body.url, field="url")
        if body.kind in ("slack", "pagerduty") and delivery.split_userinfo(body.url)[1] is not None:
            raise InvalidInput(f"{SERVICE_URLS[body.kind].label}: it takes no user:password@ (only webhook and "
                               "Alertmanager URLs may carry basic auth)",
                               details=[{"field": "url", "message": "no user:password@ for this kind"}])
    if body.kind == "pagerduty" and not body.secret:
        raise InvalidInput("Routing key: PagerDuty needs the integration's routing key (Events API v2).",
                           details=[{"field": "secret", "message": "required for PagerDuty"}])
    row = AlertChannel(org_id=principal.org_id, name=body.name.strip(), kind=body.kind,
                       url_enc=box.encrypt(body.url),
                       url_hint=body.url[:200] if body.kind == "email" else delivery.url_hint(body.url),
                       secret_enc=box.encrypt(body.secret) if body.secret else None,
                       min_severity=body.min_severity, families=list(body.families), enabled=True,
                       quiet_start_hour=body.quiet_hours[0] if body.quiet_hours else None,
                       quiet_end_hour=body.quiet_hours[1] if body.quiet_hours else None,
                       renotify_hours=body.renotify_hours, burst_horizon_hours=body.burst_horizon_hours,
                       ceiling_horizon_days=body.ceiling_horizon_days)
    db.add(row)
    db.flush()
    return _channel_read(db, row)


def delete_channel(db: Session, principal: Principal, channel_id: uuid.UUID) -> None:
    principal.require("admin")
    db.delete(_get(db, principal, channel_id))
    db.flush()


def alertmanager_timing(settings: Settings) -> delivery.AlertmanagerTiming:
    """The Alertmanager channels' endsAt windows (HEADROOM_ALERTMANAGER_*_SECONDS)."""
    return delivery.AlertmanagerTiming.of(settings)


def test_event(cluster_name: str, *, now: dt.datetime, key: str, ends_after: dt.timedelta | None = None) -> AlertEvent:
    """The "Send test" alert; `ends_after`: Alertmanager's, which ends it by itself after that (said in its text)."""
    base = get_settings().public_url.rstrip("/")
    title = TEST_TITLE
    if ends_after is not None:
        seconds = ends_after.total_seconds()
        title += f"; it ends by itself after {duration_text(seconds) if seconds >= 60 else f'{seconds:.0f} s'}"
    return AlertEvent(key=key, kind="test", at=now, org="", cluster=cluster_name, cluster_id="", finding_id=None,
                      dedup_key=f"headroom-test/{key}", rule="test", severity="warning",
                      title=title, entity="-",
                      fix="Nothing to do: this was sent from the channel's settings.", url=f"{base}/settings/alerts")


def send_test(db: Session, principal: Principal, channel_id: uuid.UUID, box: SecretBox, *, now: dt.datetime,
              smtp: SmtpConfig | None = None, post: delivery.Post | None = None,
              alertmanager: delivery.AlertmanagerTiming = delivery.AlertmanagerTiming()) -> ChannelRead:
    """Send a test alert to the channel now (admin) and record it like any delivery (claimed before it is sent,
    so the scheduled sender never takes it too); a transient failure is retried by the scheduled sender. In
    Alertmanager the test alert ends by itself after `alertmanager.test_for` (its title says so)."""
    principal.require("admin")
    channel = _get(db, principal, channel_id)
    event = test_event("your cluster", now=now, key=f"test:{uuid.uuid4()}",
                       ends_after=alertmanager.test_for if channel.kind == "alertmanager" else None)
    row = AlertDelivery(org_id=channel.org_id, channel_id=channel.id, event_key=event.key, event=event.to_json(),
                        status="sending", attempts=1, next_attempt_at=now, claimed_until=now + delivery.CLAIM_LEASE,
                        created_at=now)
    db.add(row)
    db.commit()  # the claim is recorded before the request
    outcome = delivery.send(channel, event, box, now=now, post=post or delivery.default_post, smtp=smtp,
                            alertmanager=alertmanager)
    delivery.record(row, outcome, now)
    db.flush()
    return _channel_read(db, channel)


def channel_read(db: Session, principal: Principal, channel_id: uuid.UUID) -> ChannelRead:
    return _channel_read(db, _get(db, principal, channel_id))


class AlertedFinding(Protocol):
    """A stored finding as an alert tells it (the findings service's StoredFinding; this feature does not import
    the findings feature, which calls it)."""

    @property
    def id(self) -> uuid.UUID: ...
    @property
    def dedup_key(self) -> str: ...
    @property
    def rule(self) -> str: ...
    @property
    def severity(self) -> Severity: ...
    @property
    def title(self) -> str: ...
    @property
    def entity_kind(self) -> str: ...
    @property
    def entity_id(self) -> str: ...
    @property
    def evidence(self) -> Evidence | None: ...
    @property
    def impact(self) -> Impact | None: ...


def _forecast(row: AlertedFinding, kind: str | None = None) -> tuple[str, float, str] | None:
    """The finding's soonest alerting forecast (of `kind`, else of either kind): (kind, seconds, in words)."""
    best: Forecast | None = None
    for f in row.evidence.forecasts if row.evidence is not None else ():
        if f.within_seconds is None or f.kind not in ("burst_empty", "ceiling") or (kind and f.kind != kind):
            continue
        if best is None or f.within_seconds < (best.within_seconds or 0.0):
            best = f
    if best is None or best.within_seconds is None:
        return None
    words = forecast_sentence(best.kind, best.within_seconds, at=best.at, label=best.label,
                              value=best.value, unit=best.unit)
    return best.kind, best.within_seconds, words


def _event(cluster: Cluster, row: AlertedFinding, kind: str, key: str, *, now: dt.datetime, forecast: str | None) -> AlertEvent:
    base = get_settings().public_url.rstrip("/")
    return AlertEvent(
        key=key, kind=kind, at=now, org=str(cluster.org_id),  # type: ignore[arg-type]
        cluster=cluster.name, cluster_id=str(cluster.id), finding_id=str(row.id), dedup_key=row.dedup_key,
        rule=row.rule, severity=row.severity, title=row.title, entity=f"{row.entity_kind} {row.entity_id}",
        fix=row.impact.summary if row.impact is not None else None, url=f"{base}/clusters/{cluster.id}/findings/{row.id}",
        forecast=forecast)


def queue_finding_events(db: Session, cluster: Cluster, events: Iterable[tuple[str, AlertedFinding]], *,
                         now: dt.datetime, families: dict[str, str]) -> int:
    """The advice run's events (opened, escalated, resolved findings) as deliveries to the org's channels."""
    out = []
    for kind, row in events:
        soonest = _forecast(row) if kind != "resolved" else None
        out.append(_event(cluster, row, kind, f"{row.id}:{kind}:{row.severity}:{now.isoformat()}", now=now,
                          forecast=soonest[2] if soonest else None))
    return delivery.queue_events(db, cluster.org_id, out, now=now, families=families)


def queue_forecast_events(db: Session, cluster: Cluster,
                          forecasts: Iterable[tuple[AlertedFinding, dict[str, float], dict[str, float]]], *,
                          now: dt.datetime, families: dict[str, str], announced: Iterable[AlertedFinding] = ()) -> int:
    """The advice run's forecasts that came within a channel's horizon (docs/alerts.md, "Forecast horizons"):
    `forecasts` are (finding row, soonest seconds before the run, after it) per forecast kind (findings.service);
    `announced` the findings this run already alerts as opened or escalated (a channel that gets that alert gets
    no separate forecast alert for the same finding)."""
    crossings = []
    for row, before, after in forecasts:
        for kind, seconds in after.items():
            found = _forecast(row, kind)
            if found is None:
                continue
            event = _event(cluster, row, "forecast", f"{row.id}:forecast:{kind}:{now.isoformat()}", now=now,
                           forecast=found[2])
            crossings.append(delivery.Crossing(event, kind, before.get(kind), seconds))
    return delivery.queue_crossings(db, cluster.org_id, crossings, now=now, families=families,
                                    announced={str(row.id) for row in announced})


def queue_apply_event(db: Session, cluster: Cluster, *, plan_id: uuid.UUID, finding_id: uuid.UUID | None, title: str,
                      fix: str, key: str, now: dt.datetime) -> int:
    """An apply run that stopped and needs a person (docs/apply.md): one critical delivery to every enabled channel
    of the organisation, whatever its minimum severity or rule families (a change Headroom made is everyone's
    business). `key` names the event: queued again (a retried job), it is not sent twice."""
    base = get_settings().public_url.rstrip("/")
    link = f"{base}/clusters/{cluster.id}/findings/{finding_id}" if finding_id else f"{base}/clusters/{cluster.id}"
    event = AlertEvent(key=key, kind="apply", at=now, org=str(cluster.org_id), cluster=cluster.name,
                       cluster_id=str(cluster.id), finding_id=str(finding_id) if finding_id else None,
                       dedup_key=f"headroom-apply/{plan_id}", rule=delivery.APPLY_RULE, severity="critical", title=title,
                       entity=f"apply plan {plan_id}", fix=fix, url=link)
    channels = db.scalars(select(AlertChannel).where(AlertChannel.org_id == cluster.org_id, AlertChannel.enabled))
    return delivery.insert_pending(db, [delivery.pending(channel, event, now) for channel in channels])


def resolve_apply_event(db: Session, cluster: Cluster, *, key: str, now: dt.datetime) -> int:
    """End the apply alert `key` (the plan no longer needs a person: its undo is done): a resolution to every
    channel that was sent it, or is still to send it; Alertmanager gets endsAt = now and ends the alert at once,
    PagerDuty resolves it by its dedup key. Queued again, it is not sent twice. Returns the deliveries queued."""
    told = db.execute(select(AlertDelivery.event, AlertChannel).join(AlertChannel, AlertChannel.id ==
                                                                     AlertDelivery.channel_id)
                      .where(AlertDelivery.org_id == cluster.org_id, AlertDelivery.event_key == key,
                             AlertDelivery.status != "failed")).all()
    rows = []
    for stored, channel in told:
        stopped = AlertEvent.from_json(stored)
        resolved = replace(stopped, key=f"{key}:resolved", kind="resolved", at=now, fix=None, forecast=None)
        rows.append(delivery.pending(channel, resolved, now))
    return delivery.insert_pending(db, rows)
