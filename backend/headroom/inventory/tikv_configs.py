"""Versioned TiKV configs per node: from the status port (`GET /config`), an uploaded tikv.toml, or a TiUP
topology's `server_configs.tikv`. A new version is stored only when the content changed.

`tikv_configs.config` holds the nested kebab-case document as `GET /config` returns it (what the snapshot's
`Node.config` and `config_get` expect); uploads are parsed with tikvconf (errors carry line and column) and
nested the same way, and the uploaded file is kept as written in `raw_text`. The content hash is SHA-256 of the
key-sorted JSON, the same as the demo source's, so an unchanged config never makes a new version."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from headroom.accounts.service import Principal, audit
from headroom.domain.tikvconf.errors import ConfigParseError, ConfigTooLarge
from headroom.domain.tikvconf.limits import drop_unstorable
from headroom.domain.tikvconf.parse import ConfigView, config_json_view, parse_toml, tiup_topology_view
from headroom.inventory.models import TikvConfig, TikvNode
from headroom.inventory.service import get_node
from headroom.platform.errors import InvalidInput, NotFound, PayloadTooLarge
from headroom.platform.logging import get_logger
from headroom.sources.prometheus.collector import RetryPolicy
from headroom.sources.prometheus.promql import host_of
from headroom.sources.prometheus.tikv_status import StatusPortError, fetch_config

UploadFormat = Literal["toml", "tiup_topology"]
ConfigFetcher = Callable[[str], tuple[dict[str, Any], str]]
log = get_logger("headroom.inventory.tikv_configs")


def content_sha256(config: dict[str, Any]) -> str:
    """Hash a nested config; equal configs hash equal whatever their key order."""
    return hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()


def nest(view: ConfigView) -> dict[str, Any]:
    """Turn a dotted-key view ("storage.block-cache.capacity") back into nested sections."""
    out: dict[str, Any] = {}
    for key, value in view.items():
        cursor = out
        *sections, leaf = key.split(".")
        for section in sections:
            nxt = cursor.setdefault(section, {})
            if not isinstance(nxt, dict):  # "a = 1" and "a.b = 2" both given: keep the table
                nxt = cursor[section] = {}
            cursor = nxt
        cursor[leaf] = value
    return out


def _plain(value: Any) -> Any:
    # tomlkit items unwrap to plain Python; JSON can't hold dates, so they become strings.
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return value


def latest_config(db: Session, node: TikvNode) -> TikvConfig | None:
    return db.scalar(
        select(TikvConfig).where(TikvConfig.node_id == node.id).order_by(TikvConfig.version.desc()).limit(1)
    )


@dataclass(frozen=True)
class StoredConfig:
    config: TikvConfig
    created: bool  # False when the content equals the latest version (nothing stored)


def store_version(
    db: Session,
    node: TikvNode,
    config: dict[str, Any],
    *,
    source: str,
    raw_text: str | None,
    now: dt.datetime,
) -> StoredConfig:
    """Store a nested config as the node's next version unless it equals the latest one.

    Keys whose values PostgreSQL's JSONB refuses (nan, inf, a NUL in a string or key) are left out and logged:
    uploads refuse them before this (422), so only a status port's answer can bring them."""
    config, skipped = drop_unstorable(_plain(config))
    for key, reason in skipped:
        log.warning("tikv_config.key_skipped", node=str(node.id), source=source, key=key, reason=reason)
    digest = content_sha256(config)
    latest = latest_config(db, node)
    if latest is not None and latest.content_sha256 == digest:
        return StoredConfig(latest, False)
    # Serialise concurrent writers of one node (status poll vs upload) so versions stay 1, 2, 3, ...
    db.execute(select(func.pg_advisory_xact_lock(func.hashtext(f"tikv_config:{node.id}"))))
    latest = latest_config(db, node)
    if latest is not None and latest.content_sha256 == digest:
        return StoredConfig(latest, False)
    row = TikvConfig(
        org_id=node.org_id,
        node_id=node.id,
        version=(latest.version + 1) if latest else 1,
        source=source,
        config=config,
        raw_text=raw_text,
        content_sha256=digest,
        captured_at=now,
    )
    db.add(row)
    db.flush()
    return StoredConfig(row, True)


