"""Encode packed hour rows as PostgreSQL's binary COPY stream with numpy, for the points table's columns
(series_id int8, bucket_at timestamptz, org_id uuid, vals bytea: headroom.timeseries.codec's encoding), and the
float8[] slot arrays the table held before that encoding (the migration between the two).

psycopg's own binary dumper builds each float8[] element in Python; encoding a whole batch of rows at once with
numpy is several times faster and is what lets ingest run close to the speed of a bare COPY.
Format: PostgreSQL docs, "COPY ... Binary Format" and the array send function (array_send in arrayfuncs.c):
ndim, has-null flag, element type OID (701 = float8), then per dimension size and lower bound, then per element a
length (-1 for NULL) and the big-endian value.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

HEADER = b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0)
TRAILER = struct.pack(">h", -1)
FLOAT8_OID = 701


def _point_record(slots: int) -> np.dtype:
    return np.dtype([
        ("nfields", ">i2"),
        ("sid_len", ">i4"), ("sid", ">i8"),
        ("ts_len", ">i4"), ("ts", ">i8"),
        ("org_len", ">i4"), ("org", "V16"),
        ("arr_len", ">i4"), ("ndim", ">i4"), ("hasnull", ">i4"), ("oid", ">i4"), ("dim", ">i4"), ("lbound", ">i4"),
        ("elems", [("len", ">i4"), ("val", ">f8")], (slots,)),
    ])


def encode_rows(
    series_ids: NDArray[np.int64], bucket_micros: NDArray[np.int64], rows: NDArray[np.float64], org_id: uuid.UUID,
    *, header: bool = True, trailer: bool = True,
) -> bytes:
    """Return the binary COPY stream for hour rows: row i is (series_ids[i], bucket_at as microseconds since
    2000-01-01, org_id, rows[i] as float8[] with NaN -> NULL). header/trailer=False gives a middle part of a
    stream sent in slices."""
    head, tail = (HEADER if header else b""), (TRAILER if trailer else b"")
    n, slots = rows.shape
    if n == 0:
        return head + tail
    record = _point_record(slots)
    rec = np.zeros(n, dtype=record)
    null = np.isnan(rows)
    rec["nfields"] = 4
    rec["sid_len"], rec["sid"] = 8, series_ids
    rec["ts_len"], rec["ts"] = 8, bucket_micros
    rec["org_len"], rec["org"] = 16, np.frombuffer(org_id.bytes, dtype="V16")[0]
    rec["ndim"], rec["oid"], rec["dim"], rec["lbound"] = 1, FLOAT8_OID, slots, 1
    rec["elems"]["val"] = rows
    if not null.any():  # every slot present: fixed-size tuples, the buffer as it is
        rec["arr_len"], rec["hasnull"] = 20 + slots * 12, 0
        rec["elems"]["len"] = 8
        return head + rec.tobytes() + tail
    # Some slots empty: a NULL element is its length (-1) alone, so build the fixed layout and then drop the
    # 8 value bytes of every NULL element with one boolean mask over the bytes.
    nulls = null.sum(axis=1)
    rec["arr_len"] = 20 + slots * 12 - nulls * 8
    rec["hasnull"] = (nulls > 0).astype(np.int32)
    rec["elems"]["len"] = np.where(null, -1, 8)
    raw = rec.view(np.uint8).reshape(n, record.itemsize)
    keep = np.ones((n, record.itemsize), dtype=bool)
    assert record.fields is not None  # a structured dtype always has fields
    first_elem = record.fields["elems"][1]
    value_bytes = keep[:, first_elem:].reshape(n, slots, 12)[:, :, 4:]
    value_bytes[null] = False
    return head + raw[keep].tobytes() + tail


def encode_packed_rows(
    series_ids: NDArray[np.int64], bucket_micros: NDArray[np.int64], groups: Sequence[tuple[NDArray[np.intp],
                                                                                          NDArray[np.uint8]]],
    org_id: uuid.UUID, *, header: bool = True, trailer: bool = True,
) -> bytes:
    """Return the binary COPY stream of (series_id, bucket_at, org_id, vals bytea) rows: each group is (row
    indexes into series_ids/bucket_micros, one encoded row per line), as codec.encode_groups returns them. Rows
    go out group by group (a fixed-size record each), not in index order."""
    parts = [HEADER if header else b""]
    org = np.frombuffer(org_id.bytes, dtype="V16")[0]
    for index, encoded in groups:
        n, size = encoded.shape
        record = np.dtype([
            ("nfields", ">i2"), ("sid_len", ">i4"), ("sid", ">i8"), ("ts_len", ">i4"), ("ts", ">i8"),
            ("org_len", ">i4"), ("org", "V16"), ("vals_len", ">i4"), ("vals", "u1", (size,)),
        ])
        rec = np.empty(n, dtype=record)
        rec["nfields"], rec["sid_len"], rec["ts_len"], rec["org_len"], rec["vals_len"] = 4, 8, 8, 16, size
        rec["sid"], rec["ts"], rec["org"] = series_ids[index], bucket_micros[index], org
        rec["vals"] = encoded
        parts.append(rec.tobytes())
    parts.append(TRAILER if trailer else b"")
    return b"".join(parts)


INT2_OID = 21


def _array_fields(name: str, elem: str, slots: int) -> list[tuple[Any, ...]]:
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
    spans: tuple[NDArray[np.int64], NDArray[np.int64]] | None = None,
) -> bytes:
    """Binary COPY stream for metric_rollups rows (series_id, resolution_seconds, day_at, org_id, avg, max, min,
    cnt). Empty buckets carry NaN aggregates and a zero count, so every array is NULL-free and fixed-size.
    `spans`: two more int4 columns per row, the first and last slot (1-based) that the row's arrays recompute."""
    n, slots = avg.shape
    extra = [("lo_len", ">i4"), ("lo", ">i4"), ("hi_len", ">i4"), ("hi", ">i4")] if spans is not None else []
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
        *extra,
    ])
    rec = np.zeros(n, dtype=record)
    rec["nfields"] = 8 if spans is None else 10
    rec["sid_len"], rec["sid"] = 8, series_ids
    rec["res_len"], rec["res"] = 4, resolution_seconds
    rec["day_len"], rec["day"] = 8, day_micros
    rec["org_len"] = 16
    rec["org"] = np.frombuffer(b"".join(o.bytes for o in org_ids), dtype="V16")
    _fill_array(rec, "avg", FLOAT8_OID, avg, 8)
    _fill_array(rec, "max", FLOAT8_OID, maximum, 8)
    _fill_array(rec, "min", FLOAT8_OID, minimum, 8)
    _fill_array(rec, "cnt", INT2_OID, count.astype(np.int16), 2)
    if spans is not None:
        rec["lo_len"], rec["lo"] = 4, spans[0]
        rec["hi_len"], rec["hi"] = 4, spans[1]
    return HEADER + rec.tobytes() + TRAILER


