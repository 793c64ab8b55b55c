"""The digest API on an install without a mail server: nothing is sent, nothing crashes."""

from __future__ import annotations

from typing import Any

from helpers import sign_up


def test_without_smtp_the_test_send_is_skipped(client: Any, smtp_server: Any) -> None:
    owner = sign_up(client)
    got = owner.get("/api/v1/org/digest").json()
    assert got["smtp_configured"] is False
    result = owner.post("/api/v1/org/digest/send-test")
    assert result.status_code == 200
    assert result.json()["status"] == "skipped"
    assert "HEADROOM_SMTP_HOST" in result.json()["detail"]
    assert smtp_server.received == []
