"""Shell: boto3 clients for one AWS connection and region (assumed role, static keys or the default chain).

* assume_role: STS AssumeRole with the org's ExternalId (confused-deputy protection, AWS IAM user guide
  "How to use an external ID") and session name `headroom-<org>`, once per region; credentials last an hour
  (the DurationSeconds default), longer than any one task.
* static_keys: the secret is decrypted from the SecretBox only here, never logged or returned.
* default_chain: boto3's own chain (env, profile, instance role) for self-hosted installs.

Retries: botocore's `adaptive` mode (client-side rate limiting on top of `standard`: exponential backoff with
jitter on throttling errors such as `Throttling`, `ThrottlingException`, `RequestLimitExceeded`, HTTP 429, and on
transient 5xx and connection errors), at most `MAX_ATTEMPTS` attempts per call (botocore "Retries" guide).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import boto3
from botocore.config import Config

MAX_ATTEMPTS = 8
CONNECT_TIMEOUT_SECONDS = 5
READ_TIMEOUT_SECONDS = 60


class AwsConnectionLike(Protocol):
    org_id: Any
    auth_kind: str
    role_arn: str | None
    external_id: str
    access_key_id: str | None
    secret_access_key_enc: str | None


class Decrypter(Protocol):
    def decrypt(self, ciphertext: str) -> str: ...


def client_config(max_attempts: int = MAX_ATTEMPTS) -> Config:
    """Botocore config: adaptive retries with backoff and jitter, bounded timeouts."""
    return Config(
        retries={"mode": "adaptive", "max_attempts": max_attempts},
        connect_timeout=CONNECT_TIMEOUT_SECONDS,
        read_timeout=READ_TIMEOUT_SECONDS,
    )


@dataclass
class AwsClients:
    """Clients for one region of one connection."""

    session: boto3.session.Session
    region: str
    endpoint_url: str | None
    config: Config

    def client(self, service: str) -> Any:
        return self.session.client(service, region_name=self.region, endpoint_url=self.endpoint_url,
                                   config=self.config)

    def ec2(self) -> Any:
        return self.client("ec2")

    def cloudwatch(self) -> Any:
        return self.client("cloudwatch")


def session_name(org_id: Any) -> str:
    """STS RoleSessionName `headroom-<org>` (2-64 chars of [\\w+=,.@-], AWS STS AssumeRole reference)."""
    return f"headroom-{org_id}"[:64]


def clients_for(
    connection: AwsConnectionLike,
    region: str,
    box: Decrypter,
    *,
    endpoint_url: str | None = None,
    max_attempts: int = MAX_ATTEMPTS,
) -> AwsClients:
    """Build the clients for a connection in a region, assuming its role first when it has one."""
    config = client_config(max_attempts)
    if connection.auth_kind == "static_keys":
        if not connection.access_key_id or not connection.secret_access_key_enc:
            raise ValueError("static keys are incomplete")
        base = boto3.session.Session(
            aws_access_key_id=connection.access_key_id,
            aws_secret_access_key=box.decrypt(connection.secret_access_key_enc),
            region_name=region,
        )
    else:
        base = boto3.session.Session(region_name=region)
    if connection.auth_kind != "assume_role":
        return AwsClients(base, region, endpoint_url, config)
    if not connection.role_arn:
        raise ValueError("assume_role needs a role ARN")
    sts = base.client("sts", region_name=region, endpoint_url=endpoint_url, config=config)
    creds = sts.assume_role(
        RoleArn=connection.role_arn,
        RoleSessionName=session_name(connection.org_id),
        ExternalId=connection.external_id,
    )["Credentials"]
    assumed = boto3.session.Session(
        aws_access_key_id=creds["AccessKeyId"],
        aws_secret_access_key=creds["SecretAccessKey"],
        aws_session_token=creds["SessionToken"],
        region_name=region,
    )
    return AwsClients(assumed, region, endpoint_url, config)
