"""Who is calling: a user (via a session or an API token) acting in one organisation with one role.

Every feature's service is given one. The accounts feature makes it from a session or an API token
(accounts.service); the request plumbing every router shares (api.deps) passes it on. It lives here, below both,
so that api.deps need not import the accounts feature, whose routers use api.deps.
"""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from typing import Protocol

from sqlalchemy.orm import Session

from headroom.platform.errors import PermissionDenied

ROLE_RANK = {"viewer": 0, "admin": 1, "owner": 2}


@dataclass(frozen=True)
class Principal:
    """Who is calling: a user (via session or token) acting in one organisation with one role."""

    user_id: uuid.UUID | None
    org_id: uuid.UUID
    role: str
    via: str  # "session" | "token"
    session_id: uuid.UUID | None = None
    token_id: uuid.UUID | None = None

    def require(self, role: str) -> None:
        if ROLE_RANK[self.role] < ROLE_RANK[role]:
            raise PermissionDenied(f"This action needs the {role} role; you are {self.role}.")


class ResolvePrincipal(Protocol):
    """Turn a credential (a session token, an API token) into its principal, or raise NotAuthenticated."""

    def __call__(self, db: Session, token: str, *, now: dt.datetime) -> Principal: ...


@dataclass(frozen=True)
class PrincipalResolvers:
    """How a request's credentials become its principal: the accounts feature's resolvers, which the API's
    composition root (api.app.create_app) hands to the request plumbing (api.deps.get_principal)."""

    from_api_token: ResolvePrincipal
    from_session: ResolvePrincipal
