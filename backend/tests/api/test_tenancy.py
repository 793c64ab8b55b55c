"""Tenancy: walk every route in the OpenAPI schema as a user of another organisation.

Routes that address a resource by id must answer 404 for another org's id (403 is allowed only for org-level
admin routes the caller's role can't use), and no response to the other org may contain this org's data.
A route added to the API without a case here fails `test_every_route_is_walked`.

Extending: a domain adds a module `tenancy_cases_<domain>.py` beside this file with `BODIES` (valid bodies for its
writes) and optionally `seed(owner, make_client) -> (ids, never_seen)`, which creates that domain's resources in
org A and returns the path-parameter ids and the strings org B must never see.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from pathlib import Path
from typing import Any

import pytest
from helpers import join_with_role, sign_up

# Routes outside tenancy: they act on the caller's own session or are probes.
NOT_TENANT_SCOPED = {
    ("POST", "/api/v1/auth/signup"),
    ("POST", "/api/v1/auth/signup/confirm"),
    ("POST", "/api/v1/auth/login"),
    ("POST", "/api/v1/auth/logout"),
    ("GET", "/api/v1/auth/me"),
    ("POST", "/api/v1/auth/accept-invitation"),
    # no log-in: the signed token in the query names the member and org (tests/digest/test_unsubscribe.py)
    ("POST", "/api/v1/digest/unsubscribe"),
    ("GET", "/healthz"),
    ("GET", "/readyz"),
}

# A valid body for each write, so validation can't answer before the tenancy check does.
BODIES: dict[tuple[str, str], Any] = {
    ("PATCH", "/api/v1/clusters/{cluster_id}"): {"name": "stolen"},
    ("PATCH", "/api/v1/org/members/{user_id}"): {"role": "viewer"},
    ("PATCH", "/api/v1/sources/aws/{connection_id}"): {"name": "stolen"},
    ("PATCH", "/api/v1/sources/prometheus/{source_id}"): {"name": "stolen"},
    ("POST", "/api/v1/clusters"): {"name": "b-cluster", "tikv_version": "v8.5.1"},
    ("POST", "/api/v1/org/invitations"): {"email": "b-invitee@example.com", "role": "viewer"},
    ("POST", "/api/v1/org/tokens"): {"name": "b-token"},
    ("POST", "/api/v1/sources/aws"): {"name": "b-aws", "auth_kind": "default_chain", "regions": ["us-east-1"]},
    ("POST", "/api/v1/sources/prometheus"): {"name": "b-prom", "base_url": "http://prometheus.b.internal:9090"},
    ("PATCH", "/api/v1/org"): {"name": "B renamed"},
    ("PUT", "/api/v1/org/recommendation-preferences"): {"lookback_days": 93},
    ("PUT", "/api/v1/clusters/{cluster_id}/recommendation-preferences"): {"lookback_days": 93},
}


def _extension_modules() -> list[Any]:
    here = Path(__file__).parent
    return [
        importlib.import_module(info.name)
        for info in pkgutil.iter_modules([str(here)])
        if info.name.startswith("tenancy_cases_")
    ]


for _module in _extension_modules():
    BODIES.update(getattr(_module, "BODIES", {}))


def _routes(app: Any) -> list[tuple[str, str]]:
    schema = app.openapi()
    return sorted(
        (method.upper(), path)
        for path, ops in schema["paths"].items()
        for method in ops
        if method in {"get", "post", "put", "patch", "delete"}
    )


@pytest.fixture()
def org_a(client: Any, make_client: Any) -> dict[str, Any]:
    """Org A with one of everything, and the ids and secrets B must never see."""
    owner = sign_up(client, org="Tenant A")
    cluster = owner.post("/api/v1/clusters", json={"name": "a-secret-cluster", "tikv_version": "v8.5.1"}).json()
    aws = owner.post(
        "/api/v1/sources/aws",
        json={"name": "a-aws", "auth_kind": "static_keys", "regions": ["eu-west-1"],
              "access_key_id": "AKIAAAAAAAAAAAAAAAAA", "secret_access_key": "a-very-secret-key"},
    ).json()
    prom = owner.post(
        "/api/v1/sources/prometheus",
        json={"name": "a-prom", "base_url": "http://prom.a.internal:9090", "auth_kind": "bearer",
              "secret": "a-bearer-secret", "cluster_id": cluster["id"], "label_selector": 'tidb_cluster="a"'},
    ).json()
    token = owner.post("/api/v1/org/tokens", json={"name": "a-token"}).json()
    invitation = owner.post("/api/v1/org/invitations", json={"email": "a-invitee@example.com"}).json()
    member = join_with_role(owner, make_client(), "viewer")
    extra_ids: dict[str, str] = {}
    extra_never_seen: list[str] = []
    for module in _extension_modules():
        seed = getattr(module, "seed", None)
        if seed is not None:
            ids, never_seen = seed(owner, make_client, {"cluster_id": cluster["id"]})
            extra_ids.update(ids)
            extra_never_seen.extend(never_seen)
    return {
        "ids": {
            **extra_ids,
            "cluster_id": cluster["id"],
            "connection_id": aws["id"],
            "source_id": prom["id"],
            "token_id": token["id"],
            "invitation_id": invitation["id"],
            "user_id": member.session["user"]["id"],
        },
        "never_seen": [cluster["id"], "a-secret-cluster", aws["id"], prom["id"], token["id"], invitation["id"],
                       member.session["user"]["id"], "a-very-secret-key", "a-bearer-secret", "Tenant A",
                       owner.session["organization"]["id"], "a-invitee@example.com", token["token"],
                       *extra_never_seen],
    }


def test_every_route_is_walked(app: Any) -> None:
    unknown = []
    for method, path in _routes(app):
        if (method, path) in NOT_TENANT_SCOPED:
            continue
        if method in {"POST", "PATCH", "PUT"} and (method, path) not in BODIES:
            unknown.append(f"{method} {path}")
    assert unknown == [], f"add a tenancy case for: {unknown}"


def test_another_org_sees_nothing_of_this_org(app: Any, org_a: dict[str, Any], make_client: Any) -> None:
    b = sign_up(make_client(), org="Tenant B")
    checked = 0
    for method, path in _routes(app):
        if (method, path) in NOT_TENANT_SCOPED:
            continue
        url = path
        for name, value in org_a["ids"].items():
            url = url.replace("{" + name + "}", value)
        assert "{" not in url, f"no id of org A for {path}"
        response = b.request(method, url, json=BODIES.get((method, path)))
        body = response.text
        leaked = [s for s in org_a["never_seen"] if s in body]
        assert leaked == [], f"{method} {path} leaked {leaked}: {body[:300]}"
        if url != path:  # addressed org A's resource by id
            assert response.status_code == 404, f"{method} {path} -> {response.status_code} {body[:200]}"
            assert json.loads(body)["error"]["code"] == "not_found"
        else:
            assert response.status_code in (200, 201, 204), f"{method} {path} -> {response.status_code} {body[:200]}"
        checked += 1
    assert checked >= 15


def test_org_a_resources_survive_the_walk(app: Any, org_a: dict[str, Any], client: Any, make_client: Any) -> None:
    b = sign_up(make_client(), org="Tenant B")
    for method, path in _routes(app):
        if method == "DELETE" and "{" in path:
            url = path
            for name, value in org_a["ids"].items():
                url = url.replace("{" + name + "}", value)
            b.request(method, url)
    # client is still signed in as A's owner
    a_clusters = client.get("/api/v1/clusters").json()
    assert [c["name"] for c in a_clusters["items"]] == ["a-secret-cluster"]
    assert len(client.get("/api/v1/sources/aws").json()) == 1
    assert len(client.get("/api/v1/org/members").json()) == 2
