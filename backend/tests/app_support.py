"""The app's settings and context as the test fixtures build them, for fixtures of a wider scope than a test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session, sessionmaker
from xdist_workers import redis_db


def make_settings(redis_url: str, aws_endpoint_url: str) -> Any:
    """The app's settings in a test (the `settings` fixture; fixtures of a wider scope call it themselves)."""
    from headroom.platform.settings import Settings

    # Jobs the API enqueues go to a Redis database no worker reads (as with a broker in production), so a
    # request never starts work against the database outside the test's transaction. AWS is the moto server:
    # connecting an account tests it at once (sources.aws.router), and no test may reach the real AWS.
    broker = redis_db(redis_url, 5)
    return Settings(HEADROOM_ENV="test", HEADROOM_SECRET_KEY="test-secret-key-" + "x" * 32, REDIS_URL=broker,
                    HEADROOM_AWS_ENDPOINT_URL=aws_endpoint_url)


def make_app_context(sessions: sessionmaker[Session], settings: Any, clock: Any, tmp_path: Path) -> Any:
    """The API's context in a test (the `app_ctx` fixture; fixtures of a wider scope call it themselves)."""
    from headroom.api.deps import AppContext
    from headroom.platform.mail import OutboxMailer
    from headroom.platform.ratelimit import MemoryRateLimiter
    from headroom.platform.security import SecretBox

    return AppContext(
        settings=settings,
        sessions=sessions,
        rate_limiter=MemoryRateLimiter(),
        secret_box=SecretBox(settings.secret_key),
        clock=clock,
        # No mail server, as in `make up`: account email lands in this outbox (helpers.emails_to reads it).
        mailer=OutboxMailer(tmp_path / "outbox"),
    )
