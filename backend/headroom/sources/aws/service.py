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

from botocore.exceptions import BotoCoreError, ClientError
from botocore.parsers import ResponseParserError
from sqlalchemy import select

from headroom.accounts.service import Principal, audit
from headroom.sources.aws.ingest import DEFAULT_BACKFILL_DAYS, get_backfill, request_backfill
from headroom.sources.aws.session import AwsClients
from headroom.sources.health import record_failure, record_success
from headroom.sources.models import AwsBackfill, CollectionSweep
from headroom.sources.service import get_aws_connection

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

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "checks": [asdict(c) for c in self.checks]}


UNREADABLE = "unreadable_answer"


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


def prepare_test(db: Any, principal: Principal, connection_id: uuid.UUID) -> ConnectionCredentials:
    """Read the org's connection for a test (admin only)."""
    principal.require("admin")
    c = get_aws_connection(db, principal, connection_id)
    return ConnectionCredentials(c.org_id, c.auth_kind, c.role_arn, c.external_id, c.access_key_id,
                                 c.secret_access_key_enc, c.regions[0] if c.regions else None)


def run_test(
    connection: ConnectionCredentials,
    *,
    make_clients: Callable[[ConnectionCredentials, str], AwsClients],
    now: dt.datetime,
) -> ConnectionTest:
    """Check the credentials and permissions in the connection's first region. Touches no database."""
    region = connection.region
    if region is None:
        result = ConnectionTest(False, None, [], [], "no region configured")
    else:
        try:
            clients = make_clients(connection, region)
        except ResponseParserError:
            check = _unreadable("sts:AssumeRole", None)
            result = ConnectionTest(False, region, [check], [], f"cannot get credentials: {check.message}")
        except (ClientError, BotoCoreError, ValueError) as exc:
            code = exc.response.get("Error", {}).get("Code") if isinstance(exc, ClientError) else None
            check = PermissionCheck("sts:AssumeRole", False, code, f"cannot get credentials: {code or exc}"[:300])
            result = ConnectionTest(False, region, [check], ["sts:AssumeRole"] if code else [], check.message)
        else:
            checks = check_permissions(clients, now)
            missing = [c.action for c in checks if not c.ok and c.error_code in DENIED_CODES]
            failed = [c for c in checks if not c.ok]
            error = None
            if missing:
                error = "missing permissions: " + ", ".join(missing)
            elif failed:
                error = "; ".join(f"{c.action}: {c.message}" for c in failed)
            result = ConnectionTest(not failed, region, checks, missing, error)
    return result


def record_test(db: Any, principal: Principal, connection_id: uuid.UUID, result: ConnectionTest,
                now: dt.datetime) -> None:
    """Record a test's outcome on the connection's health and in the audit log."""
    connection = get_aws_connection(db, principal, connection_id)
    # Read the health afresh and lock the row: the copy from before the fetch is stale, and tests of one source
    # running at once would otherwise lose each other's failure counts.
    db.refresh(connection, with_for_update=True)
    if result.ok:
        record_success(connection, now)
    else:
        record_failure(connection, now, result.error or "connection test failed")
    audit(db, principal, "aws_connection.tested", target_kind="aws_connection", target_id=connection.id,
          details={"ok": result.ok, "missing": result.missing})


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
    row = request_backfill(db, connection, days=days)
    audit(db, principal, "aws_connection.backfill_requested", target_kind="aws_connection",
          target_id=connection.id, details={"days": days})
    return row


def list_sweeps(db: Any, principal: Principal, connection_id: uuid.UUID, *, limit: int = 100) -> list[CollectionSweep]:
    connection = get_aws_connection(db, principal, connection_id)
    return list(db.scalars(select(CollectionSweep).where(
        CollectionSweep.org_id == principal.org_id, CollectionSweep.source_id == connection.id)
        .order_by(CollectionSweep.started_at.desc(), CollectionSweep.id.desc()).limit(limit)))
