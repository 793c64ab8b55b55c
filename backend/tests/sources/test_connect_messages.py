"""What the connect flows say when an input is malformed: the field and the expected form in words, never the
regular expression, and one sentence for an email address the validator refuses."""

from __future__ import annotations

import re
from typing import Any

import pytest
from headroom.accounts import schemas as accounts_schemas
from headroom.clusters import schemas as clusters_schemas
from headroom.inventory import schemas as inventory_schemas
from headroom.platform.schemas import Input
from headroom.sources import schemas as sources_schemas
from helpers import sign_up
from pydantic import BaseModel, ValidationError

ROLE_ARN_MESSAGE = ("Role ARN: expected an IAM role ARN like arn:aws:iam::123456789012:role/HeadroomReadOnly "
                    "(arn:aws:iam::, the 12-digit account ID, :role/ and the role's name)")


def test_a_malformed_role_arn_names_the_field_and_the_form(client: Any) -> None:
    owner = sign_up(client)
    response = owner.post("/api/v1/sources/aws", json={
        "name": "prod", "auth_kind": "assume_role", "regions": ["us-east-1"], "role_arn": "arn:aws:iam::123:role/x"})
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["message"] == ROLE_ARN_MESSAGE
    # programs keep the machine path (field, loc); people read the label
    assert error["details"] == [{"field": "role_arn", "loc": ["body", "role_arn"], "label": "Role ARN",
                                 "message": ROLE_ARN_MESSAGE.removeprefix("Role ARN: ")}]
    assert "pattern" not in response.text and "[0-9]" not in response.text
    # Nothing was saved: no AWS connection with a malformed ARN.
    assert owner.get("/api/v1/sources/aws").json() == []


def test_the_update_says_the_same(client: Any) -> None:
    owner = sign_up(client)
    created = owner.post("/api/v1/sources/aws", json={"name": "k", "auth_kind": "default_chain",
                                                      "regions": ["us-east-1"]}).json()
    response = owner.patch(f"/api/v1/sources/aws/{created['id']}", json={"role_arn": "role/HeadroomReadOnly"})
    assert response.status_code == 422 and response.json()["error"]["message"] == ROLE_ARN_MESSAGE


@pytest.mark.parametrize(("body", "message"), [
    ({"regions": ["us-east-1", "useast1"]}, "Region 2: expected an AWS region code like us-east-1 or eu-west-2"),
    ({"auth_kind": "static_keys", "access_key_id": "akia-lower", "secret_access_key": "x"},
     "Access key ID: expected an AWS access key ID like AKIAIOSFODNN7EXAMPLE (16 to 128 capital letters and "
     "digits)"),
])
def test_other_source_fields_say_their_form(client: Any, body: dict[str, Any], message: str) -> None:
    owner = sign_up(client)
    response = owner.post("/api/v1/sources/aws", json={"name": "n", "auth_kind": "default_chain",
                                                       "regions": ["us-east-1"], **body})
    assert response.status_code == 422 and response.json()["error"]["message"] == message


def _pattern_fields(model: type[BaseModel]) -> list[tuple[str, str]]:
    """(field, pattern) of every pattern-checked string field of a model, from its JSON schema."""
    found = []
    for name, prop in model.model_json_schema()["properties"].items():
        for candidate in [prop, prop.get("items", {}), *prop.get("anyOf", []),
                          *[o.get("items", {}) for o in prop.get("anyOf", [])]]:
            if "pattern" in candidate:
                found.append((name, candidate["pattern"]))
                break
    return found


INPUTS = [m for module in (sources_schemas, clusters_schemas, inventory_schemas)
          for m in vars(module).values() if isinstance(m, type) and issubclass(m, Input) and m is not Input]


def test_every_pattern_checked_input_explains_itself() -> None:
    checked = 0
    for model in INPUTS:
        for field, pattern in _pattern_fields(model):
            value: Any = ["!"] if model.model_fields[field].annotation is not None and "list" in str(
                model.model_fields[field].annotation) else "!"
            with pytest.raises(ValidationError) as raised:
                model.model_validate({field: value})
            errors = [e for e in raised.value.errors() if e["loc"][0] == field]
            assert errors, (model.__name__, field)
            message = errors[0]["msg"]
            assert message.startswith("expected ") and " like " in message, (model.__name__, field, message)
            assert pattern not in message and not re.search(r"[\\^$]", message), message
            checked += 1
    # role_arn, access_key_id, regions (create and update), tikv_version (create and update), the node addresses
    assert checked >= 10


def test_a_special_use_email_domain_is_one_sentence_naming_the_field(client: Any) -> None:
    response = client.post("/api/v1/auth/signup", json={
        "email": "someone@headroom.test", "password": "correct horse battery", "organization_name": "Org"})
    assert response.status_code == 422
    error = response.json()["error"]
    problem = ("not a valid email address: headroom.test is a special-use domain (like .test, .invalid, .local or "
               "localhost: RFC 6761) that can never receive email; use an address at a real domain")
    assert error["details"] == [{"field": "email", "loc": ["body", "email"], "label": "Email", "message": problem}]
    assert error["message"] == f"Email: {problem}"
    # email-validator's own sentence, and pydantic's prefix, are gone (they were shown twice, in raw form)
    assert "value is not a valid email address" not in response.text and "special-use or reserved" not in response.text


def test_other_email_problems_keep_the_validators_reason_in_one_sentence() -> None:
    with pytest.raises(ValidationError) as raised:
        accounts_schemas.LoginCreate.model_validate({"email": "no-at-sign", "password": "x"})
    assert raised.value.errors()[0]["msg"] == "not a valid email address: an email address must have an @-sign"
