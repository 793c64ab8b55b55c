"""The AWS account's side of tests/apply-ebs.spec.ts, against the moto server the e2e server also talks to (its
endpoint in HEADROOM_E2E_AWS_ENDPOINT, as scripts/test.sh passes it). Each command prints one JSON line.

  create-volume --az us-east-1a --size 350 --tag headroom-apply=true   a gp2 volume; {"volume_id", "tags"}
  describe-volume VOLUME_ID        {"type", "iops", "throughput", "tags", "modifications": [{"state", "target_type",
                                   "target_iops", "target_throughput"}]}
  create-role TEMPLATE_FILE        the write role from the CloudFormation template Settings › Apply hands out
                                   (its trust policy and its policy, as the customer's stack creates them); {"arn"}
  may-modify ROLE_NAME VOLUME_ID   whether the role's policy, as moto's IAM stored it, allows ec2:ModifyVolume on
                                   the volume with the tags moto's EC2 reports for it; {"allowed"}
  delete-volume VOLUME_ID

Why the tag condition is evaluated here and not by the moto server: moto's EC2 evaluates no IAM Condition (every
EC2 call is authorised against "*"), so the server would modify an untagged volume; moto's own IAM policy
evaluator (moto.iam.access_control.IAMPolicy) evaluates the condition with the request context AWS builds
(`aws:ResourceTag/<key>` from the volume's tags): docs/reference/ebs-modify.md, "Tag condition". Run with the
repository's environment: `uv run --locked python e2e/tools/aws_account.py ...`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

import boto3
from moto.iam.access_control import IAMPolicy, PermissionResult

# The tests' CloudFormation reader (backend/tests/cfn_template.py), shared with the role's API tests.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "backend", "tests"))
import cfn_template  # noqa: E402

REGION = "us-east-1"
ACCOUNT = "123456789012"  # moto's default account: the volumes' owner


def _client(service: str) -> Any:
    endpoint = os.environ.get("HEADROOM_E2E_AWS_ENDPOINT")
    if not endpoint:
        sys.exit("Set HEADROOM_E2E_AWS_ENDPOINT to the moto server's URL (scripts/test.sh passes it)")
    return boto3.client(service, endpoint_url=endpoint, region_name=REGION, aws_access_key_id="testing",
                        aws_secret_access_key="testing")


def create_volume(az: str, size: int, tags: list[str]) -> dict[str, Any]:
    pairs = dict(t.split("=", 1) for t in tags)
    spec = [{"ResourceType": "volume", "Tags": [{"Key": k, "Value": v} for k, v in pairs.items()]}] if pairs else []
    answer = _client("ec2").create_volume(AvailabilityZone=az, Size=size, VolumeType="gp2", TagSpecifications=spec)
    return {"volume_id": answer["VolumeId"], "tags": pairs}


def describe_volume(volume_id: str) -> dict[str, Any]:
    ec2 = _client("ec2")
    volume = ec2.describe_volumes(VolumeIds=[volume_id])["Volumes"][0]
    modifications = ec2.describe_volumes_modifications(VolumeIds=[volume_id]).get("VolumesModifications", [])
    return {"type": volume["VolumeType"], "iops": volume.get("Iops"), "throughput": volume.get("Throughput"),
            "tags": {t["Key"]: t["Value"] for t in volume.get("Tags", [])},
            "modifications": [{"state": m["ModificationState"], "target_type": m.get("TargetVolumeType"),
                               "target_iops": m.get("TargetIops"), "target_throughput": m.get("TargetThroughput")}
                              for m in modifications]}


def create_role(template_file: str) -> dict[str, Any]:
    with open(template_file, encoding="utf-8") as f:
        doc = cfn_template.load(f.read())
    params = {name: str(p.get("Default", "")) for name, p in doc["Parameters"].items()}
    params |= {"AWS::Partition": "aws", "AWS::AccountId": ACCOUNT}
    [(_, resource)] = [(n, r) for n, r in doc["Resources"].items() if r["Type"] == "AWS::IAM::Role"]
    role = cfn_template.render(resource["Properties"], params)
    iam = _client("iam")
    name = role.get("RoleName") or "HeadroomApply"
    try:
        iam.delete_role_policy(RoleName=name, PolicyName=role["Policies"][0]["PolicyName"])
        iam.delete_role(RoleName=name)
    except iam.exceptions.NoSuchEntityException:
        pass
    trust = role["AssumeRolePolicyDocument"]
    arn = iam.create_role(RoleName=name, AssumeRolePolicyDocument=json.dumps(trust))["Role"]["Arn"]
    for policy in role["Policies"]:
        document = policy["PolicyDocument"]
        iam.put_role_policy(RoleName=name, PolicyName=policy["PolicyName"],
                            PolicyDocument=document if isinstance(document, str) else json.dumps(document))
    return {"arn": arn, "name": name}


def may_modify(role_name: str, volume_id: str) -> dict[str, Any]:
    iam = _client("iam")
    [policy_name] = iam.list_role_policies(RoleName=role_name)["PolicyNames"]
    document = iam.get_role_policy(RoleName=role_name, PolicyName=policy_name)["PolicyDocument"]
    tags = describe_volume(volume_id)["tags"]
    context = {f"aws:ResourceTag/{k}": v for k, v in tags.items()}
    arn = f"arn:aws:ec2:{REGION}:{ACCOUNT}:volume/{volume_id}"
    result = IAMPolicy(json.dumps(document)).is_action_permitted("ec2:ModifyVolume", arn, None, context)
    return {"allowed": result == PermissionResult.PERMITTED, "tags": tags}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    created = sub.add_parser("create-volume")
    created.add_argument("--az", required=True)
    created.add_argument("--size", type=int, required=True)
    created.add_argument("--tag", action="append", default=[])
    sub.add_parser("describe-volume").add_argument("volume_id")
    sub.add_parser("create-role").add_argument("template_file")
    may = sub.add_parser("may-modify")
    may.add_argument("role_name")
    may.add_argument("volume_id")
    sub.add_parser("delete-volume").add_argument("volume_id")
    args = parser.parse_args()
    if args.command == "create-volume":
        out = create_volume(args.az, args.size, args.tag)
    elif args.command == "describe-volume":
        out = describe_volume(args.volume_id)
    elif args.command == "create-role":
        out = create_role(args.template_file)
    elif args.command == "may-modify":
        out = may_modify(args.role_name, args.volume_id)
    else:
        _client("ec2").delete_volume(VolumeId=args.volume_id)
        out = {"deleted": args.volume_id}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
