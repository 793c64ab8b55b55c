"""Prometheus alerting rules for a cluster: Headroom's thresholds with the cluster's own limits (its volumes'
sustained IOPS and MiB/s, its thread pools' configured sizes, PD's space lines), built from the cluster's last hour
of inventory, config and series (headroom.domain.promrules)."""

from __future__ import annotations

import datetime as dt
import re
import uuid
from dataclasses import dataclass

from sqlalchemy.orm import Session

from headroom.clusters import service as clusters_service
from headroom.domain.promrules import alert_rules
from headroom.platform.principal import Principal

WINDOW = dt.timedelta(hours=1)  # enough to see which filesystems node_exporter reports for each store


@dataclass(frozen=True)
class RuleDownload:
    filename: str
    text: str
    notes: list[str]


def prometheus_rules(db: Session, principal: Principal, cluster_id: uuid.UUID, *, now: dt.datetime) -> RuleDownload:
    """The cluster's rule file (another org's cluster is NotFound)."""
    from headroom.timeseries.snapshots import build_snapshot

    cluster = clusters_service.get_cluster(db, principal, cluster_id)
    end = now.astimezone(dt.UTC).replace(second=0, microsecond=0)
    snapshot = build_snapshot(db, cluster.org_id, cluster.id, start=end - WINDOW, end=end)
    rules = alert_rules(snapshot)
    if not snapshot.nodes:
        rules.notes.append("The cluster has no TiKV node mapped to an EC2 instance yet: no rules.")
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", cluster.name).strip("-") or "cluster"
    return RuleDownload(filename=f"headroom-{slug}.rules.yml", text=rules.to_yaml(), notes=rules.notes)
