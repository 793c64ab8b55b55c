from __future__ import annotations

import datetime as dt
import uuid
from typing import Any, Literal

from pydantic import AwareDatetime, Field, computed_field, field_validator
from pydantic_core import PydanticCustomError

from headroom.domain.words import audit_action_text
from headroom.platform.schemas import Email, Input, Name200, Output

Role = Literal["owner", "admin", "viewer"]
# NIST SP 800-63B §5.1.1.2 asks for at least 8 characters; we ask for 10 and allow long passphrases.
PASSWORD_MIN, PASSWORD_MAX = 10, 256


class SignupCreate(Input):
    email: Email
    password: str = Field(min_length=PASSWORD_MIN, max_length=PASSWORD_MAX)
    organization_name: Name200 = Field(min_length=1)
    full_name: Name200 = ""


class SignupStarted(Output):
    message: str = Field(description="What happens next. The same for every address, taken or not.")


class SignupConfirm(Input):
    token: str = Field(min_length=1, max_length=4000, description="The token from the emailed sign-up link.")


class LoginCreate(Input):
    email: Email
    password: str = Field(min_length=1, max_length=PASSWORD_MAX)


class UserRead(Output):
    id: uuid.UUID
    email: str
    full_name: str


class OrganizationRead(Output):
    id: uuid.UUID
    name: str
    slug: str


class SessionRead(Output):
    user: UserRead
    organization: OrganizationRead
    role: Role


class OrganizationDetailRead(OrganizationRead):
    aws_external_id: str
    created_at: dt.datetime


class OrganizationUpdate(Input):
    name: Name200 = Field(min_length=1)


LookbackDays = Literal[14, 32, 93]
LOOKBACK_DESCRIPTION = (
    "Days of history a change that removes capacity is judged on: 14 (the default), 32 or 93, as AWS Compute "
    "Optimizer's look-back period. A cut is sized on the peak over them and held until that much history exists."
)


class RecommendationPreferencesRead(Output):
    """The organisation's recommendation preferences."""

    lookback_days: LookbackDays = Field(description=LOOKBACK_DESCRIPTION)


class RecommendationPreferencesUpdate(Input):
    lookback_days: LookbackDays = Field(title="Lookback (days)", description=LOOKBACK_DESCRIPTION)


class ApiTokenCreate(Input):
    name: Name200 = Field(min_length=1)
    role: Role = "viewer"
    expires_at: AwareDatetime | None = Field(
        default=None, description="When the token stops working: a time with its UTC offset, in the future. "
        "Null: it works until revoked."
    )

    @field_validator("expires_at", mode="before")
    @classmethod
    def _a_timestamp_string(cls, value: Any) -> Any:
        # pydantic would read a bare number as seconds since the epoch (0.0 is 1970): ask for what the API documents
        if isinstance(value, int | float) and not isinstance(value, bool):
            raise PydanticCustomError("datetime_type", "must be a date and time with its UTC offset "
                                      "(ISO 8601, e.g. 2027-01-31T00:00:00Z), not a number")
        return value

    @field_validator("expires_at")
    @classmethod
    def _in_the_future(cls, value: dt.datetime | None) -> dt.datetime | None:
        if value is not None and value <= dt.datetime.now(dt.UTC):
            raise PydanticCustomError("datetime_future", "must be in the future (a token that has already expired "
                                      "could never be used)")
        return value


class ApiTokenRead(Output):
    id: uuid.UUID
    name: str
    token_prefix: str
    role: Role
    created_at: dt.datetime
    last_used_at: dt.datetime | None
    expires_at: dt.datetime | None
    revoked_at: dt.datetime | None


class ApiTokenCreated(ApiTokenRead):
    token: str = Field(description="The token itself. It is shown once and cannot be retrieved again.")


class MemberRead(Output):
    user_id: uuid.UUID
    email: str
    full_name: str
    role: Role
    joined_at: dt.datetime


class MemberUpdate(Input):
    role: Role


class InvitationCreate(Input):
    email: Email
    role: Role = "viewer"


class InvitationRead(Output):
    id: uuid.UUID
    email: str
    role: Role
    created_at: dt.datetime
    expires_at: dt.datetime
    revoked_at: dt.datetime | None


class InvitationCreated(InvitationRead):
    accept_url: str = Field(description="Link to send to the invitee; it is shown once.")


class InvitationAccept(Input):
    token: str = Field(min_length=10, max_length=200)
    password: str = Field(min_length=PASSWORD_MIN, max_length=PASSWORD_MAX)
    full_name: Name200 = ""


class AuditEntryRead(Output):
    id: int
    action: str
    actor_user_id: uuid.UUID | None
    actor_token_id: uuid.UUID | None
    target_kind: str | None
    target_id: str | None
    details: dict[str, object]
    ip: str | None
    created_at: dt.datetime

    @computed_field  # type: ignore[prop-decorator]
    @property
    def action_text(self) -> str:
        """The action in words, as the audit log page shows it."""
        return audit_action_text(self.action)
