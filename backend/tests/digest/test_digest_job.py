"""The digest jobs against a real SMTP server (aiosmtpd on 127.0.0.1) and the test PostgreSQL: who receives it,
what it says, at most one send per (org, ISO week), refusals recorded, transient failures retried."""

from __future__ import annotations

import datetime as dt
import html as h
import re
import uuid
from typing import Any

import pytest
from digest_seed import DIGEST_AT, EMPTIES_IN_35_MIN, WEEK, add_member, advisor_finding, record, verify
from headroom.digest import service
from headroom.digest.models import DigestSend
from headroom.jobs import all_jobs
from headroom.platform.smtp import TransientSendError
from helpers import sign_up
from sqlalchemy import select
from xdist_workers import redis_db


def _sends(sessions: Any, org_id: str) -> list[DigestSend]:
    with sessions() as db:
        return list(db.scalars(select(DigestSend).where(DigestSend.org_id == uuid.UUID(org_id))))


@pytest.fixture()
def org(client: Any, sessions: Any) -> dict[str, Any]:
    """An org with a verified owner, a verified viewer, an unverified admin, two findings and a failing source."""
    owner = sign_up(client, org="Digest Org", email="owner@digest-org.example.com")
    viewer = add_member(sessions, owner.org_id, "viewer@digest-org.example.com", "viewer")
    admin = add_member(sessions, owner.org_id, "admin@digest-org.example.com", "admin")
    verify(sessions, owner.session["user"]["id"])
    verify(sessions, viewer)
    cluster = owner.post("/api/v1/clusters", json={"name": "prod-<east>", "tikv_version": "v8.5.1"}).json()
    record(sessions, cluster["id"], [
        advisor_finding("prod-<east>", "vol-0aaa", "critical", "gp2 burst bucket drains on vol-0aaa",
                        forecast=EMPTIES_IN_35_MIN,
                        headroom_pct=2.0),
        advisor_finding("prod-<east>", "vol-0bbb", "warning", "vol-0bbb near its IOPS ceiling", headroom_pct=12.0),
    ])
    from headroom.sources.models import PrometheusSource

    with sessions() as db:
        db.add(PrometheusSource(org_id=uuid.UUID(owner.org_id), name="prom-x", base_url="http://127.0.0.1:9",
                                status="failing", consecutive_failures=3,
                                last_error="connection refused (127.0.0.1:9)",
                                last_error_at=DIGEST_AT - dt.timedelta(hours=2)))
        db.commit()
    return {"owner": owner, "viewer": viewer, "admin": admin, "cluster": cluster}


def test_jobs_are_registered_on_the_email_queue() -> None:
    jobs = {j.name: j for j in all_jobs()}
    weekly, send = jobs["digest.weekly"], jobs["digest.send_org"]
    assert (weekly.queue, send.queue) == ("email", "email")
    assert weekly.schedule is not None
    assert (weekly.schedule.minute, weekly.schedule.hour, weekly.schedule.day_of_week) == ("0", "8", "1")
    assert send.schedule is None

    monday_0800 = dt.datetime(2026, 11, 9, 8, 0, tzinfo=dt.UTC)
    assert monday_0800.isoweekday() == 1
    assert weekly.schedule.is_due(monday_0800)
    assert not weekly.schedule.is_due(monday_0800 + dt.timedelta(minutes=1))
    assert not weekly.schedule.is_due(monday_0800 + dt.timedelta(days=1))


