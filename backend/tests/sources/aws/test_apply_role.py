"""The apply (write) role's templates (docs/apply.md, docs/reference/ebs-modify.md#tag-condition): served by the
API beside the read-only role's, filled with the organisation's external ID and volume tag; the CloudFormation
template passes cfn-lint, the Terraform file parses as HCL, and both grant only ec2:ModifyVolume (on volumes
carrying the tag) and ec2:DescribeVolumesModifications, to Headroom's account with the external ID.

What moto can and cannot check, found by running it (moto 5.2): a moto server with IAM enforcement on
(INITIAL_NO_AUTH_ACTION_COUNT reached) enforces the *actions* of a policy for EC2 calls, but authorises every EC2
call against the resource "*" and evaluates no Condition outside sts:AssumeRole (moto/iam/access_control.py:
"TODO add support for the Resource and Condition parts of IAM policies"), so through the server ec2:ModifyVolume
is refused on every volume, tagged or not, and IAM's SimulateCustomPolicy is not implemented. So:
1. the server, enforcing, shows the policy allows DescribeVolumesModifications and refuses every other action;
2. the tag condition and the trust policy are evaluated in-process by moto's own IAM policy evaluator
   (moto.iam.access_control.IAMPolicy) on the documents moto's IAM stored for the role, with the request context
   AWS would build: the volume's ARN, and `aws:ResourceTag/<key>` from the volume's tags as moto's EC2 reports
   them (or `sts:ExternalId` for the trust policy). One AWS rule this evaluator does not follow: a condition key
   absent from the request makes AWS's StringEquals false, moto's true; so the refused volume here carries the
   tag key with another value, and the absent-key case rests on AWS's documentation (docs/reference/ebs-modify.md).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import cfn_template
import hcl2
import pytest
from helpers import sign_up
from moto import settings as moto_settings
from moto.core.authorization import ActionAuthenticatorMixin
from moto.iam.access_control import IAMPolicy, PermissionResult
from moto.server import ThreadedMotoServer

TEMPLATES = Path(__file__).resolve().parents[3] / "headroom" / "sources" / "aws" / "deploy_templates"
ACCOUNT = "123456789012"  # moto's default account: the volumes' owner here
HEADROOM = "210987654321"
ACTIONS = ["ec2:DescribeVolumesModifications", "ec2:ModifyVolume"]


def _unquote(value: Any) -> Any:
    """python-hcl2 8 keeps a string literal's quotes (an expression has none): drop them, keys and values."""
    if isinstance(value, str):
        return value[1:-1] if len(value) >= 2 and value[0] == value[-1] == '"' else value
    if isinstance(value, dict):
        return {_unquote(k): _unquote(v) for k, v in value.items() if k != "__is_block__"}
    if isinstance(value, list):
        return [_unquote(v) for v in value]
    return value


def _setup(client: Any, settings: Any, tag: tuple[str, str] = ("tikv-data", "headroom")) -> tuple[str, dict[str, str]]:
    settings.aws_account_id = HEADROOM
    owner = sign_up(client)
    assert owner.put("/api/v1/org/apply-settings", json={"enabled": False, "volume_tag_key": tag[0],
                                                         "volume_tag_value": tag[1]}).status_code == 200
    body = owner.get("/api/v1/sources/aws/apply-setup").json()
    return body["external_id"], {t["kind"]: t["text"] for t in body["templates"]}


def _role_documents(cfn_text: str) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    doc = cfn_template.load(cfn_text)
    params = {name: p.get("Default") for name, p in doc["Parameters"].items()}
    params |= {"AWS::Partition": "aws", "AWS::AccountId": ACCOUNT}
    role = cfn_template.render(doc["Resources"]["HeadroomApplyRole"]["Properties"], params)
    [policy] = role["Policies"]
    return doc, role["AssumeRolePolicyDocument"], json.loads(policy["PolicyDocument"])


