"""Alert channels end to end: the demo cluster's findings opened by the real advisor reach Slack, a
signed webhook, PagerDuty Events v2 (local servers answering as those services document, 429 and 5xx included)
and a real Alertmanager (the Debian package), once per event, through retries, repeated runs and a worker
killed mid-send; resolutions follow."""

from __future__ import annotations

import base64
import contextlib
import importlib.util
import datetime as dt
import hashlib
import hmac
import json
import shutil
import socket
import subprocess
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from headroom.alerts import delivery
from headroom.alerts import service as alerts
from headroom.alerts.models import AlertDelivery
from headroom.domain.advisor.engine import discover_rules
from headroom.findings import service as findings
from headroom.platform.security import SecretBox
from helpers import sign_up, units_of_work
from receivers import receiver
from sqlalchemy import func, select, text

_MIGRATION = next((Path(__file__).resolve().parents[3] / "migrations" / "versions").glob(
    "*_alert_channel_hint_without_userinfo.py"))
_SPEC = importlib.util.spec_from_file_location("hint_migration", _MIGRATION)
assert _SPEC is not None and _SPEC.loader is not None
HINT_MIGRATION = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(HINT_MIGRATION)

END = dt.datetime(2026, 11, 2, 18, 0, tzinfo=dt.UTC)
SECRET = "webhook-secret-" + "s" * 20
ROUTING_KEY = "R0UT1NGKEY0000000000000000000000"
PD_SEVERITIES = {"critical", "error", "warning", "info"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def alertmanager(tmp: Path, webhook: str | None = None) -> Iterator[str]:
    """A real Alertmanager on 127.0.0.1 with a receiver that sends nowhere (its API is what is tested), or with
    `webhook` its receiver (webhook_config), grouping everything into one group that is flushed every second and
    repeated after an hour (https://prometheus.io/docs/alerting/latest/configuration/)."""
    config = tmp / "alertmanager.yml"
    if webhook is None:
        config.write_text("route:\n  receiver: nowhere\nreceivers:\n  - name: nowhere\n")
    else:
        config.write_text("route:\n  receiver: hook\n  group_wait: 1s\n  group_interval: 1s\n  repeat_interval: 1h\n"
                          f"receivers:\n  - name: hook\n    webhook_configs:\n      - url: {webhook}\n")
    port = _free_port()
    proc = subprocess.Popen(["prometheus-alertmanager", f"--config.file={config}", f"--storage.path={tmp / 'am'}",
                             f"--web.listen-address=127.0.0.1:{port}", "--cluster.listen-address="],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                with urllib.request.urlopen(f"{url}/-/ready", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.1)
        else:
            raise RuntimeError("alertmanager did not start")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _am_alerts(url: str) -> list[dict[str, Any]]:
    with urllib.request.urlopen(f"{url}/api/v2/alerts?active=true&silenced=true&inhibited=true&unprocessed=true",
                                timeout=5) as r:
        return list(json.loads(r.read()))


SLACK_URL = "https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXXXXXXXXXX"


def _stand_in(db: Any, settings: Any, channel_id: str, local_url: str) -> None:
    """Point a Slack or PagerDuty channel, made with the service's own URL, at the local receiver standing in for
    the service (as a DNS entry for hooks.slack.com would): what is sent and how answers are handled is unchanged."""
    db.execute(text("UPDATE alert_channels SET url_enc = :url WHERE id = :id"),
               {"url": SecretBox(settings.secret_key).encrypt(local_url), "id": channel_id})
    db.commit()


def test_channels_are_admin_only_checked_and_keep_their_secrets(world: dict[str, Any], make_client: Any) -> None:
    owner, viewer = world["owner"], world["viewer"]
    slack_url = "https://hooks.slack.com/services/T000/B000/" + "x" * 24
    made = owner.post("/api/v1/alert-channels", json={"name": "ops", "kind": "slack", "url": slack_url})
    assert made.status_code == 201, made.text
    body = made.json()
    assert body["url_hint"] == "https://hooks.slack.com" and slack_url not in made.text  # the path is the secret
    assert viewer.post("/api/v1/alert-channels", json={"name": "x", "kind": "slack", "url": slack_url}).status_code == 403
    assert [c["name"] for c in viewer.get("/api/v1/alert-channels").json()["items"]] == ["ops"]
    no_key = owner.post("/api/v1/alert-channels", json={"name": "pd", "kind": "pagerduty",
                                                         "url": "https://events.pagerduty.com/v2/enqueue"})
    assert no_key.status_code == 422 and no_key.json()["error"]["message"].startswith("Routing key:")
    metadata = owner.post("/api/v1/alert-channels", json={"name": "md", "kind": "webhook",
                                                           "url": "http://169.254.169.254/latest/meta-data"})
    assert metadata.status_code == 422 and metadata.json()["error"]["message"].startswith("URL:")
    stranger = sign_up(make_client(), org="Other Alerts")
    assert stranger.post(f"/api/v1/alert-channels/{body['id']}/test").status_code == 404
    assert stranger.delete(f"/api/v1/alert-channels/{body['id']}").status_code == 404
    assert owner.delete(f"/api/v1/alert-channels/{body['id']}").status_code == 204
    assert owner.get("/api/v1/alert-channels").json()["items"] == []


def test_send_test_records_the_outcome_and_names_a_permanent_error(world: dict[str, Any], db: Any,
                                                                    settings: Any) -> None:
    owner = world["owner"]
    with receiver("slack") as slack:
        made = owner.post("/api/v1/alert-channels", json={"name": "ops", "kind": "slack", "url": SLACK_URL}).json()
        _stand_in(db, settings, made["id"], f"{slack.url}/services/T/B/secret")
        tested = owner.post(f"/api/v1/alert-channels/{made['id']}/test")
        assert tested.status_code == 200, tested.text
        (last,) = tested.json()["last_deliveries"]
        assert last["event"] == "test" and last["status"] == "sent" and last["last_status_code"] == 200
        assert (last["title"], last["result"]) == ("Test alert", "Delivered: this channel works.")
        assert slack.received[0].path == "/services/T/B/secret" and "Test alert" in slack.received[0].json["text"]
        # Slack answers 404 "no_service" for a revoked webhook: permanent, shown with the reason, not retried
        slack.script.append((404, {"Content-Type": "text/plain"}, b"no_service"))
        again = owner.post(f"/api/v1/alert-channels/{made['id']}/test").json()["last_deliveries"][0]
        assert again["status"] == "failed" and again["last_error"] == "127.0.0.1 answered HTTP 404: no_service"
        assert again["title"] == "Test alert" and again["result"] == "Not delivered: 127.0.0.1 answered HTTP 404: no_service"
        assert "works" not in again["result"]


@pytest.mark.parametrize(("kind", "url", "message"), [
    ("slack", "https://hooks.example.com/services/T/B/X",
     "Slack webhook URL: it must be https://hooks.slack.com/services/…; this one points at hooks.example.com."),
    ("slack", "http://hooks.slack.com/services/T/B/X", "Slack webhook URL: it must be https://hooks.slack.com/services/…."),
    ("slack", "https://hooks.slack.com/workflows/T/A/1", "Slack webhook URL: it must be https://hooks.slack.com/services/…."),
    ("pagerduty", "https://events.example.com/v2/enqueue",
     "PagerDuty Events API URL: it must be https://events.pagerduty.com/v2/enqueue; this one points at events.example.com."),
])
def test_a_slack_or_pagerduty_channel_takes_only_that_services_url(world: dict[str, Any], kind: str, url: str,
                                                                   message: str) -> None:
    owner = world["owner"]
    made = owner.post("/api/v1/alert-channels", json={"name": "x", "kind": kind, "url": url, "secret": ROUTING_KEY})
    assert made.status_code == 422, made.text
    error = made.json()["error"]
    assert error["message"].startswith(message) and error["details"][0]["field"] == "url"
    assert "add a webhook channel" in error["message"]
    assert owner.get("/api/v1/alert-channels").json()["items"] == []
    # the EU service region's Events API is PagerDuty's too
    eu = owner.post("/api/v1/alert-channels", json={"name": "eu", "kind": "pagerduty", "secret": ROUTING_KEY,
                                                    "url": "https://events.eu.pagerduty.com/v2/enqueue"})
    assert eu.status_code == 201, eu.text


def test_a_failed_test_says_why_in_words_and_never_that_the_channel_works(
        world: dict[str, Any], db: Any, settings: Any) -> None:
    owner = world["owner"]
    # a name under .invalid never resolves (RFC 6761, section 6.4)
    hook = owner.post("/api/v1/alert-channels", json={"name": "hook", "kind": "webhook",
                                                      "url": "https://hooks.example.invalid/headroom"}).json()
    (last,) = owner.post(f"/api/v1/alert-channels/{hook['id']}/test").json()["last_deliveries"]
    assert last["status"] == "pending" and last["title"] == "Test alert"
    assert last["last_error"] == "Could not reach hooks.example.invalid: the host name does not resolve. Check the URL."
    assert last["result"] == ("Not delivered yet: Could not reach hooks.example.invalid: the host name does not "
                              "resolve. Check the URL. Headroom tries again by itself.")
    # nothing listens on a port just closed: refused
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    refused = owner.post("/api/v1/alert-channels", json={"name": "closed", "kind": "webhook",
                                                         "url": f"http://127.0.0.1:{closed}/h"}).json()
    (last,) = owner.post(f"/api/v1/alert-channels/{refused['id']}/test").json()["last_deliveries"]
    assert last["last_error"] == (f"Could not connect to 127.0.0.1:{closed}: the connection was refused. Check the "
                                  "URL and that the service is running.")
    # an email channel on an install without a mail server
    mail = owner.post("/api/v1/alert-channels", json={"name": "mail", "kind": "email", "url": "ops@example.com"}).json()
    listed = owner.post(f"/api/v1/alert-channels/{mail['id']}/test")
    (last,) = listed.json()["last_deliveries"]
    assert last["status"] == "failed" and last["result"].startswith(
        "Not delivered: No mail server is configured for Headroom: set HEADROOM_SMTP_HOST")
    for text_shown in (listed.text, owner.get("/api/v1/alert-channels").text):
        assert "works" not in text_shown.replace("Delivered: this channel works.", "")
        assert "Error" not in text_shown and "[Errno" not in text_shown


def test_a_urls_user_and_password_are_a_secret_sent_as_basic_auth(world: dict[str, Any], db: Any) -> None:
    # https://user:pass@host/ (RFC 3986 userinfo): every member sees scheme and host only, the receiver gets the
    # credential as HTTP Basic authentication (RFC 7617) and a request line without it
    owner, viewer = world["owner"], world["viewer"]
    with receiver("webhook") as hook:
        host = hook.url.removeprefix("http://")
        made = owner.post("/api/v1/alert-channels", json={"name": "am-proxy", "kind": "webhook",
                                                          "url": f"http://ops%40corp:s3cr%3At@{host}/hook"})
        assert made.status_code == 201, made.text
        assert made.json()["url_hint"] == f"http://{host}"
        for reader in (owner, viewer):
            listed = reader.get("/api/v1/alert-channels")
            assert "s3cr" not in listed.text and "ops%40corp" not in listed.text and "ops@corp" not in listed.text
            assert listed.json()["items"][0]["url_hint"] == f"http://{host}"
        tested = owner.post(f"/api/v1/alert-channels/{made.json()['id']}/test")
        assert tested.status_code == 200 and "s3cr" not in tested.text
        (got,) = hook.received
        assert got.path == "/hook"
        assert got.headers["Authorization"] == "Basic " + base64.b64encode(b"ops@corp:s3cr:t").decode()
    slack = owner.post("/api/v1/alert-channels", json={"name": "s", "kind": "slack",
                                                       "url": "https://u:p@hooks.slack.com/services/T/B/x"})
    assert slack.status_code == 422 and slack.json()["error"]["message"].startswith("Slack webhook URL: it takes no")
    assert "u:p" not in slack.text


def test_hints_stored_with_a_user_and_password_are_hidden_and_rewritten(world: dict[str, Any], db: Any) -> None:
    # channels saved before the userinfo was kept out: hidden on read now, and the migration rewrites the rows
    owner = world["owner"]
    made = owner.post("/api/v1/alert-channels", json={"name": "old", "kind": "webhook",
                                                      "url": "https://hooks.example.com/x"}).json()
    db.execute(text("UPDATE alert_channels SET url_hint = 'https://admin:hunter22@hooks.example.com:8443' "
                    "WHERE id = :id"), {"id": made["id"]})
    db.commit()
    listed = owner.get("/api/v1/alert-channels")
    assert "hunter22" not in listed.text and listed.json()["items"][0]["url_hint"] == "https://hooks.example.com:8443"
    db.execute(text(HINT_MIGRATION.REWRITE_HINTS))
    db.commit()
    stored = db.execute(text("SELECT url_hint FROM alert_channels WHERE id = :id"), {"id": made["id"]}).scalar_one()
    assert stored == "https://hooks.example.com:8443"


@pytest.mark.skipif(shutil.which("prometheus-alertmanager") is None, reason="installed by scripts/bootstrap.sh --test")
def test_findings_reach_every_channel_once_through_retries_reruns_and_a_killed_worker(
        world: dict[str, Any], db: Any, sessions: Any, settings: Any, tmp_path: Path) -> None:
    owner, cluster = world["owner"], world["cluster"]
    box = SecretBox(settings.secret_key)
    units = units_of_work(sessions)
    families = {r.id: r.family for r in discover_rules()}
    with receiver("slack") as slack, receiver("pagerduty") as pd, receiver("webhook") as hook, \
            alertmanager(tmp_path) as am:
        for name, kind, url, secret, local in (
                ("slack", "slack", SLACK_URL, None, f"{slack.url}/services/T/B/X"),
                ("pd", "pagerduty", "https://events.pagerduty.com/v2/enqueue", ROUTING_KEY, f"{pd.url}/v2/enqueue"),
                ("hook", "webhook", f"{hook.url}/headroom", SECRET, None),
                ("am", "alertmanager", am, None, None)):
            made = owner.post("/api/v1/alert-channels", json={"name": name, "kind": kind, "url": url,
                                                              "secret": secret, "min_severity": "critical"})
            assert made.status_code == 201, made.text
            if local is not None:
                _stand_in(db, settings, made.json()["id"], local)
        # Slack is rate limited once (Retry-After: 1), PagerDuty has a 5xx once: both are retried, not lost
        slack.script.append((429, {"Retry-After": "1", "Content-Type": "text/plain"}, b"rate_limited"))
        pd.script.append((503, {"Content-Type": "application/json"}, b'{"status":"unavailable"}'))

        summary = findings.advise_cluster(db, cluster, now=END)
        db.commit()
        critical = [row for kind, row in summary.events if kind == "opened" and row.severity == "critical"]
        assert critical and len(critical) < len(summary.events)  # warnings stay below the channels' minimum
        first = delivery.deliver_due(units, box, now=lambda: END)
        # the webhook and Alertmanager took every event at once; Slack's 429 and PagerDuty's 503 each hold one back
        # ... and Alertmanager's open alerts were re-posted after the pass's deliveries (endsAt renewed)
        assert first == {"sent": 4 * len(critical) - 2, "retrying": 2, "failed": 0, "reposted": len(critical)}
        later = delivery.deliver_due(units, box, now=lambda: END + dt.timedelta(minutes=2))
        assert later["failed"] == 0
        assert delivery.deliver_due(units, box, now=lambda: END + dt.timedelta(minutes=5)) == {
            "sent": 0, "retrying": 0, "failed": 0, "reposted": len(critical)}

        # each critical finding once per channel (the retried request counted once it succeeded)
        assert len(slack.received) == len(critical) + 1 and len(pd.received) == len(critical) + 1
        assert len(hook.received) == len(critical)
        texts = [r.json["text"] for r in slack.received]
        assert all(t.startswith("[New critical] demo-prod") for t in texts)
        assert all(r.json["blocks"][0]["type"] == "section" for r in slack.received)
        for r in pd.received:
            event = r.json
            assert event["routing_key"] == ROUTING_KEY and event["event_action"] == "trigger"
            assert event["payload"]["severity"] in PD_SEVERITIES and len(event["payload"]["summary"]) <= 1024
            assert event["dedup_key"] in {row.dedup_key for row in critical}
        for r in hook.received:  # the receiver checks the signature as docs/alerts.md tells it to
            stamp, signature = r.headers["X-Headroom-Timestamp"], r.headers["X-Headroom-Signature"]
            expected = hmac.new(SECRET.encode(), stamp.encode() + b"." + r.body, hashlib.sha256).hexdigest()
            assert signature == f"sha256={expected}" and r.json["event"] == "opened"
            assert r.json["url"].endswith(f"/findings/{r.json['finding_id']}")
        fired = _am_alerts(am)
        assert {a["labels"]["headroom_finding"] for a in fired} == {row.dedup_key for row in critical}
        assert all(a["labels"]["alertname"].startswith("Headroom_") and a["status"]["state"] == "active"
                   for a in fired)

        # a repeated run (a redelivered advice task) records nothing new and sends nothing
        findings.advise_cluster(db, cluster, now=END)
        db.commit()
        before = db.scalar(select(func.count()).select_from(AlertDelivery))
        assert delivery.deliver_due(units, box, now=lambda: END + dt.timedelta(minutes=6))["sent"] == 0
        assert db.scalar(select(func.count()).select_from(AlertDelivery)) == before

        # a worker killed after its claim: PagerDuty (dedup by key) gets it again, Slack (no dedup) does not
        stuck = list(db.scalars(select(AlertDelivery).where(AlertDelivery.status == "sent")))
        for row in stuck:
            row.status, row.claimed_until = "sending", END
        db.commit()
        slack_before, pd_before = len(slack.received), len(pd.received)
        delivery.deliver_due(units, box, now=lambda: END + dt.timedelta(minutes=10))
        assert len(slack.received) == slack_before
        assert len(pd.received) == pd_before + len(critical)
        db.expire_all()  # the sender wrote through its own sessions
        interrupted = db.scalars(select(AlertDelivery).where(AlertDelivery.status == "failed")).all()
        assert interrupted and all(r.last_error.startswith("interrupted") for r in interrupted)

        # resolution: every finding gone at the next run; PagerDuty resolves by dedup key, Alertmanager ends them
        gone = findings.record_findings(db, cluster, [], now=END + dt.timedelta(hours=1))
        alerts.queue_finding_events(db, cluster, gone.events, now=END + dt.timedelta(hours=1), families=families)
        db.commit()
        delivery.deliver_due(units, box, now=lambda: END + dt.timedelta(hours=1))
        resolves = [r.json for r in pd.received if r.json["event_action"] == "resolve"]
        assert {r["dedup_key"] for r in resolves} == {row.dedup_key for row in critical}
        assert all(set(r) == {"routing_key", "event_action", "dedup_key"} for r in resolves)
        ended = {a["labels"]["headroom_finding"] for a in _am_alerts(am)}
        assert not ended & {row.dedup_key for row in critical}  # endsAt passed: no longer active
        assert any(r.json["text"].startswith("[Resolved") for r in slack.received)


def test_the_email_channel_sends_through_the_smtp_server_and_records_a_refusal(
        world: dict[str, Any], db: Any, sessions: Any, settings: Any, smtp_server: Any) -> None:
    from headroom.platform.smtp import SmtpConfig

    owner, cluster = world["owner"], world["cluster"]
    bad = owner.post("/api/v1/alert-channels", json={"name": "mail", "kind": "email", "url": "ops@, nobody"})
    assert bad.status_code == 422 and bad.json()["error"]["message"].startswith("Email addresses: give 1 to 20 email addresses")
    made = owner.post("/api/v1/alert-channels", json={"name": "mail", "kind": "email", "min_severity": "critical",
                                                      "url": "ops@example.com,  sre@example.com"})
    assert made.status_code == 201, made.text
    assert made.json()["url_hint"] == "ops@example.com, sre@example.com"
    smtp = SmtpConfig(host="127.0.0.1", port=smtp_server.port, sender="Headroom <alerts@headroom.example.com>",
                      security="none", timeout=5.0)
    summary = findings.advise_cluster(db, cluster, now=END)
    db.commit()
    critical = [row for kind, row in summary.events if row.severity == "critical"]
    delivery.deliver_due(units_of_work(sessions), SecretBox(settings.secret_key), now=lambda: END, smtp=smtp)
    assert len(smtp_server.received) == len(critical)
    first = smtp_server.received[0]
    assert sorted(first.rcpt_tos) == ["ops@example.com", "sre@example.com"]
    assert first.message["Subject"].startswith("[New critical] demo-prod") and first.message["Auto-Submitted"]
    text = first.message.get_body(preferencelist=("plain",)).get_content()
    assert "Open in Headroom: " in text and "/findings/" in text
    # a refusal (550) is permanent: recorded with the server's answer, not retried
    smtp_server.reply = "550 5.1.1 mailbox unavailable"
    tested = alerts.send_test(db, _principal(owner, cluster), uuid.UUID(made.json()["id"]),
                              SecretBox(settings.secret_key), now=END, smtp=smtp)
    last = tested.last_deliveries[0]
    assert last.status == "failed" and last.last_error.startswith("Mail not sent (SMTP 550): ")
    assert last.result.startswith("Not delivered: Mail not sent (SMTP 550)")


def _principal(owner: Any, cluster: Any) -> Any:
    from headroom.platform.principal import Principal

    return Principal(user_id=uuid.UUID(owner.session["user"]["id"]), org_id=cluster.org_id, role="owner",
                     via="session")


def test_quiet_hours_hold_all_but_critical_and_open_findings_are_sent_again(
        world: dict[str, Any], db: Any, sessions: Any, settings: Any) -> None:
    owner, cluster = world["owner"], world["cluster"]
    box, units = SecretBox(settings.secret_key), units_of_work(sessions)
    families = {r.id: r.family for r in discover_rules()}
    with receiver("slack") as slack:
        bad = owner.post("/api/v1/alert-channels", json={"name": "x", "kind": "slack", "url": SLACK_URL,
                                                         "quiet_hours": [7, 7]})
        assert bad.status_code == 422 and "quiet_hours" in bad.text
        made = owner.post("/api/v1/alert-channels", json={
            "name": "night", "kind": "slack", "url": SLACK_URL, "min_severity": "warning",
            "quiet_hours": [17, 19], "renotify_hours": 2})  # the run at 18:00 UTC is inside the quiet hours
        assert made.status_code == 201 and made.json()["quiet_hours"] == [17, 19], made.text
        _stand_in(db, settings, made.json()["id"], f"{slack.url}/services/T/B/Q")
        summary = findings.advise_cluster(db, cluster, now=END)
        db.commit()
        opened = [row for kind, row in summary.events if kind == "opened"]
        critical = [row for row in opened if row.severity == "critical"]
        warnings = [row for row in opened if row.severity == "warning"]
        assert critical and warnings
        delivery.deliver_due(units, box, now=lambda: END)
        assert len(slack.received) == len(critical)  # critical goes at once
        delivery.deliver_due(units, box, now=lambda: END + dt.timedelta(minutes=61))
        assert len(slack.received) == len(critical) + len(warnings)  # the rest when the quiet hours end
        # two hours after each was sent, every finding still open is sent again, once in that interval
        delivery.deliver_due(units, box, now=lambda: END + dt.timedelta(hours=3, minutes=2))
        delivery.deliver_due(units, box, now=lambda: END + dt.timedelta(hours=3, minutes=5))
        reminders = [r.json["text"] for r in slack.received if r.json["text"].startswith("[Still open")]
        assert len(reminders) == len(opened)
        # resolved: the resolution goes out, and no reminder follows it
        gone = findings.record_findings(db, cluster, [], now=END + dt.timedelta(hours=4))
        alerts.queue_finding_events(db, cluster, gone.events, now=END + dt.timedelta(hours=4), families=families)
        db.commit()
        delivery.deliver_due(units, box, now=lambda: END + dt.timedelta(hours=4))
        before = len(slack.received)
        delivery.deliver_due(units, box, now=lambda: END + dt.timedelta(hours=9))
        assert len(slack.received) == before
        assert sum(r.json["text"].startswith("[Resolved") for r in slack.received) == len(opened)


def test_a_finding_whose_severity_rises_is_an_escalation_counted_in_the_weekly_email(
        world: dict[str, Any], db: Any) -> None:
    from headroom.digest import service as digest
    from headroom.domain.advisor.engine import advise
    from headroom.timeseries.snapshots import build_snapshot

    cluster = world["cluster"]
    findings.advise_cluster(db, cluster, now=END)
    snap = build_snapshot(db, cluster.org_id, cluster.id, start=END - dt.timedelta(hours=24), end=END)
    produced = advise(snap, now=END)
    warning = next(f for f in produced if f.severity == "warning")
    rerun = [f.model_copy(update={"severity": "critical"}) if f is warning else f for f in produced]
    summary = findings.record_findings(db, cluster, rerun, now=END + dt.timedelta(hours=1))
    assert [(kind, row.dedup_key) for kind, row in summary.events] == [("escalated", warning.dedup_key)]
    db.commit()
    data = digest.gather(db, cluster.org_id, now=END + dt.timedelta(hours=2), public_url="https://headroom.example.com")
    (section,) = [c for c in data.clusters if c.name == cluster.name]
    assert section.worsened_this_week == 1
    assert section.savings_usd > 0  # the demo's gp2 volumes: gp3 costs less


def _forecasting(finding: Any, kind: str, seconds: float, at: dt.datetime) -> Any:
    """The finding as the advisor would make it with one forecast of `kind` (warning, so that a critical-only
    channel hears of it through its horizon alone)."""
    from headroom.domain.model import Forecast

    forecast = Forecast(kind=kind, within_seconds=seconds, at=at + dt.timedelta(seconds=seconds),
                        label="sustained IOPS ceiling" if kind == "ceiling" else "BurstBalance",
                        value=3000.0 if kind == "ceiling" else 300.0, unit="IOPS", method="test")
    return finding.model_copy(update={"severity": "warning",
                                      "evidence": finding.evidence.model_copy(update={"forecasts": [forecast]})})


def test_a_forecast_alerts_when_it_comes_within_a_channels_horizon_once_a_day(
        world: dict[str, Any], db: Any, sessions: Any, settings: Any) -> None:
    from headroom.domain.advisor.engine import advise
    from headroom.timeseries.snapshots import build_snapshot

    owner, cluster = world["owner"], world["cluster"]
    box, units = SecretBox(settings.secret_key), units_of_work(sessions)
    families = {r.id: r.family for r in discover_rules()}
    snap = build_snapshot(db, cluster.org_id, cluster.id, start=END - dt.timedelta(hours=24), end=END)
    produced = advise(snap, now=END)
    burst, ceiling = produced[0], produced[1]
    with receiver("webhook") as hook, receiver("slack") as slack:
        bad = owner.post("/api/v1/alert-channels", json={"name": "x", "kind": "webhook", "url": f"{hook.url}/h",
                                                         "burst_horizon_hours": 0})
        assert bad.status_code == 422 and "burst_horizon_hours" in bad.text
        made = owner.post("/api/v1/alert-channels", json={
            "name": "horizons", "kind": "webhook", "url": f"{hook.url}/h", "min_severity": "critical",
            "burst_horizon_hours": 6, "ceiling_horizon_days": 30})
        assert made.status_code == 201 and made.json()["burst_horizon_hours"] == 6, made.text
        # a channel that takes warnings hears of the finding when it opens, the forecast in its text, and no more
        everything = owner.post("/api/v1/alert-channels", json={"name": "all", "kind": "slack", "url": SLACK_URL,
                                                                "burst_horizon_hours": 12})
        _stand_in(db, settings, everything.json()["id"], f"{slack.url}/s/T/B/Z")

        def run(at: dt.datetime, hours: float, days: float) -> None:
            made = [_forecasting(burst, "burst_empty", hours * 3600, at),
                    _forecasting(ceiling, "ceiling", days * 86400, at)]
            summary = findings.record_findings(db, cluster, made, now=at)
            alerts.queue_finding_events(db, cluster, summary.events, now=at, families=families)
            alerts.queue_forecast_events(db, cluster, summary.forecasts, now=at, families=families,
                                         announced=[row for kind, row in summary.events if kind != "resolved"])
            db.commit()
            delivery.deliver_due(units, box, now=lambda: at)

        def forecasts() -> list[dict[str, Any]]:
            return [r.json for r in hook.received if r.json["event"] == "forecast"]

        run(END, 10, 40)  # opened beyond both horizons: the critical-only channel hears nothing
        assert hook.received == []
        opened = [r.json["blocks"][0]["text"]["text"] for r in slack.received]
        assert len(opened) == 2 and any("Forecast: the burst bucket empties in 10 h" in t for t in opened)
        run(END + dt.timedelta(minutes=15), 5, 20)  # both cross in: one alert each
        (c, b) = sorted(forecasts(), key=lambda e: e["forecast"])
        assert b["forecast"].startswith("the burst bucket empties in 5 h (at 2026-11-02 23:15 UTC)")
        assert c["forecast"].startswith("sustained IOPS ceiling (3,000 IOPS) is reached in 20 days (around 2026-11-22)")
        assert b["url"].endswith(f"/findings/{b['finding_id']}") and b["severity"] == "warning"
        assert len(slack.received) == 2  # the slack channel was told at opening (10 h is within its 12 h)
        run(END + dt.timedelta(minutes=30), 4, 19)  # still within: nothing new
        run(END + dt.timedelta(minutes=45), 7, 35)  # out again
        run(END + dt.timedelta(minutes=60), 5, 20)  # back in within a day: not again
        assert len(forecasts()) == 2
        later = END + dt.timedelta(hours=26)
        run(later - dt.timedelta(minutes=15), 8, 40)
        run(later, 3, 10)  # a day later it crosses in again: alerted again
        assert len(forecasts()) == 4
        listed = owner.get("/api/v1/alert-channels").json()["items"]
        (mine,) = [c for c in listed if c["name"] == "horizons"]
        assert mine["last_deliveries"][0]["event"] == "forecast"
        assert any("empties in 3 h" in d["forecast"] for d in mine["last_deliveries"][:2])


def _poll(check: Any, timeout: float = 15.0) -> Any:
    """Wait until `check()` is truthy (Alertmanager works on its own clock: group_wait, group_interval)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.2)


def _ends(alert: dict[str, Any]) -> dt.datetime:
    return dt.datetime.fromisoformat(alert["endsAt"].replace("Z", "+00:00"))


@pytest.mark.skipif(shutil.which("prometheus-alertmanager") is None, reason="installed by scripts/bootstrap.sh --test")
def test_alertmanager_keeps_an_open_finding_active_by_reposting_and_notifies_once(
        world: dict[str, Any], db: Any, sessions: Any, settings: Any, tmp_path: Path) -> None:
    """endsAt a few seconds ahead (HEADROOM_ALERTMANAGER_*_SECONDS): an open finding's alert outlives its first
    endsAt because every pass re-posts it; Alertmanager's webhook receiver is notified once, not once per re-post;
    nothing is recorded per re-post; a resolution (by hand or by the advisor) ends an alert at once, and the test
    alert ends by itself."""
    owner, cluster = world["owner"], world["cluster"]
    box, units = SecretBox(settings.secret_key), units_of_work(sessions)
    families = {r.id: r.family for r in discover_rules()}
    short = settings.model_copy(update={"alertmanager_firing_for_seconds": 4, "alertmanager_test_for_seconds": 2})
    timing = alerts.alertmanager_timing(short)
    assert timing == delivery.AlertmanagerTiming(dt.timedelta(seconds=4), dt.timedelta(seconds=2))
    with receiver("webhook") as hook, alertmanager(tmp_path, f"{hook.url}/am") as am:
        made = owner.post("/api/v1/alert-channels", json={"name": "am", "kind": "alertmanager", "url": am,
                                                          "min_severity": "critical", "renotify_hours": 1})
        assert made.status_code == 201, made.text
        summary = findings.advise_cluster(db, cluster, now=END)
        db.commit()
        critical = [row for kind, row in summary.events if kind == "opened" and row.severity == "critical"]
        keys = {row.dedup_key for row in critical}
        assert len(critical) >= 2
        passes = 0

        def run_pass() -> dict[str, int]:
            nonlocal passes
            passes += 1
            return delivery.deliver_due(units, box, now=lambda: END + dt.timedelta(seconds=passes),
                                        alertmanager=timing)

        assert run_pass() == {"sent": len(critical), "retrying": 0, "failed": 0, "reposted": len(critical)}
        records = db.scalar(select(func.count()).select_from(AlertDelivery))
        first = {a["labels"]["headroom_finding"]: _ends(a) for a in _am_alerts(am)}
        assert set(first) == keys
        now = dt.datetime.now(dt.UTC)
        assert all(now < ends <= now + dt.timedelta(seconds=5) for ends in first.values())  # 4 s ahead, not a day

        def notifications(status: str) -> list[set[str]]:
            return [{a["labels"]["headroom_finding"] for a in r.json["alerts"]} for r in hook.received
                    if r.json["status"] == status]

        # Alertmanager tells its receiver as the group's alerts arrive (one request per delivery record)...
        assert _poll(lambda: any(n == keys for n in notifications("firing")))
        told = notifications("firing")
        assert len(told) <= len(critical) and all(a < b for a, b in zip(told, told[1:], strict=False))
        # ... then passes every half second until well after the first endsAt: still active, endsAt renewed
        while dt.datetime.now(dt.UTC) < max(first.values()) + dt.timedelta(seconds=2):
            assert run_pass()["reposted"] == len(critical)
            time.sleep(0.5)
        active = {a["labels"]["headroom_finding"]: a for a in _am_alerts(am)}
        assert set(active) == keys
        assert all(a["status"]["state"] == "active" and _ends(a) > first[k] for k, a in active.items())
        # and over those five or more group_intervals no re-post made Alertmanager notify again
        assert notifications("firing") == told
        # the re-posts recorded nothing (renotify_hours does not apply to Alertmanager: no reminders either)
        db.expire_all()
        assert db.scalar(select(func.count()).select_from(AlertDelivery)) == records

        # resolved by hand in Headroom: its resolution goes out (endsAt = then) and it is no longer re-posted
        by_hand = critical[0]
        findings.resolve(db, _principal(owner, cluster), by_hand.id, now=END + dt.timedelta(seconds=passes))
        db.commit()
        assert run_pass() == {"sent": 1, "retrying": 0, "failed": 0, "reposted": len(critical) - 1}
        assert {a["labels"]["headroom_finding"] for a in _am_alerts(am)} == keys - {by_hand.dedup_key}

        # resolution by the advisor: endsAt = the resolution time, so Alertmanager ends them at once; one
        # "resolved" notification follows, and nothing is re-posted any more
        at = END + dt.timedelta(seconds=passes)
        gone = findings.record_findings(db, cluster, [], now=at)
        alerts.queue_finding_events(db, cluster, gone.events, now=at, families=families)
        db.commit()
        assert run_pass() == {"sent": len(critical) - 1, "retrying": 0, "failed": 0, "reposted": 0}
        assert not {a["labels"]["headroom_finding"] for a in _am_alerts(am)} & keys
        assert _poll(lambda: notifications("resolved"))

        # the test alert ends by itself after HEADROOM_ALERTMANAGER_TEST_FOR_SECONDS, and says so
        tested = alerts.send_test(db, _principal(owner, cluster), uuid.UUID(made.json()["id"]), box,
                                  now=dt.datetime.now(dt.UTC), alertmanager=timing)
        last = tested.last_deliveries[0]
        assert last.status == "sent" and last.title.endswith("it ends by itself after 2 s")
        (test_alert,) = [a for a in _am_alerts(am) if a["labels"]["alertname"] == "Headroom_test"]
        assert _ends(test_alert) <= dt.datetime.now(dt.UTC) + dt.timedelta(seconds=2)
        assert _poll(lambda: not [a for a in _am_alerts(am) if a["labels"]["alertname"] == "Headroom_test"],
                     timeout=6)
        # through the API, with the default settings: five minutes, said in the delivery's title
        via_api = owner.post(f"/api/v1/alert-channels/{made.json()['id']}/test").json()["last_deliveries"][0]
        assert via_api["status"] == "sent" and via_api["title"].endswith("it ends by itself after 5 min")


@pytest.mark.skipif(shutil.which("prometheus-alertmanager") is None, reason="installed by scripts/bootstrap.sh --test")
def test_an_apply_stop_is_one_alertmanager_alert_until_its_plan_is_resolved(
        world: dict[str, Any], db: Any, sessions: Any, settings: Any, tmp_path: Path) -> None:
    """An apply run that stopped (alerts.queue_apply_event, as apply.run queues it) is one Alertmanager alert: the
    job queued again records nothing more, every pass keeps it active past its first endsAt and Alertmanager
    notifies once; the plan's resolution ends it at once (endsAt = then) and it is no longer re-posted."""
    owner, cluster = world["owner"], world["cluster"]
    box, units = SecretBox(settings.secret_key), units_of_work(sessions)
    timing = delivery.AlertmanagerTiming(dt.timedelta(seconds=4), dt.timedelta(seconds=2))
    plan_id, key = uuid.uuid4(), "apply:plan:stopped"
    with receiver("webhook") as hook, alertmanager(tmp_path, f"{hook.url}/am") as am:
        made = owner.post("/api/v1/alert-channels", json={"name": "am", "kind": "alertmanager", "url": am,
                                                          "min_severity": "critical", "renotify_hours": 1})
        assert made.status_code == 201, made.text
        passes = 0

        def run_pass() -> dict[str, int]:
            nonlocal passes
            passes += 1
            return delivery.deliver_due(units, box, now=lambda: END + dt.timedelta(seconds=passes),
                                        alertmanager=timing)

        def stop() -> int:
            queued = alerts.queue_apply_event(db, cluster, plan_id=plan_id, finding_id=None, title="Apply stopped: x",
                                              fix="Confirm the undo in Headroom.", key=key, now=END)
            db.commit()
            return queued

        def notifications(status: str) -> list[list[str]]:
            return [[a["labels"]["headroom_finding"] for a in r.json["alerts"]] for r in hook.received
                    if r.json["status"] == status]

        assert stop() == 1
        assert run_pass() == {"sent": 1, "retrying": 0, "failed": 0, "reposted": 1}
        assert stop() == 0  # a retried job, a second advance: the same event
        [alert] = _am_alerts(am)
        assert alert["labels"]["headroom_finding"] == f"headroom-apply/{plan_id}"
        first = _ends(alert)
        assert _poll(lambda: notifications("firing"))
        while dt.datetime.now(dt.UTC) < first + dt.timedelta(seconds=2):
            assert run_pass() == {"sent": 0, "retrying": 0, "failed": 0, "reposted": 1}
            time.sleep(0.5)
        [alert] = _am_alerts(am)
        assert alert["status"]["state"] == "active" and _ends(alert) > first
        assert notifications("firing") == [[f"headroom-apply/{plan_id}"]]  # one notification, not one per pass
        db.expire_all()
        assert db.scalar(select(func.count()).select_from(AlertDelivery)) == 1

        # the plan's undo is done: the resolution goes out once and the alert ends
        assert alerts.resolve_apply_event(db, cluster, key=key, now=END + dt.timedelta(seconds=passes)) == 1
        db.commit()
        assert alerts.resolve_apply_event(db, cluster, key=key, now=END + dt.timedelta(seconds=passes)) == 0
        assert run_pass() == {"sent": 1, "retrying": 0, "failed": 0, "reposted": 0}
        assert not _am_alerts(am)
        assert _poll(lambda: notifications("resolved")) == [[f"headroom-apply/{plan_id}"]]
        assert run_pass() == {"sent": 0, "retrying": 0, "failed": 0, "reposted": 0}
