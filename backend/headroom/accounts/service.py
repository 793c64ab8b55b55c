"""Accounts: sign-up, log-in sessions, API tokens, members and invitations. Callers commit."""

from __future__ import annotations

import datetime as dt
import json
import re
import uuid
from dataclasses import dataclass

from sqlalchemy import delete as sa_delete
from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from headroom.accounts.models import (
    ApiToken,
    AuditLog,
    Invitation,
    Membership,
    Organization,
    User,
    UserSession,
)
from headroom.platform.errors import (
    Conflict,
    InvalidCredentials,
    InvalidInput,
    NotAuthenticated,
    NotFound,
    PermissionDenied,
)

# The caller's identity lives in the platform (api.deps passes it on without importing this feature); importers of
# accounts.service keep reaching it here.
from headroom.platform.principal import ROLE_RANK as ROLE_RANK
from headroom.platform.principal import Principal as Principal
from headroom.platform.security import (
    API_TOKEN_PREFIX,
    SecretBox,
    hash_password,
    hash_token,
    new_external_id,
    new_token,
    verify_password,
)

INVITATION_TTL = dt.timedelta(days=7)


def _slugify(name: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:60]
    return slug or "org"


def _unique_slug(db: Session, name: str) -> str:
    base = _slugify(name)
    slug, n = base, 1
    while db.scalar(select(func.count()).select_from(Organization).where(Organization.slug == slug)):
        n += 1
        slug = f"{base}-{n}"
    return slug


def find_user_by_email(db: Session, email: str) -> User | None:
    return db.scalar(select(User).where(func.lower(User.email) == email.strip().lower()))


def audit(
    db: Session,
    principal_or_org: Principal | uuid.UUID,
    action: str,
    *,
    target_kind: str | None = None,
    target_id: object = None,
    details: dict[str, object] | None = None,
    ip: str | None = None,
    actor_user_id: uuid.UUID | None = None,
) -> None:
    """Record who did what in the org's audit log."""
    if isinstance(principal_or_org, Principal):
        org_id, user_id, token_id = (
            principal_or_org.org_id,
            principal_or_org.user_id,
            principal_or_org.token_id,
        )
    else:
        org_id, user_id, token_id = principal_or_org, actor_user_id, None
    db.add(
        AuditLog(
            org_id=org_id,
            actor_user_id=user_id,
            actor_token_id=token_id,
            action=action,
            target_kind=target_kind,
            target_id=None if target_id is None else str(target_id),
            details=details or {},
            ip=ip,
        )
    )


def sign_up(
    db: Session, *, email: str, password: str, organization_name: str, full_name: str = ""
) -> tuple[User, Organization, Membership]:
    """Create a user, their organisation and an owner membership (the demo account; people confirm a link)."""
    return _create_account(db, email=email, password_hash=hash_password(password),
                           organization_name=organization_name, full_name=full_name)


# A sign-up link works for a day: long enough to find the email, short enough that a forgotten one goes stale.
SIGNUP_LINK_TTL = dt.timedelta(hours=24)
_SIGNUP_PURPOSE = "signup-v1"


def signup_token(
    box: SecretBox, *, email: str, password: str, organization_name: str, full_name: str, now: dt.datetime
) -> str:
    """The sign-up, sealed into the link we email: nothing is stored until the address's owner follows it, so a
    sign-up reveals nothing and squats no address. The password travels only as its hash, encrypted."""
    payload = {
        "purpose": _SIGNUP_PURPOSE,
        "email": email.strip(),
        "password_hash": hash_password(password),
        "organization_name": organization_name.strip(),
        "full_name": full_name.strip(),
        "issued_at": now.timestamp(),
    }
    return box.encrypt(json.dumps(payload))


