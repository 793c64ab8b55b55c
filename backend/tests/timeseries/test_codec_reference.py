"""The codec's bytes against a plain, one-value-at-a-time reading of the format its docstring defines (kind, e,
widths, presence bitmap, then the first integer and the deltas in the row's widths, or raw float64): the numpy
encoder may be rearranged for speed, the bytes it stores may not change. And pack_batches (a whole batch at a
time) against pack_points (one point at a time)."""

from __future__ import annotations

import datetime as dt
import math
import struct

import numpy as np
from headroom.timeseries import codec
from headroom.timeseries import repository as ts
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp


def _signed_bytes(low: int, high: int) -> int:
    """Fewest bytes of two's complement holding every integer in [low, high]; 0 when both are 0."""
    if low == 0 and high == 0:
        return 0
    return next(k for k in range(1, 9) if -(1 << (8 * k - 1)) <= low and high < 1 << (8 * k - 1))


def _bits(x: float) -> int:
    return int(struct.unpack("<q", struct.pack("<d", x))[0])


def _reference_row(row: np.ndarray) -> bytes:
    present = [i for i in range(60) if not math.isnan(row[i])]
    bitmap = sum(1 << i for i in present).to_bytes(8, "little")
    for e in range(codec.MAX_EXPONENT + 1):
        scale = 10.0**e
        ints = []
        for i in present:
            with np.errstate(over="ignore", invalid="ignore"):
                scaled = float(np.rint(np.float64(row[i]) * scale)) + 0.0
            if not abs(scaled) < 2.0**53 or _bits(scaled / scale) != _bits(float(row[i])):
                break
            ints.append(int(scaled))
        else:
            deltas = [b - a for a, b in zip(ints, ints[1:], strict=False)]
            first_width = _signed_bytes(ints[0], ints[0]) if ints else 0
            delta_width = _signed_bytes(min(deltas, default=0), max(deltas, default=0)) if deltas else 0
            body = b"".join([ints[0].to_bytes(8, "little", signed=True)[:first_width]] if ints else []) + b"".join(
                d.to_bytes(8, "little", signed=True)[:delta_width] for d in deltas)
            return bytes([codec.DECIMAL, e, first_width << 4 | delta_width]) + bitmap + body
    return bytes([codec.RAW, 0, 0x88]) + bitmap + b"".join(struct.pack("<d", row[i]) for i in present)


def _assert_reference_bytes(rows: np.ndarray) -> None:
    buffer, lengths = codec.encode(rows)
    assert codec.split(buffer, lengths) == [_reference_row(r) for r in rows]


# Full hours (the encoder's fast path) whose deltas need every width from 0 to 8 bytes, and rows with gaps.
def _walk(scale: float, decimals: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.round(1000 + np.cumsum(rng.normal(0, scale, (20, 60)), axis=1), decimals)


def test_full_hours_of_every_delta_width_are_the_reference_bytes() -> None:
    blocks = [np.zeros((3, 60)), np.full((3, 60), 7.0)]
    blocks += [_walk(scale, decimals, seed) for seed, (scale, decimals) in enumerate(
        [(0.01, 2), (1.0, 3), (100.0, 3), (1e4, 3), (1e7, 2), (1e9, 3), (1e12, 2), (3e14, 0)])]
    rows = np.concatenate(blocks)
    widths = {part.shape[1] for _, part in codec.encode_groups(rows)}
    assert {codec.HEADER_BYTES + fw + 59 * dw for fw in range(9) for dw in range(9)} & widths  # many layouts
    assert len(widths) >= 8
    _assert_reference_bytes(rows)
    _assert_reference_bytes(rows[::-1].copy())  # another grouping of the same rows
    gappy = rows.copy()
    gappy[:, 5::7] = np.nan
    _assert_reference_bytes(gappy)


values = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.decimals(min_value=-10**12, max_value=10**12, places=3, allow_nan=False).map(float),
    st.integers(min_value=-(2**62), max_value=2**62).map(float),
)


@settings(max_examples=150, deadline=None)
@given(hnp.arrays(np.float64, st.tuples(st.integers(1, 8), st.just(60)), elements=values),
       st.sampled_from([0.0, 0.5, 1.0]))
def test_any_rows_are_the_reference_bytes(rows: np.ndarray, full_share: float) -> None:
    # Make some rows full decimal hours (the grouped fast path), the others as drawn.
    full = np.arange(rows.shape[0]) < full_share * rows.shape[0]
    rows[full] = np.where(np.isfinite(rows[full]), rows[full], 1.25)
    _assert_reference_bytes(rows)