def test_weekly_job_sends_once_per_week_to_verified_admins(
    org: dict[str, Any], smtp_server: Any, smtp_settings: Any, job_sessions: Any, job_context: Any
) -> None:
    first = service.send_weekly(job_context(smtp_settings), DIGEST_AT)
    again = service.send_weekly(job_context(smtp_settings), DIGEST_AT + dt.timedelta(hours=3))
    ours = [r for r in first["orgs"] if r["org_id"] == org["owner"].org_id]
    assert ours == [{"org_id": org["owner"].org_id, "week_start": "2026-11-09", "status": "sent", "recipients": 1}]
    assert [r for r in again["orgs"] if r["org_id"] == org["owner"].org_id][0]["reason"] == "already sent"

    mine = [m for m in smtp_server.received if "Digest Org" in str(m.message["Subject"])]
    assert len(mine) == 1
    got = mine[0]
    # the verified owner only: the viewer is verified but viewers are not included by default; the admin is not
    # verified
    assert got.rcpt_tos == ["owner@digest-org.example.com"]
    assert got.mail_from == "digest@headroom.example.com"
    msg = got.message
    assert msg["To"] == "owner@digest-org.example.com"
    assert str(msg["Subject"]) == (
        "Headroom weekly advisory for Digest Org: 1 critical, 1 warning, 1 source problem (week of 2026-11-09)"
    )
    assert msg.get_content_type() == "multipart/alternative"
    text = msg.get_body(preferencelist=("plain",)).get_content().replace("\r\n", "\n")
    html = msg.get_body(preferencelist=("html",)).get_content()
    assert "Open findings: 1 critical, 1 warning, 0 info. In the last 7 days" in text
    assert "2 new, 0 resolved" in text
    assert "1. [CRITICAL] gp2 burst bucket drains on vol-0aaa\n" in text
    assert "2. [WARNING] vol-0bbb near its IOPS ceiling\n" in text
    assert "   Fix: Set the volume type to gp3 (now gp2) on vol-0aaa\n" in text
    assert "   Forecast: the 40% balance runs out within a day\n" in text
    assert 'Prometheus source "prom-x" is failing (3 failures in a row' in text
    assert "connection refused (127.0.0.1:9)" in text
    assert f"https://headroom.example.com/clusters/{org['cluster']['id']}" in text
    assert "Dashboard: https://headroom.example.com/clusters" in text
    assert re.search(r'Cluster <a href="[^"]+" style="[^"]+">prod-&lt;east&gt;</a>', html) and "prod-<east>" not in html
    # the HTML a mail client renders: inlined styles on the layout's table cells, a 600 px body that reflows
    cells = re.findall(r"<td ([^>]*)>", html)
    assert cells and all('style="' in attrs for attrs in cells)
    assert re.search(r'<table class="container"[^>]*style="[^"]*width: 100%;max-width: 600px', html)
    # the summary and the text part say the same findings: one card per finding in the HTML, one entry in the text
    titles = re.findall(r"^\d+\. \[[A-Z]+\] (.+)$", text, flags=re.M)
    cards = re.findall(r'<table class="card"[^>]*data-finding-card.*?<a class="title-link" href="[^"]+"[^>]*>([^<]+)</a>',
                       html, flags=re.S)
    assert titles == ["gp2 burst bucket drains on vol-0aaa", "vol-0bbb near its IOPS ceiling"]
    assert [h.unescape(c) for c in cards] == titles
    assert re.search(r'data-count="critical"[^>]*>1<', html) and re.search(r'data-count="warning"[^>]*>1<', html)

    sends = _sends(job_sessions, org["owner"].org_id)
    assert [(s.week_start, s.status, s.recipients, s.attempts, s.error) for s in sends] == [
        (WEEK, "sent", 1, 1, None)
    ]
    assert sends[0].sent_at == DIGEST_AT


def test_a_duplicated_send_task_sends_once(org: dict[str, Any], smtp_server: Any, smtp_settings: Any,
                                           job_sessions: Any, job_context: Any) -> None:
    org_id = org["owner"].org_id
    results = [service.send_week(job_context(smtp_settings), DIGEST_AT, org_id=org_id, week_start="2026-11-09")
               for _ in range(3)]
    assert [r["status"] for r in results] == ["sent", "skipped", "skipped"]
    assert len(smtp_server.received) == 1