def test_the_api_serves_both_templates_filled_with_the_org_s_values(client: Any, settings: Any) -> None:
    external_id, texts = _setup(client, settings)
    doc, trust, policy = _role_documents(texts["cloudformation"])
    params = doc["Parameters"]
    assert (params["ExternalId"]["Default"], params["HeadroomAccountId"]["Default"]) == (external_id, HEADROOM)
    assert (params["VolumeTagKey"]["Default"], params["VolumeTagValue"]["Default"]) == ("tikv-data", "headroom")
    assert sorted(a for s in policy["Statement"] for a in [s["Action"]]) == ACTIONS
    [modify] = [s for s in policy["Statement"] if s["Action"] == "ec2:ModifyVolume"]
    assert modify["Condition"] == {"StringEquals": {"aws:ResourceTag/tikv-data": "headroom"}}
    assert modify["Resource"] == f"arn:aws:ec2:*:{ACCOUNT}:volume/*"
    [statement] = trust["Statement"]
    assert statement["Principal"] == {"AWS": f"arn:aws:iam::{HEADROOM}:root"}
    assert statement["Condition"] == {"StringEquals": {"sts:ExternalId": external_id}}

    tf = _unquote(hcl2.loads(texts["terraform"]))  # valid HCL, or this raises
    variables = {name: body for v in tf["variable"] for name, body in v.items()}
    assert variables["volume_tag_key"]["default"] == "tikv-data"
    assert variables["external_id"]["default"] == external_id
    documents = {name: body for d in tf["data"] for kind, named in d.items() if kind == "aws_iam_policy_document"
                 for name, body in named.items()}
    statements = documents["apply"]["statement"]
    assert sorted(a for s in statements for a in s["actions"]) == ACTIONS
    [condition] = [s for s in statements if s["actions"] == ["ec2:ModifyVolume"]][0]["condition"]
    assert condition["variable"] == "aws:ResourceTag/${var.volume_tag_key}"
    assert condition["values"] == ["${var.volume_tag_value}"]


def test_without_an_org_tag_the_templates_ask_for_headroom_s_default_tag(client: Any, settings: Any) -> None:
    settings.aws_account_id = HEADROOM
    body = sign_up(client).get("/api/v1/sources/aws/apply-setup").json()
    cfn = next(t["text"] for t in body["templates"] if t["kind"] == "cloudformation")
    _, _, policy = _role_documents(cfn)
    modify = next(s for s in policy["Statement"] if s["Action"] == "ec2:ModifyVolume")
    assert modify["Condition"] == {"StringEquals": {"aws:ResourceTag/headroom-apply": "true"}}


