"""The snapshot download: what the advisor sees of a cluster over a window, as snapshot JSON (docs/snapshot.md).

Like `tiup diag`, but small: inventory, each node's effective config (secret-looking values redacted) and the
series. `headroom advise <file>` gives the same findings offline.
"""

from __future__ import annotations

import datetime as dt
import re
import uuid

from fastapi import APIRouter, Query, Response

from headroom.api.deps import Caller, Context, ReadDB
from headroom.clusters import service as clusters_service
from headroom.platform.schemas import Instant
from headroom.timeseries.snapshots import build_snapshot, with_lookback

router = APIRouter(prefix="/clusters", tags=["snapshots"])
DEFAULT_WINDOW = dt.timedelta(hours=24)


@router.get(
    "/{cluster_id}/snapshot",
    responses={200: {"content": {"application/json": {"schema": {"type": "object"}}},
                     "description": "The snapshot JSON (docs/snapshot.schema.json), as an attachment."}},
    response_class=Response,
)
def download_snapshot(
    cluster_id: uuid.UUID,
    caller: Caller,
    db: ReadDB,
    ctx: Context,
    start: Instant | None = Query(default=None, description="Window start (default: end - 24 h)."),
    end: Instant | None = Query(default=None, description="Window end, exclusive (default: now)."),
    step_seconds: int = Query(default=60, ge=60, le=86_400,
                              description="Seconds per point: 60, or a multiple of 60 (up to a day) to aggregate."),
) -> Response:
    """Download the cluster's snapshot over [start, end) (at most 7 days)."""
    cluster = clusters_service.get_cluster(db, caller, cluster_id)
    end = end or ctx.clock()
    start = start or end - DEFAULT_WINDOW
    snapshot = build_snapshot(db, caller.org_id, cluster.id, start=start, end=end, step_seconds=step_seconds)
    # The lookback's peaks too, so the file reproduces the cuts the advisor judged (or held).
    snapshot = with_lookback(db, caller.org_id, snapshot, clusters_service.cluster_lookback_days(db, cluster))
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", cluster.name).strip("-") or "cluster"
    filename = f"{name}-snapshot-{snapshot.window.start:%Y%m%dT%H%MZ}.json"
    return Response(
        content=snapshot.model_dump_json(),
        media_type="application/json",
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )
