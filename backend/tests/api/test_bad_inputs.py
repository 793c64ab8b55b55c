"""Bad inputs answer 4xx naming the field and store nothing (never a 500, never a half-stored row): explicit null on
fields that can't be null, NUL characters, integers beyond the columns' ranges, year-1 metric windows, oversized
bodies and collections; and the built front end's source maps are not served."""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import sign_up

REPO = Path(__file__).resolve().parents[3]


def _names(error: dict[str, Any], field: str) -> bool:
    """The error names the field: for a person, its label in the message ("Name: cannot be null"); for a
    program, the field's path in the details. A message that spells the path itself also names it."""
    if field in error["message"]:
        return True
    details = error.get("details")
    items = details if isinstance(details, list) else [details] if isinstance(details, dict) else []
    return any(d.get("field") == field and (d.get("label") or field) in error["message"] for d in items)


def _error(response: Any, status: int, field: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert _names(error, field), error
    assert "Traceback" not in response.text and "AttributeError" not in response.text
    return dict(error)


@pytest.fixture()
def owner(client: Any) -> Any:
    return sign_up(client, org="Inputs Org")


@pytest.fixture()
def cluster(owner: Any) -> dict[str, Any]:
    response = owner.post("/api/v1/clusters", json={"name": "c1", "tikv_version": "v8.5.1", "tags": {"env": "prod"}})
    assert response.status_code == 201, response.text
    return dict(response.json())


# --- explicit null on fields that can't be null ----------------------------------------------------------------


@pytest.mark.parametrize("field", ["name", "tikv_version", "deployment_kind", "tags"])
def test_patch_cluster_with_null_is_422_naming_the_field(owner: Any, cluster: dict[str, Any], field: str) -> None:
    response = owner.patch(f"/api/v1/clusters/{cluster['id']}", json={field: None})
    error = _error(response, 422, field)
    assert error["code"] == "validation_error"
    assert error["details"][0]["field"] == field
    assert "cannot be null" in error["message"]
    after = owner.get(f"/api/v1/clusters/{cluster['id']}").json()
    assert {k: after[k] for k in ("name", "tikv_version", "deployment_kind", "tags")} == {
        "name": "c1", "tikv_version": "v8.5.1", "deployment_kind": "tiup", "tags": {"env": "prod"}}


def test_patch_cluster_omitted_fields_keep_their_values(owner: Any, cluster: dict[str, Any]) -> None:
    response = owner.patch(f"/api/v1/clusters/{cluster['id']}", json={"name": "c2"})
    assert response.status_code == 200, response.text
    assert response.json()["tags"] == {"env": "prod"} and response.json()["name"] == "c2"


@pytest.mark.parametrize("field", ["name", "regions", "secret_access_key"])
def test_patch_aws_connection_with_null_is_422(owner: Any, field: str) -> None:
    created = owner.post("/api/v1/sources/aws", json={"name": "aws1", "auth_kind": "static_keys",
                                                      "regions": ["eu-west-1"], "access_key_id": "AKIAAAAAAAAAAAAAAAAA",
                                                      "secret_access_key": "s3cret"}).json()
    response = owner.patch(f"/api/v1/sources/aws/{created['id']}", json={field: None})
    _error(response, 422, field)
    after = owner.get(f"/api/v1/sources/aws/{created['id']}").json()
    assert (after["name"], after["regions"], after["has_secret"]) == ("aws1", ["eu-west-1"], True)


@pytest.mark.parametrize("field", ["base_url", "name", "label_selector", "auth_kind", "secret"])
def test_patch_prometheus_source_with_null_is_422(owner: Any, field: str) -> None:
    created = owner.post("/api/v1/sources/prometheus", json={"name": "p1", "base_url": "http://127.0.0.1:9090",
                                                             "label_selector": 'job="tikv"'}).json()
    response = owner.patch(f"/api/v1/sources/prometheus/{created['id']}", json={field: None})
    _error(response, 422, field)
    after = owner.get(f"/api/v1/sources/prometheus/{created['id']}").json()
    assert (after["name"], after["base_url"], after["label_selector"]) == ("p1", "http://127.0.0.1:9090", 'job="tikv"')


def test_patch_prometheus_source_can_still_clear_its_cluster(owner: Any, cluster: dict[str, Any]) -> None:
    created = owner.post("/api/v1/sources/prometheus", json={"name": "p1", "base_url": "http://127.0.0.1:9090",
                                                             "cluster_id": cluster["id"]}).json()
    response = owner.patch(f"/api/v1/sources/prometheus/{created['id']}", json={"cluster_id": None})
    assert response.status_code == 200, response.text
    assert response.json()["cluster_id"] is None


# --- NUL characters --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("body", "field"), [
    ({"name": "a\x00b", "tikv_version": "v8.5.1"}, "name"),
    ({"name": "ok", "tikv_version": "v8.5.1", "tags": {"env": "pr\x00od"}}, "tags.env"),
    ({"name": "ok", "tikv_version": "v8.5.1", "tags": {"e\x00nv": "prod"}}, "tags.e\\u0000nv"),
])
def test_nul_in_a_cluster_body_is_422_naming_the_field(owner: Any, body: dict[str, Any], field: str) -> None:
    response = owner.post("/api/v1/clusters", json=body)
    error = _error(response, 422, field)
    assert error["code"] == "validation_error" and "NUL" in error["message"]
    assert owner.get("/api/v1/clusters").json()["total"] == 0


