"""A bounded schemathesis run over the OpenAPI document, against the real app and real PostgreSQL.

Every operation gets valid (positive) and invalid (negative) requests generated from its schema, sent as the owner
of an organisation seeded with one of everything (cluster with nodes, series, a finding and a patch, AWS and
Prometheus sources, tokens, an invitation, a member), with those real ids in the path. Each response must be:
not a 5xx, a status code the document declares for the operation, and a body that matches the declared schema.

Deterministic and bounded: hypothesis is derandomized (same examples every run, no example database) and makes
`MAX_EXAMPLES` examples per operation and generation mode (about 2 minutes in all on 2 cores). Every request runs inside a savepoint rolled back
afterwards, so every example sees the same seeded state and a DELETE cannot starve the operations after it.

Nothing is excluded: logout acts on a bearer token's caller (no session to end); the AWS test goes to the moto
server (HEADROOM_AWS_ENDPOINT_URL), the Prometheus test to the test Prometheus, the config refresh to a closed
port on 127.0.0.1.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import os
import socket
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import join_with_role, sign_up

schemathesis = pytest.importorskip("schemathesis")

from hypothesis import HealthCheck, Phase, given  # noqa: E402
from hypothesis import settings as hypothesis_settings  # noqa: E402
from hypothesis.errors import Unsatisfiable  # noqa: E402
from schemathesis import GenerationMode  # noqa: E402
from schemathesis.core.failures import FailureGroup  # noqa: E402
from schemathesis.specs.openapi.checks import (  # noqa: E402
    allow_header_conformance,
    content_type_conformance,
    ignored_auth,
    missing_required_header,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from xdist_workers import redis_db  # noqa: E402

# Per operation and mode. 25 keeps the run near 2 minutes on 2 cores; set HEADROOM_SCHEMATHESIS_EXAMPLES higher (and
# HEADROOM_SCHEMATHESIS_RANDOM=1 for new examples each run) to explore further by hand.
MAX_EXAMPLES = int(os.environ.get("HEADROOM_SCHEMATHESIS_EXAMPLES", "25"))
DERANDOMIZE = os.environ.get("HEADROOM_SCHEMATHESIS_RANDOM", "") != "1"
# No 500 (checked below), a documented status code (so no undocumented 5xx either), the documented content type,
# a body and headers matching the documented schema, a request that breaks the schema refused (4xx), a missing
# required header refused, a 405's Allow naming the methods, and no operation answering without its credentials.
# (A documented 503, e.g. a node's unreachable status port, is fine.) Of schemathesis's `--checks all`, these are
# left out: positive_data_acceptance, because a request valid by the schema may still be refused with 422 by design
# (an unknown TiKV key, a finding of another cluster: rules no JSON Schema states); use_after_free and
# ensure_resource_availability, which need its stateful runner (sequences of calls), not one request.
CHECKS = [status_code_conformance, content_type_conformance, response_schema_conformance, negative_data_rejection,
          response_headers_conformance, missing_required_header, allow_header_conformance, ignored_auth]
SECRET_KEY = "schemathesis-secret-key-" + "x" * 32


def _operation_labels() -> list[str]:
    """Every operation of the OpenAPI document, as "METHOD /path".

    Read from the committed document, which platform/test_settings_and_schema.py checks is the app's, and
    test_every_operation_of_the_app_is_explored below checks against the app this module serves: building an app
    only to list them cost each xdist worker about 0.8 s of CPU at collection."""
    paths = json.loads((Path(__file__).resolve().parents[3] / "frontend" / "openapi.json").read_text())["paths"]
    return sorted(f"{method.upper()} {path}" for path, ops in paths.items() for method in ops)


LABELS = _operation_labels()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Seeded:
    def __init__(self, app: Any, connection: Any, token: str, ids: dict[str, str]) -> None:
        self.app = app
        self.connection = connection
        self.token = token
        self.ids = ids


@pytest.fixture(scope="module")
def seeded(engine: Any, redis_url: str, tmp_path_factory: Any) -> Iterator[Seeded]:
    """An org with one of everything, in a transaction rolled back when the module ends."""
    from fastapi.testclient import TestClient
    from headroom.api.app import create_app
    from headroom.api.deps import AppContext
    from headroom.clusters.models import Cluster
    from headroom.findings import service as findings
    from headroom.findings.models import FindingRecord
    from headroom.platform.mail import OutboxMailer
    from headroom.platform.ratelimit import MemoryRateLimiter
    from headroom.platform.security import SecretBox
    from headroom.platform.settings import Settings
    from sqlalchemy.orm import sessionmaker
    from tenancy_cases_advice import _finding
    from tenancy_cases_metrics import seed as seed_metrics

    connection = engine.connect()
    outer = connection.begin()
    sessions = sessionmaker(bind=connection, join_transaction_mode="create_savepoint", expire_on_commit=False)
    settings = Settings(HEADROOM_ENV="test", HEADROOM_SECRET_KEY=SECRET_KEY,
                        REDIS_URL=redis_db(redis_url, 5),
                        HEADROOM_AWS_ENDPOINT_URL=os.environ.get("HEADROOM_TEST_AWS_ENDPOINT", "http://127.0.0.1:9"))
    now = dt.datetime(2026, 11, 2, 12, 0, tzinfo=dt.UTC)
    ctx = AppContext(settings=settings, sessions=sessions, rate_limiter=MemoryRateLimiter(),
                     secret_box=SecretBox(settings.secret_key), clock=lambda: now,
                     mailer=OutboxMailer(tmp_path_factory.mktemp("outbox")))
    app = create_app(ctx)
    clients = [TestClient(app, raise_server_exceptions=False) for _ in range(2)]
    try:
        owner = sign_up(clients[0], org="Schemathesis Org")
        cluster = owner.post("/api/v1/clusters", json={"name": "st-cluster", "tikv_version": "v8.5.1",
                                                       "tags": {"env": "test"}}).json()
        ids: dict[str, str] = {"cluster_id": cluster["id"]}
        seed_metrics(owner, lambda: None, ids)
        ids["connection_id"] = owner.post(
            "/api/v1/sources/aws",
            json={"name": "st-aws", "auth_kind": "static_keys", "regions": ["us-east-1"],
                  "access_key_id": "AKIAAAAAAAAAAAAAAAAA", "secret_access_key": "testing"},
        ).json()["id"]
        ids["source_id"] = owner.post(
            "/api/v1/sources/prometheus",
            json={"name": "st-prom", "base_url": os.environ.get("HEADROOM_TEST_PROMETHEUS_URL", "http://127.0.0.1:9"),
                  "cluster_id": cluster["id"], "label_selector": 'job="tikv"'},
        ).json()["id"]
        node = owner.post(f"/api/v1/clusters/{cluster['id']}/nodes",
                          json={"store_address": "127.0.0.1:20160", "status_address": f"127.0.0.1:{_closed_port()}"})
        assert node.status_code == 201, node.text
        ids["node_id"] = node.json()["id"]
        config = owner.post(f"/api/v1/clusters/{cluster['id']}/nodes/{ids['node_id']}/config",
                            json={"format": "toml", "content": "[storage]\nreserve-space = \"5GB\"\n"})
        assert config.status_code == 201, config.text
        with sessions() as db:
            row = db.get_one(Cluster, uuid.UUID(cluster["id"]))
            findings.record_findings(db, row, [_finding(row.name)], now=now)
            db.commit()
            ids["finding_id"] = str(db.query(FindingRecord.id).filter(FindingRecord.cluster_id == row.id).scalar())
        patch = owner.post(f"/api/v1/clusters/{cluster['id']}/patches", json={"finding_ids": [ids["finding_id"]]})
        assert patch.status_code == 201, patch.text
        ids["patch_id"] = patch.json()["id"]
        api_token = owner.post("/api/v1/org/tokens", json={"name": "st-owner", "role": "owner"}).json()["token"]
        ids["token_id"] = owner.post("/api/v1/org/tokens", json={"name": "st-other"}).json()["id"]
        ids["invitation_id"] = owner.post("/api/v1/org/invitations", json={"email": "st-invitee@example.com"}).json()["id"]
        ids["user_id"] = join_with_role(owner, clients[1], "viewer").session["user"]["id"]
        yield Seeded(app, connection, api_token, ids)
    finally:
        for c in clients:
            c.close()
        outer.rollback()
        connection.close()


@pytest.fixture(scope="module")
def schema(seeded: Seeded) -> Any:
    return schemathesis.openapi.from_asgi("/api/v1/openapi.json", seeded.app)


def _params(label: str) -> Any:
    return pytest.param(label, id=label)


def _has_surrogate_pair(value: Any) -> bool:
    """Whether a generated body holds a UTF-16 surrogate pair as two Python code points (hypothesis makes them)."""
    if isinstance(value, str):
        return any(0xD800 <= ord(a) <= 0xDBFF and 0xDC00 <= ord(b) <= 0xDFFF for a, b in itertools.pairwise(value))
    if isinstance(value, dict):
        return any(_has_surrogate_pair(k) or _has_surrogate_pair(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_surrogate_pair(v) for v in value)
    return False


def _explore(operation: Any, mode: Any, seeded: Seeded, path_parameters: dict[str, str],
             failures: dict[str, str]) -> None:
    """Send MAX_EXAMPLES generated requests of one mode; record the first request of each kind of failure."""
    headers = {"Authorization": f"Bearer {seeded.token}"}
    strategy = operation.as_strategy(generation_mode=mode, path_parameters=path_parameters)

    @hypothesis_settings(max_examples=MAX_EXAMPLES, derandomize=DERANDOMIZE, database=None, deadline=None,
                         phases=[Phase.explicit, Phase.generate], print_blob=False,
                         suppress_health_check=list(HealthCheck))
    @given(case=strategy)
    def run(case: Any) -> None:
        savepoint = seeded.connection.begin_nested()
        try:
            # The AWS connection test makes several calls to the moto server; on a loaded 2-core machine they
            # took over schemathesis's default 10 s. This run checks schemas, not latency.
            response = case.call(headers=headers, timeout=60)
            how = f"{mode.value}: {case.as_curl_command(headers=headers)} -> {response.status_code} {response.content[:300].decode(errors='replace')}"
            if response.status_code == 500:
                failures.setdefault("HTTP 500", how)
            try:
                case.validate_response(response, checks=CHECKS, headers=headers)
            except FailureGroup as group:
                for failure in group.exceptions:
                    if failure.title.startswith("Schema-violating request accepted") and _has_surrogate_pair(case.body):
                        # Python holds "\udb6f\uddd9" as two code points, JSON (RFC 8259 section 7) as one
                        # character: the server counts the string as JSON defines it, under maxLength.
                        continue
                    failures.setdefault(f"{failure.title}: {getattr(failure, 'message', '')}".strip()[:300], how)
        finally:
            savepoint.rollback()

    try:
        run()
    except Unsatisfiable:
        # Negative mode has nothing to make invalid (no parameters, no body): positive mode covered it.
        assert mode is GenerationMode.NEGATIVE, f"{operation.label}: no valid request could be generated"


@pytest.mark.parametrize("label", [_params(label) for label in LABELS])
def test_operation_conforms_to_its_schema(label: str, seeded: Seeded, schema: Any) -> None:
    method, path = label.split(" ", 1)
    operation = schema[path][method]
    path_parameters = {p.name: seeded.ids[p.name] for p in operation.path_parameters if p.name in seeded.ids}
    failures: dict[str, str] = {}  # first request of each kind of failure
    for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
        _explore(operation, mode, seeded, path_parameters, failures)
    assert not failures, "\n\n".join(f"{title}\n    {how}" for title, how in failures.items())


def test_every_operation_of_the_app_is_explored(seeded: Seeded) -> None:
    served = sorted(f"{method.upper()} {path}" for path, ops in seeded.app.openapi()["paths"].items() for method in ops)
    assert served == LABELS