def _decode_sent_arrays(
    packed: bytes, rows: int, slots: int, columns: Sequence[tuple[str, str, int, int]], what: str
) -> dict[str, NDArray[np.generic]]:
    """Parse `rows` repetitions of concatenated array_send outputs, one per (name, numpy element type, element
    OID, element size) column, each a one-dimensional array of `slots` elements without NULLs. Anything else
    (another size, a NULL, another type) raises ValueError rather than being read as garbage."""
    # array_send has no leading length word (COPY/result framing adds it): the layout without the "_len" fields.
    record = np.dtype([f for name, elem, _oid, _size in columns for f in _array_fields(name, elem, slots)
                       if f[0] != f"{name}_len"])
    if len(packed) != rows * record.itemsize:
        raise ValueError(f"{len(packed)} bytes of {what} for {rows} rows of {record.itemsize} bytes")
    got = np.frombuffer(packed, dtype=record)
    for name, _elem, oid, size in columns:
        if not ((got[f"{name}_ndim"] == 1).all() and (got[f"{name}_dim"] == slots).all()
                and (got[f"{name}_hasnull"] == 0).all() and (got[f"{name}_oid"] == oid).all()
                and (got[name]["len"] == size).all()):
            raise ValueError(f"unexpected layout of the {name} arrays in the {what}")
    return {name: got[name]["val"] for name, *_ in columns}


def decode_rollup_arrays(
    packed: bytes, rows: int, slots: int
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]]:
    """Parse rows x (array_send(avg) || array_send(max) || array_send(min) || array_send(cnt)) of metric_rollups
    at one resolution into (rows x slots) avg, max, min and count. Rollup arrays never hold NULLs (an empty
    bucket is NaN with a zero count), so each row has one size."""
    got = _decode_sent_arrays(packed, rows, slots, [
        ("avg", ">f8", FLOAT8_OID, 8), ("max", ">f8", FLOAT8_OID, 8), ("min", ">f8", FLOAT8_OID, 8),
        ("cnt", ">i2", INT2_OID, 2)], "rollup arrays")
    return (got["avg"].astype(np.float64), got["max"].astype(np.float64), got["min"].astype(np.float64),
            got["cnt"].astype(np.int64))


def decode_int8_array(sent: bytes) -> NDArray[np.int64]:
    """Parse array_send of a one-dimensional int8 (or timestamptz: microseconds since 2000-01-01) array without
    NULLs."""
    ndim, hasnull, _oid = struct.unpack(">iii", sent[:12])
    if ndim == 0:
        return np.empty(0, np.int64)
    n, _lbound = struct.unpack(">ii", sent[12:20])
    if ndim != 1 or hasnull or len(sent) != 20 + n * 12:
        raise ValueError("not a one-dimensional int8 array without NULLs")
    got = np.frombuffer(sent, dtype=[("len", ">i4"), ("v", ">i8")], offset=20)
    if not (got["len"] == 8).all():
        raise ValueError("unexpected element length in an int8 array")
    return got["v"].astype(np.int64)


def decode_float8_rows(packed: bytes, rows: int, slots: int) -> NDArray[np.float64]:
    """Parse `rows` concatenated array_send outputs of float8 arrays of `slots` elements without NULLs (the
    raw points' slot arrays with NULL replaced by NaN) into a (rows x slots) matrix."""
    got = _decode_sent_arrays(packed, rows, slots, [("v", ">f8", FLOAT8_OID, 8)], "slot arrays")
    return got["v"].astype(np.float64)
