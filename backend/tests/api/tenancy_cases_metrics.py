"""Tenancy cases for the metrics routes (see test_tenancy.py): GETs only, addressed by org A's cluster id.

`seed` gives org A's cluster a node on an instance with a gp2 data volume and an hour of points, so the walk
reads a cluster with real series; org B must get a 404 and see none of A's entity ids.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable
from typing import Any

BODIES: dict[tuple[str, str], Any] = {}

VOLUME_ID = "vol-0metricsaaaaaaaaa"
INSTANCE_ID = "i-0metricsaaaaaaaaa"
ADDRESS = "10.78.0.1:20160"


def seed(owner: Any, make_client: Callable[[], Any], ids: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    from headroom.inventory.models import Instance, TikvNode, Volume
    from headroom.timeseries import repository as timeseries

    org, cluster = uuid.UUID(owner.org_id), uuid.UUID(ids["cluster_id"])
    with owner.client.app.state.ctx.sessions() as db:
        inst = Instance(org_id=org, cluster_id=cluster, instance_id=INSTANCE_ID, instance_type="m5.2xlarge")
        db.add(inst)
        db.flush()
        vol = Volume(org_id=org, cluster_id=cluster, volume_id=VOLUME_ID, volume_type="gp2", size_gib=350,
                     instance_ref_id=inst.id, role="data")
        db.add(vol)
        db.flush()
        db.add(TikvNode(org_id=org, cluster_id=cluster, store_address=ADDRESS, instance_ref_id=inst.id,
                        data_volume_ref_id=vol.id))
        key = timeseries.SeriesKey("volume", VOLUME_ID, "ebs.read_ops", "Count")
        sid = timeseries.ensure_series(db, org, [key], cluster_id=cluster)[key]
        end = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
        timeseries.write_points(db, org, [(sid, end - dt.timedelta(minutes=i), 600.0) for i in range(1, 61)])
        db.commit()
    return {}, [VOLUME_ID, INSTANCE_ID, ADDRESS]