def test_nul_in_a_label_selector_is_422(owner: Any) -> None:
    response = owner.post("/api/v1/sources/prometheus", json={"name": "p", "base_url": "http://127.0.0.1:9090",
                                                              "label_selector": 'job="ti\x00kv"'})
    _error(response, 422, "label_selector")
    assert owner.get("/api/v1/sources/prometheus").json() == []


def test_nul_in_a_query_parameter_is_422_naming_it(owner: Any, cluster: dict[str, Any]) -> None:
    response = owner.get(f"/api/v1/clusters/{cluster['id']}/findings?rule=%00")
    error = _error(response, 422, "rule")
    assert error["details"][0]["field"] == "rule"


def test_nul_in_a_path_parameter_is_422(owner: Any) -> None:
    _error(owner.post("/api/v1/org/digest/verify/abc%00def"), 422, "token")


def test_a_non_ascii_verification_token_is_404_not_500(owner: Any) -> None:
    response = owner.post("/api/v1/org/digest/verify/r%F4%8B%81%BF%01.%C3%8Fy")
    assert response.status_code == 404, response.text
    assert response.json()["error"]["code"] == "not_found"


# --- integers beyond the columns' ranges ------------------------------------------------------------------------


def test_config_version_beyond_int32_is_422(owner: Any, cluster: dict[str, Any]) -> None:
    node = owner.post(f"/api/v1/clusters/{cluster['id']}/nodes", json={"store_address": "10.0.0.1:20160"}).json()
    url = f"/api/v1/clusters/{cluster['id']}/nodes/{node['id']}/config?version={2**31}"
    _error(owner.get(url), 422, "version")


def test_audit_log_before_id_beyond_int64_is_422(owner: Any) -> None:
    _error(owner.get(f"/api/v1/org/audit-log?before_id={2**63}"), 422, "before_id")


def test_node_store_id_beyond_int64_is_422_and_nothing_stored(owner: Any, cluster: dict[str, Any]) -> None:
    response = owner.post(f"/api/v1/clusters/{cluster['id']}/nodes",
                          json={"store_address": "10.0.0.1:20160", "store_id": 2**63})
    _error(response, 422, "store_id")
    assert owner.get(f"/api/v1/clusters/{cluster['id']}/nodes").json()["total"] == 0


def test_tikv_version_longer_than_its_column_is_422(owner: Any) -> None:
    response = owner.post("/api/v1/clusters", json={"name": "c", "tikv_version": "v1.2.3-" + "a" * 40})
    _error(response, 422, "tikv_version")
    assert owner.get("/api/v1/clusters").json()["total"] == 0


