"""AWS connection operations: test the permissions, start and watch the backfill, list sweeps. Callers commit.

The test calls each API the collector needs once, as cheaply as the API allows, and maps an AccessDenied /
UnauthorizedOperation answer to the IAM action that is missing (the policy in deploy/aws/ grants exactly these).
It runs in three steps so no database connection is held while AWS answers: `prepare_test` copies what the
calls need out of the row, the caller commits, `run_test` calls AWS, and `record_test` writes the outcome.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError
from botocore.parsers import ResponseParserError
from sqlalchemy import func, select, text

from headroom.accounts.service import Principal, audit
from headroom.inventory.models import Instance
from headroom.platform.db import engine_for
from headroom.platform.errors import Conflict
from headroom.platform.jobs.context import JobContext
from headroom.platform.logging import get_logger
from headroom.platform.security import SecretBox
from headroom.sources.aws import ingest as aws_ingest
from headroom.sources.aws.ingest import DEFAULT_BACKFILL_DAYS, get_backfill, request_backfill
from headroom.sources.aws.session import AwsClients, Decrypter, clients_for
from headroom.sources.health import record_failure, record_success, redact_error
from headroom.sources.models import AwsBackfill, AwsConnection, CollectionSweep
from headroom.sources.service import get_aws_connection

log = get_logger("headroom.sources.aws.service")

# clients_for's signature: (connection, region, box, *, endpoint_url, max_attempts) -> AwsClients. The API's
# AppContext and the jobs pass the real one; tests pass one that returns stubbed clients.
ClientsFactory = Callable[..., AwsClients]
# The connection test asks each API at most this many times: someone is waiting for the answer.
PROBE_MAX_ATTEMPTS = 3

DENIED_CODES = frozenset({"AccessDenied", "AccessDeniedException", "UnauthorizedOperation",
                          "UnauthorizedAccess", "AuthFailure", "InvalidClientTokenId"})
# Every IAM action the collector uses, in the order the test checks them.
REQUIRED_ACTIONS = ("ec2:DescribeInstances", "ec2:DescribeVolumes", "ec2:DescribeInstanceTypes",
                    "cloudwatch:GetMetricData", "cloudwatch:ListMetrics")


@dataclass(frozen=True)
class PermissionCheck:
    action: str
    ok: bool
    error_code: str | None = None
    message: str | None = None


@dataclass(frozen=True)
class ConnectionTest:
    ok: bool
    region: str | None
    checks: list[PermissionCheck]
    missing: list[str]
    error: str | None = None
    demo: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "checks": [asdict(c) for c in self.checks]}


UNREADABLE = "unreadable_answer"
NO_SERVER_CREDENTIALS = "server_has_no_credentials"
SERVER_CREDENTIALS_DOC = 'README.md, section "The Headroom server\'s own AWS credentials"'
_SERVER_CREDENTIAL_SOURCES = ("an instance profile (EC2) or task role (ECS), the AWS_ACCESS_KEY_ID and "
                              "AWS_SECRET_ACCESS_KEY environment variables, or ~/.aws/credentials of the user "
                              "running Headroom")


def no_server_credentials_message(auth_kind: str) -> str:
    """What botocore's "Unable to locate credentials" means for a connection: the server itself has none."""
    if auth_kind == "assume_role":
        why = ("This Headroom server has no AWS credentials of its own, so it cannot assume your role: "
               "calling sts:AssumeRole takes the server's own credentials")
    else:
        why = ("This Headroom server has no AWS credentials: the default credential chain reads the server's own "
               "credentials")
    return (f"{why}. Give the server credentials ({_SERVER_CREDENTIAL_SOURCES}), restart it and test again; "
            f"see {SERVER_CREDENTIALS_DOC}. (AWS said: Unable to locate credentials.)")


