"""One-click unsubscribe (RFC 8058) and each member's preferences, against a real SMTP server (aiosmtpd on
127.0.0.1) and the test PostgreSQL: every recipient gets their own multipart/alternative message with
well-formed List-Unsubscribe headers; the link's token works through the API twice and stops next week's email;
preferences choose the clusters a recipient's email covers."""

from __future__ import annotations

import datetime as dt
import re
import uuid
from email import message_from_bytes, policy
from typing import Any

import pytest
from digest_seed import DIGEST_AT, add_member, advisor_finding, record, verify
from headroom.digest import service
from helpers import sign_up

ONE_CLICK = re.compile(
    r"^<(https://headroom\.example\.com/api/v1/digest/unsubscribe\?token=([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+))>$"
)
NEXT_WEEK = DIGEST_AT + dt.timedelta(days=7)


@pytest.fixture()
def org(client: Any, sessions: Any) -> dict[str, Any]:
    """An org with two clusters (a finding on each) and two verified recipients: the owner and an admin."""
    owner = sign_up(client, org="Unsub Org", email="owner@unsub-org.example.com")
    admin = add_member(sessions, owner.org_id, "admin@unsub-org.example.com", "admin")
    verify(sessions, owner.session["user"]["id"])
    verify(sessions, admin)
    east = owner.post("/api/v1/clusters", json={"name": "east", "tikv_version": "v8.5.1"}).json()
    west = owner.post("/api/v1/clusters", json={"name": "west", "tikv_version": "v8.5.1"}).json()
    record(
        sessions,
        east["id"],
        [advisor_finding("east", "vol-0east", "critical", "vol-0east drains its burst bucket")],
    )
    record(
        sessions,
        west["id"],
        [advisor_finding("west", "vol-0west", "warning", "vol-0west near its IOPS ceiling")],
    )
    return {"owner": owner, "admin": admin, "east": east, "west": west}


def _bodies(msg: Any) -> tuple[str, str]:
    text = msg.get_body(preferencelist=("plain",)).get_content().replace("\r\n", "\n")
    return text, msg.get_body(preferencelist=("html",)).get_content()


def _by_rcpt(received: list[Any]) -> dict[str, Any]:
    got: dict[str, Any] = {}
    for r in received:
        assert len(r.rcpt_tos) == 1, "each recipient gets their own message"
        got[r.rcpt_tos[0]] = r.message
    return got


def test_each_recipient_gets_their_own_message_with_one_click_headers(
    org: dict[str, Any], client: Any, smtp_server: Any, smtp_settings: Any, job_context: Any
) -> None:
    result = service.send_week(job_context(smtp_settings), DIGEST_AT, org_id=org["owner"].org_id)
    assert (result["status"], result["recipients"]) == ("sent", 2)
    messages = _by_rcpt(smtp_server.received)
    assert sorted(messages) == ["admin@unsub-org.example.com", "owner@unsub-org.example.com"]
    tokens = set()
    for email, msg in messages.items():
        assert msg.get_content_type() == "multipart/alternative"
        assert [p.get_content_type() for p in msg.iter_parts()] == ["text/plain", "text/html"]
        assert msg["To"] == email
        assert len(msg.get_all("List-Unsubscribe")) == 1
        match = ONE_CLICK.match(str(msg["List-Unsubscribe"]))
        assert match, msg["List-Unsubscribe"]
        assert str(msg["List-Unsubscribe-Post"]) == "List-Unsubscribe=One-Click"
        token = match.group(2)
        tokens.add(token)
        text, html = _bodies(msg)
        page = f"https://headroom.example.com/unsubscribe?token={token}"
        assert f"Unsubscribe from this weekly email: {page}\n" in text
        assert re.search(f'<a href="{re.escape(page)}" style="[^"]*">Unsubscribe</a>', html)
        assert (
            "Your email preferences (which clusters, on or off): https://headroom.example.com/settings/digest"
            in text
        )
    assert len(tokens) == 2, "a token per recipient"