# --- year-1 (and other absurd) windows ---------------------------------------------------------------------------


@pytest.mark.parametrize("route", ["metrics", "metrics/overview", "snapshot"])
@pytest.mark.parametrize("param", ["start", "end"])
def test_year_one_window_is_422_naming_the_bound(owner: Any, cluster: dict[str, Any], route: str, param: str) -> None:
    response = owner.get(f"/api/v1/clusters/{cluster['id']}/{route}", params={param: "0001-01-01T00:00:00Z"})
    error = _error(response, 422, param)
    assert "2000-01-01" in error["message"]


def test_snooze_until_year_9999_is_422(owner: Any) -> None:
    response = owner.post(f"/api/v1/findings/{'0' * 8}-0000-4000-8000-{'0' * 12}/snooze",
                          json={"until": "9999-12-31T23:59:59Z"})
    _error(response, 422, "until")


# --- sizes: bodies and collections ---------------------------------------------------------------------------


def test_a_body_over_the_limit_is_413_and_nothing_stored(owner: Any, settings: Any) -> None:
    limit = settings.max_body_bytes
    body = json.dumps({"name": "big", "tikv_version": "v8.5.1", "tags": {"k": "x" * limit}})
    response = owner.post("/api/v1/clusters", content=body, headers={"content-type": "application/json"})
    error = _error(response, 413, "larger than")
    assert error["code"] == "payload_too_large" and error["details"] == {"limit_bytes": limit}
    assert owner.get("/api/v1/clusters").json()["total"] == 0


