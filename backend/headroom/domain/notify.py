"""Alert payloads (pure): one event of a finding, written as each service documents its input.

    slack_payload(event) -> dict            Slack incoming webhook: {"text", "blocks"} (Slack: "Sending messages
                                            using incoming webhooks", https://api.slack.com/messaging/webhooks)
    pagerduty_payload(event, routing_key)   PagerDuty Events API v2 enqueue: routing_key, event_action
                                            trigger|resolve, dedup_key, payload{summary <= 1024 chars, source,
                                            severity critical|error|warning|info, ...}, links
                                            (https://developer.pagerduty.com/docs/events-api-v2/trigger-events/)
    alertmanager_payload(event, sent_at)    Alertmanager API v2 POST /api/v2/alerts: a list of {labels,
                                            annotations, startsAt, endsAt, generatorURL} (prometheus/alertmanager
                                            api/v2/openapi.yaml, postableAlerts); endsAt a bounded window ahead,
                                            renewed by re-posting an open finding's alert at every delivery pass
    webhook_body(event) / webhook_signature(secret, timestamp, body)
                                            Headroom's own JSON, signed "sha256=<hex HMAC-SHA256 of
                                            '<timestamp>.<body>'>" (docs/alerts.md)

An event is "opened", "escalated" (severity rose), "resolved", "reminder" (still open after the channel's
re-notify interval), "apply" (a run applying a finding's fix stopped and needs a person: docs/apply.md),
"forecast" (a forecast came within the channel's horizon: a burst bucket empties within N
hours, a ceiling is reached within N days; `forecast` says it in words, `forecast_sentence`) or "test". Its `key` is unique per event and
stable when a run is repeated (the delivery record's unique key); `dedup_key` is the finding's, which PagerDuty
and Alertmanager use to group a finding's trigger and resolve.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from headroom.domain.units import format_days, format_quantity
from headroom.domain.words import duration_text

EventKind = Literal["opened", "escalated", "resolved", "reminder", "forecast", "test", "apply"]
SEVERITY_ORDER = ("info", "warning", "critical")
PAGERDUTY_SUMMARY_MAX = 1024  # PagerDuty Events API v2: payload.summary is at most 1024 characters
# Alertmanager resolves an alert whose endsAt has passed, so a client re-posts a firing alert well inside its
# endsAt (https://prometheus.io/docs/alerting/latest/clients/): Prometheus re-sends a firing alert every
# evaluation (--rules.alert.resend-delay, 1 minute by default) with endsAt 4 x that interval ahead (sendAlerts in
# https://github.com/prometheus/prometheus/blob/main/rules/alerting.go). Headroom re-posts every open finding's
# alert at each delivery pass (every minute) with endsAt ALERTMANAGER_FIRING_FOR ahead, so a finding open for any
# time stays active, and one Headroom stops posting (its channel disabled, its cluster deleted, Headroom down)
# ends within that window; a resolution is posted with endsAt = its time; the test alert ends by itself after
# ALERTMANAGER_TEST_FOR. Why these numbers: docs/thresholds/alertmanager.md.
ALERTMANAGER_REPOST = timedelta(minutes=1)
ALERTMANAGER_FIRING_FOR = timedelta(minutes=10)
ALERTMANAGER_TEST_FOR = timedelta(minutes=5)


@dataclass(frozen=True)
class AlertEvent:
    """One event of one finding, with what a person needs to act on it."""

    key: str
    kind: EventKind
    at: datetime
    org: str
    cluster: str
    cluster_id: str
    finding_id: str | None
    dedup_key: str
    rule: str
    severity: Literal["critical", "warning", "info"]
    title: str
    entity: str
    fix: str | None
    url: str
    forecast: str | None = None  # the finding's soonest forecast in words (every kind of event that has one)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["at"] = self.at.isoformat()
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AlertEvent:
        return cls(**{**data, "at": datetime.fromisoformat(data["at"])})


def severity_at_least(severity: str, minimum: str) -> bool:
    return SEVERITY_ORDER.index(severity) >= SEVERITY_ORDER.index(minimum)


def headline(event: AlertEvent) -> str:
    word = {"opened": "New", "escalated": "Worse", "resolved": "Resolved", "reminder": "Still open",
            "forecast": "Forecast", "test": "Test", "apply": "Apply stopped"}[event.kind]
    return f"[{word} {event.severity}] {event.cluster}: {event.title}"


def _duration(seconds: float) -> str:
    """A time ahead as people read it: "35 min", "4 h 10 min", "3 days"."""
    return format_days(seconds / 86400) if seconds >= 2 * 86400 else duration_text(seconds)


def forecast_sentence(kind: str, within_seconds: float, *, at: datetime | None, label: str | None = None,
                      value: float | None = None, unit: str | None = None) -> str:
    """One forecast (domain.model.Forecast's fields) as an alert says it."""
    when = f" (at {at:%Y-%m-%d %H:%M} UTC)" if at is not None and within_seconds < 2 * 86400 else (
        f" (around {at:%Y-%m-%d})" if at is not None else "")
    if kind == "burst_empty":
        if within_seconds <= 0:
            return "the burst bucket is empty now" + (f": at most the {format_quantity(value, unit or '')} baseline" if value else "")
        after = f", then at most the {format_quantity(value, unit or '')} baseline" if value else ""
        return f"the burst bucket empties in {_duration(within_seconds)}{when}{after}"
    what = label or "the ceiling"
    if value is not None and unit:
        what += f" ({format_quantity(value, unit)})"
    return f"{what} is reached in {_duration(within_seconds)}{when} at the current growth"


def email_text(event: AlertEvent) -> str:
    """The plain text of an alert email: what, where, the fix, the link."""
    lines = [headline(event), "", f"Cluster: {event.cluster}", f"Entity: {event.entity}", f"Rule: {event.rule}"]
    if event.forecast and event.kind != "resolved":
        lines.append(f"Forecast: {event.forecast}")
    if event.fix and event.kind != "resolved":
        lines.append(f"Fix: {event.fix}")
    lines += ["", f"Open in Headroom: {event.url}"]
    return "\n".join(lines)


def slack_payload(event: AlertEvent) -> dict[str, Any]:
    lines = [f"*{headline(event)}*", f"Entity: {event.entity} · rule `{event.rule}`"]
    if event.forecast and event.kind != "resolved":
        lines.append(f"Forecast: {event.forecast}")
    if event.fix and event.kind != "resolved":
        lines.append(f"Fix: {event.fix}")
    lines.append(f"<{event.url}|Open in Headroom>")
    text = "\n".join(lines)
    return {"text": headline(event), "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": text}}]}


