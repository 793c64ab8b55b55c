"""Each cluster's stored burst forecasts: the advice run stores them once per round (the advisor's own, on the
window it judged: its minute, the cluster's `advised_at`; the `fleet.score` job computes them for a round that did
not), so the glance table, the Metrics tab's burst panel,
the findings and the weekly email show one number and a page read steps no credit bucket. One row per cluster,
replaced by each run; the forecasts are read only through headroom.metrics.service."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from sqlalchemy import DateTime, ForeignKey, Integer
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


class StoredOverviewPeaks(Base):
    """A cluster's overview peaks over the 7 days ending at `window_end` (metrics.service.UtilisationCell's JSON per
    TiKV node): the fleet.score job stores them every 15 minutes, so the overview's 7-day range reads one row
    instead of a week of every node's series. One row per cluster, replaced by each run."""

    __tablename__ = "overview_peaks"

    cluster_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("clusters.id", ondelete="CASCADE"), primary_key=True)
    org_id: Mapped[uuid.UUID] = fk_column("organizations.id")
    window_start: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    window_end: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    resolution_seconds: Mapped[int] = mapped_column(Integer)
    # {node id: [UtilisationCell, ...]}, written and read by metrics.service (one TypeAdapter both ways), a few KB
    cells: Mapped[dict[str, Any]] = mapped_column(JSONB)