def test_a_streamed_body_over_the_limit_is_413(owner: Any, settings: Any) -> None:
    chunk = b" " * 65536

    def chunks() -> Iterator[bytes]:  # no Content-Length: the middleware counts what arrives
        yield b'{"name": "big", "tikv_version": "v8.5.1", "tags": {"k": "'
        for _ in range(settings.max_body_bytes // len(chunk) + 1):
            yield chunk
        yield b'"}}'

    response = owner.post("/api/v1/clusters", content=chunks(), headers={"content-type": "application/json"})
    error = _error(response, 413, "larger than")
    assert error["code"] == "payload_too_large"
    assert owner.get("/api/v1/clusters").json()["total"] == 0


# The operator manifest's limit counts characters (code points) as pydantic and JSON Schema do: one astral
# character (U+1F600) is one, whether the client sends its four UTF-8 bytes or the JSON escape of its UTF-16
# surrogate pair, "\ud83d\ude00" (RFC 8259, section 7). A generator that counts the pair as two characters
# takes a manifest just under the limit for one over it; the server must answer by code points.
MANIFEST_LIMIT = 512 * 1024  # OperatorManifest.manifest's max_length, as the OpenAPI document publishes it
ASTRAL = "\U0001F600"


def _operator_post(owner: Any, manifest: str, *, escaped: bool) -> Any:
    # a cluster that does not exist: past the body's validation, the route answers 404
    url = "/api/v1/clusters/00000000-0000-4000-8000-000000000000/patches/00000000-0000-4000-8000-000000000001/operator"
    body = json.dumps({"manifest": manifest}, ensure_ascii=escaped).encode("utf-8")
    assert (b"\\ud83d\\ude00" in body) is escaped
    return owner.post(url, content=body, headers={"content-type": "application/json"})


def test_the_operator_manifest_limit_counts_an_astral_character_once(owner: Any, settings: Any) -> None:
    assert owner.get("/api/v1/openapi.json").json()["components"]["schemas"]["OperatorManifest"]["properties"][
        "manifest"]["maxLength"] == MANIFEST_LIMIT
    pairs = 100_000  # 1.2 MB as escapes: within the body limit, so the field's own limit answers
    over = "a" * (MANIFEST_LIMIT + 1 - pairs) + ASTRAL * pairs
    under = "a" * (MANIFEST_LIMIT - pairs) + ASTRAL * pairs
    assert len(over) == MANIFEST_LIMIT + 1 and len(under) == MANIFEST_LIMIT
    assert len(under.encode("utf-16-le")) // 2 > MANIFEST_LIMIT  # over the limit in UTF-16 units
    for escaped in (False, True):
        error = _error(_operator_post(owner, over, escaped=escaped), 422, "manifest")
        assert error["code"] == "validation_error" and "524288" in error["message"].replace(",", ""), error
        answered = _operator_post(owner, under, escaped=escaped)
        assert answered.status_code == 404, answered.text[:500]
    # all astral: as raw UTF-8 (2 MB) the field's limit answers; as escapes (6.3 MB) the body's limit does first
    _error(_operator_post(owner, ASTRAL * (MANIFEST_LIMIT + 1), escaped=False), 422, "manifest")
    assert settings.max_body_bytes < 12 * (MANIFEST_LIMIT + 1)
    _error(_operator_post(owner, ASTRAL * (MANIFEST_LIMIT + 1), escaped=True), 413, "larger than")
    assert _operator_post(owner, ASTRAL * MANIFEST_LIMIT, escaped=False).status_code == 404


def test_too_many_tags_are_422_naming_tags(owner: Any) -> None:
    tags = {f"k{i}": "v" for i in range(200_000)}
    response = owner.post("/api/v1/clusters", json={"name": "c", "tikv_version": "v8.5.1", "tags": tags})
    _error(response, 422, "tags")
    assert owner.get("/api/v1/clusters").json()["total"] == 0


def test_fifty_tags_are_fine(owner: Any) -> None:
    tags = {f"k{i}": "v" * 256 for i in range(50)}
    response = owner.post("/api/v1/clusters", json={"name": "c", "tikv_version": "v8.5.1", "tags": tags})
    assert response.status_code == 201, response.text


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_served_app_refuses_a_100_mb_body_before_reading_it(app: Any) -> None:
    """Through uvicorn, as `headroom serve` runs it: the Content-Length alone gets the 413."""
    import uvicorn

    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        for _ in range(100):
            if server.started:
                break
            time.sleep(0.05)
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(b"POST /api/v1/clusters HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 100000000\r\n\r\n{")
            reply = b""
            while b"\r\n\r\n" not in reply or not reply.rstrip().endswith(b"}"):
                data = sock.recv(65536)
                if not data:
                    break
                reply += data
        head, _, body = reply.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 413"), head
        assert json.loads(body)["error"]["code"] == "payload_too_large"
        # and the server still answers
        assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=10).status_code == 200
    finally:
        server.should_exit = True
        thread.join(timeout=10)


# --- the front end's source maps ------------------------------------------------------------------------------


def test_source_maps_are_not_served(app_ctx: Any, tmp_path: Path) -> None:
    from fastapi.testclient import TestClient
    from headroom.api.app import create_app

    (tmp_path / "assets").mkdir()
    (tmp_path / "index.html").write_text("<html>index</html>")
    (tmp_path / "assets" / "index-abc.js").write_text("console.log(1)")
    (tmp_path / "assets" / "index-abc.js.map").write_text('{"sources": ["src/secret.ts"]}')
    with TestClient(create_app(app_ctx, frontend_dist=tmp_path)) as web:
        assert web.get("/assets/index-abc.js").text == "console.log(1)"
        response = web.get("/assets/index-abc.js.map")
        assert response.status_code == 404
        assert "secret.ts" not in response.text


def test_production_build_makes_no_source_map_and_nginx_refuses_them() -> None:
    vite = (REPO / "frontend" / "vite.config.ts").read_text()
    assert re.search(r"sourcemap:\s*false", vite), "frontend/vite.config.ts must build without source maps"
    nginx = (REPO / "frontend" / "nginx.conf").read_text()
    # (the block also includes the security headers, docs/security-headers.md)
    assert re.search(r"location ~\*? \\\.map\$ \{[^}]*\breturn 404;", nginx), "nginx.conf must refuse *.map"


# --- HTTP and JSON conformance --------------------------------------------------------------------------------


