"""Each cluster's stored burst forecasts: the `fleet.score` job computes them once per advice round, on the window
the advisor judged (its minute, the cluster's `advised_at`), so the glance table, the Metrics tab's burst panel,
the findings and the weekly email show one number and a page read steps no credit bucket. One row per cluster,
replaced by each run; the forecasts are read only through headroom.metrics.service."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from sqlalchemy import DateTime, ForeignKey
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from headroom.platform.orm import Base, fk_column


class StoredBurstForecasts(Base):
    """A cluster's burst forecasts of the window ending at `at`, per TikV node (metrics.service.ForecastOut's JSON)."""

    __tablename__ = "burst_forecasts"

    cluster_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("clusters.id", ondelete="CASCADE"), primary_key=True)
    org_id: Mapped[uuid.UUID] = fk_column("organizations.id")
    at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    # {node id: [ForecastOut, ...]} without their charted paths, written and read by metrics.service (one
    # TypeAdapter both ways): what the glance reads, a few KB
    forecasts: Mapped[dict[str, Any]] = mapped_column(JSONB)
    # {node id: {forecast id: BalancePath}}: the paths the Metrics tab's burst panel draws (~30 KB a bucket)
    paths: Mapped[dict[str, Any]] = mapped_column(JSONB)
