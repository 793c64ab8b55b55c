"""Seed an organisation for digest tests through the real API and services: members, findings, a failing source."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from headroom.domain.advisor.finding import Finding, make_dedup_key
from headroom.domain.model import Change, EntityRef, Evidence, Forecast, Impact

# Findings are first seen on this Monday's eve; the digest runs a week later (Monday 08:00 UTC).
SEEN_AT = dt.datetime(2026, 11, 8, 12, 0, tzinfo=dt.UTC)
DIGEST_AT = dt.datetime(2026, 11, 9, 8, 0, tzinfo=dt.UTC)
WEEK = dt.date(2026, 11, 9)
# A burst forecast as the advisor types it (headroom.domain.forecast.burst); the email says it in one sentence.
EMPTIES_IN_35_MIN = Forecast(kind="burst_empty", within_seconds=35 * 60, balance_pct=40.0, unit="IOPS",
                             method="probe", source="headroom.domain.forecast.burst")


def advisor_finding(cluster: str, volume: str, severity: str, title: str, *, forecast: Forecast | None = None,
                    headroom_pct: float | None = None) -> Finding:
    entity = EntityRef(kind="volume", id=volume)
    return Finding(
        rule="digest-probe",
        severity=severity,  # type: ignore[arg-type]
        entity=entity,
        title=title,
        evidence=Evidence(window_start=SEEN_AT - dt.timedelta(hours=24), window_end=SEEN_AT, step_seconds=60,
                          condition="probe", forecasts=[forecast] if forecast else []),
        why="probe",
        changes=[Change(target="aws", key="volume.type", current="gp2", proposed="gp3", reason="probe")],
        impact=Impact(summary=f"impact of {title}", headroom_before_pct=headroom_pct),
        confidence=0.9,
        dedup_key=make_dedup_key("digest-probe", cluster, entity),
    )


def record(sessions: Any, cluster_id: str, findings: list[Finding], now: dt.datetime = SEEN_AT) -> None:
    from headroom.clusters.models import Cluster
    from headroom.findings import service

    with sessions() as db:
        cluster = db.get_one(Cluster, uuid.UUID(cluster_id))
        service.record_findings(db, cluster, findings, now=now)
        db.commit()


def verify(sessions: Any, user_id: str) -> None:
    """Mark a user's current email verified (what following the test-send link does)."""
    from headroom.accounts.models import User
    from headroom.digest.models import EmailVerification

    with sessions() as db:
        user = db.get_one(User, uuid.UUID(user_id))
        db.merge(EmailVerification(user_id=user.id, email=user.email, verified_at=SEEN_AT))
        db.commit()


def add_member(sessions: Any, org_id: str, email: str, role: str) -> str:
    """Add a member who never logs in (no password hash worth computing); return the user id."""
    from headroom.accounts.models import Membership, User

    with sessions() as db:
        user = User(email=email, full_name=role, password_hash="!not-a-login")
        db.add(user)
        db.flush()
        db.add(Membership(org_id=uuid.UUID(org_id), user_id=user.id, role=role))
        db.commit()
        return str(user.id)
