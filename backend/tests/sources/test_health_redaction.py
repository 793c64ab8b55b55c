"""A source's last error is stored and shown scrubbed of secrets, with every ordinary word kept: the real
botocore errors a connection test or sweep meets, and strings that do carry secrets."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

import pytest
from botocore.exceptions import (
    ClientError,
    EndpointConnectionError,
    NoCredentialsError,
    PartialCredentialsError,
)
from headroom.sources.health import record_failure, redact_error

ACCESS_DENIED = ClientError(
    {"Error": {"Code": "AccessDenied", "Message": (
        "User: arn:aws:sts::123456789012:assumed-role/HeadroomStack-HeadroomReadOnlyRole-1A2B3C4D5E6F7/headroom-x "
        "is not authorized to perform: sts:AssumeRole on resource: "
        "arn:aws:iam::123456789012:role/HeadroomStack-HeadroomReadOnlyRole-1A2B3C4D5E6F7")}},
    "AssumeRole")
SIGNATURE = ClientError(
    {"Error": {"Code": "SignatureDoesNotMatch", "Message": (
        "The request signature we calculated does not match the signature you provided. Check your AWS Secret "
        "Access Key and signing method. Consult the service documentation for details.")}},
    "DescribeVolumes")
UNAUTHORIZED = ClientError(
    {"Error": {"Code": "UnauthorizedOperation", "Message": "You are not authorized to perform this operation."}},
    "DescribeInstances")

# Ordinary error text, kept word for word (the old scrubber turned the first into
# "NoCredential=[redacted] to locate credentials").
KEPT = [
    f"{type(NoCredentialsError()).__name__}: {NoCredentialsError()}",
    f"ClientError: {ACCESS_DENIED}",
    f"ClientError: {SIGNATURE}",
    f"ClientError: {UNAUTHORIZED}",
    str(PartialCredentialsError(provider="env", cred_var="AWS_SECRET_ACCESS_KEY")),
    str(EndpointConnectionError(endpoint_url="https://sts.us-east-1.amazonaws.com/")),
    "missing permissions: ec2:DescribeVolumes, cloudwatch:GetMetricData",
    "A bearer token is required.",
    "username and password are required for basic auth.",
    "Credential should be scoped to a valid region.",
]


@pytest.mark.parametrize("text", KEPT)
def test_ordinary_error_text_is_kept(text: str) -> None:
    assert redact_error(text) == text


# Text that does carry a secret: (text, the secret that must go, what must stay).
LEAKS = [
    ("config error: aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY region=us-east-1",
     "wJalrXUtnFEMI", "region=us-east-1"),
    ("static keys AKIAIOSFODNN7EXAMPLE were refused", "AKIAIOSFODNN7EXAMPLE", "were refused"),
    ("temporary key ASIAY34FZKBOKMUTVV7A expired", "ASIAY34FZKBOKMUTVV7A", "expired"),
    ("request had Authorization: Basic aGVhZHJvb206aHVudGVyMg==", "aGVhZHJvb206aHVudGVyMg", "request had"),
    ("sent Authorization: Bearer eyJhbGciOi.eyJzdWIi.c2lnbmF0dXJl", "eyJhbGciOi", "sent"),
    ("cannot reach http://scraper:pr0m-Passw0rd@prom.internal:9090/api/v1/query", "pr0m-Passw0rd",
     "prom.internal:9090/api/v1/query"),
    ("GET /api/v1/query?query=up&token=qs-secret-123 failed", "qs-secret-123", "query=up"),
    ("X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20261127 refused", "AKIAIOSFODNN7EXAMPLE", "refused"),
    ("{'password': 'tulip staircase'} rejected", "tulip staircase", "rejected"),
]


@pytest.mark.parametrize(("text", "secret", "kept"), LEAKS)
def test_secrets_are_redacted(text: str, secret: str, kept: str) -> None:
    cleaned = redact_error(text)
    assert secret not in cleaned and "[redacted]" in cleaned and kept in cleaned


def test_record_failure_stores_the_redacted_message() -> None:
    source = SimpleNamespace(status="unknown", last_success_at=None, last_error_at=None, last_error=None,
                             consecutive_failures=0)
    now = dt.datetime(2026, 11, 27, 9, 0, tzinfo=dt.UTC)
    record_failure(source, now, "NoCredentialsError: Unable to locate credentials")  # type: ignore[arg-type]
    assert source.last_error == "NoCredentialsError: Unable to locate credentials"
    assert source.status == "unknown" and source.consecutive_failures == 1
    record_failure(source, now, "aws_secret_access_key=abc123 refused", at_once=True)  # type: ignore[arg-type]
    assert source.last_error == "aws_secret_access_key=[redacted] refused" and source.status == "failing"
