"""The numpy binary codecs against a real PostgreSQL: what we encode as binary COPY, PostgreSQL reads back
exactly, and what it sends (array_send), we decode exactly (or refuse)."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import numpy as np
import pytest
from headroom.timeseries.copy_binary import decode_float8_rows, decode_int8_array, encode_rows

PG_EPOCH = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)


def _read_back(db: Any, table: str) -> tuple[Any, Any, Any]:
    """The store's read-back query shape (timeseries._read_days): ids, times and slot arrays as array_send."""
    conn = db.connection().connection.driver_connection
    with conn.cursor(binary=True) as cur:
        cur.execute(
            "SELECT array_send(array_agg(series_id ORDER BY series_id)), "
            "array_send(array_agg(bucket_at ORDER BY series_id)), "
            "string_agg(array_send(array_replace(vals, NULL, 'NaN'::float8)), ''::bytea ORDER BY series_id), "
            f"count(*) FROM {table}"
        )
        sids, stamps, packed, n = cur.fetchone()
    return decode_int8_array(sids), decode_int8_array(stamps), decode_float8_rows(packed, n, 60)


def test_encode_then_decode_round_trips_through_postgres(db: Any) -> None:
    conn = db.connection().connection.driver_connection
    org = uuid.uuid4()
    hours = [dt.datetime(2026, 11, 2, h, tzinfo=dt.UTC) for h in range(3)]
    rows = np.arange(180, dtype=float).reshape(3, 60) / 7
    rows[1, [0, 17, 59]] = np.nan  # empty slots travel as NULLs (a row with NULLs next to full rows)
    keys = [(11, hours[0]), (12, hours[1]), (13, hours[2])]
    with conn.cursor() as cur:
        cur.execute("CREATE TEMP TABLE rt (series_id bigint, bucket_at timestamptz, org_id uuid, vals float8[])")
        with cur.copy("COPY rt FROM STDIN (FORMAT BINARY)") as copy:
            copy.write(encode_rows(np.array([k[0] for k in keys]),
                                   np.array([int((k[1] - PG_EPOCH).total_seconds()) * 1_000_000 for k in keys]),
                                   rows, org))
        cur.execute("SELECT count(*) FILTER (WHERE v IS NULL) FROM rt, unnest(vals) v")
        assert cur.fetchone()[0] == 3
        cur.execute("SELECT array_position(vals, NULL) FROM rt ORDER BY series_id")
        assert [r[0] for r in cur.fetchall()] == [None, 1, None]
    sids, micros, values = _read_back(db, "rt")
    assert sids.tolist() == [11, 12, 13]
    assert [PG_EPOCH + dt.timedelta(microseconds=int(m)) for m in micros] == hours
    np.testing.assert_array_equal(values, rows)  # NaN where the NULLs were, bit-exact elsewhere


def test_decoders_refuse_other_shapes(db: Any) -> None:
    conn = db.connection().connection.driver_connection
    with conn.cursor(binary=True) as cur:
        cur.execute("SELECT array_send(array_fill(NULL::float8, ARRAY[60])), "
                    "array_send(array_fill(1::float8, ARRAY[59])), array_send(ARRAY[1, NULL]::int8[]), "
                    "array_send('{}'::int8[])")
        with_nulls, short, int_nulls, empty = cur.fetchone()
    with pytest.raises(ValueError):
        decode_float8_rows(with_nulls, 1, 60)  # NULL elements: another size
    with pytest.raises(ValueError):
        decode_float8_rows(short, 1, 60)
    with pytest.raises(ValueError):
        decode_int8_array(int_nulls)
    assert decode_int8_array(empty).size == 0


def test_sparse_rows_encode_like_postgres_itself(db: Any) -> None:
    """5-minute data fills every fifth slot: PostgreSQL must read the NULL-heavy rows back slot for slot."""
    conn = db.connection().connection.driver_connection
    rng = np.random.default_rng(3)
    rows = rng.uniform(0, 1e6, size=(200, 60))
    rows[rng.uniform(size=rows.shape) < 0.7] = np.nan
    rows[5] = np.nan  # an all-empty row is still a valid 60-NULL array
    micros = np.arange(200, dtype=np.int64) * 3_600_000_000
    with conn.cursor() as cur:
        cur.execute("CREATE TEMP TABLE sp (series_id bigint, bucket_at timestamptz, org_id uuid, vals float8[])")
        with cur.copy("COPY sp FROM STDIN (FORMAT BINARY)") as copy:
            copy.write(encode_rows(np.arange(200), micros, rows, uuid.uuid4()))
    _, _, back = _read_back(db, "sp")
    np.testing.assert_array_equal(back, rows)


def test_rollup_arrays_decode_from_array_send_and_refuse_other_shapes(db: Any) -> None:
    from headroom.timeseries.copy_binary import decode_rollup_arrays

    conn = db.connection().connection.driver_connection
    with conn.cursor(binary=True) as cur:
        cur.execute("SELECT array_send(ARRAY[1.5, 'NaN', 3]::float8[]) || array_send(ARRAY[2, 'NaN', 4]::float8[]) "
                    "|| array_send(ARRAY[1, 'NaN', 2]::float8[]) || array_send(ARRAY[2, 0, 7]::int2[])")
        (packed,) = cur.fetchone()
        avg, mx, mn, cnt = decode_rollup_arrays(packed, 1, 3)
        np.testing.assert_array_equal(avg, [[1.5, np.nan, 3]])
        np.testing.assert_array_equal(mx, [[2, np.nan, 4]])
        np.testing.assert_array_equal(cnt, [[2, 0, 7]])
        with pytest.raises(ValueError):
            decode_rollup_arrays(packed, 1, 4)  # wrong slot count
        cur.execute("SELECT array_send(ARRAY[1, NULL, 3]::float8[]) || array_send(ARRAY[1, 2, 3]::float8[]) "
                    "|| array_send(ARRAY[1, 2, 3]::float8[]) || array_send(ARRAY[1, 2, 3]::int2[])")
        (with_null,) = cur.fetchone()
        with pytest.raises(ValueError):
            decode_rollup_arrays(with_null, 1, 3)
