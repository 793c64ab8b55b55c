"""The hour-row codec (headroom.timeseries.codec): every row comes back bit for bit, whatever it holds, and the
common rows (full hours of few-digit decimals) take a few bytes a point."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from headroom.timeseries import codec
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp


def _round_trip(rows: np.ndarray) -> tuple[np.ndarray, bytes, np.ndarray]:
    buffer, lengths = codec.encode(rows)
    return codec.decode(buffer, lengths), buffer, lengths


def _assert_same(got: np.ndarray, want: np.ndarray) -> None:
    """Equal bit for bit where a point is, NaN (no point) where none is."""
    assert got.shape == want.shape
    gap = np.isnan(want)
    assert (np.isnan(got) == gap).all()
    assert (got[~gap].view(np.int64) == want[~gap].view(np.int64)).all()


def _row(*points: tuple[int, float]) -> np.ndarray:
    row = np.full(60, np.nan)
    for slot, value in points:
        row[slot] = value
    return row


CASES = {
    "full hour of 3-decimal values": np.round(1000 + np.cumsum(np.linspace(-3, 3, 60)), 3),
    "gaps (a CloudWatch 5-minute series)": _row(*((slot, 12.5 * slot) for slot in range(0, 60, 5))),
    "single point": _row((37, 42.0)),
    "single point in slot 59": _row((59, -7.25)),
    "no point at all": np.full(60, np.nan),
    "negative zero among zeros": _row((0, 0.0), (1, -0.0), (2, 0.0)),
    "infinities": _row((3, np.inf), (4, -np.inf), (5, 1.5)),
    "huge values": _row((0, 1.7976931348623157e308), (1, -1e300), (2, 5e-324)),
    "beyond 2**53 as integers": _row((0, 2.0**60), (1, 2.0**60 + 2**8)),
    "17 significant digits": _row((0, 0.1 + 0.2), (1, 1 / 3), (2, np.pi)),
    "constant": np.full(60, 99.5),
    "alternating extremes": np.where(np.arange(60) % 2 == 0, 9e15, -9e15),
    "irregular minutes": _row((1, 1.0), (2, 2.0), (7, 3.0), (8, 4.0), (33, 5.0), (58, 6.0)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_every_case_round_trips_alone_and_in_a_batch(name: str) -> None:
    row = CASES[name][None, :]
    got, _, _ = _round_trip(row)
    _assert_same(got, row)
    everything = np.stack(list(CASES.values()))
    got, _, _ = _round_trip(everything)
    _assert_same(got, everything)


def test_layout_of_a_decimal_row() -> None:
    """kind, exponent, widths, bitmap, the first integer and the deltas, as the module docstring says."""
    row = _row((0, 1.25), (1, 1.5), (3, 1.0))
    _, buffer, lengths = _round_trip(row[None, :])
    kind, exponent, widths = buffer[0], buffer[1], buffer[2]
    bitmap = struct.unpack("<Q", buffer[3:11])[0]
    assert (kind, exponent, bitmap) == (codec.DECIMAL, 2, 0b1011)
    assert widths == (1 << 4) | 1  # 125 fits one byte, and so do the deltas +25 and -50
    assert buffer[11:] == bytes([125, 25, 256 - 50])
    assert lengths.tolist() == [14]


def test_negative_zero_and_infinity_rows_are_stored_raw() -> None:
    for name in ("negative zero among zeros", "infinities", "17 significant digits"):
        _, buffer, _ = _round_trip(CASES[name][None, :])
        assert buffer[0] == codec.RAW, name


def test_full_hours_of_decimals_take_about_two_bytes_a_point() -> None:
    # A random walk written with 3 decimals, as bench/timeseries_bench.py generates: per-minute steps of a few
    # units in the third decimal need 2 bytes each, plus the 11-byte header and the first value per row.
    rng = np.random.default_rng(3)
    rows = np.round(2000 * np.exp(np.cumsum(rng.normal(0, 0.002, (100, 60)), axis=1)), 3)
    got, buffer, _ = _round_trip(rows)
    _assert_same(got, rows)
    assert len(buffer) / rows.size < 2.3


def test_integer_counters_take_about_a_byte_a_point() -> None:
    rows = np.cumsum(np.full((10, 60), 100.0), axis=1) + np.arange(60) % 3
    got, buffer, _ = _round_trip(rows)
    _assert_same(got, rows)
    assert len(buffer) / rows.size < 1.3


def test_groups_cover_every_row_once_with_their_own_encoding() -> None:
    everything = np.stack(list(CASES.values()))
    buffer, lengths = codec.encode(everything)
    rows = codec.split(buffer, lengths)
    seen = np.zeros(len(everything), int)
    for index, encoded in codec.encode_groups(everything):
        seen[index] += 1
        for i, line in zip(index.tolist(), encoded, strict=True):
            assert line.tobytes() == rows[i]
    assert seen.tolist() == [1] * len(everything)


def test_corrupt_input_is_refused_not_misread() -> None:
    buffer, lengths = codec.encode(CASES["full hour of 3-decimal values"][None, :])
    with pytest.raises(ValueError):
        codec.decode(buffer[:-1], lengths)
    with pytest.raises(ValueError):
        codec.decode(bytes([7]) + buffer[1:], lengths)
    with pytest.raises(ValueError):
        codec.decode(buffer, lengths - 1)


finite_or_not = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.decimals(min_value=-10**9, max_value=10**9, places=3, allow_nan=False).map(float),
    st.integers(min_value=-(2**62), max_value=2**62).map(float),
)


@settings(max_examples=200, deadline=None)
@given(hnp.arrays(np.float64, st.tuples(st.integers(0, 6), st.just(60)), elements=finite_or_not))
def test_any_rows_round_trip_bit_for_bit(rows: np.ndarray) -> None:
    got, _, _ = _round_trip(rows)
    _assert_same(got, rows)
