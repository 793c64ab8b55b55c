"""Headroom's IAM roles as CloudFormation and Terraform, shipped inside the package (deploy/aws/ links here): the
read-only role every organisation creates, and the apply (write) role only an organisation that turns on apply
creates (docs/apply.md). A pure filler writes an organisation's external ID and Headroom's account ID (and, for
the apply role, the volume tag) into the templates' parameters as their defaults."""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from typing import Literal

CFN_TEMPLATE = "headroom-readonly-role.cfn.yaml"
TERRAFORM_TEMPLATE = "headroom-readonly-role.tf"
APPLY_CFN_TEMPLATE = "headroom-apply-role.cfn.yaml"
APPLY_TERRAFORM_TEMPLATE = "headroom-apply-role.tf"
# The volume tag the apply role's condition asks for when the organisation has not chosen one.
DEFAULT_VOLUME_TAG = ("headroom-apply", "true")
# A tag as the templates' AllowedPattern / the apply settings accept it: none of these characters needs escaping
# inside a double-quoted YAML or HCL string.
_TAG_RE = re.compile(r"[\w .:/=+@-]{0,256}", re.ASCII)

# An AWS account ID is 12 digits (IAM User Guide, "View AWS account identifiers"); the templates' own check
# (AllowedPattern / validation regex) is the same.
ACCOUNT_ID_RE = re.compile(r"[0-9]{12}", re.ASCII)  # used with fullmatch: no trailing newline slips by
# External IDs: 2-1224 characters, alphanumeric or + = , . @ : / - and no spaces (IAM User Guide, "IAM and AWS STS
# quotas", IAM name requirements; AWS API references give the pattern [\w+=,.@:/-]); the same set as the
# CloudFormation template's AllowedPattern, and none of them needs escaping inside a double-quoted YAML or HCL string.
EXTERNAL_ID_RE = re.compile(r"[\w+=,.@:/-]{2,1224}", re.ASCII)


class TemplateShapeError(RuntimeError):
    """A template no longer has the parameter block the filler writes into."""


@dataclass(frozen=True)
class FilledTemplate:
    kind: Literal["cloudformation", "terraform"]
    filename: str
    media_type: str
    text: str


def template_text(filename: str) -> str:
    """Return a shipped template as it is on disk."""
    return resources.files(__package__).joinpath(filename).read_text(encoding="utf-8")


def _insert_after(text: str, block_start: str, line: str, insert: str) -> str:
    """Insert `insert` after the first `line` that follows `block_start` (each must occur)."""
    start = text.find(block_start)
    if start < 0 or text.count(block_start) != 1:
        raise TemplateShapeError(f"expected one {block_start!r} in the template")
    at = text.find(line, start)
    if at < 0:
        raise TemplateShapeError(f"no {line!r} after {block_start!r}")
    at += len(line)
    return text[:at] + insert + text[at:]


def fill_cloudformation(text: str, *, external_id: str, account_id: str | None) -> str:
    """Give the ExternalId (and HeadroomAccountId, when known) parameters these values as defaults."""
    _check(external_id, account_id)
    text = _insert_after(text, "\n  ExternalId:\n", "    Type: String\n", f'    Default: "{external_id}"\n')
    if account_id is not None:
        text = _insert_after(text, "\n  HeadroomAccountId:\n", "    Type: String\n", f'    Default: "{account_id}"\n')
    return text


def fill_terraform(text: str, *, external_id: str, account_id: str | None) -> str:
    """Give the external_id (and headroom_account_id, when known) variables these values as defaults."""
    _check(external_id, account_id)
    type_line = "  type        = string\n"
    text = _insert_after(text, 'variable "external_id" {\n', type_line, f'  default     = "{external_id}"\n')
    if account_id is not None:
        text = _insert_after(text, 'variable "headroom_account_id" {\n', type_line,
                             f'  default     = "{account_id}"\n')
    return text


def _check(external_id: str, account_id: str | None) -> None:
    if not EXTERNAL_ID_RE.fullmatch(external_id):
        raise ValueError("external ID is not 2-1224 characters of [\\w+=,.@:/-]")
    if account_id is not None and not ACCOUNT_ID_RE.fullmatch(account_id):
        raise ValueError("account ID is not 12 digits")


def filled_templates(*, external_id: str, account_id: str | None) -> list[FilledTemplate]:
    """Both templates with the organisation's values filled in."""
    return [
        FilledTemplate("cloudformation", CFN_TEMPLATE, "application/yaml",
                       fill_cloudformation(template_text(CFN_TEMPLATE), external_id=external_id,
                                           account_id=account_id)),
        FilledTemplate("terraform", TERRAFORM_TEMPLATE, "text/plain",
                       fill_terraform(template_text(TERRAFORM_TEMPLATE), external_id=external_id,
                                      account_id=account_id)),
    ]


def filled_apply_templates(*, external_id: str, account_id: str | None, volume_tag_key: str | None,
                           volume_tag_value: str | None) -> list[FilledTemplate]:
    """Both apply-role templates with the organisation's values (its volume tag, else Headroom's) filled in."""
    key, value = (volume_tag_key, volume_tag_value or "") if volume_tag_key else DEFAULT_VOLUME_TAG
    if not key or not _TAG_RE.fullmatch(key) or not _TAG_RE.fullmatch(value) or len(key) > 128:
        raise ValueError("volume tag is not 1-128 (key) and 0-256 (value) characters of [\\w .:/=+@-]")
    cfn = fill_cloudformation(template_text(APPLY_CFN_TEMPLATE), external_id=external_id, account_id=account_id)
    cfn = _insert_after(cfn, "\n  VolumeTagKey:\n", "    Type: String\n", f'    Default: "{key}"\n')
    cfn = _insert_after(cfn, "\n  VolumeTagValue:\n", "    Type: String\n", f'    Default: "{value}"\n')
    tf = fill_terraform(template_text(APPLY_TERRAFORM_TEMPLATE), external_id=external_id, account_id=account_id)
    type_line = "  type        = string\n"
    tf = _insert_after(tf, 'variable "volume_tag_key" {\n', type_line, f'  default     = "{key}"\n')
    tf = _insert_after(tf, 'variable "volume_tag_value" {\n', type_line, f'  default     = "{value}"\n')
    return [
        FilledTemplate("cloudformation", APPLY_CFN_TEMPLATE, "application/yaml", cfn),
        FilledTemplate("terraform", APPLY_TERRAFORM_TEMPLATE, "text/plain", tf),
    ]
