"""What a member needs to create Headroom's read-only role in their AWS account: the organisation's external ID,
Headroom's AWS account ID, and the CloudFormation and Terraform templates with both filled in."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter
from pydantic import Field

from headroom.accounts import service as accounts
from headroom.api.deps import DB, Caller, Context
from headroom.platform.schemas import Output
from headroom.sources.aws.deploy_templates import ACCOUNT_ID_RE, filled_apply_templates, filled_templates

router = APIRouter(prefix="/sources/aws", tags=["sources"])


class AwsTemplateRead(Output):
    kind: Literal["cloudformation", "terraform"]
    filename: str = Field(description="Suggested file name for the download.")
    media_type: str
    text: str = Field(description="The template with the external ID (and account ID, when known) as defaults.")


class AwsSetupRead(Output):
    external_id: str = Field(description="Your organisation's external ID: the role's trust policy requires it.")
    headroom_account_id: str | None = Field(
        description="The AWS account Headroom assumes your role from; null when this installation has not set it.")
    note: str | None = Field(description="Why the account ID is missing, and what to do; null when it is set.")
    templates: list[AwsTemplateRead]


def _account_id(configured_value: str | None) -> tuple[str | None, str | None]:
    """Headroom's AWS account ID as configured, or None with why (in words)."""
    configured = (configured_value or "").strip()
    if ACCOUNT_ID_RE.fullmatch(configured):
        return configured, None
    problem = "is not set" if not configured else "is not a 12-digit AWS account ID"
    return None, (f"This installation's HEADROOM_AWS_ACCOUNT_ID {problem}, so the templates leave Headroom's "
                  "account ID for you to fill in; ask your Headroom operator for it.")


@router.get("/setup", response_model=AwsSetupRead)
def aws_setup(caller: Caller, db: DB, ctx: Context) -> AwsSetupRead:
    """The external ID, Headroom's AWS account ID and the read-only role templates filled in with both."""
    org = accounts.get_organization(db, caller)
    account_id, note = _account_id(ctx.settings.aws_account_id)
    templates = filled_templates(external_id=org.aws_external_id, account_id=account_id)
    return AwsSetupRead(
        external_id=org.aws_external_id, headroom_account_id=account_id, note=note,
        templates=[AwsTemplateRead(kind=t.kind, filename=t.filename, media_type=t.media_type, text=t.text)
                   for t in templates],
    )


@router.get("/apply-setup", response_model=AwsSetupRead)
def aws_apply_setup(caller: Caller, db: DB, ctx: Context) -> AwsSetupRead:
    """The apply (write) role templates: ec2:ModifyVolume on volumes carrying the organisation's apply tag only,
    and ec2:DescribeVolumesModifications; trust limited to Headroom's account with the external ID."""
    org = accounts.get_organization(db, caller)
    account_id, note = _account_id(ctx.settings.aws_account_id)
    templates = filled_apply_templates(external_id=org.aws_external_id, account_id=account_id,
                                       volume_tag_key=org.apply_volume_tag_key,
                                       volume_tag_value=org.apply_volume_tag_value)
    return AwsSetupRead(
        external_id=org.aws_external_id, headroom_account_id=account_id, note=note,
        templates=[AwsTemplateRead(kind=t.kind, filename=t.filename, media_type=t.media_type, text=t.text)
                   for t in templates],
    )
