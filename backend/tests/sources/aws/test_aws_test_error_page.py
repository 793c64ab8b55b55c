"""POST /sources/aws/{id}/test when the AWS endpoint answers a page botocore cannot parse (a proxy's HTML error
page): the test reports a failed check naming it, never a 500.

botocore treats a 5xx whose body starts with `<html>` as a generic error, but a page starting with
`<!DOCTYPE html>` (what nginx and most proxies send) or an HTML 200 (a captive portal) raises
ResponseParserError, which is not a BotoCoreError. moto never answers such a page, so a local server does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from headroom.sources.aws.service import REQUIRED_ACTIONS
from helpers import sign_up
from local_http import LocalServer, fixed, serve

# A proxy's page: HTML, not XML (the <hr> is never closed), so botocore's XML parser cannot read it.
PAGE = (b"<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n"
        b"<body><center><h1>502 Bad Gateway</h1></center><hr><center>proxy</center></body></html>\n")


@pytest.fixture(params=[502, 200], ids=["html-502", "html-200"], name="error_page")
def error_page(request: Any) -> Iterator[LocalServer]:
    with serve(fixed(request.param, PAGE)) as server:
        yield server


@pytest.fixture()
def settings(error_page: LocalServer) -> Any:
    from headroom.platform.settings import Settings

    return Settings(HEADROOM_ENV="test", HEADROOM_SECRET_KEY="test-secret-key-" + "x" * 32,
                    HEADROOM_AWS_ENDPOINT_URL=error_page.url)


def test_an_unparsable_error_page_is_a_failed_check_not_a_500(
    client: Any, error_page: LocalServer, request: Any
) -> None:
    """HTML 200: ResponseParserError escaped as a 500 before; HTML 502: the page was echoed as the message."""
    owner = sign_up(client)
    created = owner.post("/api/v1/sources/aws", json={
        "name": "behind a proxy", "auth_kind": "static_keys", "regions": ["us-east-1"],
        "access_key_id": "AKIAIOSFODNN7EXAMPLE", "secret_access_key": "secret-never-shown"})
    assert created.status_code == 201, created.text
    response = owner.post(f"/api/v1/sources/aws/{created.json()['id']}/test")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["ok"] is False and body["missing"] == []
    assert [c["action"] for c in body["checks"]] == list(REQUIRED_ACTIONS)
    status = request.node.callspec.params["error_page"]
    # botocore's CBOR parser (CloudWatch) takes an HTML 200 for an empty answer; EC2's XML parser cannot read it.
    probed = body["checks"] if status == 502 else [c for c in body["checks"] if c["action"].startswith("ec2:")]
    assert len(probed) >= 3
    for check in probed:
        assert check["ok"] is False
        assert check["error_code"] == "unreadable_answer"
        assert "could not be read" in check["message"] and "not an AWS API answer" in check["message"]
        assert "DOCTYPE" not in check["message"]  # someone else's page is not echoed
        if status == 502 and check["action"].startswith("cloudwatch:"):  # EC2's parser error carries no status
            assert "(HTTP 502)" in check["message"]
    assert "ec2:DescribeInstances" in body["error"]
    assert error_page.hits, "the probes reached the local endpoint"
    assert "secret-never-shown" not in response.text
    health = owner.get(f"/api/v1/sources/aws/{created.json()['id']}").json()["health"]
    assert health["last_error"] and "could not be read" in health["last_error"]