T0 = dt.datetime(2026, 11, 2, tzinfo=dt.UTC)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(
    st.integers(0, 3),  # series
    st.integers(0, 3 * 1440),  # first minute
    st.sampled_from([60, 300, 120, 3600, 7200]),  # step
    st.lists(st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True, width=32)), max_size=200),
), min_size=1, max_size=5))
def test_pack_batches_equals_packing_their_points_one_by_one(
        batches: list[tuple[int, int, int, list[float | None]]]) -> None:
    series_batches = [ts.SeriesBatch(sid, T0 + dt.timedelta(minutes=first), step, [np.nan if v is None else v
                                                                                    for v in vals])
                      for sid, first, step, vals in batches]
    rows, nan, unaligned = ts.pack_batches(series_batches)
    points = [(b.series_id, b.start + dt.timedelta(seconds=i * b.step_seconds), float(v))
              for b in series_batches for i, v in enumerate(b.values)]
    want, want_nan, want_unaligned = ts.pack_points(points)
    assert (nan, unaligned) == (want_nan, want_unaligned)
    got_order, want_order = np.lexsort((rows.hours, rows.series)), np.lexsort((want.hours, want.series))
    assert rows.series[got_order].tolist() == want.series[want_order].tolist()
    assert rows.hours[got_order].tolist() == want.hours[want_order].tolist()
    assert rows.values[got_order].tobytes() == want.values[want_order].tobytes()


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 3 * 1440), st.sampled_from([60, 300, 120, 3600, 7200]),
       hnp.arrays(np.float64, st.tuples(st.integers(2, 6), st.integers(1, 150)),
                  elements=st.floats(allow_nan=True, allow_infinity=True, width=32)),
       st.integers(0, 2))
def test_batches_on_one_grid_pack_as_their_points_one_by_one(
        first: int, step: int, grid: np.ndarray, off_grid: int) -> None:
    # One batch per series, all on the same grid (the grouped path) but for `off_grid` of them, which start a
    # minute later (packed one by one); the first series' values as a list, with None for its gaps.
    columns: list[list[float | None] | np.ndarray] = [[None if np.isnan(v) else float(v) for v in grid[0]],
                                                      *grid[1:]]
    series_batches = [ts.SeriesBatch(sid, T0 + dt.timedelta(minutes=first + (sid < off_grid)), step, vals)
                      for sid, vals in enumerate(columns)]
    rows, nan, unaligned = ts.pack_batches(series_batches)
    points = [(b.series_id, b.start + dt.timedelta(seconds=i * b.step_seconds), np.nan if v is None else float(v))
              for b in series_batches for i, v in enumerate(b.values)]
    want, want_nan, want_unaligned = ts.pack_points(points)
    assert (nan, unaligned) == (want_nan, want_unaligned)
    got_order, want_order = np.lexsort((rows.hours, rows.series)), np.lexsort((want.hours, want.series))
    assert rows.series[got_order].tolist() == want.series[want_order].tolist()
    assert rows.hours[got_order].tolist() == want.hours[want_order].tolist()
    assert rows.values[got_order].tobytes() == want.values[want_order].tobytes()


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 3), st.integers(1, 3), st.integers(0, 2), st.sampled_from([60, 120, 300, 3600, 7200]),
       st.sampled_from([0.0, 1e308]))
def test_full_grids_pack_as_their_points_one_by_one(
        first_hour: int, hours: int, extra: int, step: int, scale: float) -> None:
    # Series with every value present on one grid: from a whole hour and whole hours long (the rows are the
    # values reshaped), or a minute late and some minutes longer, or sparser than an hour. Values near the float64
    # maximum make their sum overflow, so that the mask is computed although every value is finite.
    rng = np.random.default_rng(first_hour * 100 + hours * 10 + extra)
    late = extra > 0
    size = (hours * 3600 // step) + extra
    grid = np.round(rng.uniform(1, 1000, (4, size)), 3) + scale
    series_batches = [ts.SeriesBatch(sid, T0 + dt.timedelta(hours=first_hour, minutes=late), step, grid[sid])
                      for sid in range(4)]
    rows, nan, unaligned = ts.pack_batches(series_batches)
    points = [(b.series_id, b.start + dt.timedelta(seconds=i * b.step_seconds), float(v))
              for b in series_batches for i, v in enumerate(b.values)]
    want, want_nan, want_unaligned = ts.pack_points(points)
    assert (nan, unaligned) == (want_nan, want_unaligned) == (0, 0)
    assert len(rows) == len(want)
    got_order, want_order = np.lexsort((rows.hours, rows.series)), np.lexsort((want.hours, want.series))
    assert rows.series[got_order].tolist() == want.series[want_order].tolist()
    assert rows.hours[got_order].tolist() == want.hours[want_order].tolist()
    assert rows.values[got_order].tobytes() == want.values[want_order].tobytes()
