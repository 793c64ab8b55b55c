"""Data sources (AWS connections, Prometheus). Secrets are encrypted at rest and never returned."""

from __future__ import annotations

import uuid
from typing import Any, TypeVar

import httpx
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from headroom.accounts.models import Organization
from headroom.accounts.service import Principal, audit
from headroom.clusters.service import get_cluster
from headroom.platform.errors import Conflict, InvalidInput, NotFound
from headroom.platform.outbound import require_allowed_url
from headroom.platform.security import SecretBox
from headroom.sources.models import AwsConnection, PrometheusSource
from headroom.sources.schemas import AwsConnectionRead, PrometheusSourceRead, SourceHealth
from headroom.sources.selector import SelectorError, parse_selector

S = TypeVar("S", AwsConnection, PrometheusSource)


def _get(db: Session, principal: Principal, model: type[S], source_id: uuid.UUID, what: str) -> S:
    row = db.scalar(select(model).where(model.id == source_id, model.org_id == principal.org_id))
    if row is None:
        raise NotFound(f"{what} not found.")
    return row


def _check_name(db: Session, principal: Principal, model: type[S], name: str, exclude: uuid.UUID | None = None) -> None:
    query = select(func.count()).select_from(model).where(model.org_id == principal.org_id, model.name == name)
    if exclude is not None:
        query = query.where(model.id != exclude)
    if db.scalar(query):
        raise Conflict(f"A source named {name!r} already exists.", code="source_name_taken")


# --- AWS -------------------------------------------------------------------------------------------------


def list_aws_connections(db: Session, principal: Principal) -> list[AwsConnection]:
    return list(
        db.scalars(select(AwsConnection).where(AwsConnection.org_id == principal.org_id).order_by(AwsConnection.name))
    )


def get_aws_connection(db: Session, principal: Principal, connection_id: uuid.UUID) -> AwsConnection:
    return _get(db, principal, AwsConnection, connection_id, "AWS connection")


def _validate_aws(auth_kind: str, role_arn: str | None, access_key_id: str | None, secret: str | None) -> None:
    if auth_kind == "assume_role" and not role_arn:
        raise InvalidInput("role_arn is required to assume a role.", details=[{"field": "role_arn", "message": "required"}])
    if auth_kind == "static_keys" and not (access_key_id and secret):
        raise InvalidInput(
            "access_key_id and secret_access_key are required for static keys.",
            details=[{"field": "secret_access_key", "message": "required"}],
        )


def create_aws_connection(
    db: Session,
    principal: Principal,
    box: SecretBox,
    *,
    name: str,
    auth_kind: str,
    regions: list[str],
    role_arn: str | None = None,
    access_key_id: str | None = None,
    secret_access_key: str | None = None,
) -> AwsConnection:
    principal.require("admin")
    _check_name(db, principal, AwsConnection, name)
    _validate_aws(auth_kind, role_arn, access_key_id, secret_access_key)
    org = db.get(Organization, principal.org_id)
    assert org is not None
    connection = AwsConnection(
        org_id=principal.org_id,
        name=name,
        auth_kind=auth_kind,
        role_arn=role_arn,
        external_id=org.aws_external_id,
        regions=regions,
        access_key_id=access_key_id if auth_kind == "static_keys" else None,
        secret_access_key_enc=box.encrypt(secret_access_key)
        if auth_kind == "static_keys" and secret_access_key
        else None,
    )
    db.add(connection)
    db.flush()
    audit(db, principal, "aws_connection.created", target_kind="aws_connection", target_id=connection.id,
          details={"name": name, "auth_kind": auth_kind, "regions": regions})
    return connection


def update_aws_connection(
    db: Session, principal: Principal, box: SecretBox, connection_id: uuid.UUID, **fields: Any
) -> AwsConnection:
    principal.require("admin")
    connection = get_aws_connection(db, principal, connection_id)
    if connection.is_demo:
        raise Conflict("The demo source is simulated and cannot be edited; connect your own AWS account instead.",
                       code="demo_source")
    if "name" in fields:
        _check_name(db, principal, AwsConnection, fields["name"], exclude=connection.id)
    secret = fields.pop("secret_access_key", None)
    for key, value in fields.items():
        setattr(connection, key, value)
    if secret:
        connection.secret_access_key_enc = box.encrypt(secret)
    _validate_aws(
        connection.auth_kind,
        connection.role_arn,
        connection.access_key_id,
        secret or (connection.secret_access_key_enc and "stored"),
    )
    db.flush()
    audit(db, principal, "aws_connection.updated", target_kind="aws_connection", target_id=connection.id,
          details={"fields": sorted([*fields, *(["secret_access_key"] if secret else [])])})
    return connection


