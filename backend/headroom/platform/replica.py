"""Read replica routing: the dashboard's read-only queries go to a PostgreSQL streaming replica when one is
configured (DATABASE_REPLICA_URL) and it is safe to read there (docs/operations.md "Read replica").

Safe means, checked with one small query on the replica when a read asks for it:
- the replica answers (an unreachable one is remembered as down for RETRY_SECONDS, so requests do not each wait
  for a connect timeout; then one request tries it again while the others keep going to the primary);
- it is at most `max_lag_seconds` behind: 0 when it streams from the primary and has replayed all it received,
  else the age of the last transaction it replayed;
- it has replayed the organisation's own last write (read-your-writes by WAL position, as GitLab's database load
  balancing does): after a write request commits, the primary's WAL position is recorded for the organisation
  (`pg_current_wal_insert_lsn()`; in Redis when there is one, so every API process sees it; else in this process) for MARK_TTL_SECONDS, and a
  read of that organisation goes to the replica only once `pg_last_wal_replay_lsn()` has reached it.
Otherwise the read goes to the primary. A read whose replica fails under it (the connection lost, a query
cancelled by a recovery conflict) is answered again on the primary, once (ReplicaFallback): the replica never fails
a request. Jobs always use the primary.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from sqlalchemy import create_engine, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker

from headroom.platform.db import normalise_database_url
from headroom.platform.logging import get_logger
from headroom.platform.redis_client import redis_client
from headroom.platform.telemetry import DB_READS

log = get_logger("headroom.platform.replica")

# Seconds an unreachable replica is left alone before one request tries it again (our choice: a dead replica
# costs at most one connect timeout per 10 s, and a restarted one is used again within 10 s).
RETRY_SECONDS = 10.0
# libpq's connect_timeout for the replica; 2 s is the smallest libpq honours (PostgreSQL docs, "Parameter Key
# Words": "The minimum allowed timeout is 2 seconds").
CONNECT_TIMEOUT_SECONDS = 2
# How long an organisation's last write position is kept: far above any lag the replica is read with (the max lag),
# so a mark expires only when a usable replica has long replayed it.
MARK_TTL_SECONDS = 300
# Redis timeouts for the marks, as for the job counts (telemetry.REDIS_STATS_TIMEOUT): a slow Redis sends the read
# to the primary instead of holding the request up.
MARKS_REDIS_TIMEOUT = 1.0

# Why a read went where it went (the `reason` label of headroom_db_reads_total).
REPLICA = "replica"  # the replica, safe to read
NOT_CONFIGURED = "not_configured"  # no DATABASE_REPLICA_URL
PENDING_WRITE = "pending_write"  # the organisation wrote something the replica has not replayed yet
LAGGING = "lagging"  # the replica is more than the max lag behind (or cannot say how far)
UNREACHABLE = "unreachable"  # the replica did not answer (or was found down less than RETRY_SECONDS ago)
MARKS_UNAVAILABLE = "marks_unavailable"  # the write positions could not be read (Redis down)
REPLICA_FAILED = "replica_failed"  # the read began on the replica, which failed under it: answered again here
REASONS = (REPLICA, NOT_CONFIGURED, PENDING_WRITE, LAGGING, UNREACHABLE, MARKS_UNAVAILABLE, REPLICA_FAILED)

# The replica's replayed WAL position (bytes) and its lag. Lag 0 when a WAL receiver streams and everything
# received is replayed; else the age of the last replayed commit (NULL before any, or not a standby: unknown).
STATUS_SQL = text(
    "SELECT pg_last_wal_replay_lsn() - '0/0'::pg_lsn AS replay_lsn, "
    "CASE WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() "
    "AND EXISTS (SELECT 1 FROM pg_stat_wal_receiver) THEN 0.0 "
    "ELSE extract(epoch FROM now() - pg_last_xact_replay_timestamp())::float8 END AS lag_seconds"
)
# The insert position, not pg_current_wal_lsn() (the write position): under synchronous_commit=off a commit
# returns before its WAL is written out, so only the insert position is sure to be past the commit record.
PRIMARY_LSN_SQL = text("SELECT pg_current_wal_insert_lsn() - '0/0'::pg_lsn")


@dataclass(frozen=True)
class ReplicaStatus:
    replay_lsn: int | None  # None: not a standby
    lag_seconds: float | None  # None: unknown


def route_for(status: ReplicaStatus, pending_lsn: int | None, max_lag_seconds: float) -> str:
    """Where a read goes given the replica's status and the organisation's last write position: REPLICA or the
    reason it goes to the primary."""
    if status.replay_lsn is None or status.lag_seconds is None or status.lag_seconds > max_lag_seconds:
        return LAGGING
    if pending_lsn is not None and status.replay_lsn < pending_lsn:
        return PENDING_WRITE
    return REPLICA


def count_read(target: str, reason: str) -> None:
    DB_READS.labels(target=target, reason=reason).inc()


class WriteMarks(Protocol):
    def note(self, org_id: str, lsn: int) -> None:
        """Record that the organisation's data is as of WAL position `lsn` on the primary (keeping the highest)."""

    def pending(self, org_id: str) -> int | None:
        """The organisation's last recorded write position, or None (none within MARK_TTL_SECONDS)."""


