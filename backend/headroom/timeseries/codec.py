"""Pack an hour row's 60 one-minute slots into a few bytes, and back, vectorised over many rows at once.

Timestamps cost nothing: a row is one series' hour and slot i is minute i, so a 60-bit presence bitmap is all
that marks the gaps (the implicit step of time-series stores; docs/reference/timeseries-encoding.md).

Values use decimal scaling + delta, the idea of ALP (Afroozeh, Kuffo, Boncz, "ALP: Adaptive Lossless
floating-Point Compression", SIGMOD 2024, https://dl.acm.org/doi/10.1145/3626717): metric values are mostly
decimals written with a few digits (1234.567, 42, 0.25), so for the smallest exponent e with which every value
of the row survives `rint(v * 10**e) / 10**e` bit for bit, the row is stored as integers: the first one whole
and the others as deltas from their predecessor, all two's complement in the row's byte widths. A row that no
exponent fits (a -0.0, an infinity, 17 significant digits) is stored as raw float64: lossless either way. It
was measured against Gorilla's XOR encoding (Pelkonen et al., VLDB 2015,
https://www.vldb.org/pvldb/vol8/p1816-teller.pdf), which Prometheus's chunks use: bench/codec_sizes.py.

One row's bytes:
  kind (1 byte: 0 raw, 1 decimal) | e (1) | widths (1: first value's bytes << 4 | delta bytes) |
  presence bitmap (8, little-endian, bit i = slot i) |
  raw: each present value as little-endian float64 | decimal: the first integer, then each delta.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

SLOTS = 60
HEADER_BYTES = 11
RAW, DECIMAL = 0, 1
MAX_EXPONENT = 15
# Integers up to 2**53 are exact in float64 (IEEE 754 binary64's 53-bit significand), so the scaled values and
# their deltas stay exact.
_EXACT = float(2**53)
_POW10 = 10.0 ** np.arange(MAX_EXPONENT + 1)  # 10**e is exact in float64 for e <= 22
_BYTE = np.arange(8)
_FULL_BITMAP = np.frombuffer(((1 << SLOTS) - 1).to_bytes(8, "little"), np.uint8)
_LIMITS = np.array([1 << (8 * k - 1) for k in range(1, 8)], np.int64)  # +-2**(8k-1): k-byte two's complement

Groups = list[tuple[NDArray[np.intp], NDArray[np.uint8]]]


def _signed_width(low: NDArray[np.int64], high: NDArray[np.int64]) -> NDArray[np.int64]:
    """Bytes of two's complement that hold every value in [low, high] (0 when both are 0)."""
    width = np.where((low == 0) & (high == 0), 0, 1).astype(np.int64)
    for k, limit in enumerate(_LIMITS, start=1):
        width = np.where((high >= limit) | (low < -limit), k + 1, width)
    return width


def _probe_exponents(values: NDArray[np.float64], present: NDArray[np.bool_] | None) -> NDArray[np.int64]:
    """A candidate exponent per row from every 7th slot (MAX_EXPONENT + 1 where none fits); `present` None: every
    slot holds a value."""
    rows = values.shape[0]
    probe_present = None if present is None else present[:, ::7]
    probe = np.ascontiguousarray(values[:, ::7]) if probe_present is None or probe_present.all() \
        else np.where(probe_present, values[:, ::7], 0.0)
    start = np.full(rows, MAX_EXPONENT + 1, np.int64)
    open_rows: NDArray[np.intp] | None = None  # None: every row is still open (no copy of the probe needed)
    with np.errstate(invalid="ignore", over="ignore"):
        for e in range(MAX_EXPONENT + 1):
            p = probe if open_rows is None else probe[open_rows]
            if not p.shape[0]:
                break
            scaled = np.multiply(p, _POW10[e])
            np.rint(scaled, out=scaled)
            scaled += 0.0  # turns -0.0 into 0.0, as the integer will
            same = np.divide(scaled, _POW10[e]).view(np.int64) == p.view(np.int64)
            same &= np.abs(scaled) < _EXACT
            ok = same.all(axis=1)
            if open_rows is None:
                start[ok] = e
                if ok.all():
                    break
                open_rows = np.flatnonzero(~ok)
            else:
                start[open_rows[ok]] = e
                open_rows = open_rows[~ok]
    return start