def test_the_one_click_headers_arrive_as_plain_ascii_on_one_line(
    org: dict[str, Any], smtp_server: Any, smtp_settings: Any, job_context: Any
) -> None:
    # What a receiving mail client reads (RFC 2369 section 2, RFC 8058 section 3.1): the raw DATA aiosmtpd got
    # carries `List-Unsubscribe: <https://...>` unfolded, not an RFC 2047 encoded-word, and a receiver's parser
    # (the email package with the standard policy, from the raw bytes) reads the same URL from the raw value.
    service.send_week(job_context(smtp_settings), DIGEST_AT, org_id=org["owner"].org_id)
    assert len(smtp_server.received) == 2
    for received in smtp_server.received:
        head = received.raw.split(b"\r\n\r\n", 1)[0].split(b"\r\n")
        lines = [line for line in head if line.lower().startswith(b"list-unsubscribe:")]
        assert len(lines) == 1, head
        value = lines[0].split(b":", 1)[1].strip()
        assert value.isascii() and b"=?" not in value, value
        assert ONE_CLICK.match(value.decode()), value
        following = head[head.index(lines[0]) + 1]
        assert not following[:1].isspace(), "the header is not folded onto a second line"
        assert b"List-Unsubscribe-Post: List-Unsubscribe=One-Click" in head
        parsed = message_from_bytes(received.raw, policy=policy.default)
        raw_items = dict((k.lower(), v) for k, v in parsed.raw_items())
        assert raw_items["list-unsubscribe"].strip() == value.decode()


def test_the_unsubscribe_link_works_twice_and_stops_next_weeks_email(
    org: dict[str, Any], make_client: Any, smtp_server: Any, smtp_settings: Any, job_context: Any
) -> None:
    service.send_week(job_context(smtp_settings), DIGEST_AT, org_id=org["owner"].org_id)
    admin_msg = _by_rcpt(smtp_server.received)["admin@unsub-org.example.com"]
    one_click = ONE_CLICK.match(str(admin_msg["List-Unsubscribe"])).group(1)  # type: ignore[union-attr]
    path = one_click.removeprefix("https://headroom.example.com")

    anonymous = make_client()  # a mail client: no session, no CSRF header, the RFC 8058 form body
    form = {
        "content": "List-Unsubscribe=One-Click",
        "headers": {"Content-Type": "application/x-www-form-urlencoded"},
    }
    first = anonymous.post(path, **form)
    assert first.status_code == 200, first.text
    assert first.json() == {
        "email": "admin@unsub-org.example.com",
        "organization": "Unsub Org",
        "weekly_email": False,
        "already_unsubscribed": False,
    }
    again = anonymous.post(path, **form)
    assert again.status_code == 200
    assert again.json()["already_unsubscribed"] is True

    # the owner's settings page no longer lists the admin among this week's recipients
    assert org["owner"].get("/api/v1/org/digest").json()["recipients"] == ["owner@unsub-org.example.com"]
    smtp_server.received.clear()
    result = service.send_week(job_context(smtp_settings), NEXT_WEEK, org_id=org["owner"].org_id)
    assert (result["status"], result["recipients"]) == ("sent", 1)
    assert [r.rcpt_tos for r in smtp_server.received] == [["owner@unsub-org.example.com"]]


def test_everyone_unsubscribed_is_a_skipped_week(
    org: dict[str, Any], make_client: Any, smtp_server: Any, smtp_settings: Any, job_context: Any
) -> None:
    for user_id in (uuid.UUID(org["owner"].session["user"]["id"]), uuid.UUID(org["admin"])):
        token = service.unsubscribe_token(smtp_settings.secret_key, user_id, uuid.UUID(org["owner"].org_id))
        assert make_client().post(f"/api/v1/digest/unsubscribe?token={token}").status_code == 200
    result = service.send_week(job_context(smtp_settings), DIGEST_AT, org_id=org["owner"].org_id)
    assert result["reason"] == "no recipients" and smtp_server.received == []