def upload_config(
    db: Session,
    principal: Principal,
    cluster_id: uuid.UUID,
    node_id: uuid.UUID,
    *,
    content: str,
    format: UploadFormat,
    now: dt.datetime,
) -> StoredConfig:
    """Store an uploaded tikv.toml (or a TiUP topology's TiKV config for this node), keeping the raw text."""
    principal.require("admin")
    node = get_node(db, principal, cluster_id, node_id)
    try:
        if format == "toml":
            config = _plain(parse_toml(content, "tikv.toml").unwrap())
            source = "upload"
        else:
            topology = tiup_topology_view(content, "topology.yaml")
            host = host_of(node.store_address)
            port = node.store_address.rsplit(":", 1)[1] if ":" in node.store_address else None
            config = nest(topology.for_instance(host, int(port) if port and port.isdigit() else None))
            source = "tiup"
    except ConfigTooLarge as error:
        raise PayloadTooLarge(
            str(error),
            code="config_too_large",
            details=[{"field": "content", "size": error.size, "limit": error.limit, "message": error.message}],
        ) from None
    except ConfigParseError as error:
        raise InvalidInput(
            str(error),
            code="config_parse_error",
            details=[
                {"field": "content", "line": error.line, "column": error.column, "message": error.message}
            ],
        ) from None
    stored = store_version(db, node, config, source=source, raw_text=content, now=now)
    audit(
        db,
        principal,
        "tikv_config.uploaded",
        target_kind="tikv_node",
        target_id=node.id,
        details={"format": format, "version": stored.config.version, "created": stored.created},
    )
    return stored


def get_config(
    db: Session, principal: Principal, cluster_id: uuid.UUID, node_id: uuid.UUID, version: int | None = None
) -> TikvConfig:
    """Return the node's latest config version, or the given one."""
    node = get_node(db, principal, cluster_id, node_id)
    query = select(TikvConfig).where(TikvConfig.node_id == node.id, TikvConfig.org_id == principal.org_id)
    if version is None:
        row = db.scalar(query.order_by(TikvConfig.version.desc()).limit(1))
    else:
        row = db.scalar(query.where(TikvConfig.version == version))
    if row is None:
        raise NotFound(
            "No config stored for this node." if version is None else f"No config version {version}."
        )
    return row


def config_versions(db: Session, node: TikvNode) -> list[int]:
    return list(
        db.scalars(
            select(TikvConfig.version).where(TikvConfig.node_id == node.id).order_by(TikvConfig.version)
        )
    )


@dataclass(frozen=True)
class StatusPollResult:
    node_id: uuid.UUID
    status_address: str
    version: int | None
    created: bool
    error: str | None


def default_fetcher(status_address: str) -> tuple[dict[str, Any], str]:
    return fetch_config(status_address, retry=RetryPolicy(attempts=3, base_seconds=0.5, cap_seconds=4.0))


def read_status_port(
    status_address: str, *, fetcher: ConfigFetcher = default_fetcher
) -> tuple[dict[str, Any] | None, str | None]:
    """Fetch and check a live config: (config, None), or (None, why not). Touches no database; never raises on I/O."""
    try:
        decoded, _raw = fetcher(status_address)
        config_json_view(decoded, f"{status_address}/config")  # checks the shape
    except (StatusPortError, ConfigParseError) as error:
        return None, str(error)
    return decoded, None


def store_polled(db: Session, node: TikvNode, decoded: dict[str, Any], *, now: dt.datetime) -> StatusPollResult:
    """Store a config read from the node's status port when it changed."""
    # The live JSON is canonical and large; raw_text is kept only for uploads, whose layout patches preserve.
    stored = store_version(db, node, decoded, source="status_port", raw_text=None, now=now)
    return StatusPollResult(node.id, node.status_address or "", stored.config.version, stored.created, None)


def poll_status_port(
    db: Session, node: TikvNode, *, now: dt.datetime, fetcher: ConfigFetcher = default_fetcher
) -> StatusPollResult:
    """Read a node's live config from its status port and store it when it changed. Never raises on I/O."""
    if not node.status_address:
        return StatusPollResult(node.id, "", None, False, "no status address")
    decoded, error = read_status_port(node.status_address, fetcher=fetcher)
    if decoded is None:
        return StatusPollResult(node.id, node.status_address, None, False, error)
    return store_polled(db, node, decoded, now=now)


def poll_cluster(
    db: Session,
    org_id: uuid.UUID,
    cluster_id: uuid.UUID,
    *,
    now: dt.datetime,
    fetcher: ConfigFetcher = default_fetcher,
) -> list[StatusPollResult]:
    """Poll every node of a cluster that has a status address."""
    nodes = db.scalars(
        select(TikvNode)
        .where(TikvNode.org_id == org_id, TikvNode.cluster_id == cluster_id)
        .order_by(TikvNode.store_address)
    )
    return [poll_status_port(db, node, now=now, fetcher=fetcher) for node in nodes]
