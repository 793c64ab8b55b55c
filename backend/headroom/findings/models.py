"""Advice runs, the findings they store (one row per dedup key) and each finding's recommendations."""

from __future__ import annotations

import datetime as dt
import uuid
from sqlalchemy import (
    Float,
    ForeignKey,
    Index,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from headroom.domain.model import SEVERITIES, Change, Evidence, FindingGroup, Impact, Option
from headroom.findings.stored import FindingGroupJSON, ImpactJSON, StoredEvidence, StoredEvidenceJSON
from headroom.platform.orm import ENTITY_KINDS, Base, ChangeJSON, enum_column, fk_column, uuid_pk

FINDING_STATUSES = ("open", "acknowledged", "snoozed", "resolved")


class AdviceRun(Base):
    """A queued or running on-demand advice run, one per cluster (the natural key): a second request while one
    is pending gets the same task id instead of queuing again. The job deletes its row when it ends; a row older
    than jobs.advice.ADVICE_RUN_STALE (its worker died, or the queue lost it) is replaced by the next request."""

    __tablename__ = "advice_runs"

    cluster_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("clusters.id", ondelete="CASCADE"), primary_key=True
    )
    org_id: Mapped[uuid.UUID] = fk_column("organizations.id")
    task_id: Mapped[str] = mapped_column(String(200))
    requested_at: Mapped[dt.datetime]


# --- advice ----------------------------------------------------------------------------------------------


class FindingRecord(Base):
    """One finding of a cluster, refreshed by every advice run that sees it again. Only the findings feature reads
    these rows; other features call its service, which returns typed reads (findings.service.StoredFinding)."""

    __tablename__ = "findings"
    __table_args__ = (
        UniqueConstraint("org_id", "dedup_key"),
        Index("ix_findings_org_cluster_status", "org_id", "cluster_id", "status"),
        Index("ix_findings_org_cluster_group", "org_id", "cluster_id", "group_id"),
    )

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = fk_column("organizations.id")
    cluster_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("clusters.id", ondelete="CASCADE"))
    rule: Mapped[str] = mapped_column(String(64))
    entity_kind: Mapped[str] = mapped_column(enum_column("finding_entity_kind", ENTITY_KINDS))
    entity_id: Mapped[str] = mapped_column(String(255))
    severity: Mapped[str] = mapped_column(enum_column("severity", SEVERITIES))
    status: Mapped[str] = mapped_column(enum_column("finding_status", FINDING_STATUSES), default="open")
    title: Mapped[str] = mapped_column(String(500))
    why: Mapped[str] = mapped_column(Text, default="", server_default="")
    # The advisor's Evidence with the finding's options, sources and notes (findings.stored); read through the
    # properties below.
    stored_evidence: Mapped[StoredEvidence] = mapped_column("evidence", StoredEvidenceJSON, default=StoredEvidence)
    # No impact is stored as {} (the column is NOT NULL): the callable default sends None through ImpactJSON.
    impact: Mapped[Impact | None] = mapped_column(ImpactJSON, nullable=False, default=lambda: None)
    confidence: Mapped[float] = mapped_column(Float, default=0.0)
    dedup_key: Mapped[str] = mapped_column(String(300))
    first_seen_at: Mapped[dt.datetime]
    last_seen_at: Mapped[dt.datetime]
    resolved_at: Mapped[dt.datetime | None]
    snoozed_until: Mapped[dt.datetime | None]
    # The findings that share this one's cause (keys as stored); null: none.
    group_id: Mapped[str | None] = mapped_column(String(40))
    finding_group: Mapped[FindingGroup | None] = mapped_column(FindingGroupJSON)

    @property
    def evidence(self) -> Evidence | None:
        """The advisor's evidence (None: none recorded, or no longer valid)."""
        return self.stored_evidence.evidence if self.stored_evidence is not None else None

    @property
    def options(self) -> tuple[Option, ...]:
        return self.stored_evidence.options if self.stored_evidence is not None else ()

    @property
    def sources(self) -> tuple[str, ...]:
        return self.stored_evidence.sources if self.stored_evidence is not None else ()

    @property
    def notes(self) -> tuple[str, ...]:
        return self.stored_evidence.notes if self.stored_evidence is not None else ()

    @property
    def group(self) -> FindingGroup | None:
        """The finding's group (None: it stands alone)."""
        return self.finding_group if self.group_id else None


class Recommendation(Base):
    """One change a finding recommends, at its position, stored as the advisor made it (a domain Change)."""

    __tablename__ = "recommendations"
    __table_args__ = (UniqueConstraint("finding_id", "position"),)

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = fk_column("organizations.id")
    finding_id: Mapped[uuid.UUID] = fk_column("findings.id")
    position: Mapped[int] = mapped_column(SmallInteger)
    change: Mapped[Change] = mapped_column(ChangeJSON)
