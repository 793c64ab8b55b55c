"""Each cluster's stored headroom score: the `fleet.score` job computes it every 15 minutes (the metrics
overview of the cluster's last day), so the fleet page reads one row per cluster instead of every cluster's
series (docs/fleet.md, docs/scaling.md). One row per cluster, replaced by each run."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from sqlalchemy import DateTime, ForeignKey, Integer
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from headroom.platform.orm import Base, fk_column


class FleetScore(Base):
    """A cluster's headroom score over the day ending at `window_end`, and the ceiling that set it."""

    __tablename__ = "fleet_scores"

    cluster_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("clusters.id", ondelete="CASCADE"), primary_key=True)
    org_id: Mapped[uuid.UUID] = fk_column("organizations.id")
    window_end: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    headroom_score: Mapped[int | None] = mapped_column(Integer, nullable=True)  # None: no I/O data in the window
    # The tightest ceiling as the fleet shows it (schemas.TightestCeiling's fields), None with the score.
    tightest: Mapped[dict[str, Any] | None] = mapped_column(JSONB, nullable=True)
