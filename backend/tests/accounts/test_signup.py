"""Sign-up never reveals whether an address is registered (no account enumeration): the same answer for every address;
a new address gets a link that creates the account, a registered one a warning to its owner."""

from __future__ import annotations

from typing import Any

from helpers import PASSWORD, emails_to, sign_up, signup_link_token
from sqlalchemy import func, select


def _signup(client: Any, email: str, password: str = "another long password") -> Any:
    return client.post("/api/v1/auth/signup",
                       json={"email": email, "password": password, "organization_name": "Intruders"})


def test_signup_answers_the_same_for_a_registered_and_a_new_address(client: Any, make_client: Any, db: Any) -> None:
    from headroom.accounts.models import Organization, User

    sign_up(client, email="taken@example.com", org="Original")
    before = (db.scalar(select(func.count()).select_from(User)), db.scalar(select(func.count()).select_from(Organization)))
    taken = _signup(make_client(), "TAKEN@example.com")
    new = _signup(make_client(), "fresh@example.com")

    assert taken.status_code == new.status_code == 202
    assert taken.json() == new.json()
    assert "Check your email" in taken.json()["message"]
    assert "set-cookie" not in taken.headers and "set-cookie" not in new.headers
    assert sorted(taken.headers.keys()) == sorted(new.headers.keys())
    # Nothing is stored by either: the new account exists only once its link is followed.
    after = (db.scalar(select(func.count()).select_from(User)), db.scalar(select(func.count()).select_from(Organization)))
    assert after == before
    assert make_client().post("/api/v1/auth/login",
                              json={"email": "fresh@example.com", "password": "another long password"}).status_code == 401

    # The registered address's owner is told; their account is untouched.
    warning = emails_to(client, "taken@example.com")[-1]
    assert "Subject: Someone tried to sign up with your address" in warning
    assert "/signup/confirm" not in warning and "/login" in warning
    assert make_client().post("/api/v1/auth/login",
                              json={"email": "taken@example.com", "password": PASSWORD}).status_code == 200
    # The new address gets the link.
    assert "Subject: Finish creating your Headroom account" in emails_to(client, "fresh@example.com")[-1]


def test_the_emailed_link_creates_the_account_once_and_logs_in(client: Any, make_client: Any) -> None:
    assert _signup(client, "ada@example.com", PASSWORD).status_code == 202
    token = signup_link_token(client, "ada@example.com")
    confirmed = client.post("/api/v1/auth/signup/confirm", json={"token": token})
    assert confirmed.status_code == 201, confirmed.text
    assert confirmed.json()["role"] == "owner" and confirmed.json()["organization"]["name"] == "Intruders"
    assert client.get("/api/v1/auth/me").json()["user"]["email"] == "ada@example.com"

    again = make_client().post("/api/v1/auth/signup/confirm", json={"token": token})
    assert again.status_code == 409 and again.json()["error"]["code"] == "email_taken"
    assert "log in" in again.json()["error"]["message"]
    assert make_client().post("/api/v1/auth/login", json={"email": "ada@example.com", "password": PASSWORD}).status_code == 200


def test_a_tampered_or_stale_link_is_refused(client: Any, clock: Any) -> None:
    assert _signup(client, "late@example.com").status_code == 202
    token = signup_link_token(client, "late@example.com")
    tampered = client.post("/api/v1/auth/signup/confirm", json={"token": token[:-6] + "AAAAAA"})
    assert tampered.status_code == 404 and tampered.json()["error"]["code"] == "signup_link_invalid"
    assert "sign up again" in tampered.json()["error"]["message"]
    clock.advance(hours=25)
    stale = client.post("/api/v1/auth/signup/confirm", json={"token": token})
    assert stale.status_code == 404 and stale.json()["error"]["code"] == "signup_link_invalid"


def test_without_a_mail_server_the_answer_says_where_the_link_went(client: Any) -> None:
    message = _signup(client, "local@example.com").json()["message"]
    assert "No mail server is configured" in message and "outbox" in message


def test_without_a_mail_server_the_link_stays_out_of_the_log(tmp_path: Any) -> None:
    """A sign-up link is a credential: the log says where the email went, the file holds it, readable by the owner only."""
    import stat

    import structlog
    from headroom.platform.mail import OutboxMailer

    link = "https://headroom.example/signup/confirm#token=sealed-credential-123"
    with structlog.testing.capture_logs() as logs:
        OutboxMailer(tmp_path).send("someone@example.com", "Finish signing up", f"Open {link}")
    (written,) = tmp_path.glob("*.txt")
    assert link in written.read_text()
    assert stat.S_IMODE(written.stat().st_mode) == 0o600
    assert [entry["event"] for entry in logs] == ["mail.not_sent"]
    assert link not in repr(logs) and "someone@example.com" not in repr(logs)
    assert logs[0]["outbox_file"] == str(written)


def test_sign_up_cannot_flood_an_inbox(app: Any, client: Any) -> None:
    from fastapi.testclient import TestClient
    from headroom.accounts.auth_router import SIGNUP_MAILS_PER_ADDRESS_PER_HOUR as cap

    answers = []
    for n in range(cap + 3):  # from as many addresses, so no per-IP limit is reached
        with TestClient(app, client=(f"198.51.100.{n + 1}", 50000)) as other:
            answers.append(_signup(other, "victim@example.com"))
    assert {a.status_code for a in answers} == {202}
    assert len({a.text for a in answers}) == 1
    assert len(emails_to(client, "victim@example.com")) == cap