def _scaled_if_exact(values: NDArray[np.float64], e: int, *, full: bool = False, scratch: list[NDArray[np.float64]]
                     | None = None) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """rint(values * 10**e) and, per row, whether every non-NaN value comes back from it bit for bit.
    full: the rows hold no NaN (skips looking for them). scratch: receives the array of the values brought back,
    free to reuse (a fresh array of this size costs its page faults again)."""
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = np.multiply(values, _POW10[e])
        np.rint(scaled, out=scaled)
        scaled += 0.0
        back = np.divide(scaled, _POW10[e])
        same = back.view(np.int64) == values.view(np.int64)
        if scratch is not None:
            scratch.append(back)
        if full:
            # The common case, whole matrices at once: every value survives and fits (no row-wise reduction).
            if same.all() and scaled.max(initial=0.0) < _EXACT and scaled.min(initial=0.0) > -_EXACT:
                return scaled, np.ones(values.shape[0], dtype=bool)
            return scaled, same.all(axis=1) & (np.abs(scaled).max(axis=1) < _EXACT)
        same |= np.isnan(values)
        ok = same.all(axis=1) & (np.fmax.reduce(np.abs(scaled), axis=1) < _EXACT)
    return scaled, ok | np.isnan(values).all(axis=1)


def _exponents(values: NDArray[np.float64], present: NDArray[np.bool_]) -> NDArray[np.int64]:
    """The smallest exponent per row that every present value survives, -1 if none."""
    exponent = np.full(values.shape[0], -1, np.int64)
    start = _probe_exponents(values, present)
    todo = np.flatnonzero(start <= MAX_EXPONENT)
    while todo.size:
        for e in np.unique(start[todo]).tolist():
            rows = todo[start[todo] == e]
            _, ok = _scaled_if_exact(values[rows], e)
            exponent[rows[ok]] = e
            start[rows[~ok]] += 1
        todo = todo[(exponent[todo] < 0) & (start[todo] <= MAX_EXPONENT)]
    return exponent


def _put_ints(target: NDArray[np.uint8], ints: NDArray[np.int64], width: int) -> None:
    """Write each integer's low `width` bytes, little-endian, into the rows of `target` (rows x n*width bytes):
    a width of 1, 2, 4 or 8 bytes is one casting copy into a view of the bytes, the others a byte gather."""
    if width in (1, 2, 4, 8):
        np.copyto(target.view(f"<i{width}"), ints, casting="unsafe")  # C casts keep the low bytes
    elif width:
        low = ints.astype("<i8", copy=False).view(np.uint8).reshape(*ints.shape, 8)[..., :width]
        target.reshape(*ints.shape, width)[...] = low


def _dense_group(scaled: NDArray[np.float64], e: int, index: NDArray[np.intp],
                 scratch: NDArray[np.float64] | None = None) -> Groups:
    """Full rows of one exponent (their scaled values, integers) as integers: one fixed-size group per (first
    width, delta width). scratch: an array of scaled's shape to overwrite; then scaled is overwritten too."""
    if scratch is None:
        ints = scaled.astype(np.int64)
        deltas = np.empty_like(ints)
    else:  # the integers in scratch, the deltas over the scaled values: no new array of this size
        ints = scratch.view(np.int64)
        np.copyto(ints, scaled, casting="unsafe")  # the same C cast as astype
        deltas = scaled.view(np.int64)
    deltas[:, 0] = ints[:, 0]
    np.subtract(ints[:, 1:], ints[:, :-1], out=deltas[:, 1:])
    body = deltas[:, 1:]
    first_width = _signed_width(deltas[:, 0], deltas[:, 0])
    delta_width = _signed_width(body.min(axis=1), body.max(axis=1))
    key = first_width * 16 + delta_width
    groups: Groups = []
    keys = np.unique(key).tolist()
    for k in keys:
        sel: NDArray[np.intp] | slice = np.flatnonzero(key == k) if len(keys) > 1 else slice(None)
        fw, dw = k >> 4, k & 15
        n = key.size if isinstance(sel, slice) else sel.size
        part = np.empty((n, HEADER_BYTES + fw + (SLOTS - 1) * dw), np.uint8)
        part[:, 0], part[:, 1], part[:, 2] = DECIMAL, e, k
        part[:, 3:HEADER_BYTES] = _FULL_BITMAP
        _put_ints(part[:, HEADER_BYTES : HEADER_BYTES + fw], deltas[sel, :1], fw)
        _put_ints(part[:, HEADER_BYTES + fw :], body[sel], dw)
        groups.append((index[sel], part))
    return groups