def confirm_sign_up(db: Session, box: SecretBox, token: str, *, now: dt.datetime) -> tuple[User, Organization, Membership]:
    """Create the account a sign-up link describes (the link proves the address)."""
    invalid = NotFound("This sign-up link is invalid or has expired; sign up again.", code="signup_link_invalid")
    try:
        payload = json.loads(box.decrypt(token))
        if payload["purpose"] != _SIGNUP_PURPOSE:
            raise ValueError("not a sign-up token")
        issued = dt.datetime.fromtimestamp(float(payload["issued_at"]), dt.UTC)
        fields = {k: str(payload[k]) for k in ("email", "password_hash", "organization_name", "full_name")}
    except (ValueError, TypeError, KeyError, OverflowError):
        raise invalid from None
    if not (now - SIGNUP_LINK_TTL <= issued <= now + dt.timedelta(minutes=5)):
        raise invalid
    # Only the mailbox's owner holds this link, so saying the account exists discloses nothing.
    exists = Conflict("Your account already exists; log in with your email and password.", code="email_taken")
    if find_user_by_email(db, fields["email"]) is not None:
        raise exists
    try:
        with db.begin_nested():  # the same link followed twice at once: the second gets the same 409
            return _create_account(db, **fields)
    except IntegrityError:
        raise exists from None


def _create_account(
    db: Session, *, email: str, password_hash: str, organization_name: str, full_name: str
) -> tuple[User, Organization, Membership]:
    if find_user_by_email(db, email) is not None:
        raise Conflict("An account with this email already exists.", code="email_taken")
    user = User(email=email.strip(), full_name=full_name.strip(), password_hash=password_hash)
    org = Organization(
        name=organization_name.strip(),
        slug=_unique_slug(db, organization_name),
        aws_external_id=new_external_id(),
    )
    db.add_all([user, org])
    db.flush()
    membership = Membership(org_id=org.id, user_id=user.id, role="owner")
    db.add(membership)
    db.flush()
    audit(db, org.id, "org.created", target_kind="organization", target_id=org.id, actor_user_id=user.id)
    return user, org, membership


def authenticate(db: Session, email: str, password: str) -> User:
    """Return the user for valid credentials; the same error (and work) for unknown user and bad password."""
    user = find_user_by_email(db, email)
    ok = verify_password(user.password_hash if user else None, password)
    if user is None or not ok or not user.is_active:
        raise InvalidCredentials("Email or password is incorrect.")
    return user


def primary_membership(db: Session, user_id: uuid.UUID) -> Membership:
    membership = db.scalar(
        select(Membership).where(Membership.user_id == user_id).order_by(Membership.created_at).limit(1)
    )
    if membership is None:
        raise InvalidCredentials("Email or password is incorrect.")
    return membership


def open_session(
    db: Session,
    user: User,
    org_id: uuid.UUID,
    *,
    now: dt.datetime,
    ttl: dt.timedelta,
    ip: str | None,
    user_agent: str | None,
) -> str:
    """Create a login session and return its opaque token (only the hash is stored)."""
    token = new_token()
    db.add(
        UserSession(
            org_id=org_id,
            user_id=user.id,
            token_hash=hash_token(token),
            expires_at=now + ttl,
            last_seen_at=now,
            ip=ip,
            user_agent=(user_agent or "")[:400] or None,
        )
    )
    user.last_login_at = now
    return token


@dataclass(frozen=True)
class SignedIn:
    """Who a session is for (the who-am-I answer), and its token when it was just opened."""

    user: User
    organization: Organization
    role: str
    token: str | None = None


def start_session(
    db: Session,
    user: User,
    membership: Membership,
    *,
    now: dt.datetime,
    ttl: dt.timedelta,
    ip: str | None,
    user_agent: str | None,
) -> SignedIn:
    """Open a login session in the membership's organisation; the answer carries its token."""
    token = open_session(db, user, membership.org_id, now=now, ttl=ttl, ip=ip, user_agent=user_agent)
    org = db.get(Organization, membership.org_id)
    assert org is not None
    return SignedIn(user, org, membership.role, token)


def signed_in(db: Session, user_id: uuid.UUID, org_id: uuid.UUID) -> SignedIn:
    """Who a session's user is in its organisation (who-am-I)."""
    user = db.get(User, user_id)
    membership = _membership(db, org_id, user_id)
    org = db.get(Organization, org_id)
    assert user is not None and membership is not None and org is not None
    return SignedIn(user, org, membership.role)