def _unreadable(action: str, status: object | None) -> PermissionCheck:
    answered = f" (HTTP {status})" if status else ""
    return PermissionCheck(action, False, UNREADABLE,
                           f"the answer to {action}{answered} could not be read: it is not an AWS API answer "
                           "(a proxy or captive portal in the way, or a wrong endpoint?)")


def _looks_unparsed(code: str, message: str) -> bool:
    """botocore's fallbacks for an answer it could not parse: code "Unknown" or the bare HTTP status, and the
    page itself as the message (which is not shown: it is someone else's HTML)."""
    return code == "Unknown" or code.isdigit() or message.lstrip().startswith("<")


def _probe(action: str, call: Callable[[], Any]) -> PermissionCheck:
    try:
        call()
    except ClientError as exc:
        code = exc.response.get("Error", {}).get("Code", "Unknown")
        if code in DENIED_CODES:
            return PermissionCheck(action, False, code, f"{code}: the role needs {action}")
        if _looks_unparsed(str(code), str(exc.response.get("Error", {}).get("Message", ""))):
            return _unreadable(action, exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode"))
        return PermissionCheck(action, False, code, str(exc)[:300])
    except ResponseParserError:  # not a BotoCoreError: an HTML page where XML or JSON was expected
        return _unreadable(action, None)
    except NoCredentialsError as exc:
        return PermissionCheck(action, False, NO_SERVER_CREDENTIALS, str(exc))
    except BotoCoreError as exc:
        return PermissionCheck(action, False, type(exc).__name__, str(exc)[:300])
    return PermissionCheck(action, True)


def check_permissions(clients: AwsClients, now: dt.datetime) -> list[PermissionCheck]:
    """Call each needed API once with the smallest request (MaxResults 5, a 5-minute one-metric query)."""
    ec2, cloudwatch = clients.ec2(), clients.cloudwatch()
    end = now.astimezone(dt.UTC).replace(second=0, microsecond=0)
    tiny_query = [{"Id": "probe", "MetricStat": {"Metric": {"Namespace": "AWS/EBS", "MetricName": "VolumeReadOps",
                                                            "Dimensions": [{"Name": "VolumeId", "Value": "vol-0"}]},
                                                 "Period": 60, "Stat": "Sum"}}]
    calls: dict[str, Callable[[], Any]] = {
        "ec2:DescribeInstances": lambda: ec2.describe_instances(MaxResults=5),
        "ec2:DescribeVolumes": lambda: ec2.describe_volumes(MaxResults=5),
        "ec2:DescribeInstanceTypes": lambda: ec2.describe_instance_types(MaxResults=5),
        "cloudwatch:GetMetricData": lambda: cloudwatch.get_metric_data(
            MetricDataQueries=tiny_query, StartTime=end - dt.timedelta(minutes=5), EndTime=end),
        "cloudwatch:ListMetrics": lambda: cloudwatch.list_metrics(Namespace="AWS/EBS", MetricName="VolumeReadOps"),
    }
    return [_probe(action, calls[action]) for action in REQUIRED_ACTIONS]


@dataclass
class ConnectionCredentials:
    """A copy of the row's fields clients_for reads (AwsConnectionLike), so no ORM object outlives the commit."""

    org_id: Any
    auth_kind: str
    role_arn: str | None
    external_id: str
    access_key_id: str | None
    secret_access_key_enc: str | None
    region: str | None
    is_demo: bool = False


def prepare_test(db: Any, principal: Principal, connection_id: uuid.UUID) -> ConnectionCredentials:
    """Read the org's connection for a test (admin only)."""
    principal.require("admin")
    c = get_aws_connection(db, principal, connection_id)
    return ConnectionCredentials(c.org_id, c.auth_kind, c.role_arn, c.external_id, c.access_key_id,
                                 c.secret_access_key_enc, c.regions[0] if c.regions else None, c.is_demo)


def probe_clients(factory: ClientsFactory | None, box: Decrypter, endpoint_url: str | None
                  ) -> Callable[[ConnectionCredentials, str], AwsClients]:
    """How the connection test builds its clients: `factory` (default clients_for) with few attempts per call."""
    build = factory or clients_for

    def make(connection: ConnectionCredentials, region: str) -> AwsClients:
        return build(connection, region, box, endpoint_url=endpoint_url, max_attempts=PROBE_MAX_ATTEMPTS)

    return make


DEMO_CHECK_MESSAGE = "demo source: not asked of AWS (the simulator stands in for it)"


def run_test(
    connection: ConnectionCredentials,
    *,
    make_clients: Callable[[ConnectionCredentials, str], AwsClients],
    now: dt.datetime,
) -> ConnectionTest:
    """Check the credentials and permissions in the connection's first region. Touches no database; a demo
    connection is answered without calling AWS (every check passes, each saying so)."""
    region = connection.region
    if connection.is_demo:
        result = ConnectionTest(True, region, [PermissionCheck(a, True, None, DEMO_CHECK_MESSAGE)
                                               for a in REQUIRED_ACTIONS], [], None, demo=True)
    elif region is None:
        result = ConnectionTest(False, None, [], [], "no region configured")
    else:
        try:
            clients = make_clients(connection, region)
        except ResponseParserError:
            check = _unreadable("sts:AssumeRole", None)
            result = ConnectionTest(False, region, [check], [], f"cannot get credentials: {check.message}")
        except NoCredentialsError as exc:
            # The check keeps AWS's words; the report's error explains them (shown once, not in every row).
            check = PermissionCheck("sts:AssumeRole", False, NO_SERVER_CREDENTIALS, str(exc))
            result = ConnectionTest(False, region, [check], [], no_server_credentials_message(connection.auth_kind))
        except (ClientError, BotoCoreError, ValueError) as exc:
            code = exc.response.get("Error", {}).get("Code") if isinstance(exc, ClientError) else None
            check = PermissionCheck("sts:AssumeRole", False, code, f"cannot get credentials: {code or exc}"[:300])
            result = ConnectionTest(False, region, [check], ["sts:AssumeRole"] if code else [], check.message)
        else:
            checks = check_permissions(clients, now)
            missing = [c.action for c in checks if not c.ok and c.error_code in DENIED_CODES]
            failed = [c for c in checks if not c.ok]
            error = None
            if any(c.error_code == NO_SERVER_CREDENTIALS for c in failed):
                error = no_server_credentials_message(connection.auth_kind)
            elif missing:
                error = "missing permissions: " + ", ".join(missing)
            elif failed:
                error = "; ".join(f"{c.action}: {c.message}" for c in failed)
            result = ConnectionTest(not failed, region, checks, missing, error)
    return result


def record_test(db: Any, principal: Principal, connection_id: uuid.UUID, result: ConnectionTest,
                now: dt.datetime, *, on_save: bool = False) -> bool:
    """Record a test's outcome on the connection's health and in the audit log. A connection's history import
    is requested by its first passing test (True: the caller queues it once this is committed); a failing test
    run as the connection is saved (`on_save`) marks it failing at once, with the reason."""
    connection = get_aws_connection(db, principal, connection_id)
    # Read the health afresh and lock the row: the copy from before the fetch is stale, and tests of one source
    # running at once would otherwise lose each other's failure counts.
    db.refresh(connection, with_for_update=True)
    if result.ok:
        record_success(connection, now)
    else:
        record_failure(connection, now, result.error or "connection test failed", at_once=on_save)
    import_requested = result.ok and get_backfill(db, connection) is None
    if import_requested:
        request_backfill(db, connection)
    audit(db, principal, "aws_connection.tested", target_kind="aws_connection", target_id=connection.id,
          details={"ok": result.ok, "missing": result.missing, "import_requested": import_requested})
    return import_requested


def backfill_view(row: AwsBackfill | None) -> dict[str, Any]:
    if row is None:
        return {"state": "not_started", "days": DEFAULT_BACKFILL_DAYS, "points_done": 0, "points_total": 0,
                "points_written": 0, "started_at": None, "finished_at": None, "last_error": None}
    return {"state": row.state, "days": row.days, "points_done": row.points_done, "points_total": row.points_total,
            "points_written": row.points_written, "started_at": row.started_at, "finished_at": row.finished_at,
            "last_error": row.last_error}


def backfill_status(db: Any, principal: Principal, connection_id: uuid.UUID) -> AwsBackfill | None:
    return get_backfill(db, get_aws_connection(db, principal, connection_id))


def start_backfill(db: Any, principal: Principal, connection_id: uuid.UUID, *, days: int) -> AwsBackfill:
    """(Re)queue the history import; the route enqueues the job once the request has committed."""
    principal.require("admin")
    connection = get_aws_connection(db, principal, connection_id)
    if connection.is_demo:
        raise Conflict("The demo source's history is the simulator's: there is nothing to import from AWS.",
                       code="demo_source")
    if get_backfill(db, connection) is None and connection.last_success_at is None:
        raise Conflict("Test the connection first: its history import starts once a test passes.",
                       code="connection_not_tested")
    row = request_backfill(db, connection, days=days)
    audit(db, principal, "aws_connection.backfill_requested", target_kind="aws_connection",
          target_id=connection.id, details={"days": days})
    return row


def list_sweeps(db: Any, principal: Principal, connection_id: uuid.UUID, *, limit: int = 100) -> list[CollectionSweep]:
    connection = get_aws_connection(db, principal, connection_id)
    return list(db.scalars(select(CollectionSweep).where(
        CollectionSweep.org_id == principal.org_id, CollectionSweep.source_id == connection.id)
        .order_by(CollectionSweep.started_at.desc(), CollectionSweep.id.desc()).limit(limit)))


# --- the jobs' work (headroom.sources.aws.jobs: ids in, these do the rest) ------------------------------------

INVENTORY_EVERY_MINUTES = 15
STALE_BACKFILL = dt.timedelta(minutes=30)
# A backfill replaced mid-run (new span asked for) starts the new plan at once; more replacements than this
# in one run are left to the next queueing (no number from a source: a bound against a loop, not a tuning).
SUPERSEDED_RETRIES = 3


def _lock(db: Any, key: str) -> bool:
    # One run per connection at a time: a slow sweep must not overlap the next minute's.
    return bool(db.scalar(select(func.pg_try_advisory_xact_lock(func.hashtext(key)))))


def _record_failure(ctx: JobContext, connection_id: uuid.UUID, now: dt.datetime, exc: BaseException) -> None:
    # The failed run's own writes were rolled back; its sweep row is recorded here so the UI shows the error.
    with ctx.unit() as db:
        conn = db.get(AwsConnection, connection_id)
        if conn is not None:
            record_failure(conn, now, f"{type(exc).__name__}: {exc}")
            db.add(CollectionSweep(org_id=conn.org_id, source_kind="aws", source_id=conn.id, kind="incremental",
                                   started_at=now, finished_at=now, error=conn.last_error))


def _inventory_due(db: Any, connection: AwsConnection, region: str, now: dt.datetime, force: bool) -> bool:
    if force or now.minute % INVENTORY_EVERY_MINUTES == 0:
        return True
    known = db.scalar(select(func.count()).select_from(Instance).where(
        Instance.aws_connection_id == connection.id, Instance.region == region))
    return not known


def ingest_connections(ctx: JobContext, now: dt.datetime, connection_id: str | None = None,
                       force_inventory: bool = False, *, clients_for: ClientsFactory = clients_for) -> dict[str, Any]:
    """Sweep every AWS connection (or one): inventory when due, then CloudWatch since the watermarks."""
    box = SecretBox(ctx.settings.secret_key)
    with ctx.unit() as db:
        # Only connections whose history import was started, by their first passing test: an untested or
        # never-working one is not swept every minute (a person's passing test starts it).
        query = select(AwsConnection.id).where(
            AwsConnection.is_demo.is_(False),  # the demo source's sweeps are the simulator's (record_demo_sweep)
            select(AwsBackfill.id).where(AwsBackfill.source_id == AwsConnection.id).exists())
        if connection_id:
            query = query.where(AwsConnection.id == uuid.UUID(connection_id))
        ids = list(db.scalars(query))
    if connection_id is None:  # the scheduled sweep: one task per connection when workers share it (Celery)
        fanned = ctx.fan_out("aws.ingest", "connection_id", ids, now)
        if fanned is not None:
            return {"connections": len(ids), **fanned}
    summary: dict[str, Any] = {"connections": len(ids), "points": 0, "api_calls": 0, "failed": 0,
                               "backfills_queued": 0}
    for cid in ids:
        queue_backfill = False
        try:
            with ctx.unit() as db:
                conn = db.get(AwsConnection, cid)
                if conn is None or not _lock(db, f"aws:{cid}"):
                    continue
                backfill = aws_ingest.get_backfill(db, conn)
                if backfill is None:  # removed since the list was read
                    continue
                # A "running" backfill whose lock is free lost its worker (killed): queue it again.
                dead = backfill.state == "running" and _lock(db, f"aws-backfill:{cid}")
                if dead or (backfill.state == "queued" and backfill.updated_at < now - STALE_BACKFILL):
                    # Same span: an unfinished plan is resumed, not restarted.
                    aws_ingest.request_backfill(db, conn, days=backfill.days)
                    queue_backfill = True
                for region in conn.regions:
                    clients = clients_for(conn, region, box, endpoint_url=ctx.settings.aws_endpoint_url)
                    if _inventory_due(db, conn, region, now, force_inventory):
                        aws_ingest.sync_inventory(db, conn, clients, now)
                    outcome = aws_ingest.run_sweep(db, conn, clients, now=now)
                    summary["points"] += outcome.points_written
                    summary["api_calls"] += outcome.sweep.api_calls
                record_success(conn, now)
        except Exception as exc:  # noqa: BLE001 - one failing account must not stop the others
            summary["failed"] += 1
            log.warning("aws.ingest_failed", source=str(cid), error_type=type(exc).__name__)
            _record_failure(ctx, cid, now, exc)
            continue
        if queue_backfill:  # after the commit, so the task sees the row
            ctx.enqueue("aws.backfill", connection_id=str(cid))
            summary["backfills_queued"] += 1
    log.info("aws.ingest_done", **summary)
    return summary


def backfill(ctx: JobContext, now: dt.datetime, connection_id: str | None = None, days: int | None = None,
             *, clients_for: ClientsFactory = clients_for) -> dict[str, Any]:
    """Import a connection's CloudWatch history (14 days by default), committing progress after each request.

    Resumable: the plan's requests are stored when it starts and each is marked done with its points, so a
    run after a killed one (redelivery, re-queue, or a retry of a failed one) fetches only what is missing.
    """
    if connection_id is None:  # the in-process scheduler's catch-up run calls every job without params
        return {"skipped": "no connection_id"}
    cid = uuid.UUID(connection_id)
    # A session-level advisory lock on a connection of its own marks the run as alive: it survives the
    # per-request commits and Postgres drops it the moment a killed worker's connection goes away, so the
    # next run (a redelivery or a new request) takes over at once instead of waiting for a timeout.
    with engine_for(ctx.database_url).connect() as lock_conn:
        key = {"k": f"aws-backfill:{cid}"}
        if not lock_conn.execute(text("SELECT pg_try_advisory_lock(hashtext(:k))"), key).scalar():
            return {"skipped": "already running"}
        try:
            for _attempt in range(SUPERSEDED_RETRIES):
                try:
                    return _backfill(ctx, now, cid, days, clients_for)
                except aws_ingest.BackfillSuperseded:  # a new backfill was asked for mid-run: run that one
                    log.info("aws.backfill_superseded", source=str(cid))
                    days = None
            return {"skipped": "superseded"}
        finally:
            lock_conn.execute(text("SELECT pg_advisory_unlock(hashtext(:k))"), key)
            lock_conn.commit()


def _backfill(ctx: JobContext, now: dt.datetime, cid: uuid.UUID, days: int | None,
              clients_for: ClientsFactory) -> dict[str, Any]:
    box = SecretBox(ctx.settings.secret_key)
    try:
        with ctx.unit() as db:
            conn = db.get(AwsConnection, cid)
            if conn is None:
                return {"skipped": "connection missing"}
            if conn.is_demo:
                return {"skipped": "demo source"}
            row = aws_ingest.get_backfill(db, conn)
            span = days or (row.days if row is not None else aws_ingest.DEFAULT_BACKFILL_DAYS)
            if row is not None and row.state == "done" and row.days == span:
                # Every way of asking for a backfill queues the row first; a finished one here is a redelivered
                # task (acks_late): it has nothing left to fetch, and fetching it again would be paid again.
                return {"state": row.state, "points_done": row.points_done, "points_total": row.points_total,
                        "points_written": row.points_written, "steps_run": 0, "skipped": "already done"}
            if row is None or row.days != span or row.state == "done":
                row = aws_ingest.request_backfill(db, conn, days=span)  # a new plan (else: resume this one)
            row.state, row.started_at, row.finished_at, row.last_error = "running", now, None, None
            # The window's end is fixed by the first run: a resumed run reads exactly the window planned.
            # Minutes after it are the incremental sweep's (it has run every minute since the connection).
            row.window_end_at = row.window_end_at or aws_ingest.floor_minute(now)
            clients: dict[str, Any] = {}
            account = conn

            def clients_for_region(region: str) -> Any:
                if region not in clients:
                    clients[region] = clients_for(account, region, box, endpoint_url=ctx.settings.aws_endpoint_url)
                return clients[region]

            for region in conn.regions:
                aws_ingest.sync_inventory(db, conn, clients_for_region(region), now)
            aws_ingest.plan_backfill(db, conn, conn.regions, end=row.window_end_at, days=span)
            db.commit()  # the plan is durable before the first request is paid for
            outcome = aws_ingest.run_backfill(db, conn, row, clients_for_region, now=now, checkpoint=db.commit)
            row.state, row.finished_at = "done", dt.datetime.now(dt.UTC)
            record_success(conn, now)
            log.info("aws.backfill_done", source=str(cid), steps_run=outcome.steps_run,
                     steps_skipped=outcome.steps_skipped, calls=outcome.api_calls, points=outcome.points_written)
            return {"state": row.state, "points_done": row.points_done, "points_total": row.points_total,
                    "points_written": row.points_written, "steps_run": outcome.steps_run,
                    "steps_skipped": outcome.steps_skipped, "api_calls": outcome.api_calls}
    except aws_ingest.BackfillSuperseded:
        raise
    except Exception as exc:
        with ctx.unit() as db:
            conn = db.get(AwsConnection, cid)
            if conn is not None:
                log.warning("aws.backfill_failed", source=str(cid), error_type=type(exc).__name__)
                record_failure(conn, now, f"{type(exc).__name__}: {exc}")
                failed = aws_ingest.get_backfill(db, conn)
                if failed is not None:  # progress stays: the next run resumes after the last stored request
                    failed.state, failed.last_error = "failed", redact_error(f"{type(exc).__name__}: {exc}")
                    failed.finished_at = now
        if conn is None:
            # The connection was deleted while its history was being imported (its rows went with it, so the
            # next progress update matched none: StaleDataError): nothing is left to import or to record.
            log.info("aws.backfill_source_deleted", source=str(cid), error_type=type(exc).__name__)
            return {"skipped": "connection deleted during the import"}
        raise


# --- the demo source (sources.demo): what a healthy connection looks like, without AWS ---------------------


# What the demo source's queries depend on (queries_for): its instances in the region, their volumes and the
# stored limits of their types, every column but last_seen_at (which the demo moves every minute), as a digest.
_DEMO_PLAN_INPUTS = text(
    "WITH i AS (SELECT * FROM instances WHERE org_id = :org AND aws_connection_id = :src AND region = :region) "
    "SELECT md5(concat_ws('|', (SELECT string_agg((to_jsonb(i) - 'last_seen_at')::text, ',' ORDER BY i.id) FROM i), "
    "(SELECT string_agg((to_jsonb(v) - 'last_seen_at')::text, ',' ORDER BY v.id) FROM volumes v "
    "JOIN i ON v.instance_ref_id = i.id WHERE v.org_id = :org), "
    "(SELECT string_agg(to_jsonb(l)::text, ',' ORDER BY l.instance_type) FROM instance_type_limits l "
    "WHERE l.instance_type IN (SELECT instance_type FROM i))))"
)
# Demo source -> (the digest of its plan's inputs, its queries' periods), kept per process: the demo source's
# fleet is the same minute after minute (Headroom choice: at most this many sources).
_DEMO_PLANS: dict[uuid.UUID, tuple[str, list[int]]] = {}
_DEMO_PLANS_KEPT = 4096


def _demo_query_periods(db: Any, connection: AwsConnection, region: str) -> list[int]:
    """The periods of the queries the collector would make of the demo source (queries_for), planned again only
    when what they come from changed."""
    digest = db.execute(_DEMO_PLAN_INPUTS, {"org": connection.org_id, "src": connection.id,
                                            "region": region}).scalar_one()
    kept = _DEMO_PLANS.get(connection.id)
    if kept is not None and kept[0] == digest:
        return kept[1]
    periods = [q.period for q in aws_ingest.queries_for(db, connection, region)[0]]
    if len(_DEMO_PLANS) >= _DEMO_PLANS_KEPT:
        _DEMO_PLANS.clear()
    _DEMO_PLANS[connection.id] = (digest, periods)
    return periods


def record_demo_sweep(db: Any, connection: AwsConnection, *, start: dt.datetime, end: dt.datetime,
                      points_written: int, now: dt.datetime) -> CollectionSweep:
    """Record the sweep the collector would have made of the demo source's inventory over [start, end): the
    same queries and GetMetricData plan, so its calls, metrics requested and datapoints are what CloudWatch
    would bill; nothing is asked of AWS (the simulator wrote the points). The first one is the history import."""
    if not connection.is_demo:
        raise ValueError("only a demo source's sweeps are simulated")
    region = connection.regions[0]
    periods = _demo_query_periods(db, connection, region)
    backfill = get_backfill(db, connection)
    kind = "incremental" if backfill is not None else "backfill"
    plan, window_start = aws_ingest.period_aligned_plan(periods, end, int((end - start).total_seconds()))
    sweep = CollectionSweep(
        org_id=connection.org_id, source_kind="aws", source_id=connection.id, kind=kind, region=region,
        started_at=now, finished_at=now, window_start_at=window_start, window_end_at=end, series=len(periods),
        api_calls=plan.calls, planned_calls=plan.calls, lower_bound_calls=plan.lower_bound,
        metrics_requested=plan.metrics_requested, datapoints=plan.datapoints, points_written=points_written)
    db.add(sweep)
    if backfill is None:
        db.add(AwsBackfill(org_id=connection.org_id, source_id=connection.id, state="done",
                           days=max(1, round((end - window_start) / dt.timedelta(days=1))),
                           points_total=plan.datapoints, points_done=plan.datapoints, points_written=points_written,
                           window_end_at=end, started_at=now, finished_at=now))
    record_success(connection, now)
    db.flush()
    return sweep