def test_the_cloudformation_template_passes_cfn_lint(tmp_path: Path, client: Any, settings: Any) -> None:
    _, texts = _setup(client, settings)
    paths = []
    for name, text in (("shipped.yaml", (TEMPLATES / "headroom-apply-role.cfn.yaml").read_text()),
                       ("filled.yaml", texts["cloudformation"])):
        path = tmp_path / name
        path.write_text(text)
        paths.append(str(path))
    # cfn-lint comes with moto[server] (its CloudFormation support); its console script sits beside python. Both
    # templates in one run: starting cfn-lint (it imports sympy and networkx) costs far more than linting one.
    # It exits non-zero when either template has a finding, and names the file in each line it prints.
    result = subprocess.run([str(Path(sys.executable).parent / "cfn-lint"), *paths], capture_output=True,
                            text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.fixture()
def enforcing_moto() -> Iterator[tuple[str, Any]]:
    """A moto server of its own (the shared one does not enforce IAM), enforcing once the set-up is done."""
    server = ThreadedMotoServer(port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    saved = (moto_settings.INITIAL_NO_AUTH_ACTION_COUNT, ActionAuthenticatorMixin.request_count)

    def enforce() -> None:
        moto_settings.INITIAL_NO_AUTH_ACTION_COUNT = 0  # type: ignore[assignment]
        ActionAuthenticatorMixin.request_count = 0

    try:
        yield f"http://{host}:{port}", enforce
    finally:
        moto_settings.INITIAL_NO_AUTH_ACTION_COUNT, ActionAuthenticatorMixin.request_count = saved  # type: ignore[assignment]
        server.stop()


def _client(service: str, url: str, key: str = "testing", secret: str = "testing") -> Any:  # noqa: S107
    return boto3.client(service, endpoint_url=url, region_name="us-east-1", aws_access_key_id=key,
                        aws_secret_access_key=secret)


def test_the_policy_in_moto_iam_modifies_tagged_volumes_only(client: Any, settings: Any,
                                                              enforcing_moto: tuple[str, Any]) -> None:
    url, enforce = enforcing_moto
    external_id, texts = _setup(client, settings)
    _, trust, policy = _role_documents(texts["cloudformation"])
    iam, ec2 = _client("iam", url), _client("ec2", url)
    iam.create_role(RoleName="HeadroomApply", AssumeRolePolicyDocument=json.dumps(trust))
    iam.put_role_policy(RoleName="HeadroomApply", PolicyName="headroom-apply", PolicyDocument=json.dumps(policy))
    stored_policy = iam.get_role_policy(RoleName="HeadroomApply", PolicyName="headroom-apply")["PolicyDocument"]
    stored_trust = iam.get_role(RoleName="HeadroomApply")["Role"]["AssumeRolePolicyDocument"]

    def volume(tags: list[dict[str, str]]) -> str:
        spec = [{"ResourceType": "volume", "Tags": tags}] if tags else []
        return str(ec2.create_volume(AvailabilityZone="us-east-1a", Size=100, VolumeType="gp2",
                                     TagSpecifications=spec)["VolumeId"])

    tagged = volume([{"Key": "tikv-data", "Value": "headroom"}])
    other = volume([{"Key": "tikv-data", "Value": "someone-else"}])

    # 1. the server enforcing the stored policy (as a user's, since moto matches trust principals literally)
    iam.create_user(UserName="probe")
    iam.put_user_policy(UserName="probe", PolicyName="headroom-apply", PolicyDocument=json.dumps(stored_policy))
    key = iam.create_access_key(UserName="probe")["AccessKey"]
    enforce()
    as_role = _client("ec2", url, key["AccessKeyId"], key["SecretAccessKey"])
    assert "VolumesModifications" in as_role.describe_volumes_modifications()
    for refused in (lambda: as_role.describe_volumes(),
                    lambda: as_role.create_volume(AvailabilityZone="us-east-1a", Size=1),
                    lambda: as_role.delete_volume(VolumeId=tagged),
                    lambda: as_role.create_tags(Resources=[other], Tags=[{"Key": "tikv-data", "Value": "headroom"}])):
        with pytest.raises(Exception, match="AccessDenied|UnauthorizedOperation"):
            refused()

    # 2. moto's evaluator on the stored documents, with the request context AWS builds for ModifyVolume
    evaluator = IAMPolicy(json.dumps(stored_policy))
    described = {v["VolumeId"]: v for v in _client("ec2", url, key["AccessKeyId"], key["SecretAccessKey"])
                 .describe_volumes_modifications().get("VolumesModifications", [])}
    assert described == {}  # nothing modified yet
    moto_settings.INITIAL_NO_AUTH_ACTION_COUNT = float("inf")  # type: ignore[assignment]  # read the tags back
    tags_of = {v["VolumeId"]: {t["Key"]: t["Value"] for t in v.get("Tags", [])}
               for v in ec2.describe_volumes(VolumeIds=[tagged, other])["Volumes"]}

    def may_modify(volume_id: str) -> bool:
        context = {f"aws:ResourceTag/{k}": v for k, v in tags_of[volume_id].items()}
        arn = f"arn:aws:ec2:us-east-1:{ACCOUNT}:volume/{volume_id}"
        return evaluator.is_action_permitted("ec2:ModifyVolume", arn, None, context) == PermissionResult.PERMITTED

    assert may_modify(tagged) is True
    assert may_modify(other) is False
    # and only volumes: the same action on another resource type is not granted
    assert evaluator.is_action_permitted("ec2:ModifyVolume", f"arn:aws:ec2:us-east-1:{ACCOUNT}:instance/i-0abc", None,
                                         {"aws:ResourceTag/tikv-data": "headroom"}) != PermissionResult.PERMITTED

    # the trust policy: Headroom's account with the org's external ID, nobody else
    trust_evaluator = IAMPolicy(json.dumps(stored_trust))
    role_arn = f"arn:aws:iam::{ACCOUNT}:role/HeadroomApply"

    def may_assume(principal: str, given_external_id: str) -> bool:
        result = trust_evaluator.is_action_permitted("sts:AssumeRole", role_arn, principal,
                                                     {"sts:ExternalId": given_external_id})
        return result == PermissionResult.PERMITTED

    assert may_assume(f"arn:aws:iam::{HEADROOM}:root", external_id) is True
    assert may_assume(f"arn:aws:iam::{HEADROOM}:root", "headroom-another-org") is False
    assert may_assume("arn:aws:iam::999999999999:root", external_id) is False
