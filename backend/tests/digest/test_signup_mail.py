"""Sign-up email goes through the real SMTP sender (the digest's), to a real SMTP server on 127.0.0.1."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

from helpers import PASSWORD, sign_up


def test_signup_mail_over_smtp(app_ctx: Any, client: Any, make_client: Any, smtp_server: Any,
                               smtp_settings: Any) -> None:
    from headroom.platform.mail import SmtpMailer, mailer_from_settings

    sign_up(client, email="owner@example.com")  # through the test outbox, before SMTP is wired in
    app_ctx.mailer = mailer_from_settings(smtp_settings)
    assert isinstance(app_ctx.mailer, SmtpMailer)
    app_ctx.settings = smtp_settings

    body = {"password": "a brand new password", "organization_name": "Other"}
    taken = make_client().post("/api/v1/auth/signup", json={**body, "email": "owner@example.com"})
    new = make_client().post("/api/v1/auth/signup", json={**body, "email": "newbie@example.com"})
    assert taken.status_code == new.status_code == 202 and taken.json() == new.json()
    assert "No mail server" not in taken.json()["message"]

    by_rcpt = {r.rcpt_tos[0]: r.message for r in smtp_server.received}
    assert set(by_rcpt) == {"owner@example.com", "newbie@example.com"}
    warning = by_rcpt["owner@example.com"]
    assert warning["Subject"] == "Someone tried to sign up with your address"
    assert warning["From"] == "Headroom <digest@headroom.example.com>"
    assert "https://headroom.example.com/login" in warning.get_body(("plain",)).get_content()
    welcome = by_rcpt["newbie@example.com"].get_body(("plain",)).get_content()
    link = re.search(r"https://headroom\.example\.com/signup/confirm\?token=(\S+)", welcome)
    assert link is not None, welcome
    confirmed = make_client().post("/api/v1/auth/signup/confirm", json={"token": unquote(link.group(1))})
    assert confirmed.status_code == 201 and confirmed.json()["user"]["email"] == "newbie@example.com"
    assert make_client().post("/api/v1/auth/login",
                              json={"email": "owner@example.com", "password": PASSWORD}).status_code == 200
