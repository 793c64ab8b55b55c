"""The shipped IAM role templates grant exactly the actions the collector calls, and require the external ID."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml
from headroom.sources.aws.service import REQUIRED_ACTIONS

DEPLOY = Path(__file__).resolve().parents[4] / "deploy" / "aws"


class _CfnLoader(yaml.SafeLoader):
    pass


def _tag(loader: yaml.SafeLoader, _suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node)
    return loader.construct_mapping(node)  # type: ignore[arg-type]


_CfnLoader.add_multi_constructor("!", _tag)


def test_cloudformation_role_is_least_privilege() -> None:
    doc = yaml.load((DEPLOY / "headroom-readonly-role.cfn.yaml").read_text(), Loader=_CfnLoader)  # noqa: S506
    assert set(doc["Parameters"]) >= {"HeadroomAccountId", "ExternalId"}
    role = doc["Resources"]["HeadroomReadOnlyRole"]["Properties"]
    trust = role["AssumeRolePolicyDocument"]["Statement"][0]
    assert trust["Action"] == "sts:AssumeRole"
    assert trust["Condition"]["StringEquals"]["sts:ExternalId"] == "ExternalId"
    actions = [a for p in role["Policies"] for s in p["PolicyDocument"]["Statement"] for a in s["Action"]]
    assert sorted(actions) == sorted(REQUIRED_ACTIONS)


def test_terraform_role_matches_and_is_formatted() -> None:
    text = (DEPLOY / "headroom-readonly-role.tf").read_text()
    actions = re.findall(r'"((?:ec2|cloudwatch|sts):[A-Za-z]+)"', text)
    assert sorted(a for a in actions if not a.startswith("sts:")) == sorted(REQUIRED_ACTIONS)
    assert 'variable = "sts:ExternalId"' in text and "var.external_id" in text
    terraform = shutil.which("terraform")
    if terraform:  # `terraform fmt` needs no providers, so it works offline
        result = subprocess.run([terraform, "fmt", "-check", "-diff", str(DEPLOY)], capture_output=True, text=True)
        assert result.returncode == 0, result.stdout + result.stderr