def _encode_cells(values: NDArray[np.float64], present: NDArray[np.bool_],
                  exponent: NDArray[np.int64]) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
    """Any rows (gaps, raw) point by point: each value a cell of 8 little-endian bytes of which the row's width
    is kept. Returns the rows' encodings back to back and their lengths."""
    rows = values.shape[0]
    count = present.sum(axis=1)
    decimal = exponent >= 0
    row_of = np.repeat(np.arange(rows), count)
    starts = np.cumsum(count) - count
    is_first = np.zeros(row_of.size, bool)
    is_first[starts[count > 0]] = True
    cells = values[present].view(np.int64).copy()
    dec_point = decimal[row_of]
    with np.errstate(invalid="ignore", over="ignore"):
        ints = (np.rint(values[present][dec_point] * _POW10[exponent[row_of[dec_point]]]) + 0.0).astype(np.int64)
    deltas = np.empty_like(ints)
    if ints.size:
        deltas[0] = ints[0]
        deltas[1:] = ints[1:] - ints[:-1]
        firsts = is_first[dec_point]
        deltas[firsts] = ints[firsts]
    cells[dec_point] = deltas
    first_width = np.full(rows, 8, np.int64)
    delta_width = np.full(rows, 8, np.int64)
    dec_rows = np.flatnonzero(decimal & (count > 0))
    if dec_rows.size:
        first_width[dec_rows] = _signed_width(cells[starts[dec_rows]], cells[starts[dec_rows]])
        rest = np.where(is_first, 0, cells)
        low = np.zeros(rows, np.int64)
        high = np.zeros(rows, np.int64)
        np.minimum.at(low, row_of, rest)
        np.maximum.at(high, row_of, rest)
        delta_width[dec_rows] = _signed_width(low[dec_rows], high[dec_rows])
    first_width[decimal & (count == 0)] = 0
    delta_width[decimal & (count == 0)] = 0
    point_width = np.where(is_first, first_width[row_of], delta_width[row_of])
    # The header as two more cells per row: kind|e|widths (3 bytes) and the bitmap (8 bytes).
    head = (np.where(decimal, DECIMAL, RAW) | (np.maximum(exponent, 0) << 8)
            | (((first_width << 4) | delta_width) << 16))
    per_row = count + 2
    row_cell = np.cumsum(per_row) - per_row
    all_cells = np.empty(int(per_row.sum()), np.int64)
    all_width = np.empty(all_cells.size, np.int64)
    all_cells[row_cell], all_width[row_cell] = head, 3
    all_cells[row_cell + 1] = np.packbits(present, axis=1, bitorder="little").view("<i8").reshape(-1)
    all_width[row_cell + 1] = 8
    point_cell = np.ones(all_cells.size, bool)
    point_cell[row_cell] = point_cell[row_cell + 1] = False
    all_cells[point_cell], all_width[point_cell] = cells, point_width
    out = all_cells.astype("<i8").view(np.uint8).reshape(-1, 8)[all_width[:, None] > _BYTE]
    lengths = HEADER_BYTES + np.where(count > 0, first_width + delta_width * np.maximum(count - 1, 0), 0)
    return out, lengths


def all_finite(values: NDArray[np.float64]) -> bool:
    """Whether every value is finite, in one pass without a mask: a NaN or an infinity makes the sum non-finite.
    The one false "no" is a sum of finite values that overflows, which only costs the caller its masked path."""
    with np.errstate(invalid="ignore", over="ignore"):
        return bool(np.isfinite(values.sum()))


def encode_groups(values: NDArray[np.float64]) -> Groups:
    """Pack (rows x 60) slots (NaN = no point) into groups of equally long encodings: (row indexes, a matrix of
    one encoded row per line). Fixed-size groups are what a binary COPY stream is built from fastest."""
    groups, other, buf, lengths = _encode_parts(values)
    if other.size:
        offset = np.cumsum(lengths) - lengths
        for length in np.unique(lengths).tolist():
            sel = np.flatnonzero(lengths == length)
            groups.append((other[sel], buf[offset[sel][:, None] + np.arange(length)]))
    return groups


