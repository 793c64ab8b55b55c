"""Alerts: the organisation's channels (add, test, remove, last deliveries) and a cluster's Prometheus alerting
rules (a YAML download)."""

from __future__ import annotations

import json
import uuid

from fastapi import APIRouter, Response, status

from headroom.alerts import service
from headroom.alerts.schemas import ChannelCreate, ChannelList, ChannelRead
from headroom.api.deps import DB, Caller, Context
from headroom.platform.smtp import config_from_settings

router = APIRouter(tags=["alerts"])


@router.get("/clusters/{cluster_id}/alert-rules", responses={200: {"description": "The rule file, as an attachment; what it leaves out is a JSON list "
                                                "in X-Headroom-Notes.", "content": {"application/yaml": {}}}})
def prometheus_rules(cluster_id: uuid.UUID, caller: Caller, db: DB, ctx: Context) -> Response:
    """A Prometheus rule file with Headroom's thresholds on this cluster's own limits: data volume IOPS and MiB/s
    at 90 % of the volume's sustained ceiling for 30 minutes, store space at PD's 0.7 / 0.8 lines, each thread pool
    against its configured size. Check it with `promtool check rules`."""
    rules = service.prometheus_rules(db, caller, cluster_id, now=ctx.clock())
    return Response(content=rules.text, media_type="application/yaml",
                    headers={"Content-Disposition": f'attachment; filename="{rules.filename}"',
                             "X-Headroom-Notes": json.dumps(rules.notes)})


@router.get("/alert-channels", response_model=ChannelList)
def list_channels(caller: Caller, db: DB) -> ChannelList:
    """The organisation's alert channels, each with its last deliveries (status, error)."""
    return ChannelList(items=service.list_channels(db, caller))


@router.post("/alert-channels", status_code=status.HTTP_201_CREATED, response_model=ChannelRead)
def create_channel(body: ChannelCreate, caller: Caller, db: DB, ctx: Context) -> ChannelRead:
    """Add a channel (admin): Slack incoming webhook, a webhook (JSON signed with HMAC-SHA256), PagerDuty Events
    API v2, your Alertmanager (its v2 alerts API), or email addresses (through Headroom's SMTP server). The URL and
    secret are stored encrypted."""
    return service.create_channel(db, caller, body, ctx.secret_box)


@router.delete("/alert-channels/{channel_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_channel(channel_id: uuid.UUID, caller: Caller, db: DB) -> Response:
    """Remove a channel (admin) and its delivery records."""
    service.delete_channel(db, caller, channel_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post("/alert-channels/{channel_id}/test", response_model=ChannelRead)
def test_channel(channel_id: uuid.UUID, caller: Caller, db: DB, ctx: Context) -> ChannelRead:
    """Send a test alert now (admin); the channel comes back with the delivery's outcome on top."""
    return service.send_test(db, caller, channel_id, ctx.secret_box, now=ctx.clock(),
                             smtp=config_from_settings(ctx.settings),
                             alertmanager=service.alertmanager_timing(ctx.settings))
