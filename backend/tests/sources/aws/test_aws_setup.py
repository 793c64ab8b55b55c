"""GET /api/v1/sources/aws/setup: the caller org's external ID, Headroom's account ID (or null with a note), and
the read-only role templates shipped in the package with both filled in as parameter defaults."""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from headroom.sources.aws.deploy_templates import (
    CFN_TEMPLATE,
    TERRAFORM_TEMPLATE,
    TemplateShapeError,
    fill_cloudformation,
    fill_terraform,
    template_text,
)
from helpers import join_with_role, sign_up

ACCOUNT = "123456789012"  # any 12 digits: an AWS account ID's form (IAM User Guide, account identifiers)


class _CfnLoader(yaml.SafeLoader):
    """YAML loader that reads CloudFormation's short-form tags (!Ref, !Sub, !GetAtt) as plain values."""


_CfnLoader.add_multi_constructor("!", lambda loader, suffix, node: loader.construct_scalar(node)
                                 if isinstance(node, yaml.ScalarNode) else loader.construct_sequence(node))


def _cfn_params(text: str) -> dict[str, Any]:
    return yaml.load(text, Loader=_CfnLoader)["Parameters"]  # noqa: S506 - SafeLoader subclass


def _tf_default(text: str, variable: str) -> str | None:
    block = re.search(r'variable "' + variable + r'" \{(.*?)\n\}', text, re.S)
    assert block, variable
    found = re.search(r'^\s*default\s*=\s*"([^"]*)"', block.group(1), re.M)
    return found.group(1) if found else None


def _templates(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["kind"]: t for t in body["templates"]}


def test_unset_account_id_is_null_with_a_note_and_templates_carry_the_external_id(client: Any) -> None:
    owner = sign_up(client)
    external_id = owner.get("/api/v1/org").json()["aws_external_id"]
    response = owner.get("/api/v1/sources/aws/setup")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["external_id"] == external_id and external_id.startswith("headroom-")
    assert body["headroom_account_id"] is None
    assert "HEADROOM_AWS_ACCOUNT_ID" in body["note"] and "not set" in body["note"]
    templates = _templates(body)
    assert set(templates) == {"cloudformation", "terraform"}
    assert templates["cloudformation"]["filename"] == "headroom-readonly-role.cfn.yaml"
    assert templates["terraform"]["filename"] == "headroom-readonly-role.tf"
    params = _cfn_params(templates["cloudformation"]["text"])
    assert params["ExternalId"]["Default"] == external_id
    assert "Default" not in params["HeadroomAccountId"]
    assert params["RoleName"]["Default"] == "HeadroomReadOnly"
    tf = templates["terraform"]["text"]
    assert _tf_default(tf, "external_id") == external_id
    assert _tf_default(tf, "headroom_account_id") is None


def test_set_account_id_fills_both_templates_for_any_member(client: Any, make_client: Any, settings: Any) -> None:
    settings.aws_account_id = ACCOUNT
    owner = sign_up(client)
    viewer = join_with_role(owner, make_client(), "viewer")
    response = viewer.get("/api/v1/sources/aws/setup")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["headroom_account_id"] == ACCOUNT and body["note"] is None
    assert body["external_id"] == owner.get("/api/v1/org").json()["aws_external_id"]
    templates = _templates(body)
    params = _cfn_params(templates["cloudformation"]["text"])
    assert params["HeadroomAccountId"]["Default"] == ACCOUNT
    assert re.match(params["HeadroomAccountId"]["AllowedPattern"], ACCOUNT)
    assert re.match(params["ExternalId"]["AllowedPattern"], body["external_id"])
    assert _tf_default(templates["terraform"]["text"], "headroom_account_id") == ACCOUNT
    assert _tf_default(templates["terraform"]["text"], "external_id") == body["external_id"]


def test_each_org_gets_its_own_external_id(client: Any, make_client: Any) -> None:
    a = sign_up(client, org="A")
    b = sign_up(make_client(), org="B")
    a_id = a.get("/api/v1/sources/aws/setup").json()["external_id"]
    b_body = b.get("/api/v1/sources/aws/setup").text
    assert a_id != b.get("/api/v1/org").json()["aws_external_id"]
    assert a_id not in b_body


def test_a_malformed_account_id_setting_is_reported_not_filled_in(client: Any, settings: Any) -> None:
    settings.aws_account_id = "12345"
    body = sign_up(client).get("/api/v1/sources/aws/setup").json()
    assert body["headroom_account_id"] is None and "not a 12-digit" in body["note"]
    assert "12345" not in _templates(body)["terraform"]["text"]


def test_needs_a_session(client: Any) -> None:
    assert client.get("/api/v1/sources/aws/setup").status_code == 401


def test_setup_path_is_not_taken_for_a_connection_id(client: Any) -> None:
    owner = sign_up(client)
    created = owner.post("/api/v1/sources/aws", json={"name": "c", "auth_kind": "default_chain",
                                                       "regions": ["us-east-1"]}).json()
    assert owner.get(f"/api/v1/sources/aws/{created['id']}").json()["name"] == "c"
    assert owner.get("/api/v1/sources/aws/setup").json()["external_id"] == created["external_id"]


def test_filling_only_adds_the_default_lines() -> None:
    for filename, fill, expected in [
        (CFN_TEMPLATE, fill_cloudformation,
         {'    Default: "headroom-abc"', f'    Default: "{ACCOUNT}"'}),
        (TERRAFORM_TEMPLATE, fill_terraform,
         {'  default     = "headroom-abc"', f'  default     = "{ACCOUNT}"'}),
    ]:
        original = template_text(filename)
        filled = fill(original, external_id="headroom-abc", account_id=ACCOUNT)
        diff = [line for line in difflib.ndiff(original.splitlines(), filled.splitlines()) if line[:2] in ("- ", "+ ")]
        assert {line[2:] for line in diff} == expected and all(line.startswith("+ ") for line in diff), filename


@pytest.mark.parametrize("external_id, account_id", [
    ("x", ACCOUNT),                      # external IDs are 2-1224 characters (IAM User Guide, IAM and STS quotas)
    ('headroom-"; evil', ACCOUNT),       # quote and space are outside [\w+=,.@:/-]
    ("headroom-abc\nx: y", ACCOUNT),     # a newline would add YAML keys
    ("headroom-abc\n", ACCOUNT),
    ("headroom-ÿ", ACCOUNT),              # \w is ASCII letters, digits and _ only
    ("headroom-abc", "123456789012\n"),
    ("headroom-abc", "12345678901"),     # 11 digits
    ("headroom-abc", "12345678901a"),
])
def test_filling_refuses_values_outside_aws_formats(external_id: str, account_id: str) -> None:
    with pytest.raises(ValueError):
        fill_cloudformation(template_text(CFN_TEMPLATE), external_id=external_id, account_id=account_id)
    with pytest.raises(ValueError):
        fill_terraform(template_text(TERRAFORM_TEMPLATE), external_id=external_id, account_id=account_id)


def test_a_template_without_its_parameter_block_is_an_error() -> None:
    with pytest.raises(TemplateShapeError):
        fill_terraform('variable "other" {\n  type        = string\n}\n', external_id="headroom-abc", account_id=None)


def test_deploy_aws_is_the_packaged_templates(repo_root: Path) -> None:
    # One source of truth: deploy/aws/ (the documented path) links to the files shipped in the package.
    for filename in (CFN_TEMPLATE, TERRAFORM_TEMPLATE):
        docs = repo_root / "deploy" / "aws" / filename
        assert docs.read_text(encoding="utf-8") == template_text(filename), filename