def _encode_parts(values: NDArray[np.float64]
                  ) -> tuple[Groups, NDArray[np.intp], NDArray[np.uint8], NDArray[np.int64]]:
    """The full rows of one exponent as groups (_dense_group), and the other rows (their indexes) encoded back to
    back with their lengths (_encode_cells)."""
    values = np.ascontiguousarray(values, dtype=np.float64).reshape(-1, SLOTS)
    groups: Groups = []
    if values.shape[0] == 0:
        return groups, np.empty(0, np.intp), np.empty(0, np.uint8), np.empty(0, np.int64)
    present = None if all_finite(values) else ~np.isnan(values)  # all finite: every row is full
    start = _probe_exponents(values, present)
    dense = start <= MAX_EXPONENT if present is None else present.all(axis=1) & (start <= MAX_EXPONENT)
    leftover = [np.flatnonzero(~dense)]
    for e in np.unique(start[dense]).tolist():
        rows = np.flatnonzero(dense & (start == e))
        # All rows in one exponent (the usual batch): the matrix itself, no gathered copy.
        scratch: list[NDArray[np.float64]] = []
        scaled, ok = _scaled_if_exact(values if rows.size == values.shape[0] else values[rows], e, full=True,
                                      scratch=scratch)
        if ok.all():
            groups += _dense_group(scaled, e, rows, scratch[0])
        elif ok.any():
            groups += _dense_group(scaled[ok], e, rows[ok])
        leftover.append(rows[~ok])
    other = np.concatenate(leftover)
    if not other.size:
        return groups, other, np.empty(0, np.uint8), np.empty(0, np.int64)
    other_present = ~np.isnan(values[other]) if present is None else present[other]
    buf, lengths = _encode_cells(values[other], other_present, _exponents(values[other], other_present))
    return groups, other, buf, lengths


def encode(values: NDArray[np.float64]) -> tuple[bytes, NDArray[np.int64]]:
    """Pack (rows x 60) slots (NaN = no point) into one buffer of the rows' encodings back to back, in row
    order; return it and each row's length in bytes."""
    groups, other, buf, other_lengths = _encode_parts(values)
    lengths = np.zeros(sum(g[0].size for g in groups) + other.size, np.int64)
    for index, part in groups:
        lengths[index] = part.shape[1]
    lengths[other] = other_lengths
    if not groups and bool((other == np.arange(other.size)).all()):
        return buf.tobytes(), lengths  # no full row: the other rows' encodings are the buffer, in row order
    offset = np.cumsum(lengths) - lengths
    out = np.empty(int(lengths.sum()), np.uint8)
    for index, part in groups:
        out[(offset[index][:, None] + np.arange(part.shape[1])).reshape(-1)] = part.reshape(-1)
    if other.size:
        # Each other row's bytes to its place: its offset in the output less its offset in buf, plus the position.
        shift = offset[other] - (np.cumsum(other_lengths) - other_lengths)
        out[np.repeat(shift, other_lengths) + np.arange(buf.size)] = buf
    return out.tobytes(), lengths


def split(buffer: bytes, lengths: NDArray[np.int64]) -> list[bytes]:
    """The rows' encodings of a buffer as separate byte strings."""
    ends = np.cumsum(lengths).tolist()
    return [buffer[a:b] for a, b in zip([0, *ends[:-1]], ends, strict=True)]


def decode(buffer: bytes, lengths: NDArray[np.int64]) -> NDArray[np.float64]:
    """Unpack rows encoded back to back (each of lengths[i] bytes) into a (rows x 60) matrix, NaN = no point."""
    rows = int(lengths.size)
    out = np.full((rows, SLOTS), np.nan)
    if rows == 0:
        return out
    buf = np.frombuffer(buffer + bytes(8), dtype=np.uint8)
    if buf.size - 8 != int(lengths.sum()) or (lengths < HEADER_BYTES).any():
        raise ValueError("encoded rows do not match their lengths")
    offset = np.cumsum(lengths) - lengths
    kind = buf[offset].astype(np.int64)
    exponent = buf[offset + 1].astype(np.int64)
    first_width = (buf[offset + 2] >> 4).astype(np.int64)
    delta_width = (buf[offset + 2] & 15).astype(np.int64)
    decimal = kind == DECIMAL
    if ((kind != RAW) & ~decimal).any() or (exponent > MAX_EXPONENT).any() or (first_width > 8).any() \
            or (delta_width > 8).any() or (~decimal & ((first_width != 8) | (delta_width != 8))).any():
        raise ValueError("unknown row encoding")
    present = np.unpackbits(buf[(offset + 3)[:, None] + _BYTE], axis=1, count=SLOTS, bitorder="little").astype(bool)
    count = present.sum(axis=1)
    if (HEADER_BYTES + np.where(count > 0, first_width + delta_width * np.maximum(count - 1, 0), 0) != lengths).any():
        raise ValueError("encoded rows do not match their headers")
    full = present.all(axis=1) & decimal
    if full.all():  # the common case as whole matrices
        return _decode_dense(buf, offset, exponent, first_width, delta_width)
    if full.any():
        idx = np.flatnonzero(full)
        out[idx] = _decode_dense(buf, offset[idx], exponent[idx], first_width[idx], delta_width[idx])
    idx = np.flatnonzero(~full)
    out[idx] = _decode_cells(buf, offset[idx], decimal[idx], exponent[idx], first_width[idx], delta_width[idx],
                             present[idx])
    return out