class MemoryWriteMarks:
    """Write positions in this process (no Redis: one API process)."""

    def __init__(
        self, ttl_seconds: float = MARK_TTL_SECONDS, monotonic: Callable[[], float] = time.monotonic
    ) -> None:
        self.ttl_seconds = ttl_seconds
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._marks: dict[str, tuple[int, float]] = {}

    def note(self, org_id: str, lsn: int) -> None:
        now = self._monotonic()
        with self._lock:
            if len(self._marks) > 10_000:  # drop the expired ones now and then: the dict stays small
                self._marks = {k: v for k, v in self._marks.items() if v[1] > now}
            current = self._marks.get(org_id)
            best = max(lsn, current[0]) if current and current[1] > now else lsn
            self._marks[org_id] = (best, now + self.ttl_seconds)

    def pending(self, org_id: str) -> int | None:
        with self._lock:
            mark = self._marks.get(org_id)
        return mark[0] if mark and mark[1] > self._monotonic() else None


# Keep the highest position: two write requests of one organisation may record theirs out of order. Positions are
# bytes of WAL; Lua numbers are doubles, exact up to 2^53 bytes (8 PiB of WAL).
_NOTE_MAX = """
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > current then
  redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
else
  redis.call('EXPIRE', KEYS[1], ARGV[2])
end
return 1
"""


class RedisWriteMarks:
    """Write positions in Redis (`headroom:replica:lsn:<org id>`), shared by every API process."""

    def __init__(self, redis_url: str, ttl_seconds: int = MARK_TTL_SECONDS) -> None:
        self._client = redis_client(redis_url, MARKS_REDIS_TIMEOUT)
        self._note = self._client.register_script(_NOTE_MAX)
        self.ttl_seconds = ttl_seconds

    @staticmethod
    def key(org_id: str) -> str:
        return f"headroom:replica:lsn:{org_id}"

    def note(self, org_id: str, lsn: int) -> None:
        self._note(keys=[self.key(org_id)], args=[lsn, self.ttl_seconds])

    def pending(self, org_id: str) -> int | None:
        raw: Any = self._client.get(self.key(org_id))
        return int(raw) if raw is not None else None


def read_status(session: Session) -> ReplicaStatus:
    """The replica's replayed position and lag (one small query)."""
    row = session.execute(STATUS_SQL).one()
    return ReplicaStatus(
        replay_lsn=int(row.replay_lsn) if row.replay_lsn is not None else None,
        lag_seconds=float(row.lag_seconds) if row.lag_seconds is not None else None,
    )


class ReplicaReadFailed(Exception):
    """The replica failed a read that began there (raised by the read session's dependency, api.deps)."""


