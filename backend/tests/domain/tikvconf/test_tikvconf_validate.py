"""Line numbers of an uploaded tikv.toml's keys, as a user's editor counts them."""

from __future__ import annotations

from headroom.domain.tikvconf.validate import key_lines


def test_a_line_separator_in_a_comment_does_not_shift_the_lines_after_it() -> None:
    # TOML ends a line at LF (or CRLF) only; U+2028 is an ordinary character in a comment (TOML 1.0 allows
    # non-ASCII in comments), but str.splitlines() broke there and every later key got a wrong line.
    text = "# staging\u2028copy\r\n[rocksdb]\r\nmax-background-jobs = -3\r\n\r\n[storage.block-cache]\ncapacity = 'x'\n"
    assert key_lines(text) == {"rocksdb.max-background-jobs": 3, "storage.block-cache.capacity": 6}