def _sign_extend(raw: NDArray[np.uint8], width: NDArray[np.int64]) -> NDArray[np.int64]:
    """(n x 8) little-endian bytes of which the first width[i] hold a two's complement integer."""
    raw[width[:, None] <= _BYTE] = 0
    x = raw.view("<i8").reshape(-1).astype(np.int64)
    shift = (64 - 8 * np.clip(width, 1, 8)).astype(np.int64)
    return np.where(width > 0, (x << shift) >> shift, 0)


def _decode_dense(buf: NDArray[np.uint8], offset: NDArray[np.int64], exponent: NDArray[np.int64],
                  first_width: NDArray[np.int64], delta_width: NDArray[np.int64]) -> NDArray[np.float64]:
    out = np.empty((offset.size, SLOTS))
    key = (first_width * 16 + delta_width) * 16 + exponent
    for k in np.unique(key).tolist():
        sel = np.flatnonzero(key == k)
        e, fw, dw, n = k & 15, k >> 8, (k >> 4) & 15, sel.size
        at = offset[sel][:, None] + HEADER_BYTES
        ints = np.zeros((n, SLOTS), np.int64)
        first = np.zeros((n, 8), np.uint8)
        first[:, :fw] = buf[at + np.arange(fw)]
        ints[:, 0] = _sign_extend(first, np.full(n, fw))
        if dw:
            cells = np.zeros((n, SLOTS - 1, 8), np.uint8)
            cells[:, :, :dw] = buf[at + fw + np.arange((SLOTS - 1) * dw)].reshape(n, SLOTS - 1, dw)
            shift = 64 - 8 * dw
            ints[:, 1:] = (cells.view("<i8").reshape(n, SLOTS - 1).astype(np.int64) << shift) >> shift
        np.cumsum(ints, axis=1, out=ints)
        out[sel] = ints / _POW10[e]
    return out


def _decode_cells(buf: NDArray[np.uint8], offset: NDArray[np.int64], decimal: NDArray[np.bool_],
                  exponent: NDArray[np.int64], first_width: NDArray[np.int64], delta_width: NDArray[np.int64],
                  present: NDArray[np.bool_]) -> NDArray[np.float64]:
    out = np.full((offset.size, SLOTS), np.nan)
    count = present.sum(axis=1)
    row_of = np.repeat(np.arange(offset.size), count)
    index_in_row = np.arange(row_of.size) - (np.cumsum(count) - count)[row_of]
    first_w, delta_w = first_width[row_of], delta_width[row_of]
    start = offset[row_of] + HEADER_BYTES + np.where(index_in_row > 0, first_w + (index_in_row - 1) * delta_w, 0)
    width = np.where(index_in_row > 0, delta_w, first_w)
    cells = _sign_extend(buf[start[:, None] + _BYTE], width)
    flat = cells.view(np.float64).copy()
    dec_point = decimal[row_of]
    if dec_point.any():
        deltas = cells[dec_point]
        running = np.cumsum(deltas)  # wraps modulo 2**64 like the subtraction below: exact for |ints| < 2**53
        firsts = np.flatnonzero(index_in_row[dec_point] == 0)
        before = np.zeros(firsts.size, np.int64)
        before[1:] = running[firsts[1:] - 1]
        ints = running - np.repeat(before, np.diff(np.append(firsts, deltas.size)))
        flat[dec_point] = ints / _POW10[exponent[row_of[dec_point]]]
    out[present] = flat
    return out
