"""Headroom's settings: one pydantic-settings class read from the environment (prefix-free names, see .env.example)."""

from __future__ import annotations

import ipaddress
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

# Values that ship in .env.example and the embedded mode; a production start refuses them.
PLACEHOLDER_SECRETS = frozenset({"", "change-me", "changeme", "dev-insecure-secret-key-change-me"})
DEV_SECRET_KEY = "dev-insecure-secret-key-change-me"
# 16 random characters (~95 bits as base64) cannot be guessed at any scrape rate (docs/operations.md).
METRICS_TOKEN_MIN_LENGTH = 16


class Settings(BaseSettings):
    """Every knob Headroom reads; each one is documented in .env.example and the README."""

    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    environment: Literal["development", "test", "production"] = Field(
        default="development", alias="HEADROOM_ENV"
    )
    database_url: str | None = Field(default=None, alias="DATABASE_URL")
    redis_url: str | None = Field(default=None, alias="REDIS_URL")
    # A PostgreSQL streaming replica of DATABASE_URL for the dashboard's read-only queries (platform/replica.py).
    # Unset: every query goes to DATABASE_URL.
    database_replica_url: str | None = Field(default=None, alias="DATABASE_REPLICA_URL")
    # Reads go to the primary while the replica is further behind than this (our choice: 5 s, well under the
    # 60 s between two raw samples; docs/operations.md "Read replica").
    replica_max_lag_seconds: float = Field(default=5.0, gt=0, alias="HEADROOM_REPLICA_MAX_LAG_SECONDS")
    secret_key: str = Field(default=DEV_SECRET_KEY, alias="HEADROOM_SECRET_KEY")
    data_dir: Path = Field(default=Path(".headroom"), alias="HEADROOM_DATA_DIR")
    # Extra EC2 instance types (`headroom catalog refresh-instances`); applied with catalog.use_override_file.
    instance_catalog: str | None = Field(default=None, alias="HEADROOM_INSTANCE_CATALOG")
    host: str = Field(default="127.0.0.1", alias="HEADROOM_HOST")
    port: int = Field(default=8000, alias="HEADROOM_PORT")
    public_url: str = Field(default="http://127.0.0.1:8000", alias="HEADROOM_PUBLIC_URL")
    frontend_dist: Path | None = Field(default=None, alias="HEADROOM_FRONTEND_DIST")
    # Secure cookies need https; on by default when the public URL is https.
    cookie_secure: bool | None = Field(default=None, alias="HEADROOM_COOKIE_SECURE")
    session_ttl_hours: int = Field(default=24 * 14, alias="HEADROOM_SESSION_TTL_HOURS")
    # Log-in back-off (failed attempts only; the numbers and why are in docs/login-limits.md): 5 per account and
    # client IP and 20 per client IP in 15 minutes; 100 per account an hour from all IPs (OWASP ASVS 2.2.1's
    # ceiling), which does not apply where the account logged in successfully in the last 30 days.
    login_rate_window_seconds: int = Field(default=900, ge=1, alias="HEADROOM_LOGIN_RATE_WINDOW_SECONDS")
    login_rate_per_account_ip: int = Field(default=5, ge=1, alias="HEADROOM_LOGIN_RATE_PER_ACCOUNT_IP")
    login_rate_per_ip: int = Field(default=20, ge=1, alias="HEADROOM_LOGIN_RATE_PER_IP")
    login_rate_per_account: int = Field(default=100, ge=1, alias="HEADROOM_LOGIN_RATE_PER_ACCOUNT")
    login_rate_account_window_seconds: int = Field(
        default=3600, ge=1, alias="HEADROOM_LOGIN_RATE_ACCOUNT_WINDOW_SECONDS"
    )
    login_known_ip_days: int = Field(default=30, ge=1, alias="HEADROOM_LOGIN_KNOWN_IP_DAYS")
    # Reverse proxies whose X-Forwarded-For is believed (comma-separated IPs or CIDRs, e.g. the compose network).
    # The client IP is the rightmost X-Forwarded-For entry that is not one of them; from any other peer the header
    # is ignored. Empty (the default): nobody is trusted and the TCP peer is the client.
    trusted_proxies: str = Field(default="", alias="HEADROOM_TRUSTED_PROXIES")
    # Time series retention (docs/timeseries.md): raw points 35 days, rollups 400 days.
    raw_retention_days: int = Field(default=35, alias="HEADROOM_RAW_RETENTION_DAYS")
    rollup_retention_days: int = Field(default=400, alias="HEADROOM_ROLLUP_RETENTION_DAYS")
    # Largest request body the API reads (413 above it). The largest legitimate body is a tikv.toml or TiUP
    # topology upload (at most 2,000,000 characters, JSON-escaped); 5 MiB leaves room for that and stops a
    # client from making the server buffer and parse arbitrarily large JSON.
    max_body_bytes: int = Field(default=5 * 1024 * 1024, ge=1024, alias="HEADROOM_MAX_BODY_BYTES")
    demo_fleet: bool = Field(default=True, alias="HEADROOM_DEMO_FLEET")
    log_level: str = Field(default="INFO", alias="HEADROOM_LOG_LEVEL")
    log_json: bool = Field(default=False, alias="HEADROOM_LOG_JSON")
    # GET /metrics (Headroom's own health, docs/operations.md) answers only with `Authorization: Bearer <this>`;
    # unset, /metrics is off (404). At least METRICS_TOKEN_MIN_LENGTH characters.
    metrics_token: SecretStr | None = Field(default=None, alias="HEADROOM_METRICS_TOKEN")
    # Outgoing mail (the weekly advisory digest). No host: the digest is skipped and logged (embedded mode).
    # The port defaults by security: 587 STARTTLS, 465 SSL, 25 none (headroom.platform.smtp.DEFAULT_PORTS).
    smtp_host: str | None = Field(default=None, alias="HEADROOM_SMTP_HOST")
    smtp_port: int | None = Field(default=None, ge=1, le=65535, alias="HEADROOM_SMTP_PORT")
    smtp_username: str | None = Field(default=None, alias="HEADROOM_SMTP_USERNAME")
    smtp_password: SecretStr | None = Field(default=None, alias="HEADROOM_SMTP_PASSWORD")
    smtp_from: str = Field(default="Headroom <headroom@localhost>", alias="HEADROOM_SMTP_FROM")
    smtp_security: Literal["starttls", "ssl", "none"] = Field(default="starttls", alias="HEADROOM_SMTP_SECURITY")
    # Alertmanager channels (docs/thresholds/alertmanager.md): an open finding's alert is re-posted at every
    # delivery pass (every minute) with endsAt this far ahead; the "Send test" alert ends after the second one.
    alertmanager_firing_for_seconds: int = Field(default=600, ge=1, le=86400,
                                                 alias="HEADROOM_ALERTMANAGER_FIRING_FOR_SECONDS")
    alertmanager_test_for_seconds: int = Field(default=300, ge=1, le=86400,
                                               alias="HEADROOM_ALERTMANAGER_TEST_FOR_SECONDS")
    # AWS account Headroom's own role lives in (shown to users creating the trust policy).
    aws_account_id: str | None = Field(default=None, alias="HEADROOM_AWS_ACCOUNT_ID")
    aws_endpoint_url: str | None = Field(default=None, alias="HEADROOM_AWS_ENDPOINT_URL")
    # Apply runs: how long each step is watched before the next (None: the plan's guards' own window, 15 minutes,
    # docs/thresholds/apply-guards.md#watch).
    apply_watch_seconds: int | None = Field(default=None, ge=0, le=86400, alias="HEADROOM_APPLY_WATCH_SECONDS")
    # Which addresses tenant-given URLs (Prometheus, TiKV status ports) may reach: "private-ok" for self-hosted
    # installs, "public-only" for the SaaS; metadata and link-local are refused under both (platform/outbound.py).
    outbound_policy: Literal["private-ok", "public-only"] = Field(
        default="private-ok", alias="HEADROOM_OUTBOUND_POLICY"
    )

    @field_validator("smtp_host", "smtp_port", "smtp_username", "smtp_password", "metrics_token",
                     "database_replica_url", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        # docker compose passes unset keys as "" (`${HEADROOM_SMTP_PORT:-}`): that means "not configured".
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("metrics_token")
    @classmethod
    def _metrics_token_is_long(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and len(value.get_secret_value()) < METRICS_TOKEN_MIN_LENGTH:
            raise ValueError(f"HEADROOM_METRICS_TOKEN must be at least {METRICS_TOKEN_MIN_LENGTH} characters "
                             "(a random value: it guards /metrics)")
        return value

    @field_validator("trusted_proxies")
    @classmethod
    def _proxies_are_ips_or_networks(cls, value: str) -> str:
        for entry in _split(value):
            try:
                ipaddress.ip_network(entry, strict=False)
            except ValueError:
                raise ValueError(
                    f"HEADROOM_TRUSTED_PROXIES: {entry!r} is not an IP address or CIDR network (like 172.28.0.0/16)"
                ) from None
        return value

    @property
    def trusted_proxy_list(self) -> list[str]:
        """HEADROOM_TRUSTED_PROXIES as a list of IPs and CIDR networks (a network written with host bits, like
        10.0.0.1/8, is normalised to 10.0.0.0/8: uvicorn would otherwise take it for a name and match nothing)."""
        return [str(ipaddress.ip_network(e, strict=False)) if "/" in e else e for e in _split(self.trusted_proxies)]

    @model_validator(mode="after")
    def _refuse_placeholder_secrets_in_production(self) -> Settings:
        if self.environment == "production":
            if self.secret_key in PLACEHOLDER_SECRETS or len(self.secret_key) < 32:
                raise ValueError(
                    "HEADROOM_SECRET_KEY must be set to a random value of at least 32 characters in production"
                )
            if not self.database_url:
                raise ValueError("DATABASE_URL is required in production")
        return self

    @property
    def secure_cookies(self) -> bool:
        if self.cookie_secure is not None:
            return self.cookie_secure
        return self.public_url.startswith("https://")


def _split(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """Return the process-wide settings (read once from the environment)."""
    return Settings()
