"""Headroom's thresholds as Prometheus alerting rules for one cluster (a YAML download)."""

from __future__ import annotations

import json
import uuid

from fastapi import APIRouter, Response

from headroom.alerts import service
from headroom.api.deps import DB, Caller, Context

router = APIRouter(prefix="/clusters/{cluster_id}/alert-rules", tags=["alerts"])


@router.get("", responses={200: {"description": "The rule file, as an attachment; what it leaves out is a JSON list "
                                                "in X-Headroom-Notes.", "content": {"application/yaml": {}}}})
def prometheus_rules(cluster_id: uuid.UUID, caller: Caller, db: DB, ctx: Context) -> Response:
    """A Prometheus rule file with Headroom's thresholds on this cluster's own limits: data volume IOPS and MiB/s
    at 90 % of the volume's sustained ceiling for 30 minutes, store space at PD's 0.7 / 0.8 lines, each thread pool
    against its configured size. Check it with `promtool check rules`."""
    rules = service.prometheus_rules(db, caller, cluster_id, now=ctx.clock())
    return Response(content=rules.text, media_type="application/yaml",
                    headers={"Content-Disposition": f'attachment; filename="{rules.filename}"',
                             "X-Headroom-Notes": json.dumps(rules.notes)})