def get_organization(db: Session, principal: Principal) -> Organization:
    """The principal's organisation."""
    org = db.get(Organization, principal.org_id)
    if org is None:
        raise NotFound("organisation not found")
    return org


def rename_organization(db: Session, principal: Principal, name: str) -> Organization:
    """Rename the principal's organisation (admins)."""
    principal.require("admin")
    org = get_organization(db, principal)
    org.name = name
    audit(db, principal, "org.updated", target_kind="organization", target_id=org.id, details={"name": name})
    return org


def set_lookback_days(db: Session, principal: Principal, days: int) -> Organization:
    """Set the organisation's lookback (admins and owners); audit-logged with the value it replaced."""
    principal.require("admin")
    org = get_organization(db, principal)
    before = org.lookback_days
    org.lookback_days = days
    db.flush()
    audit(db, principal, "org.preferences_updated", target_kind="organization", target_id=org.id,
          details={"lookback_days": days, "previous_lookback_days": before})
    return org


def audit_entries(db: Session, principal: Principal, *, limit: int, before_id: int | None) -> list[AuditLog]:
    """The organisation's audit log, newest first, `limit` entries older than `before_id` (admins)."""
    principal.require("admin")
    query = select(AuditLog).where(AuditLog.org_id == principal.org_id)
    if before_id is not None:
        query = query.where(AuditLog.id < before_id)
    return list(db.scalars(query.order_by(AuditLog.id.desc()).limit(limit)))


def close_session(db: Session, session_id: uuid.UUID) -> None:
    session = db.get(UserSession, session_id)
    if session is not None:
        db.delete(session)


def principal_from_session(db: Session, token: str, *, now: dt.datetime) -> Principal:
    row = db.execute(
        select(UserSession, Membership.role)
        .join(
            Membership,
            (Membership.user_id == UserSession.user_id) & (Membership.org_id == UserSession.org_id),
        )
        .join(User, User.id == UserSession.user_id)
        .where(UserSession.token_hash == hash_token(token), User.is_active.is_(True))
    ).first()
    if row is None or row[0].expires_at <= now:
        raise NotAuthenticated("Your session has expired; log in again.")
    session, role = row
    return Principal(user_id=session.user_id, org_id=session.org_id, role=role, via="session", session_id=session.id)


def principal_from_api_token(db: Session, token: str, *, now: dt.datetime) -> Principal:
    api_token = db.scalar(select(ApiToken).where(ApiToken.token_hash == hash_token(token)))
    if (
        api_token is None
        or api_token.revoked_at is not None
        or (api_token.expires_at is not None and api_token.expires_at <= now)
    ):
        raise NotAuthenticated("The API token is invalid, expired or revoked.")
    role = api_token.role
    if api_token.created_by_user_id is not None:
        # A token never outranks its creator's current role (and dies with their membership).
        member_role = db.scalar(
            select(Membership.role).where(
                Membership.user_id == api_token.created_by_user_id, Membership.org_id == api_token.org_id
            )
        )
        if member_role is None:
            raise NotAuthenticated("The API token's owner is no longer a member of this organisation.")
        role = min(role, member_role, key=ROLE_RANK.__getitem__)
    api_token.last_used_at = now
    return Principal(
        user_id=api_token.created_by_user_id, org_id=api_token.org_id, role=role, via="token", token_id=api_token.id
    )


# --- API tokens ------------------------------------------------------------------------------------------


def create_api_token(
    db: Session, principal: Principal, *, name: str, role: str, expires_at: dt.datetime | None
) -> tuple[ApiToken, str]:
    """Create a token with at most the caller's role; return the row and the plaintext (shown once)."""
    principal.require("admin")
    if ROLE_RANK[role] > ROLE_RANK[principal.role]:
        raise PermissionDenied("A token cannot have a higher role than its creator.")
    plaintext = new_token(API_TOKEN_PREFIX)
    token = ApiToken(
        org_id=principal.org_id,
        created_by_user_id=principal.user_id,
        name=name,
        token_prefix=plaintext[:10],
        token_hash=hash_token(plaintext),
        role=role,
        expires_at=expires_at,
    )
    db.add(token)
    db.flush()
    audit(db, principal, "api_token.created", target_kind="api_token", target_id=token.id, details={"name": name})
    return token, plaintext