def delete_aws_connection(db: Session, principal: Principal, connection_id: uuid.UUID) -> None:
    principal.require("admin")
    connection = get_aws_connection(db, principal, connection_id)
    db.delete(connection)
    audit(db, principal, "aws_connection.deleted", target_kind="aws_connection", target_id=connection_id)


# --- Prometheus ------------------------------------------------------------------------------------------


def list_prometheus_sources(db: Session, principal: Principal) -> list[PrometheusSource]:
    return list(
        db.scalars(
            select(PrometheusSource)
            .where(PrometheusSource.org_id == principal.org_id)
            .order_by(PrometheusSource.name)
        )
    )


def get_prometheus_source(db: Session, principal: Principal, source_id: uuid.UUID) -> PrometheusSource:
    return _get(db, principal, PrometheusSource, source_id, "Prometheus source")


def _validate_selector(label_selector: str) -> None:
    try:
        parse_selector(label_selector)
    except SelectorError as exc:
        raise InvalidInput(str(exc), details=[{"field": "label_selector", "message": str(exc)}]) from exc


def _validate_prom(auth_kind: str, username: str | None, secret: str | None) -> None:
    if auth_kind == "bearer" and not secret:
        raise InvalidInput("A bearer token is required.", details=[{"field": "secret", "message": "required"}])
    if auth_kind == "basic" and not (username and secret):
        raise InvalidInput(
            "username and password are required for basic auth.",
            details=[{"field": "secret", "message": "required"}],
        )


URL_CREDENTIALS_HINT = "put the user name and password in username and secret (auth_kind basic), not in the URL"