@pytest.mark.parametrize(
    ("mangle", "status", "words"),
    [
        (lambda t: t.split(".")[0], 400, "has no signature"),
        (lambda t: t[:-2] + ("AA" if not t.endswith("AA") else "BB"), 400, "signature does not match"),
        (lambda t: "x" + t, 400, "signature does not match"),
    ],
)
def test_a_bad_or_tampered_token_is_refused_in_words(
    org: dict[str, Any], make_client: Any, smtp_settings: Any, mangle: Any, status: int, words: str
) -> None:
    token = service.unsubscribe_token(
        smtp_settings.secret_key, uuid.UUID(org["admin"]), uuid.UUID(org["owner"].org_id)
    )
    got = make_client().post(f"/api/v1/digest/unsubscribe?token={mangle(token)}")
    assert got.status_code == status
    assert got.json()["error"]["code"] == "invalid_unsubscribe_token"
    assert words in got.json()["error"]["message"]
    assert org["owner"].get("/api/v1/org/digest").json()["recipients"] == [
        "admin@unsub-org.example.com",
        "owner@unsub-org.example.com",
    ]


def test_a_verification_token_is_no_unsubscribe_token(
    org: dict[str, Any], make_client: Any, smtp_settings: Any
) -> None:
    # the same signing, another purpose: a token for one never passes as the other
    user = org["owner"].session["user"]
    verify_token = service.verification_token(
        smtp_settings.secret_key, uuid.UUID(user["id"]), user["email"], now=DIGEST_AT
    )
    got = make_client().post(f"/api/v1/digest/unsubscribe?token={verify_token}")
    assert got.status_code == 400 and "signature does not match" in got.json()["error"]["message"]
    unsub = service.unsubscribe_token(
        smtp_settings.secret_key, uuid.UUID(user["id"]), uuid.UUID(org["owner"].org_id)
    )
    assert org["owner"].post(f"/api/v1/org/digest/verify/{unsub}").status_code == 404


def test_preferences_choose_the_clusters_in_a_recipients_email(
    org: dict[str, Any], smtp_server: Any, smtp_settings: Any, job_context: Any
) -> None:
    owner = org["owner"]
    assert owner.get("/api/v1/digest/preferences").json() == {
        "weekly_email": True,
        "cluster_ids": None,
        "unsubscribed_at": None,
    }
    chosen = owner.put(
        "/api/v1/digest/preferences", json={"weekly_email": True, "cluster_ids": [org["west"]["id"]]}
    )
    assert chosen.status_code == 200, chosen.text
    assert chosen.json()["cluster_ids"] == [org["west"]["id"]]

    service.send_week(job_context(smtp_settings), DIGEST_AT, org_id=owner.org_id)
    messages = _by_rcpt(smtp_server.received)
    owner_text, owner_html = _bodies(messages["owner@unsub-org.example.com"])
    assert "== Cluster west ==" in owner_text and "vol-0west near its IOPS ceiling" in owner_text
    assert "east" not in owner_text and "vol-0east" not in owner_html
    assert str(messages["owner@unsub-org.example.com"]["Subject"]).endswith(
        ": 1 warning (week of 2026-11-09)"
    )
    admin_text, _ = _bodies(messages["admin@unsub-org.example.com"])  # the admin never chose: every cluster
    assert "== Cluster east ==" in admin_text and "== Cluster west ==" in admin_text


def test_preferences_turn_the_email_off_and_back_on(
    org: dict[str, Any], make_client: Any, smtp_settings: Any
) -> None:
    owner = org["owner"]
    token = service.unsubscribe_token(
        smtp_settings.secret_key, uuid.UUID(owner.session["user"]["id"]), uuid.UUID(owner.org_id)
    )
    assert make_client().post(f"/api/v1/digest/unsubscribe?token={token}").status_code == 200
    off = owner.get("/api/v1/digest/preferences").json()
    assert off["weekly_email"] is False and off["unsubscribed_at"] is not None
    on = owner.put("/api/v1/digest/preferences", json={"weekly_email": True, "cluster_ids": None}).json()
    assert on == {"weekly_email": True, "cluster_ids": None, "unsubscribed_at": None}
    assert "owner@unsub-org.example.com" in owner.get("/api/v1/org/digest").json()["recipients"]