class ReplicaFallback:
    """Pure ASGI middleware: a GET whose replica failed under it is handled again with the replica barred
    (`scope["state"]["replica_failed"]`, so its reads use the primary), unless its answer had begun."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") not in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        started = False

        async def send_tracked(message: Any) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, send_tracked)
        except ReplicaReadFailed:
            if started:
                raise
            scope.setdefault("state", {})["replica_failed"] = True
            await self.app(scope, receive, send)


class ReplicaRouter:
    """Hands a read the replica's session when it is safe to read there, and records write positions."""

    def __init__(
        self,
        replica_url: str,
        marks: WriteMarks,
        *,
        max_lag_seconds: float,
        retry_seconds: float = RETRY_SECONDS,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        # No pool pre-ping: the status query each read runs first is the ping (one round trip, not two); a pooled
        # connection the replica dropped (a restart) fails it and is replaced once (_read_status).
        self.engine = create_engine(
            normalise_database_url(replica_url),
            pool_size=5,
            max_overflow=10,
            hide_parameters=True,
            connect_args={"connect_timeout": CONNECT_TIMEOUT_SECONDS},
        )
        self.sessions = sessionmaker(bind=self.engine, expire_on_commit=False, autoflush=False)
        self.marks = marks
        self.max_lag_seconds = max_lag_seconds
        self.retry_seconds = retry_seconds
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._down = False
        self._down_until = 0.0

    def read_session(self, org_id: str) -> tuple[Session | None, str]:
        """A session on the replica for a read of the organisation, or None (read on the primary) and why."""
        session, reason = self._choose(org_id)
        count_read(REPLICA if session is not None else "primary", reason)
        return session, reason

    def _choose(self, org_id: str) -> tuple[Session | None, str]:
        if not self._may_try():
            return None, UNREACHABLE
        try:
            pending = self.marks.pending(org_id)
        except Exception as exc:  # noqa: BLE001 - Redis down: read on the primary, which has every write
            log.warning("db.replica_marks_unavailable", error_type=type(exc).__name__)
            return None, MARKS_UNAVAILABLE
        try:
            session, status = self._read_status()
        except Exception as exc:  # noqa: BLE001 - whatever the replica does, the read goes on on the primary
            self._went_down(exc)
            return None, UNREACHABLE
        self._came_up()
        reason = route_for(status, pending, self.max_lag_seconds)
        if reason != REPLICA:
            session.close()
            return None, reason
        return session, REPLICA

    def _read_status(self) -> tuple[Session, ReplicaStatus]:
        """A replica session and the replica's status read on it; a pooled connection found dead is replaced once."""
        for attempt in (1, 2):
            session = self.sessions()
            try:
                return session, read_status(session)
            except DBAPIError as exc:
                session.close()
                if attempt == 2 or not exc.connection_invalidated:
                    raise
            except BaseException:
                session.close()
                raise
        raise AssertionError("unreachable")  # pragma: no cover

    def note_write(self, org_id: str, primary: Session) -> None:
        """Record the primary's WAL position after the organisation's write request committed."""
        try:
            lsn = int(primary.execute(PRIMARY_LSN_SQL).scalar_one())
            self.marks.note(org_id, lsn)
        except Exception as exc:  # noqa: BLE001 - the write is committed; a lost mark is logged, not a 500
            # Without the mark a read could miss this write on the replica for up to the max lag. Redis down also
            # fails the reads' look-up, which then go to the primary.
            log.warning("db.replica_write_mark_failed", error_type=type(exc).__name__)

    def read_failed(self, exc: BaseException) -> None:
        """Log a read the replica failed (it is answered again on the primary; the next read checks the replica)."""
        log.warning("db.replica_read_failed", error_type=type(exc).__name__)

    def status(self) -> ReplicaStatus:
        """The replica's status read now (for /metrics); raises when it does not answer."""
        with self.sessions() as session:
            return read_status(session)

    @property
    def down(self) -> bool:
        return self._down

    def _may_try(self) -> bool:
        with self._lock:
            if not self._down:
                return True
            now = self._monotonic()
            if now < self._down_until:
                return False
            # This request probes the replica; the others keep reading on the primary meanwhile.
            self._down_until = now + self.retry_seconds
            return True

    def _went_down(self, exc: BaseException) -> None:
        with self._lock:
            was_down = self._down
            self._down = True
            self._down_until = self._monotonic() + self.retry_seconds
        if not was_down:
            log.warning("db.replica_down", error_type=type(exc).__name__, retry_seconds=self.retry_seconds)

    def _came_up(self) -> None:
        if not self._down:
            return
        with self._lock:
            was_down, self._down = self._down, False
        if was_down:
            log.info("db.replica_up")

    def dispose(self) -> None:
        self.engine.dispose()