@pytest.mark.parametrize(("method", "path", "allow"), [
    ("PUT", "/api/v1/clusters", "GET, POST"),  # two routes (GET and POST) share the path: both are named
    ("DELETE", "/api/v1/auth/login", "POST"),
    ("POST", "/healthz", "GET"),
])
def test_a_405_names_every_method_the_resource_answers(client: Any, method: str, path: str, allow: str) -> None:
    response = client.request(method, path)
    assert response.status_code == 405, response.text
    assert response.headers["Allow"] == allow
    assert response.json()["error"]["code"] == "method_not_allowed"


@pytest.mark.parametrize("value", [0, 1, "false", "yes"])
def test_a_boolean_field_takes_only_true_or_false(owner: Any, value: Any) -> None:
    response = owner.patch("/api/v1/org/digest", json={"include_viewers": value})
    error = _error(response, 422, "include_viewers")
    assert "true or false" in error["message"]
    assert owner.patch("/api/v1/org/digest", json={"include_viewers": True}).status_code == 200


@pytest.mark.parametrize(("expires_at", "words"), [
    ("2020-01-01T00:00:00Z", "in the future"),
    (0.0, "not a number"),
    (1893456000, "not a number"),  # 2030 as epoch seconds: a number still is not what the API documents
    ("2030-01-01T00:00:00", "timezone"),  # naive: which 00:00?
])
def test_a_token_expiry_is_an_aware_time_in_the_future(owner: Any, expires_at: Any, words: str) -> None:
    response = owner.post("/api/v1/org/tokens", json={"name": "ci", "expires_at": expires_at})
    error = _error(response, 422, "expires_at")
    assert words in error["message"], error
    assert owner.get("/api/v1/org/tokens").json() == [] or all(
        t["name"] != "ci" for t in owner.get("/api/v1/org/tokens").json())
    created = owner.post("/api/v1/org/tokens", json={"name": "ci", "expires_at": "2030-01-01T00:00:00+02:00"})
    assert created.status_code == 201, created.text


def test_a_name_is_as_long_as_the_characters_a_person_sees(owner: Any) -> None:
    # 200 thumbs-up with a skin tone: 200 characters on the page, 400 code points; 201 are one too many
    thumbs = "\U0001F44D\U0001F3FD"
    made = owner.post("/api/v1/clusters", json={"name": thumbs * 200, "tikv_version": "v8.5.1"})
    assert made.status_code == 201, made.text
    assert made.json()["name"] == thumbs * 200
    error = _error(owner.post("/api/v1/clusters", json={"name": thumbs * 201, "tikv_version": "v8.5.1"}), 422, "name")
    assert "at most 200 characters (it has 201)" in error["message"]
    # "é" typed as e + U+0301 is stored composed (NFC): one character, one code point
    accented = owner.post("/api/v1/clusters", json={"name": "pre\u0301prod", "tikv_version": "v8.5.1"})
    assert accented.status_code == 201 and accented.json()["name"] == "pr\u00e9prod"


@pytest.mark.parametrize("name", ["prod\u0002", "line\nbreak", "tab\there", "next\u0085line"])
def test_a_name_refuses_control_characters(owner: Any, name: str) -> None:
    error = _error(owner.post("/api/v1/clusters", json={"name": name, "tikv_version": "v8.5.1"}), 422, "name")
    assert "control characters" in error["message"]


def test_a_number_field_refuses_true_and_false(owner: Any, cluster: dict[str, Any]) -> None:
    # JSON true is not a number: lax parsing read `"days": true` as a 1-day history import (schemathesis found it)
    source = owner.post("/api/v1/sources/aws", json={
        "name": "bf", "auth_kind": "static_keys", "regions": ["us-east-1"],
        "access_key_id": "AKIAAAAAAAAAAAAAAAAA", "secret_access_key": "testing"}).json()
    error = _error(owner.post(f"/api/v1/sources/aws/{source['id']}/backfill", json={"days": True}), 422, "days")
    assert "must be a number" in error["message"]
