"""Per-(source, series) ingest watermarks so a collector resumes exactly where it stopped. Callers commit."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Mapping, Sequence

from sqlalchemy import text
from sqlalchemy.orm import Session

from headroom.platform.db import driver_cursor


def get_watermarks(
    db: Session, org_id: uuid.UUID, source_kind: str, source_id: uuid.UUID, series_ids: Sequence[int]
) -> dict[int, dt.datetime]:
    """Return the newest ingested timestamp per series (series never ingested are absent)."""
    if not series_ids:
        return {}
    rows = db.execute(
        text(
            "SELECT series_id, watermark_at FROM ingest_watermarks WHERE org_id = :org AND source_kind = :kind "
            "AND source_id = :src AND series_id = ANY(:ids)"
        ),
        {"org": org_id, "kind": source_kind, "src": source_id, "ids": list(series_ids)},
    )
    return {int(sid): at for sid, at in rows}


def newest_watermark(db: Session, org_id: uuid.UUID, source_kind: str, source_id: uuid.UUID) -> dt.datetime | None:
    """Return the newest watermark of any of a source's series (None: nothing ingested yet)."""
    with driver_cursor(db) as cur:  # the driver's cursor: a collector asks every minute, the ORM's statement cost more
        cur.execute("SELECT max(watermark_at) FROM ingest_watermarks WHERE org_id = %s AND source_kind = %s "
                    "AND source_id = %s", (org_id, source_kind, source_id))
        found = cur.fetchone()
    return found[0] if found is not None else None


def advance_watermarks(
    db: Session, org_id: uuid.UUID, source_kind: str, source_id: uuid.UUID, marks: Mapping[int, dt.datetime]
) -> None:
    """Move watermarks forward (never backward: a late re-run of an old window keeps the newer mark)."""
    if not marks:
        return
    # The arrays go as two literals, each distinct time formatted once: a sweep's marks are mostly one time, and
    # adapting hundreds of ids and datetimes one by one cost more than the statement.
    stamps: dict[dt.datetime, str] = {}
    ats = ",".join([stamps.get(at) or stamps.setdefault(at, f'"{at.isoformat()}"') for at in marks.values()])
    with driver_cursor(db) as cur:
        cur.execute(
            "INSERT INTO ingest_watermarks (org_id, source_kind, source_id, series_id, watermark_at) "
            "SELECT %(org)s, %(kind)s, %(src)s, unnest(CAST(%(ids)s AS bigint[])), "
            "unnest(CAST(%(ats)s AS timestamptz[])) "
            "ON CONFLICT (source_kind, source_id, series_id) DO UPDATE "
            "SET watermark_at = GREATEST(ingest_watermarks.watermark_at, EXCLUDED.watermark_at), updated_at = now()",
            {"org": org_id, "kind": source_kind, "src": source_id,
             "ids": "{" + ",".join(map(str, map(int, marks))) + "}", "ats": "{" + ats + "}"},
        )
