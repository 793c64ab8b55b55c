"""metric_points.vals: the 60 one-minute slots packed into bytea by headroom.timeseries.codec (a presence bitmap
and decimal deltas, ~2.2 bytes a point) instead of a float8[60] with NULLs (8 bytes a point plus the array's
header); existing rows are converted both ways.

Revision ID: c4d8a2e6f1b3
Revises: c3d8a5e1f7b9
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from headroom.timeseries import codec
from headroom.timeseries.copy_binary import decode_float8_rows, decode_int8_array, encode_packed_rows, encode_rows

revision: str = "c4d8a2e6f1b3"
down_revision: str | None = "c3d8a5e1f7b9"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BATCH_ROWS = 20_000  # hour rows per round trip (~10 MB of float8 arrays)
PG_EPOCH = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)  # binary timestamptz counts microseconds from here


def _batches(cur, select: str):  # type: ignore[no-untyped-def]
    """Yield (series ids, bucket micros, payload bytes[, lengths]) of metric_points in key order, a batch at a
    time (keyset pagination)."""
    last: tuple[int, dt.datetime] | None = None
    while True:
        where = "" if last is None else "WHERE (series_id, bucket_at) > (%(sid)s, %(at)s)"
        cur.execute(
            f"WITH page AS (SELECT series_id, bucket_at, vals FROM metric_points {where} "
            f"ORDER BY series_id, bucket_at LIMIT {BATCH_ROWS}) "
            "SELECT array_send(array_agg(series_id ORDER BY series_id, bucket_at)), "
            "array_send(array_agg(bucket_at ORDER BY series_id, bucket_at)), "
            f"{select} FROM page",
            {} if last is None else {"sid": last[0], "at": last[1]},
        )
        row = cur.fetchone()
        if row is None or row[0] is None:
            return
        yield row
        sids, micros = decode_int8_array(row[0]), decode_int8_array(row[1])
        last = (int(sids[-1]), PG_EPOCH + dt.timedelta(microseconds=int(micros[-1])))


def upgrade() -> None:
    op.add_column("metric_points", sa.Column("packed", sa.LargeBinary(), nullable=True))
    conn = op.get_bind().connection.driver_connection
    with conn.cursor(binary=True) as cur, conn.cursor() as out:
        out.execute("CREATE TEMP TABLE _packed (series_id bigint, bucket_at timestamptz, org_id uuid, vals bytea)")
        for row in _batches(cur, "string_agg(array_send(array_replace(vals, NULL, 'NaN'::float8)), ''::bytea "
                                 "ORDER BY series_id, bucket_at)"):
            sids, micros = decode_int8_array(row[0]), decode_int8_array(row[1])
            values = decode_float8_rows(row[2], sids.size, codec.SLOTS)
            # The update below takes only vals from the stage: any org_id fills the stream's column.
            stream = encode_packed_rows(sids, micros, codec.encode_groups(values), uuid.UUID(int=0))
            out.execute("TRUNCATE _packed")
            with out.copy("COPY _packed (series_id, bucket_at, org_id, vals) FROM STDIN (FORMAT BINARY)") as copy:
                copy.write(stream)
            out.execute("UPDATE metric_points p SET packed = s.vals FROM _packed s "
                        "WHERE p.series_id = s.series_id AND p.bucket_at = s.bucket_at")
        out.execute("DROP TABLE _packed")
    op.drop_constraint(op.f("ck_metric_points_sixty_slots"), "metric_points", type_="check")
    op.drop_column("metric_points", "vals")
    op.alter_column("metric_points", "packed", new_column_name="vals", nullable=False)


def downgrade() -> None:
    op.add_column("metric_points", sa.Column("slots", sa.ARRAY(sa.Double()), nullable=True))
    conn = op.get_bind().connection.driver_connection
    with conn.cursor(binary=True) as cur, conn.cursor() as out:
        out.execute("CREATE TEMP TABLE _slots (series_id bigint, bucket_at timestamptz, org_id uuid, "
                    "vals float8[])")
        for row in _batches(cur, "array_send(array_agg(octet_length(vals)::int8 ORDER BY series_id, bucket_at)), "
                                 "string_agg(vals, ''::bytea ORDER BY series_id, bucket_at)"):
            sids, micros = decode_int8_array(row[0]), decode_int8_array(row[1])
            values = codec.decode(row[3], decode_int8_array(row[2]))
            out.execute("TRUNCATE _slots")
            with out.copy("COPY _slots (series_id, bucket_at, org_id, vals) FROM STDIN (FORMAT BINARY)") as copy:
                copy.write(encode_rows(sids, micros, values, uuid.UUID(int=0)))  # NaN -> NULL
            out.execute("UPDATE metric_points p SET slots = s.vals FROM _slots s "
                        "WHERE p.series_id = s.series_id AND p.bucket_at = s.bucket_at")
        out.execute("DROP TABLE _slots")
    op.drop_column("metric_points", "vals")
    op.alter_column("metric_points", "slots", new_column_name="vals", nullable=False)
    op.create_check_constraint(op.f("ck_metric_points_sixty_slots"), "metric_points", "cardinality(vals) = 60")
