"""Settings refuse placeholder secrets in production; the committed OpenAPI schema is current; logs redact."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from headroom.platform.settings import Settings
from pydantic import ValidationError

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("secret", ["change-me", "dev-insecure-secret-key-change-me", "short-but-real"])
def test_production_refuses_placeholder_or_short_secret(secret: str) -> None:
    with pytest.raises(ValidationError, match="HEADROOM_SECRET_KEY"):
        Settings(HEADROOM_ENV="production", HEADROOM_SECRET_KEY=secret, DATABASE_URL="postgresql://x/y")


def test_production_requires_a_database() -> None:
    with pytest.raises(ValidationError, match="DATABASE_URL"):
        Settings(HEADROOM_ENV="production", HEADROOM_SECRET_KEY="k" * 40, DATABASE_URL=None)


def test_production_accepts_real_settings() -> None:
    s = Settings(HEADROOM_ENV="production", HEADROOM_SECRET_KEY="k" * 40, DATABASE_URL="postgresql://x/y",
                 HEADROOM_PUBLIC_URL="https://headroom.example.com")
    assert s.secure_cookies is True


def test_committed_openapi_schema_is_current() -> None:
    from headroom.api.app import build_context, create_app

    app = create_app(build_context(Settings(), "postgresql+psycopg://schema-only@localhost/none"))
    committed = json.loads((ROOT / "frontend" / "openapi.json").read_text())
    assert committed == json.loads(json.dumps(app.openapi())), "run `make gen-client` and commit the result"


def test_secrets_are_redacted_from_logs(capsys: Any) -> None:
    from headroom.platform.logging import configure_logging, get_logger, reset_logging

    configure_logging("INFO", json=True)
    try:
        get_logger("t").info("source.connected", secret_access_key="AKIASECRET", password="pw", source="prom")
    finally:
        reset_logging()
    out = capsys.readouterr().out
    assert "AKIASECRET" not in out and '"pw"' not in out
    assert "[redacted]" in out and "prom" in out


def test_secret_box_round_trip_and_tamper() -> None:
    from headroom.platform.security import SecretBox

    box = SecretBox("k" * 40)
    token = box.encrypt("hunter2")
    assert "hunter2" not in token and box.decrypt(token) == "hunter2"
    with pytest.raises(ValueError):
        SecretBox("other-key" * 5).decrypt(token)