def url_without_credentials(url: str) -> str:
    """Return a URL without its user:password@ part (for anything shown or stored)."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        return url
    if not parsed.userinfo:
        return url
    return str(parsed.copy_with(username=None, password=None))


def _refuse_url_credentials(message: str) -> InvalidInput:
    return InvalidInput(f"base_url: {message}; {URL_CREDENTIALS_HINT}.", code="url_credentials",
                        details=[{"field": "base_url", "message": message}])


def _take_url_credentials(
    base_url: str, *, auth_kind: str | None, username: str | None, secret: str | None
) -> tuple[str, str, str] | None:
    """Split user:password@ out of a Prometheus URL: (URL without them, user, password), or None without any.

    The credentials move to the encrypted basic-auth fields, so the stored URL (returned to viewers, written to
    the audit log, logged by the HTTP client) never carries a password. Credentials given both ways, or a user
    without a password, are refused with a 422 naming base_url (never echoing the URL).
    """
    parsed = httpx.URL(base_url)
    if not parsed.userinfo:
        return None
    if auth_kind == "bearer" or secret or (username and username != parsed.username):
        raise _refuse_url_credentials("the URL carries credentials and the auth fields are set too")
    if not parsed.username or not parsed.password:
        raise _refuse_url_credentials("the URL carries a user name without a password")
    return url_without_credentials(base_url).rstrip("/"), parsed.username, parsed.password


def create_prometheus_source(
    db: Session,
    principal: Principal,
    box: SecretBox,
    *,
    name: str,
    base_url: str,
    label_selector: str,
    auth_kind: str = "none",
    username: str | None = None,
    secret: str | None = None,
    cluster_id: uuid.UUID | None = None,
    grafana_url: str | None = None,
) -> PrometheusSource:
    principal.require("admin")
    _check_name(db, principal, PrometheusSource, name)
    moved = _take_url_credentials(base_url, auth_kind=auth_kind, username=username, secret=secret)
    if moved is not None:
        base_url, username, secret = moved
        auth_kind = "basic"
    _validate_prom(auth_kind, username, secret)
    _validate_selector(label_selector)
    require_allowed_url(base_url, field="base_url")
    if cluster_id is not None:
        get_cluster(db, principal, cluster_id)  # 404 for another org's cluster
    source = PrometheusSource(
        org_id=principal.org_id,
        cluster_id=cluster_id,
        name=name,
        base_url=base_url.rstrip("/"),
        label_selector=label_selector,
        grafana_url=grafana_url,
        auth_kind=auth_kind,
        username=username if auth_kind == "basic" else None,
        secret_enc=box.encrypt(secret) if secret and auth_kind != "none" else None,
    )
    db.add(source)
    db.flush()
    audit(db, principal, "prometheus_source.created", target_kind="prometheus_source", target_id=source.id,
          details={"name": name, "base_url": source.base_url})
    return source


def update_prometheus_source(
    db: Session, principal: Principal, box: SecretBox, source_id: uuid.UUID, **fields: Any
) -> PrometheusSource:
    principal.require("admin")
    source = get_prometheus_source(db, principal, source_id)
    if "name" in fields:
        _check_name(db, principal, PrometheusSource, fields["name"], exclude=source.id)
    if fields.get("cluster_id") is not None:
        get_cluster(db, principal, fields["cluster_id"])
    secret = fields.pop("secret", None)
    if "base_url" in fields:
        moved = _take_url_credentials(fields["base_url"], auth_kind=fields.get("auth_kind"),
                                      username=fields.get("username"), secret=secret)
        if moved is not None:
            fields["base_url"], fields["username"], secret = moved
            fields["auth_kind"] = "basic"
        fields["base_url"] = fields["base_url"].rstrip("/")
        require_allowed_url(fields["base_url"], field="base_url")
    if fields.get("label_selector") is not None:
        _validate_selector(fields["label_selector"])
    for key, value in fields.items():
        setattr(source, key, value)
    if secret:
        source.secret_enc = box.encrypt(secret)
    if source.auth_kind == "none":
        source.secret_enc = None
        source.username = None
    _validate_prom(source.auth_kind, source.username, secret or (source.secret_enc and "stored"))
    db.flush()
    audit(db, principal, "prometheus_source.updated", target_kind="prometheus_source", target_id=source.id,
          details={"fields": sorted([*fields, *(["secret"] if secret else [])])})
    return source


def delete_prometheus_source(db: Session, principal: Principal, source_id: uuid.UUID) -> None:
    principal.require("admin")
    source = get_prometheus_source(db, principal, source_id)
    db.delete(source)
    audit(db, principal, "prometheus_source.deleted", target_kind="prometheus_source", target_id=source_id)


# --- the API's views of the rows (routers never read ORM rows themselves) ---------------------------------


def aws_connection_read(row: AwsConnection) -> AwsConnectionRead:
    """The API's view of a connection (secrets are write-only: only whether one is set)."""
    return AwsConnectionRead(
        id=row.id, name=row.name, auth_kind=row.auth_kind, role_arn=row.role_arn,
        external_id=row.external_id, regions=list(row.regions), access_key_id=row.access_key_id,
        has_secret=row.secret_access_key_enc is not None, health=SourceHealth.model_validate(row),
        is_demo=row.is_demo, created_at=row.created_at,
    )


def grafana_url_of(db: Session, org_id: uuid.UUID, cluster_id: uuid.UUID) -> str | None:
    """The Grafana URL given on the cluster's (first) Prometheus source that has one (the nodes link to it)."""
    return db.scalar(select(PrometheusSource.grafana_url).where(
        PrometheusSource.org_id == org_id, PrometheusSource.cluster_id == cluster_id,
        PrometheusSource.grafana_url.is_not(None)).order_by(PrometheusSource.created_at).limit(1))


def prometheus_source_read(row: PrometheusSource) -> PrometheusSourceRead:
    """The API's view of a Prometheus source (credentials never shown)."""
    return PrometheusSourceRead(
        # a row stored before credentials were moved out of URLs still never shows them
        id=row.id, name=row.name, base_url=url_without_credentials(row.base_url),
        label_selector=row.label_selector,
        auth_kind=row.auth_kind, username=row.username, has_secret=row.secret_enc is not None,
        cluster_id=row.cluster_id, health=SourceHealth.model_validate(row), created_at=row.created_at,
        grafana_url=url_without_credentials(row.grafana_url) if row.grafana_url else None,
    )
