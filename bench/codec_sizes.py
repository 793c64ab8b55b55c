"""Bytes per point of each way to store the points, on bench/timeseries_bench.py's data (values only: the
table's row overhead is the same for all but the lz4/pglz day rows, which hold 24 times fewer rows).

- float8[60] hour rows, the layout before headroom.timeseries.codec: 8 bytes a value plus the array header.
- Gorilla XOR (Pelkonen et al., VLDB 2015, section 4.1.2, https://www.vldb.org/pvldb/vol8/p1816-teller.pdf),
  as Prometheus's XOR chunks encode values: the exact bit count of the paper's control bits, leading-zero and
  length fields and meaningful bits; timestamps add one bit a point for a regular series (delta of delta 0).
- lz4 and pglz TOAST compression of one float8[1440] a series' day (PostgreSQL's column compression, "CREATE
  TABLE ... COMPRESSION", https://www.postgresql.org/docs/current/sql-createtable.html; it only applies to values
  over TOAST_TUPLE_THRESHOLD, ~2 kB, https://www.postgresql.org/docs/current/storage-toast.html, so an hour row
  never qualifies), measured in the database when --database-url is given.
- headroom.timeseries.codec: decimal scaling + deltas (ALP's idea), the encoding metric_points uses.

    uv run python bench/codec_sizes.py --days 2 [--database-url URL]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
from headroom.timeseries import codec
from sqlalchemy import create_engine, text
from timeseries_bench import generate


def leading_zeros(x: np.ndarray) -> np.ndarray:
    """Exact count of leading zero bits of uint64 values (64 for 0)."""
    n = np.zeros(x.shape, np.int64)
    x = x.copy()
    for shift in (32, 16, 8, 4, 2, 1):
        top = x < (np.uint64(1) << np.uint64(64 - shift))
        n += np.where(top, shift, 0)
        x = np.where(top, x << np.uint64(shift), x)
    return np.where(x == 0, 64, n)


def trailing_zeros(x: np.ndarray) -> np.ndarray:
    """Exact count of trailing zero bits of uint64 values (64 for 0)."""
    low = x & (~x + np.uint64(1))  # the lowest set bit alone
    return np.where(x == 0, 64, 63 - leading_zeros(low))


def gorilla_value_bits(data: np.ndarray) -> int:
    """Bits of Gorilla's XOR encoding of each row of values (one row = one series), first value included."""
    bits = data.view(np.uint64)
    series = data.shape[0]
    total = 64 * series
    window_lead = np.full(series, 64)  # no window yet: the first non-zero XOR opens one
    window_trail = np.zeros(series, np.int64)
    prev = bits[:, 0]
    for i in range(1, data.shape[1]):
        x = bits[:, i] ^ prev
        prev = bits[:, i]
        zero = x == 0
        lead = np.minimum(leading_zeros(x), 31)  # the 5-bit field caps it
        trail = trailing_zeros(x)
        fits = ~zero & (window_lead <= lead) & (window_trail <= trail)
        total += int(zero.sum())  # '0'
        total += int((2 + 64 - window_lead[fits] - window_trail[fits]).sum())  # '10' + the window's bits
        new = ~zero & ~fits
        total += int((2 + 5 + 6 + 64 - lead[new] - trail[new]).sum())  # '11' + lead + length + bits
        window_lead = np.where(new, lead, window_lead)
        window_trail = np.where(new, trail, window_trail)
    return total


def toast_bytes(url: str, data: np.ndarray) -> dict[str, float]:
    """pg_column_size of each series' days as float8[1440] under lz4 and pglz, per point."""
    days = data.reshape(data.shape[0], -1, 1440).reshape(-1, 1440)
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("CREATE TEMP TABLE day_rows (a float8[] COMPRESSION lz4, b float8[] COMPRESSION pglz)"))
        for i in range(0, len(days), 200):
            conn.execute(text("INSERT INTO day_rows SELECT x, x FROM unnest(CAST(:rows AS text[])) AS r(t), "
                              "LATERAL (SELECT CAST(r.t AS float8[]) AS x) q"),
                         {"rows": ["{" + ",".join(map(repr, row.tolist())) + "}" for row in days[i : i + 200]]})
        lz4, pglz, plain = conn.execute(text(
            "SELECT sum(pg_column_size(a)), sum(pg_column_size(b)), count(*) * (20 + 1440 * 8) FROM day_rows")).one()
    return {"float8_day_uncompressed": round(plain / data.size, 3), "float8_day_lz4": round(lz4 / data.size, 3),
            "float8_day_pglz": round(pglz / data.size, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--days", type=int, default=2)
    parser.add_argument("--database-url")
    parser.add_argument("--out", type=Path, default=Path("bench/results/codec_sizes.json"))
    args = parser.parse_args()
    data = generate(args.days)
    points = data.size
    rows = data.reshape(-1, codec.SLOTS)
    t0 = time.perf_counter()
    buffer, lengths = codec.encode(rows)
    encode_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    back = codec.decode(buffer, lengths)
    decode_s = time.perf_counter() - t0
    assert (back.view(np.int64) == rows.view(np.int64)).all()
    gorilla = gorilla_value_bits(data)
    out: dict[str, Any] = {
        "days": args.days, "points": points,
        "bytes_per_point_values_only": {
            "float8_hour_array": round((20 + 8 * codec.SLOTS) / codec.SLOTS, 3),
            "gorilla_xor": round(gorilla / 8 / points, 3),
            "gorilla_xor_plus_regular_timestamps": round((gorilla + points) / 8 / points, 3),
            "decimal_delta_codec": round(len(buffer) / points, 3),
        },
        "codec_million_points_per_s": {"encode": round(points / encode_s / 1e6, 1),
                                       "decode": round(points / decode_s / 1e6, 1)},
    }
    if args.database_url:
        out["bytes_per_point_values_only"].update(toast_bytes(args.database_url, data))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