def pagerduty_payload(event: AlertEvent, routing_key: str) -> dict[str, Any]:
    body: dict[str, Any] = {
        "routing_key": routing_key,
        "event_action": "resolve" if event.kind == "resolved" else "trigger",
        "dedup_key": event.dedup_key,
    }
    if event.kind == "resolved":
        return body
    return {
        **body,
        "payload": {
            "summary": headline(event)[:PAGERDUTY_SUMMARY_MAX],
            "source": event.entity,
            "severity": event.severity,
            "timestamp": event.at.isoformat(),
            "component": event.entity,
            "group": event.cluster,
            "class": event.rule,
            "custom_details": {"fix": event.fix, "finding": event.url, "event": event.kind,
                               **({"forecast": event.forecast} if event.forecast else {})},
        },
        "links": [{"href": event.url, "text": "Open in Headroom"}],
    }


def alertmanager_alert(event: AlertEvent, sent_at: datetime, *, firing_for: timedelta = ALERTMANAGER_FIRING_FOR,
                       test_for: timedelta = ALERTMANAGER_TEST_FOR) -> dict[str, Any]:
    """One postableAlert. `sent_at`: the wall clock when posted (Alertmanager compares endsAt with its own clock).
    endsAt: the resolution time of a resolved finding (already past: Alertmanager ends the alert), `test_for` ahead
    for a test alert (it ends by itself), else `firing_for` ahead (renewed by each re-post while the finding is
    open)."""
    if event.kind == "resolved":
        ends = event.at
    else:
        ends = sent_at + (test_for if event.kind == "test" else firing_for)
    return {
        "labels": {"alertname": f"Headroom_{event.rule}", "severity": event.severity, "cluster": event.cluster,
                   "entity": event.entity, "headroom_finding": event.dedup_key, "source": "headroom"},
        "annotations": {"summary": headline(event), "description": event.fix or event.title, "url": event.url,
                        **({"forecast": event.forecast} if event.forecast else {})},
        "startsAt": min(event.at, ends).isoformat(),
        "endsAt": ends.isoformat(),
        "generatorURL": event.url,
    }


def alertmanager_payload(event: AlertEvent, sent_at: datetime, *, firing_for: timedelta = ALERTMANAGER_FIRING_FOR,
                         test_for: timedelta = ALERTMANAGER_TEST_FOR) -> list[dict[str, Any]]:
    """The body of POST /api/v2/alerts for one event (postableAlerts: a list)."""
    return [alertmanager_alert(event, sent_at, firing_for=firing_for, test_for=test_for)]


def webhook_body(event: AlertEvent) -> bytes:
    return json.dumps({"event": event.kind, **event.to_json()}, sort_keys=True, separators=(",", ":")).encode()


def webhook_signature(secret: str, timestamp: str, body: bytes) -> str:
    digest = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"