def test_viewers_included_when_the_org_asks(org: dict[str, Any], smtp_server: Any, smtp_settings: Any,
                                            job_sessions: Any, job_context: Any) -> None:
    assert org["owner"].patch("/api/v1/org/digest", json={"include_viewers": True}).status_code == 200
    result = service.send_week(job_context(smtp_settings), DIGEST_AT, org_id=org["owner"].org_id)
    assert result["recipients"] == 2
    # one message each (each carries its own unsubscribe link)
    assert [r.rcpt_tos for r in smtp_server.received] == [["owner@digest-org.example.com"],
                                                          ["viewer@digest-org.example.com"]]


def test_disabled_org_gets_nothing_and_no_row(org: dict[str, Any], smtp_server: Any, smtp_settings: Any,
                                              job_sessions: Any, job_context: Any) -> None:
    assert org["owner"].patch("/api/v1/org/digest", json={"enabled": False}).status_code == 200
    result = service.send_week(job_context(smtp_settings), DIGEST_AT, org_id=org["owner"].org_id)
    assert result["reason"] == "disabled by the organisation"
    assert smtp_server.received == [] and _sends(job_sessions, org["owner"].org_id) == []


def test_a_refusing_server_is_a_recorded_permanent_failure(
    org: dict[str, Any], smtp_server: Any, smtp_settings: Any, job_sessions: Any, job_context: Any
) -> None:
    smtp_server.reply = "550 5.7.1 Relaying denied"
    org_id = org["owner"].org_id
    result = service.send_week(job_context(smtp_settings), DIGEST_AT, org_id=org_id)
    assert result["status"] == "failed"
    (row,) = _sends(job_sessions, org_id)
    assert (row.status, row.recipients, row.sent_at) == ("failed", 0, None)
    assert row.error == "the server answered 550 5.7.1 Relaying denied"
    # permanent: a second run (a redelivered task) does not try again
    smtp_server.reply = None
    assert service.send_week(job_context(smtp_settings), DIGEST_AT, org_id=org_id)["reason"] == "already failed"
    assert smtp_server.received == []


def test_a_transient_failure_is_retried_then_sent_once(
    org: dict[str, Any], smtp_server: Any, smtp_settings: Any, job_sessions: Any, job_context: Any
) -> None:
    smtp_server.reply = "451 4.3.0 Try again later"
    org_id = org["owner"].org_id
    with pytest.raises(TransientSendError) as caught:
        service.send_week(job_context(smtp_settings), DIGEST_AT, org_id=org_id)
    assert isinstance(caught.value, ConnectionError)  # what the Celery task retries with backoff
    (row,) = _sends(job_sessions, org_id)
    assert (row.status, row.attempts) == ("retrying", 1)
    assert row.error == "attempt 1: the server answered 451 4.3.0 Try again later"

    smtp_server.reply = None
    retried = service.send_week(job_context(smtp_settings), DIGEST_AT + dt.timedelta(minutes=2), org_id=org_id)
    assert retried["status"] == "sent"
    (row,) = _sends(job_sessions, org_id)
    assert (row.status, row.attempts, row.error) == ("sent", 2, None)
    assert len(smtp_server.received) == 1


def test_the_last_attempt_records_a_failure_instead_of_retrying(
    org: dict[str, Any], smtp_server: Any, smtp_settings: Any, job_sessions: Any, job_context: Any
) -> None:
    smtp_server.reply = "421 4.7.0 Too busy"
    org_id = org["owner"].org_id
    for _ in range(service.MAX_ATTEMPTS - 1):
        with pytest.raises(TransientSendError):
            service.send_week(job_context(smtp_settings), DIGEST_AT, org_id=org_id)
    last = service.send_week(job_context(smtp_settings), DIGEST_AT, org_id=org_id)
    assert last["status"] == "failed"
    (row,) = _sends(job_sessions, org_id)
    assert (row.status, row.attempts) == ("failed", service.MAX_ATTEMPTS)


def test_unreachable_server_is_transient(org: dict[str, Any], smtp_settings: Any, job_sessions: Any, job_context: Any) -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on once this socket is closed
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    settings = smtp_settings.model_copy(update={"smtp_port": closed})
    with pytest.raises(TransientSendError, match="the mail server refused the connection; check HEADROOM_SMTP_HOST"):
        service.send_week(job_context(settings), DIGEST_AT, org_id=org["owner"].org_id)
    (row,) = _sends(job_sessions, org["owner"].org_id)
    assert row.status == "retrying"


