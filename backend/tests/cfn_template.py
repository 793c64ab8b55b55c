"""A CloudFormation template as its stack would create it, for tests: the YAML read with CloudFormation's short
tags kept (`!Ref x` as {"!Ref": "x"}), then !Ref and !Sub resolved with the parameters given (the template's
defaults and pseudo parameters such as AWS::AccountId), as CloudFormation resolves them
(https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/intrinsic-function-reference-ref.html,
https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/intrinsic-function-reference-sub.html).
Used by tests/sources/aws/test_apply_role.py and e2e/tools/aws_account.py (the e2e spec's AWS account)."""

from __future__ import annotations

import re
from typing import Any

import yaml


class _CfnLoader(yaml.SafeLoader):
    """YAML with CloudFormation's short tags (!Ref, !Sub) kept as {"!Ref": ...} to resolve afterwards."""


def _tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return {"!" + suffix: loader.construct_scalar(node)}
    if isinstance(node, yaml.SequenceNode):
        return {"!" + suffix: loader.construct_sequence(node)}
    return {"!" + suffix: loader.construct_mapping(node)}  # type: ignore[arg-type]


_CfnLoader.add_multi_constructor("!", _tag)


def load(text: str) -> Any:
    """The template's document, short tags kept."""
    return yaml.load(text, Loader=_CfnLoader)  # noqa: S506 (a SafeLoader subclass)


def render(value: Any, params: dict[str, str]) -> Any:
    """`value` with !Ref and !Sub resolved from `params`; other functions left as they are."""
    if isinstance(value, dict) and len(value) == 1 and next(iter(value)).startswith("!"):
        ((fn, arg),) = value.items()
        if fn == "!Ref":
            return params[arg]
        if fn == "!Sub":
            return re.sub(r"\$\{([\w:]+)\}", lambda m: params[m.group(1)], arg)
        return value
    if isinstance(value, dict):
        return {k: render(v, params) for k, v in value.items()}
    if isinstance(value, list):
        return [render(v, params) for v in value]
    return value
