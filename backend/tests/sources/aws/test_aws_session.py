"""Credentials: AssumeRole with the org's external ID and session name against moto's STS; static keys."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from headroom.platform.security import SecretBox
from headroom.sources.aws.session import clients_for, session_name


def test_assume_role_uses_external_id_and_session_name(aws_endpoint_url: str) -> None:
    calls: list[dict[str, Any]] = []
    conn = SimpleNamespace(org_id="0b5e", auth_kind="assume_role", role_arn="arn:aws:iam::123456789012:role/HeadroomReadOnly",
                           external_id="headroom-abc", access_key_id=None, secret_access_key_enc=None)
    import boto3

    original = boto3.session.Session.client

    def spy(self: Any, service: str, *args: Any, **kwargs: Any) -> Any:
        client = original(self, service, *args, **kwargs)
        if service == "sts":
            client.meta.events.register("provide-client-params.sts.AssumeRole",
                                        lambda params, **_k: calls.append(dict(params)))
        return client

    boto3.session.Session.client = spy  # type: ignore[method-assign]
    try:
        clients = clients_for(conn, "us-east-1", SecretBox("k" * 32), endpoint_url=aws_endpoint_url)
    finally:
        boto3.session.Session.client = original  # type: ignore[method-assign]
    assert calls == [{"RoleArn": conn.role_arn, "RoleSessionName": "headroom-0b5e", "ExternalId": "headroom-abc"}]
    creds = clients.session.get_credentials()
    assert creds is not None and creds.token  # temporary credentials from STS
    clients.ec2().describe_volumes(MaxResults=5)  # the assumed session works against the endpoint
    assert len(session_name("x" * 100)) == 64


def test_static_keys_are_decrypted_for_the_session_only() -> None:
    box = SecretBox("k" * 32)
    conn = SimpleNamespace(org_id="o", auth_kind="static_keys", role_arn=None, external_id="e",
                           access_key_id="AKIAIOSFODNN7EXAMPLE", secret_access_key_enc=box.encrypt("s3cr3t"))
    clients = clients_for(conn, "eu-west-1", box)
    creds = clients.session.get_credentials()
    assert creds is not None and (creds.access_key, creds.secret_key) == ("AKIAIOSFODNN7EXAMPLE", "s3cr3t")
    assert clients.region == "eu-west-1"
