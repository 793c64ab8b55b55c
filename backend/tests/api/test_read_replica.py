"""The dashboard's reads on a real PostgreSQL streaming replica (DATABASE_REPLICA_URL, docs/operations.md "Read
replica"): a replica made with pg_basebackup from the test PostgreSQL and started as a hot standby. Where a read ran
is seen in what it returns (a paused replica does not have the newest rows) and in headroom_db_reads_total.

The requests here really commit (a rolled-back test transaction never reaches the replica): each test's
organisations are deleted at its end.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from headroom.accounts.models import User
from headroom.api.app import build_context, create_app
from headroom.api.deps import ReadDB
from headroom.findings import service as findings_service
from headroom.platform import replica as replica_routing
from headroom.platform import telemetry
from headroom.platform.db import session_scope
from headroom.platform.ratelimit import MemoryRateLimiter
from headroom.platform.settings import Settings
from headroom.domain.snapshot.scenario import load_scenario
from headroom.sources.demo import service as demo
from headroom.timeseries import repository as ts
from dead_redis import silent_server
from helpers import Actor, sign_up
from pg_tools import as_postgres, free_port, pg_bin
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import create_engine, select, text
from sqlalchemy.engine import make_url
from xdist_workers import redis_db

METRICS_TOKEN = "replica-metrics-" + "t" * 24
# The settings a standby must have at least the primary's values of (PostgreSQL docs, "Hot Standby": "the
# following parameters must be set to the same or higher values on the standby").
STANDBY_MINIMUMS = (
    "max_connections",
    "max_worker_processes",
    "max_wal_senders",
    "max_prepared_transactions",
    "max_locks_per_transaction",
)


# --- the streaming replica --------------------------------------------------------------------------------------


@dataclass
class StreamingReplica:
    """A hot standby of the test PostgreSQL, streaming from it."""

    url: str
    primary_url: str
    data: Path
    port: int
    options: str
    started_in_seconds: float

    def _pg_ctl(self, *args: str) -> None:
        subprocess.run(
            as_postgres([str(pg_bin() / "pg_ctl"), "-D", str(self.data), *args]),
            check=True,
            capture_output=True,
            timeout=120,
        )

    def start(self) -> None:
        self._pg_ctl(
            "-l", str(self.data.parent / "postgres.log"), "-w", "-t", "60", "-o", self.options, "start"
        )

    def stop(self) -> None:
        self._pg_ctl("-m", "fast", "-w", "stop")

    def execute(self, sql: str) -> Any:
        engine = create_engine(self.url, isolation_level="AUTOCOMMIT")
        try:
            with engine.connect() as conn:
                return conn.execute(text(sql)).scalar()
        finally:
            engine.dispose()

    def pause(self) -> None:
        self.execute("SELECT pg_wal_replay_pause()")
        deadline = time.monotonic() + 30
        while self.execute("SELECT pg_get_wal_replay_pause_state()") != "paused":
            assert time.monotonic() < deadline, "replay did not pause"
            time.sleep(0.05)

    def resume(self) -> None:
        self.execute("SELECT pg_wal_replay_resume()")

    def catch_up(self) -> None:
        """Wait until the replica has replayed everything the primary has written so far.

        A transaction that takes an id is committed after reading the primary's insert position: the insert
        position can lie past the last record (a WAL page's header, when that record ended on the page's
        boundary), which a replica reaches only by replaying a record written after it."""
        engine = create_engine(self.primary_url, isolation_level="AUTOCOMMIT")
        try:
            with engine.connect() as conn:
                target = int(
                    conn.execute(text("SELECT pg_current_wal_insert_lsn() - '0/0'::pg_lsn")).scalar_one()
                )
                conn.execute(text("SELECT pg_current_xact_id()"))
        finally:
            engine.dispose()
        deadline = time.monotonic() + 60
        while int(self.execute("SELECT pg_last_wal_replay_lsn() - '0/0'::pg_lsn")) < target:
            assert time.monotonic() < deadline, "the replica did not catch up"
            time.sleep(0.05)


@pytest.fixture(scope="module")
def streaming_replica(database_url: str) -> Iterator[StreamingReplica]:
    """pg_basebackup of the test PostgreSQL (-R: it writes standby.signal and primary_conninfo), started as a hot
    standby on a free 127.0.0.1 port; stopped and removed at the end of the module."""
    primary = make_url(database_url)
    engine = create_engine(database_url)
    with engine.connect() as conn:
        minimums = {name: conn.execute(text(f"SHOW {name}")).scalar_one() for name in STANDBY_MINIMUMS}
    engine.dispose()
    root = Path(tempfile.mkdtemp(prefix="headroom-replica-"))
    data = root / "data"
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
    port = free_port()
    settings = " ".join(f"-c {name}={value}" for name, value in minimums.items())
    options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c hot_standby=on -c fsync=off {settings}"
    started = time.monotonic()
    subprocess.run(
        as_postgres(
            [
                str(pg_bin() / "pg_basebackup"),
                "-D",
                str(data),
                "-R",
                "-X",
                "stream",
                "-c",
                "fast",
                "-h",
                primary.host or "127.0.0.1",
                "-p",
                str(primary.port),
                "-U",
                primary.username or "postgres",
            ]
        ),
        check=True,
        capture_output=True,
        timeout=300,
    )
    url = primary.set(port=port).render_as_string(hide_password=False)
    replica = StreamingReplica(
        url=url, primary_url=database_url, data=data, port=port, options=options, started_in_seconds=0.0
    )
    replica.start()
    replica.started_in_seconds = time.monotonic() - started
    try:
        assert replica.execute("SELECT pg_is_in_recovery()") is True
        yield replica
    finally:
        subprocess.run(
            as_postgres([str(pg_bin() / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]),
            capture_output=True,
            check=False,
            timeout=120,
        )
        shutil.rmtree(root, ignore_errors=True)


# --- apps whose requests commit -------------------------------------------------------------------------------


@dataclass
class Deployment:
    """An API process built as `headroom serve` builds it (api.app.build_context), and the organisations made."""

    ctx: Any
    app: Any
    emails: list[str]

    def client(self) -> TestClient:
        return TestClient(self.app, raise_server_exceptions=False)

    def sign_up(self) -> Actor:
        email = f"replica-{uuid.uuid4().hex[:10]}@example.com"
        self.emails.append(email)
        return sign_up(self.client(), email=email)


@pytest.fixture()
def deploy(database_url: str, redis_url: str, tmp_path: Path) -> Iterator[Any]:
    """deploy(**settings) -> a Deployment with these settings over the test PostgreSQL and Redis."""
    made: list[Deployment] = []

    def _deploy(**overrides: Any) -> Deployment:
        values = {
            "HEADROOM_ENV": "test",
            "HEADROOM_SECRET_KEY": "test-secret-key-" + "x" * 32,
            # a Redis database no worker reads (as the other API tests' broker)
            "REDIS_URL": redis_db(redis_url, 5),
            "HEADROOM_DATA_DIR": str(tmp_path),
            "HEADROOM_METRICS_TOKEN": METRICS_TOKEN,
            **overrides,
        }
        ctx = build_context(Settings(**values), database_url)
        # Sign-ups count against a per-IP limit kept in Redis across runs; this module's are not what it tests.
        ctx.rate_limiter = MemoryRateLimiter()
        deployment = Deployment(ctx, create_app(ctx), made[0].emails if made else [])
        made.append(deployment)
        return deployment

    yield _deploy
    emails = made[0].emails if made else []
    with session_scope(database_url) as db:
        for email in emails:
            user = db.scalar(select(User).where(User.email == email))
            if user is not None:
                db.execute(
                    text(
                        "DELETE FROM organizations WHERE id IN "
                        "(SELECT org_id FROM memberships WHERE user_id = :u)"
                    ),
                    {"u": user.id},
                )
                db.delete(user)
    for deployment in made:
        if deployment.ctx.replica is not None:
            deployment.ctx.replica.dispose()


def reads(target: str, reason: str) -> float:
    value = telemetry.PROCESS_REGISTRY.get_sample_value(
        "headroom_db_reads_total", {"target": target, "reason": reason}
    )
    return value or 0.0


def cluster_names(actor: Actor) -> set[str]:
    response = actor.get("/api/v1/clusters")
    assert response.status_code == 200, response.text
    return {c["name"] for c in response.json()["items"]}


def insert_cluster_on_the_primary(database_url: str, org_id: str, name: str) -> None:
    with session_scope(database_url) as db:
        db.execute(
            text(
                "INSERT INTO clusters (id, org_id, name, tikv_version, deployment_kind, tags, is_demo) "
                "VALUES (:id, :org, :name, '7.5.0', 'tiup', '{}'::jsonb, false)"
            ),
            {"id": uuid.uuid4(), "org": org_id, "name": name},
        )


def scrape(deployment: Deployment) -> dict[str, float]:
    response = deployment.client().get("/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
    assert response.status_code == 200, response.text
    return {
        s.name: s.value
        for f in text_string_to_metric_families(response.text)
        for s in f.samples
        if not s.labels
    }


# --- routing --------------------------------------------------------------------------------------------------


def test_an_org_reads_its_own_writes_while_other_orgs_read_the_paused_replica(
    streaming_replica: StreamingReplica, deploy: Any, database_url: str
) -> None:
    api = deploy(DATABASE_REPLICA_URL=streaming_replica.url, HEADROOM_REPLICA_MAX_LAG_SECONDS="60")
    other_process = deploy(DATABASE_REPLICA_URL=streaming_replica.url, HEADROOM_REPLICA_MAX_LAG_SECONDS="60")
    writer, reader = api.sign_up(), api.sign_up()
    streaming_replica.catch_up()
    streaming_replica.pause()
    try:
        # A row written on the primary that the paused replica has not replayed: the reader does not see it, so
        # its read ran on the replica.
        insert_cluster_on_the_primary(database_url, reader.org_id, "written-behind-the-replica")
        before = reads("replica", "replica")
        assert cluster_names(reader) == set()
        assert reads("replica", "replica") == before + 1

        # The writer's own write through the API: its next read goes to the primary and sees it, here and in
        # another API process (the write position is shared through Redis).
        created = writer.post("/api/v1/clusters", json={"name": "mine", "tikv_version": "7.5.0"})
        assert created.status_code == 201, created.text
        pending = reads("primary", "pending_write")
        assert cluster_names(writer) == {"mine"}
        elsewhere = Actor(other_process.client(), writer.session)
        elsewhere.client.cookies = writer.client.cookies
        assert cluster_names(elsewhere) == {"mine"}
        assert reads("primary", "pending_write") == pending + 2
        # ... and a cluster's own page as well.
        page = writer.get(f"/api/v1/clusters/{created.json()['id']}")
        assert page.status_code == 200 and page.json()["name"] == "mine"
    finally:
        streaming_replica.resume()

    streaming_replica.catch_up()
    before = reads("replica", "replica")
    assert cluster_names(writer) == {"mine"}
    assert cluster_names(reader) == {"written-behind-the-replica"}
    assert reads("replica", "replica") == before + 2


def test_a_replica_lagging_beyond_the_max_is_not_read(
    streaming_replica: StreamingReplica, deploy: Any, database_url: str
) -> None:
    api = deploy(DATABASE_REPLICA_URL=streaming_replica.url, HEADROOM_REPLICA_MAX_LAG_SECONDS="1")
    owner = api.sign_up()
    streaming_replica.catch_up()
    assert scrape(api)["headroom_db_replica_lag_seconds"] <= 1
    streaming_replica.pause()
    try:
        insert_cluster_on_the_primary(database_url, owner.org_id, "newer-than-the-replica")
        deadline = time.monotonic() + 30
        while (
            streaming_replica.execute("SELECT extract(epoch FROM now() - pg_last_xact_replay_timestamp())")
            <= 1.5
        ):
            assert time.monotonic() < deadline
            time.sleep(0.1)
        lagging = reads("primary", "lagging")
        assert cluster_names(owner) == {"newer-than-the-replica"}
        assert reads("primary", "lagging") == lagging + 1
        state = scrape(api)
        assert state["headroom_db_replica_up"] == 1 and state["headroom_db_replica_lag_seconds"] > 1.5
    finally:
        streaming_replica.resume()
    streaming_replica.catch_up()
    before = reads("replica", "replica")
    assert cluster_names(owner) == {"newer-than-the-replica"}
    assert reads("replica", "replica") == before + 1


def test_a_stopped_replica_sends_reads_to_the_primary_until_it_is_back(
    streaming_replica: StreamingReplica, deploy: Any
) -> None:
    api = deploy(DATABASE_REPLICA_URL=streaming_replica.url, HEADROOM_REPLICA_MAX_LAG_SECONDS="60")
    owner = api.sign_up()
    assert owner.post("/api/v1/clusters", json={"name": "kept", "tikv_version": "7.5.0"}).status_code == 201
    streaming_replica.catch_up()
    # A down replica is tried again RETRY_SECONDS (10 s) later; 1 s here, so the test does not sleep for long.
    api.ctx.replica.retry_seconds = 1.0
    streaming_replica.stop()
    try:
        unreachable = reads("primary", "unreachable")
        for _ in range(5):
            assert cluster_names(owner) == {"kept"}
        assert reads("primary", "unreachable") == unreachable + 5
        assert api.ctx.replica.down
        assert scrape(api)["headroom_db_replica_up"] == 0
    finally:
        streaming_replica.start()
    streaming_replica.catch_up()
    time.sleep(1.0)
    before = reads("replica", "replica")
    assert cluster_names(owner) == {"kept"}
    assert reads("replica", "replica") == before + 1 and not api.ctx.replica.down


def test_a_replica_restarted_between_two_reads_is_read_at_once(
    streaming_replica: StreamingReplica, deploy: Any
) -> None:
    """The pooled connection the restart dropped is replaced (no pre-ping: the status query is the ping), and the
    replica is not taken for down."""
    api = deploy(DATABASE_REPLICA_URL=streaming_replica.url, HEADROOM_REPLICA_MAX_LAG_SECONDS="60")
    owner = api.sign_up()
    streaming_replica.catch_up()
    before = reads("replica", "replica")
    assert cluster_names(owner) == set()
    streaming_replica.stop()
    streaming_replica.start()
    streaming_replica.catch_up()
    assert cluster_names(owner) == set()
    assert reads("replica", "replica") == before + 2 and not api.ctx.replica.down


@pytest.fixture()
def never_answers() -> Iterator[tuple[str, list[socket.socket]]]:
    """A 'replica' that accepts TCP connections and never says a word (a hung host), and the connections made."""
    with silent_server() as (port, held):
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/headroom_test", held


def test_a_hung_replica_costs_one_connect_timeout_not_one_per_request(
    never_answers: tuple[str, list[socket.socket]], deploy: Any
) -> None:
    url, connections = never_answers
    api = deploy(DATABASE_REPLICA_URL=url)
    owner = api.sign_up()
    unreachable = reads("primary", "unreachable")
    for _ in range(5):
        assert cluster_names(owner) == set()
    assert reads("primary", "unreachable") == unreachable + 5
    # Only the first read tried to connect (and waited for the connect timeout); the others went straight to the
    # primary while the replica is marked down.
    assert len(connections) == 1


def test_a_read_the_replica_fails_under_is_answered_again_on_the_primary(
    streaming_replica: StreamingReplica, deploy: Any
) -> None:
    """A read whose replica connection dies mid-request (here: its backend terminated, as a replica restart or a
    recovery conflict ends it) is answered from the primary, not with a 500."""
    api = deploy(DATABASE_REPLICA_URL=streaming_replica.url, HEADROOM_REPLICA_MAX_LAG_SECONDS="60")

    @api.app.get("/test/read-where")
    def read_where(db: ReadDB) -> dict[str, bool]:
        if db.execute(text("SELECT pg_is_in_recovery()")).scalar_one():
            db.execute(text("SELECT pg_terminate_backend(pg_backend_pid())"))
        return {"in_recovery": bool(db.execute(text("SELECT pg_is_in_recovery()")).scalar_one())}

    owner = api.sign_up()
    streaming_replica.catch_up()
    on_replica, failed = reads("replica", "replica"), reads("primary", "replica_failed")
    answer = owner.get("/test/read-where")
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"in_recovery": False}
    assert reads("replica", "replica") == on_replica + 1
    assert reads("primary", "replica_failed") == failed + 1
    # The replica itself is fine: the next read uses it again.
    assert cluster_names(owner) == set()
    assert reads("replica", "replica") == on_replica + 2


def test_with_redis_down_reads_and_writes_go_on_on_the_primary(
    streaming_replica: StreamingReplica, deploy: Any
) -> None:
    """The write positions live in Redis: while it refuses connections a write still commits (its position is
    lost, logged) and reads go to the primary, which has every write."""
    from dead_redis import dead_redis_url

    api = deploy(DATABASE_REPLICA_URL=streaming_replica.url, HEADROOM_REPLICA_MAX_LAG_SECONDS="60")
    owner = api.sign_up()
    dead = dead_redis_url("refused")
    api.ctx.replica.marks = replica_routing.RedisWriteMarks(next(dead))
    assert (
        owner.post(
            "/api/v1/clusters", json={"name": "while-redis-was-down", "tikv_version": "7.5.0"}
        ).status_code
        == 201
    )
    unavailable = reads("primary", "marks_unavailable")
    assert cluster_names(owner) == {"while-redis-was-down"}
    assert reads("primary", "marks_unavailable") == unavailable + 1


def test_without_a_replica_every_read_is_on_the_primary(client: Any) -> None:
    owner = sign_up(client)
    assert client.app.state.ctx.replica is None
    before = reads("primary", "not_configured")
    assert cluster_names(owner) == set()
    assert reads("primary", "not_configured") == before + 1


# --- the routes that read on the replica ----------------------------------------------------------------------


def test_every_dashboard_read_runs_on_the_hot_standby_and_answers_as_the_primary(
    streaming_replica: StreamingReplica, deploy: Any, database_url: str
) -> None:
    """A route that wrote anything would fail on the standby ("cannot execute ... in a read-only transaction")."""
    with_replica = deploy(DATABASE_REPLICA_URL=streaming_replica.url, HEADROOM_REPLICA_MAX_LAG_SECONDS="60")
    primary_only = deploy()
    owner = with_replica.sign_up()
    # the demo's afternoon, when its hot node pins its volume's IOPS (the advice tests use the same hours)
    end = dt.datetime(2026, 11, 2, 18, 0, tzinfo=dt.UTC)
    start = end - dt.timedelta(hours=3)
    with session_scope(database_url) as db:
        cluster = demo.seed_demo_cluster(db, uuid.UUID(owner.org_id))
        demo.ingest_window(db, cluster, load_scenario(demo.default_scenario_path()), start, end)
        ts.refresh_rollups(db, start, end)
        findings_service.advise_cluster(db, cluster, now=end)
        cluster_id = str(cluster.id)
    streaming_replica.catch_up()

    on_primary = Actor(primary_only.client(), owner.session)
    on_primary.client.cookies = owner.client.cookies
    base = f"/api/v1/clusters/{cluster_id}"
    node_id = on_primary.get(f"{base}/nodes").json()["items"][0]["id"]
    finding_id = on_primary.get(f"{base}/findings").json()["items"][0]["id"]
    window = {"start": start.isoformat(), "end": end.isoformat()}
    routes = [
        ("/api/v1/clusters", {}),
        (base, {}),
        ("/api/v1/fleet", {}),
        (f"{base}/findings", {}),
        (f"/api/v1/findings/{finding_id}", {}),
        (f"/api/v1/findings/{finding_id}/evidence/series", {}),
        (f"{base}/metrics", {**window, "node_id": node_id}),
        (f"{base}/metrics", {**window, "node_id": node_id, "projections": "true", "points": 50}),
        (f"{base}/findings", {"sort": "impact", "status": ["open", "acknowledged"]}),
        (f"{base}/changes", {"days": 30}),
        (f"{base}/metrics/overview", window),
        (f"{base}/projections", {}),
        (f"{base}/changes", {}),
        (f"{base}/nodes", {}),
        (f"{base}/nodes/{node_id}/config", {}),
        (f"{base}/snapshot", {**window, "step_seconds": 300}),
    ]
    before, failed = reads("replica", "replica"), reads("primary", "replica_failed")
    for path, params in routes:
        answer = owner.get(path, params=params)
        assert answer.status_code == 200, (path, answer.text)
        expected = on_primary.get(path, params=params)
        assert expected.status_code == 200, (path, expected.text)
        if path != "/api/v1/fleet":  # the fleet's numbers are as of the request's clock
            assert answer.content == expected.content, path
    assert reads("replica", "replica") == before + len(routes)
    assert reads("primary", "replica_failed") == failed  # none was answered again on the primary


# --- the pieces on their own --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("replay_lsn", "lag", "pending", "expected"),
    [
        (100, 0.0, None, "replica"),  # caught up, nothing written by the org lately
        (100, 0.0, 100, "replica"),  # replayed exactly the org's last write
        (100, 0.0, 101, "pending_write"),  # one byte short of it
        (100, 5.0, None, "replica"),  # at the max lag
        (100, 5.01, None, "lagging"),  # beyond it
        (100, None, None, "lagging"),  # lag unknown (not streaming, nothing replayed yet)
        (None, 0.0, None, "lagging"),  # not a standby (promoted)
        (50, 9.0, 100, "lagging"),  # lagging wins: the read goes to the primary either way
    ],
)
def test_route_for(replay_lsn: int | None, lag: float | None, pending: int | None, expected: str) -> None:
    status = replica_routing.ReplicaStatus(replay_lsn=replay_lsn, lag_seconds=lag)
    assert replica_routing.route_for(status, pending, max_lag_seconds=5.0) == expected


def test_write_marks_keep_the_highest_position_until_they_expire(redis_url: str) -> None:
    now = [1000.0]
    memory = replica_routing.MemoryWriteMarks(ttl_seconds=300, monotonic=lambda: now[0])
    shared = replica_routing.RedisWriteMarks(redis_url, ttl_seconds=300)
    org = str(uuid.uuid4())
    for marks in (memory, shared):
        assert marks.pending(org) is None
        marks.note(org, 200)
        marks.note(org, 150)  # an earlier write recorded late
        assert marks.pending(org) == 200
        marks.note(org, 2**52)
        assert marks.pending(org) == 2**52
    now[0] += 301
    assert memory.pending(org) is None
    import redis

    client = redis.Redis.from_url(redis_url)
    assert 295 <= client.ttl(replica_routing.RedisWriteMarks.key(org)) <= 300
    client.delete(replica_routing.RedisWriteMarks.key(org))


def test_the_replica_urls_password_is_scrubbed_from_the_logs() -> None:
    from headroom.platform.logging import settings_secret_values

    settings = Settings(DATABASE_REPLICA_URL="postgresql://headroom:replica-pass-1234@replica:5432/headroom")
    assert "replica-pass-1234" in settings_secret_values(settings)
