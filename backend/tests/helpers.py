"""Test helpers: sign up users and act as them through the real API."""

from __future__ import annotations

import contextlib
import itertools
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

_counter = itertools.count(1)
PASSWORD = "correct horse battery"


class Actor:
    """A signed-in API client that adds the CSRF header to writes, like the front end does."""

    def __init__(self, client: Any, session: dict[str, Any]) -> None:
        self.client = client
        self.session = session

    @property
    def org_id(self) -> str:
        return str(self.session["organization"]["id"])

    def _headers(self, method: str) -> dict[str, str]:
        if method in ("GET", "HEAD", "OPTIONS"):
            return {}
        return {"X-CSRF-Token": self.client.cookies.get("headroom_csrf", "")}

    def request(self, method: str, url: str, **kwargs: Any) -> Any:
        headers = {**self._headers(method), **kwargs.pop("headers", {})}
        return self.client.request(method, url, headers=headers, **kwargs)

    def get(self, url: str, **kw: Any) -> Any:
        return self.request("GET", url, **kw)

    def post(self, url: str, **kw: Any) -> Any:
        return self.request("POST", url, **kw)

    def patch(self, url: str, **kw: Any) -> Any:
        return self.request("PATCH", url, **kw)

    def put(self, url: str, **kw: Any) -> Any:
        return self.request("PUT", url, **kw)

    def delete(self, url: str, **kw: Any) -> Any:
        return self.request("DELETE", url, **kw)


def signed_in_again(client: Any, session: dict[str, Any], cookies: dict[str, str]) -> Actor:
    """The actor whose sign-in answer was `session` and cookies `cookies`, on another client (of another app on
    the same database): fixtures that sign people in once for many tests hand each test its own client."""
    for name, value in cookies.items():
        client.cookies.set(name, value)
    return Actor(client, session)


def emails_to(client: Any, address: str, outbox: Path | None = None) -> list[str]:
    """The texts of the account emails the app wrote to its outbox for `address`, oldest first (`outbox`: where a
    server the client reaches over HTTP writes them; default: the in-process app's own outbox)."""
    outbox = outbox or client.app.state.ctx.mailer.directory
    texts = [p.read_text() for p in sorted(outbox.glob("*.txt"))] if outbox.is_dir() else []
    return [t for t in texts if t.lower().startswith(f"to: {address.lower()}\n")]


def signup_link_token(client: Any, address: str, outbox: Path | None = None) -> str:
    """The token of the newest sign-up link emailed to `address` (a live server sends it after its answer, so
    wait a little for it)."""
    deadline = time.monotonic() + 10
    while True:
        for text in reversed(emails_to(client, address, outbox)):
            found = re.search(r"/signup/confirm\?token=(\S+)", text)
            if found:
                return unquote(found.group(1))
        if time.monotonic() > deadline:
            raise AssertionError(f"no sign-up link was emailed to {address}")
        time.sleep(0.05)


def sign_up(client: Any, *, org: str | None = None, email: str | None = None, outbox: Path | None = None) -> Actor:
    """Sign up, follow the emailed link (as its owner would) and return the signed-in actor."""
    n = next(_counter)
    body = {
        "email": email or f"user{n}@example.com",
        "password": PASSWORD,
        "organization_name": org or f"Org {n}",
        "full_name": f"User {n}",
    }
    response = client.post("/api/v1/auth/signup", json=body)
    assert response.status_code == 202, response.text
    token = signup_link_token(client, body["email"], outbox)
    confirmed = client.post("/api/v1/auth/signup/confirm", json={"token": token})
    assert confirmed.status_code == 201, confirmed.text
    return Actor(client, confirmed.json())


def join_with_role(owner: Actor, new_client: Any, role: str) -> Actor:
    """Invite a new person with a role and accept as them in a separate client."""
    n = next(_counter)
    email = f"member{n}@example.com"
    invite = owner.post("/api/v1/org/invitations", json={"email": email, "role": role})
    assert invite.status_code == 201, invite.text
    token = invite.json()["accept_url"].split("token=")[1]
    accepted = new_client.post(
        "/api/v1/auth/accept-invitation", json={"token": token, "password": PASSWORD, "full_name": "M"}
    )
    assert accepted.status_code == 200, accepted.text
    return Actor(new_client, accepted.json())


def units_of_work(sessions: Any) -> Callable[[], Any]:
    """Units of work as a job runs them (commit on success, always close), inside the test's transaction."""

    @contextlib.contextmanager
    def unit() -> Iterator[Any]:
        session = sessions()
        try:
            yield session
            session.commit()
        finally:
            session.close()

    return unit


@contextlib.contextmanager
def served_by_uvicorn(app: Any) -> Iterator[int]:
    """Serve `app` with `headroom serve`'s uvicorn settings (commands.server.uvicorn_config) on a free port of
    127.0.0.1 in a thread; yield the port once it accepts, stop it at the end."""
    import socket
    import threading

    import uvicorn
    from headroom.commands.server import uvicorn_config

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    server = uvicorn.Server(uvicorn_config(app, "127.0.0.1", port, "WARNING"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.started, "uvicorn did not start"
        yield port
    finally:
        server.should_exit = True
        thread.join(timeout=20)
