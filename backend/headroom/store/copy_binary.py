"""Encode packed hour rows as PostgreSQL's binary COPY stream with numpy, for the points table's columns
(series_id int8, bucket_at timestamptz, org_id uuid, vals float8[]).

psycopg's own binary dumper builds each float8[] element in Python; encoding a whole batch of rows at once with
numpy is several times faster and is what lets ingest run close to the speed of a bare COPY.
Format: PostgreSQL docs, "COPY ... Binary Format" and the array send function (array_send in arrayfuncs.c):
ndim, has-null flag, element type OID (701 = float8), then per dimension size and lower bound, then per element a
length (-1 for NULL) and the big-endian value.
"""

from __future__ import annotations

import datetime as dt
import struct
import uuid
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

HEADER = b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0)
TRAILER = struct.pack(">h", -1)
FLOAT8_OID = 701
_PG_EPOCH = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)


def encode_rows(
    keys: Sequence[tuple[int, dt.datetime]], rows: NDArray[np.float64], org_id: uuid.UUID
) -> bytes:
    """Return the binary COPY stream for hour rows: keys[i] = (series_id, hour), rows[i] = 60 slots (NaN = NULL)."""
    n, slots = rows.shape
    out = bytearray(HEADER)
    if n == 0:
        return bytes(out + TRAILER)
    series = np.array([k[0] for k in keys], dtype=">i8")
    micros = np.array([int((k[1] - _PG_EPOCH).total_seconds()) * 1_000_000 for k in keys], dtype=">i8")
    org = org_id.bytes
    null = np.isnan(rows)
    full = ~null.any(axis=1)

    # Rows without NULLs all have the same size: build them as one structured array.
    array_len = 20 + slots * 12
    record = np.dtype([
        ("nfields", ">i2"),
        ("sid_len", ">i4"), ("sid", ">i8"),
        ("ts_len", ">i4"), ("ts", ">i8"),
        ("org_len", ">i4"), ("org", "V16"),
        ("arr_len", ">i4"), ("ndim", ">i4"), ("hasnull", ">i4"), ("oid", ">i4"), ("dim", ">i4"), ("lbound", ">i4"),
        ("elems", [("len", ">i4"), ("val", ">f8")], (slots,)),
    ])
    dense = np.zeros(int(full.sum()), dtype=record)
    if dense.size:
        dense["nfields"] = 4
        dense["sid_len"], dense["sid"] = 8, series[full]
        dense["ts_len"], dense["ts"] = 8, micros[full]
        dense["org_len"], dense["org"] = 16, np.frombuffer(org, dtype="V16")[0]
        dense["arr_len"], dense["ndim"], dense["hasnull"], dense["oid"] = array_len, 1, 0, FLOAT8_OID
        dense["dim"], dense["lbound"] = slots, 1
        dense["elems"]["len"] = 8
        dense["elems"]["val"] = rows[full]
        out += dense.tobytes()

    # Rows with empty slots: element lengths vary, so build them one by one (collectors' overlap rows, 5-minute data).
    for i in np.flatnonzero(~full):
        present = ~null[i]
        body = struct.pack(">iiiii", 1, 1, FLOAT8_OID, slots, 1)
        elems = bytearray()
        for value, ok in zip(rows[i].tolist(), present.tolist(), strict=True):
            elems += struct.pack(">id", 8, value) if ok else b"\xff\xff\xff\xff"
        array = body + bytes(elems)
        out += struct.pack(">hiqiqi", 4, 8, int(series[i]), 8, int(micros[i]), 16) + org
        out += struct.pack(">i", len(array)) + array
    return bytes(out + TRAILER)


INT2_OID = 21


def _array_fields(name: str, elem: str, slots: int) -> list[tuple[str, object]]:
    return [
        (f"{name}_len", ">i4"), (f"{name}_ndim", ">i4"), (f"{name}_hasnull", ">i4"), (f"{name}_oid", ">i4"),
        (f"{name}_dim", ">i4"), (f"{name}_lbound", ">i4"), (name, [("len", ">i4"), ("val", elem)], (slots,)),
    ]


def _fill_array(rec: NDArray[np.void], name: str, oid: int, values: NDArray[np.generic], size: int) -> None:
    slots = values.shape[1]
    rec[f"{name}_len"] = 20 + slots * (4 + size)
    rec[f"{name}_ndim"], rec[f"{name}_hasnull"], rec[f"{name}_oid"] = 1, 0, oid
    rec[f"{name}_dim"], rec[f"{name}_lbound"] = slots, 1
    rec[name]["len"] = size
    rec[name]["val"] = values


def encode_rollup_rows(
    series_ids: NDArray[np.int64],
    resolution_seconds: int,
    day_micros: NDArray[np.int64],
    org_ids: Sequence[uuid.UUID],
    avg: NDArray[np.float64],
    maximum: NDArray[np.float64],
    minimum: NDArray[np.float64],
    count: NDArray[np.int64],
) -> bytes:
    """Binary COPY stream for metric_rollups rows (series_id, resolution_seconds, day_at, org_id, avg, max, min,
    cnt). Empty buckets carry NaN aggregates and a zero count, so every array is NULL-free and fixed-size."""
    n, slots = avg.shape
    record = np.dtype([
        ("nfields", ">i2"),
        ("sid_len", ">i4"), ("sid", ">i8"),
        ("res_len", ">i4"), ("res", ">i4"),
        ("day_len", ">i4"), ("day", ">i8"),
        ("org_len", ">i4"), ("org", "V16"),
        *_array_fields("avg", ">f8", slots),
        *_array_fields("max", ">f8", slots),
        *_array_fields("min", ">f8", slots),
        *_array_fields("cnt", ">i2", slots),
    ])
    rec = np.zeros(n, dtype=record)
    rec["nfields"] = 8
    rec["sid_len"], rec["sid"] = 8, series_ids
    rec["res_len"], rec["res"] = 4, resolution_seconds
    rec["day_len"], rec["day"] = 8, day_micros
    rec["org_len"] = 16
    rec["org"] = np.frombuffer(b"".join(o.bytes for o in org_ids), dtype="V16")
    _fill_array(rec, "avg", FLOAT8_OID, avg, 8)
    _fill_array(rec, "max", FLOAT8_OID, maximum, 8)
    _fill_array(rec, "min", FLOAT8_OID, minimum, 8)
    _fill_array(rec, "cnt", INT2_OID, count.astype(np.int16), 2)
    return HEADER + rec.tobytes() + TRAILER