def list_api_tokens(db: Session, principal: Principal) -> list[ApiToken]:
    principal.require("admin")
    return list(
        db.scalars(select(ApiToken).where(ApiToken.org_id == principal.org_id).order_by(ApiToken.created_at))
    )


def revoke_api_token(db: Session, principal: Principal, token_id: uuid.UUID, *, now: dt.datetime) -> ApiToken:
    principal.require("admin")
    token = db.scalar(select(ApiToken).where(ApiToken.id == token_id, ApiToken.org_id == principal.org_id))
    if token is None:
        raise NotFound("API token not found.")
    if principal.role != "owner" and token.created_by_user_id != principal.user_id:
        # An admin may revoke admins' and viewers' automation, never an owner's: a token created by an owner, or
        # one whose role outranks the caller, is revoked only by an owner or by whoever created it.
        creator_role = None
        if token.created_by_user_id is not None:
            creator_role = db.scalar(
                select(Membership.role).where(
                    Membership.org_id == principal.org_id, Membership.user_id == token.created_by_user_id
                )
            )
        if ROLE_RANK[token.role] > ROLE_RANK[principal.role] or (
            creator_role is not None and ROLE_RANK[creator_role] > ROLE_RANK[principal.role]
        ):
            raise PermissionDenied(
                f"This token was created by an {creator_role or token.role}; only an owner or the person who "
                "created it can revoke it."
            )
    if token.revoked_at is None:
        token.revoked_at = now
        audit(db, principal, "api_token.revoked", target_kind="api_token", target_id=token.id)
    return token


# --- members and invitations -----------------------------------------------------------------------------


def list_members(db: Session, principal: Principal) -> list[tuple[Membership, User]]:
    rows = db.execute(
        select(Membership, User)
        .join(User, User.id == Membership.user_id)
        .where(Membership.org_id == principal.org_id)
        .order_by(Membership.created_at)
    ).all()
    return [(m, u) for m, u in rows]


def invite_member(
    db: Session, principal: Principal, *, email: str, role: str, now: dt.datetime
) -> tuple[Invitation, str]:
    """Invite someone by email with a role; owners only. Returns the invitation and its one-time token."""
    principal.require("owner")
    existing = find_user_by_email(db, email)
    if existing is not None and db.scalar(
        select(Membership).where(Membership.org_id == principal.org_id, Membership.user_id == existing.id)
    ):
        raise Conflict("This person is already a member.", code="already_member")
    token = new_token()
    invitation = Invitation(
        org_id=principal.org_id,
        email=email.strip(),
        role=role,
        token_hash=hash_token(token),
        invited_by_user_id=principal.user_id,
        expires_at=now + INVITATION_TTL,
    )
    db.add(invitation)
    db.flush()
    audit(db, principal, "member.invited", target_kind="invitation", target_id=invitation.id,
          details={"email": email, "role": role})
    return invitation, token


def list_invitations(db: Session, principal: Principal) -> list[Invitation]:
    principal.require("admin")
    return list(
        db.scalars(
            select(Invitation)
            .where(Invitation.org_id == principal.org_id, Invitation.accepted_at.is_(None))
            .order_by(Invitation.created_at)
        )
    )


def revoke_invitation(db: Session, principal: Principal, invitation_id: uuid.UUID, *, now: dt.datetime) -> None:
    principal.require("owner")
    invitation = db.scalar(
        select(Invitation).where(Invitation.id == invitation_id, Invitation.org_id == principal.org_id)
    )
    if invitation is None:
        raise NotFound("Invitation not found.")
    invitation.revoked_at = now
    audit(db, principal, "member.invitation_revoked", target_kind="invitation", target_id=invitation.id)


