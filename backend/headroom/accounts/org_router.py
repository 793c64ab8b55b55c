"""The caller's organisation: settings, members, invitations, API tokens and the audit log."""

from __future__ import annotations

import uuid

from fastapi import APIRouter, Query, Response, status

from headroom.accounts import service as accounts
from headroom.accounts.schemas import (
    ApiTokenCreate,
    ApiTokenCreated,
    ApiTokenRead,
    AuditEntryRead,
    InvitationCreate,
    InvitationCreated,
    InvitationRead,
    MemberRead,
    MemberUpdate,
    OrganizationDetailRead,
    OrganizationUpdate,
    RecommendationPreferencesRead,
    RecommendationPreferencesUpdate,
)
from headroom.api.deps import DB, Caller, Context
from headroom.platform.schemas import INT64_MAX

router = APIRouter(prefix="/org", tags=["organization"])


@router.get("", response_model=OrganizationDetailRead)
def get_org(caller: Caller, db: DB) -> object:
    """Your organisation, with the AWS external ID its IAM role trust policy must require."""
    return accounts.get_organization(db, caller)


@router.patch("", response_model=OrganizationDetailRead)
def update_org(body: OrganizationUpdate, caller: Caller, db: DB) -> object:
    return accounts.rename_organization(db, caller, body.name)


@router.get("/recommendation-preferences", response_model=RecommendationPreferencesRead)
def get_recommendation_preferences(caller: Caller, db: DB) -> object:
    """The organisation's lookback: the days of history a cut is judged on (clusters inherit it)."""
    return accounts.get_organization(db, caller)


@router.put("/recommendation-preferences", response_model=RecommendationPreferencesRead)
def put_recommendation_preferences(body: RecommendationPreferencesUpdate, caller: Caller, db: DB) -> object:
    """Set the organisation's lookback: 14, 32 or 93 days (admins and owners)."""
    return accounts.set_lookback_days(db, caller, body.lookback_days)


@router.get("/members", response_model=list[MemberRead])
def list_members(caller: Caller, db: DB) -> list[MemberRead]:
    return [
        MemberRead(user_id=u.id, email=u.email, full_name=u.full_name, role=m.role,
                   joined_at=m.created_at)
        for m, u in accounts.list_members(db, caller)
    ]


@router.patch("/members/{user_id}", response_model=MemberRead)
def update_member(user_id: uuid.UUID, body: MemberUpdate, caller: Caller, db: DB) -> MemberRead:
    """Change a member's role (owners only)."""
    membership = accounts.change_member_role(db, caller, user_id, body.role)
    user = next(u for m, u in accounts.list_members(db, caller) if m.id == membership.id)
    return MemberRead(user_id=user.id, email=user.email, full_name=user.full_name, role=membership.role,
                      joined_at=membership.created_at)


@router.delete("/members/{user_id}", status_code=status.HTTP_204_NO_CONTENT)
def remove_member(user_id: uuid.UUID, caller: Caller, db: DB) -> Response:
    accounts.remove_member(db, caller, user_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/invitations", response_model=list[InvitationRead])
def list_invitations(caller: Caller, db: DB) -> list[object]:
    return list(accounts.list_invitations(db, caller))


@router.post("/invitations", status_code=status.HTTP_201_CREATED, response_model=InvitationCreated)
def invite(body: InvitationCreate, caller: Caller, db: DB, ctx: Context) -> InvitationCreated:
    """Invite a member with a role (owners only); the accept link is returned once."""
    invitation, token = accounts.invite_member(db, caller, email=str(body.email), role=body.role, now=ctx.clock())
    url = f"{ctx.settings.public_url.rstrip('/')}/accept-invitation?token={token}"
    return InvitationCreated.model_validate({**InvitationRead.model_validate(invitation).model_dump(),
                                             "accept_url": url})


@router.delete("/invitations/{invitation_id}", status_code=status.HTTP_204_NO_CONTENT)
def revoke_invitation(invitation_id: uuid.UUID, caller: Caller, db: DB, ctx: Context) -> Response:
    accounts.revoke_invitation(db, caller, invitation_id, now=ctx.clock())
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/tokens", response_model=list[ApiTokenRead])
def list_tokens(caller: Caller, db: DB) -> list[object]:
    return list(accounts.list_api_tokens(db, caller))


@router.post("/tokens", status_code=status.HTTP_201_CREATED, response_model=ApiTokenCreated)
def create_token(body: ApiTokenCreate, caller: Caller, db: DB) -> ApiTokenCreated:
    """Create an API token for automation; the token is in this response only."""
    token, plaintext = accounts.create_api_token(db, caller, name=body.name, role=body.role, expires_at=body.expires_at)
    return ApiTokenCreated.model_validate({**ApiTokenRead.model_validate(token).model_dump(), "token": plaintext})


@router.delete("/tokens/{token_id}", response_model=ApiTokenRead)
def revoke_token(token_id: uuid.UUID, caller: Caller, db: DB, ctx: Context) -> object:
    return accounts.revoke_api_token(db, caller, token_id, now=ctx.clock())


@router.get("/audit-log", response_model=list[AuditEntryRead])
def audit_log(caller: Caller, db: DB, limit: int = Query(100, ge=1, le=1000),
              before_id: int | None = Query(None, ge=1, le=INT64_MAX)) -> list[object]:
    """Who did what, newest first (admins)."""
    return list(accounts.audit_entries(db, caller, limit=limit, before_id=before_id))