def test_no_recipients_is_recorded_as_skipped(client: Any, smtp_server: Any, smtp_settings: Any,
                                              job_sessions: Any, job_context: Any) -> None:
    owner = sign_up(client, org="Nobody Verified")
    result = service.send_week(job_context(smtp_settings), DIGEST_AT, org_id=owner.org_id)
    assert result["reason"] == "no recipients"
    (row,) = _sends(job_sessions, owner.org_id)
    assert (row.status, row.error) == (
        "skipped", "no member with a verified email in the recipient roles who wants the weekly email")
    assert smtp_server.received == []


def test_without_smtp_the_digest_is_skipped_and_logged(org: dict[str, Any], settings: Any, job_sessions: Any, job_context: Any) -> None:
    from structlog.testing import capture_logs

    assert settings.smtp_host is None
    with capture_logs() as logs:
        assert service.send_weekly(job_context(settings), DIGEST_AT) == {"skipped": "smtp not configured"}
        assert service.send_week(job_context(settings), DIGEST_AT, org_id=org["owner"].org_id)["reason"] == (
            "smtp not configured"
        )
    assert [e["event"] for e in logs] == ["digest.skipped", "digest.skipped"]
    assert _sends(job_sessions, org["owner"].org_id) == []


def test_a_claim_left_by_a_dead_worker_is_taken_back_after_30_minutes(
    org: dict[str, Any], smtp_server: Any, smtp_settings: Any, job_sessions: Any, job_context: Any
) -> None:
    from sqlalchemy import text

    org_id = org["owner"].org_id
    with job_sessions() as db:  # a worker claimed the week and died before it recorded anything
        db.execute(text("INSERT INTO digest_sends (id, org_id, week_start, status, attempts, claimed_at) "
                        "VALUES (:id, :org, :week, 'sending', 1, now() - interval '10 minutes')"),
                   {"id": uuid.uuid4(), "org": org_id, "week": WEEK})
        db.commit()
    fresh = service.send_week(job_context(smtp_settings), DIGEST_AT, org_id=org_id)
    assert fresh["reason"] == "already sending" and smtp_server.received == []

    with job_sessions() as db:
        db.execute(text("UPDATE digest_sends SET claimed_at = now() - interval '31 minutes' WHERE org_id = :org"),
                   {"org": org_id})
        db.commit()
    redelivered = service.send_week(job_context(smtp_settings), DIGEST_AT, org_id=org_id)
    assert redelivered["status"] == "sent" and len(smtp_server.received) == 1
    (row,) = _sends(job_sessions, org_id)
    assert (row.status, row.attempts) == ("sent", 2)


def test_with_a_broker_the_weekly_job_queues_one_send_per_org(
    org: dict[str, Any], smtp_settings: Any, redis_url: str, job_sessions: Any, job_context: Any
) -> None:
    import base64
    import json

    import redis

    broker = redis_db(redis_url, 7)  # a database no worker reads
    client = redis.Redis.from_url(broker)
    client.delete("email")
    settings = smtp_settings.model_copy(update={"redis_url": broker})
    result = service.send_weekly(job_context(settings), DIGEST_AT)
    assert result["week_start"] == "2026-11-09" and result["queued"] >= 1
    queued = [json.loads(raw) for raw in client.lrange("email", 0, -1)]
    client.delete("email")
    assert len(queued) == result["queued"]
    assert {m["headers"]["task"] for m in queued} == {"digest.send_org"}
    kwargs = [json.loads(base64.b64decode(m["body"]))[1] for m in queued]
    ours = [k for k in kwargs if k["org_id"] == org["owner"].org_id]
    assert ours == [{"org_id": org["owner"].org_id, "week_start": "2026-11-09", "now_iso": DIGEST_AT.isoformat()}]
    assert _sends(job_sessions, org["owner"].org_id) == []  # nothing sent by the fan-out itself