def test_preferences_refuse_another_orgs_cluster(org: dict[str, Any], make_client: Any) -> None:
    other = sign_up(make_client(), org="Other Org")
    got = other.put(
        "/api/v1/digest/preferences", json={"weekly_email": True, "cluster_ids": [org["east"]["id"]]}
    )
    assert got.status_code == 404 and got.json()["error"]["code"] == "not_found"
    assert other.get("/api/v1/digest/preferences").json()["cluster_ids"] is None


def test_a_retried_send_skips_the_recipients_it_already_reached(
    org: dict[str, Any], smtp_server: Any, smtp_settings: Any, job_sessions: Any, job_context: Any
) -> None:
    from headroom.digest.models import DigestDelivery, DigestSend
    from headroom.platform.smtp import TransientSendError
    from sqlalchemy import select

    smtp_server.replies["owner@unsub-org.example.com"] = "451 4.3.0 Try again later"
    with pytest.raises(TransientSendError):
        service.send_week(job_context(smtp_settings), DIGEST_AT, org_id=org["owner"].org_id)
    assert [r.rcpt_tos for r in smtp_server.received] == [["admin@unsub-org.example.com"]]

    smtp_server.replies.clear()
    retried = service.send_week(
        job_context(smtp_settings), DIGEST_AT + dt.timedelta(minutes=2), org_id=org["owner"].org_id
    )
    assert (retried["status"], retried["recipients"]) == ("sent", 2)
    # the admin got the week once; the owner once, on the retry
    assert [r.rcpt_tos for r in smtp_server.received] == [
        ["admin@unsub-org.example.com"],
        ["owner@unsub-org.example.com"],
    ]
    with job_sessions() as db:
        send = db.scalars(select(DigestSend).where(DigestSend.org_id == uuid.UUID(org["owner"].org_id))).one()
        assert (send.status, send.attempts, send.recipients) == ("sent", 2, 2)
        assert len(db.scalars(select(DigestDelivery).where(DigestDelivery.send_id == send.id)).all()) == 2


def test_one_refused_recipient_does_not_fail_the_week(
    org: dict[str, Any], smtp_server: Any, smtp_settings: Any, job_sessions: Any, job_context: Any
) -> None:
    smtp_server.replies["admin@unsub-org.example.com"] = "550 5.1.1 No such mailbox"
    result = service.send_week(job_context(smtp_settings), DIGEST_AT, org_id=org["owner"].org_id)
    assert (result["status"], result["recipients"]) == ("sent", 1)
    from headroom.digest.models import DigestSend
    from sqlalchemy import select

    with job_sessions() as db:
        send = db.scalars(select(DigestSend).where(DigestSend.org_id == uuid.UUID(org["owner"].org_id))).one()
    assert send.error == "refused: admin@unsub-org.example.com: the server answered 550 5.1.1 No such mailbox"


def test_an_http_public_url_still_gets_the_header_and_a_warning(
    org: dict[str, Any], smtp_server: Any, smtp_settings: Any, job_context: Any
) -> None:
    from structlog.testing import capture_logs

    settings = smtp_settings.model_copy(update={"public_url": "http://headroom.internal:8080"})
    with capture_logs() as logs:
        service.send_week(job_context(settings), DIGEST_AT, org_id=org["owner"].org_id)
    assert "digest.unsubscribe_not_https" in [e["event"] for e in logs]
    header = str(smtp_server.received[0].message["List-Unsubscribe"])
    assert re.match(r"^<http://headroom\.internal:8080/api/v1/digest/unsubscribe\?token=[\w.-]+>$", header), (
        header
    )
    assert str(smtp_server.received[0].message["List-Unsubscribe-Post"]) == "List-Unsubscribe=One-Click"