def accept_invitation(
    db: Session, *, token: str, password: str, full_name: str, now: dt.datetime
) -> tuple[User, Membership]:
    """Join an organisation from an invitation; creates the account, or checks the password of an existing one."""
    invitation = db.scalar(select(Invitation).where(Invitation.token_hash == hash_token(token)))
    if invitation is None:
        raise NotFound("This invitation is invalid or has expired.")
    user = find_user_by_email(db, invitation.email)
    already_member = Conflict(
        "You are already a member of this organisation; log in instead.", code="already_member"
    )
    # A second invitation to the same address (sent before the first was accepted) must not try to add the
    # membership again: the token's holder reads that mailbox, so saying they are a member discloses nothing.
    if invitation.accepted_at is None and user is not None and _membership(db, invitation.org_id, user.id):
        raise already_member
    if invitation.revoked_at is not None or invitation.accepted_at is not None or invitation.expires_at <= now:
        raise NotFound("This invitation is invalid or has expired.")
    if user is None:
        user = User(email=invitation.email, full_name=full_name.strip(), password_hash=hash_password(password))
        db.add(user)
        db.flush()
    elif not verify_password(user.password_hash, password):
        raise InvalidCredentials("Email or password is incorrect.")
    membership = Membership(org_id=invitation.org_id, user_id=user.id, role=invitation.role)
    try:
        with db.begin_nested():  # two acceptances at once: the loser gets the same 409, its session stays usable
            db.add(membership)
            db.flush()
    except IntegrityError:
        raise already_member from None
    invitation.accepted_at = now
    # Other invitations to this address for this organisation are now moot: close them.
    db.execute(
        update(Invitation)
        .where(
            Invitation.org_id == invitation.org_id,
            func.lower(Invitation.email) == invitation.email.lower(),
            Invitation.id != invitation.id,
            Invitation.accepted_at.is_(None),
            Invitation.revoked_at.is_(None),
        )
        .values(revoked_at=now)
    )
    db.flush()
    audit(db, invitation.org_id, "member.joined", target_kind="user", target_id=user.id, actor_user_id=user.id,
          details={"role": invitation.role})
    return user, membership


def change_member_role(db: Session, principal: Principal, user_id: uuid.UUID, role: str) -> Membership:
    principal.require("owner")
    membership = db.scalar(
        select(Membership).where(Membership.org_id == principal.org_id, Membership.user_id == user_id)
    )
    if membership is None:
        raise NotFound("Member not found.")
    if membership.role == "owner" and role != "owner" and _owner_count(db, principal.org_id) <= 1:
        raise InvalidInput("An organisation needs at least one owner.", code="last_owner")
    membership.role = role
    audit(db, principal, "member.role_changed", target_kind="user", target_id=user_id, details={"role": role})
    return membership


def remove_member(db: Session, principal: Principal, user_id: uuid.UUID) -> None:
    principal.require("owner")
    membership = db.scalar(
        select(Membership).where(Membership.org_id == principal.org_id, Membership.user_id == user_id)
    )
    if membership is None:
        raise NotFound("Member not found.")
    if membership.role == "owner" and _owner_count(db, principal.org_id) <= 1:
        raise InvalidInput("An organisation needs at least one owner.", code="last_owner")
    db.delete(membership)
    db.execute(
        sa_delete(UserSession).where(
            UserSession.org_id == principal.org_id, UserSession.user_id == user_id
        )
    )
    audit(db, principal, "member.removed", target_kind="user", target_id=user_id)


def _membership(db: Session, org_id: uuid.UUID, user_id: uuid.UUID) -> Membership | None:
    return db.scalar(select(Membership).where(Membership.org_id == org_id, Membership.user_id == user_id))


def _owner_count(db: Session, org_id: uuid.UUID) -> int:
    return int(
        db.scalar(
            select(func.count()).select_from(Membership).where(Membership.org_id == org_id, Membership.role == "owner")
        )
        or 0
    )
