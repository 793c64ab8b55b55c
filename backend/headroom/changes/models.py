"""The outcome of each applied fix (docs/changes.md, Outcomes): one row per ledger entry and finding it was
credited with, written by the `outcomes.measure` job so the rules page counts them without reading every
cluster's ledger. The prediction is kept as it was first judged: a finding still open after its fix is judged
again on the new inventory, and its new impact is no longer the prediction of this change."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from sqlalchemy import DateTime, ForeignKey, String, UniqueConstraint
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

from headroom.domain.advisor.outcome import FixOutcome, PredictedUse
from headroom.platform.orm import Base, enum_column, fk_column, uuid_pk

VERDICTS = ("held", "partly", "missed", "too_early", "not_measurable")


class PredictedUseJSON(TypeDecorator[PredictedUse]):
    """A PredictedUse in a JSONB column (null: the finding predicted no ceiling use)."""

    impl = JSONB
    cache_ok = True

    def process_bind_param(self, value: PredictedUse | None, dialect: Dialect) -> Any:
        return None if value is None else PredictedUse.model_validate(value).model_dump(mode="json")

    def process_result_value(self, value: Any, dialect: Dialect) -> PredictedUse | None:
        return None if value is None else PredictedUse.model_validate(value)


class FixOutcomeJSON(TypeDecorator[FixOutcome]):
    """A FixOutcome in a JSONB column."""

    impl = JSONB
    cache_ok = True

    def process_bind_param(self, value: FixOutcome | None, dialect: Dialect) -> Any:
        return None if value is None else FixOutcome.model_validate(value).model_dump(mode="json")

    def process_result_value(self, value: Any, dialect: Dialect) -> FixOutcome | None:
        return None if value is None else FixOutcome.model_validate(value)


class FixOutcomeRecord(Base):
    """One applied fix's outcome: a ledger entry (its id, e.g. patch:<uuid>) and a finding it was credited with."""

    __tablename__ = "fix_outcomes"
    __table_args__ = (UniqueConstraint("cluster_id", "change_id", "finding_id"),)

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = fk_column("organizations.id")
    cluster_id: Mapped[uuid.UUID] = fk_column("clusters.id")
    change_id: Mapped[str] = mapped_column(String(120))
    finding_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("findings.id", ondelete="CASCADE"), index=True)
    rule: Mapped[str] = mapped_column(String(64), index=True)
    changed_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    verdict: Mapped[str] = mapped_column(enum_column("fix_outcome_verdict", VERDICTS))
    prediction: Mapped[PredictedUse | None] = mapped_column(PredictedUseJSON, nullable=True)
    outcome: Mapped[FixOutcome] = mapped_column(FixOutcomeJSON)
    measured_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
