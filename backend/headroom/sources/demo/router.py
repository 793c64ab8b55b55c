"""The demo fleet: give a demo volume the ID of a real EBS volume (admins)."""

from __future__ import annotations

import uuid

from fastapi import APIRouter

from headroom.api.deps import DB, Caller, Context
from headroom.sources.demo import service
from headroom.sources.demo.schemas import DemoVolumeRead, DemoVolumeUpdate

router = APIRouter(prefix="/clusters/{cluster_id}/demo-volumes", tags=["demo"])


@router.patch("/{volume_id}", response_model=DemoVolumeRead)
def give_volume_id(cluster_id: uuid.UUID, volume_id: str, body: DemoVolumeUpdate, caller: Caller, db: DB,
                   ctx: Context) -> DemoVolumeRead:
    """Give a demo cluster's data or raft volume the ID of a real EBS volume and the tags it carries in AWS, so an
    approved plan of the demo's findings modifies that volume; its metrics follow the ID. The demo's refresh keeps
    it; a null ID gives the simulated one back. 409 on a cluster that is not a demo."""
    row, simulated = service.give_volume_id(db, caller, cluster_id, volume_id, real_volume_id=body.volume_id,
                                            tags=body.tags, now=ctx.clock())
    return DemoVolumeRead(volume_id=row.volume_id, simulated_volume_id=simulated, tags=row.tags)
