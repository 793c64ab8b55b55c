"""Run a CPU-heavy pure function (reading a document a user uploaded) in a process of its own.

The parsers are pure Python: while one runs in a request thread it holds the GIL, so every other request of the
process waits for it (four 2 s topology uploads at once took another organisation's `GET /clusters` from 0.01 s
to 1.5 s). Run through `run_isolated`, the parse happens in a worker process and the request thread only waits
on a pipe, without the GIL. One worker per API process: uploads queue behind each other, never the rest of the
API; each parse is bounded in CPU time by the parser itself (domain/tikvconf/limits.py).

The worker is started by forkserver (a clean process, not a fork of a threaded server) on first use and kept. The
function and its arguments, result and exceptions cross by pickle: exceptions must pickle with their fields
(e.g. ConfigParseError.__reduce__).
"""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from typing import ParamSpec, TypeVar

from headroom.platform.errors import ServiceUnavailable

P = ParamSpec("P")
T = TypeVar("T")

WORKERS = 1
# The longest a request waits for its parse, queue included: a parse stops itself after 2 CPU seconds, so this is
# several uploads queued ahead of it.
WAIT_SECONDS = 30.0

_lock = threading.Lock()
_pool: ProcessPoolExecutor | None = None


def _executor() -> ProcessPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            _pool = ProcessPoolExecutor(max_workers=WORKERS, mp_context=multiprocessing.get_context("forkserver"))
        return _pool


def _discard(pool: ProcessPoolExecutor) -> None:
    global _pool
    with _lock:
        if _pool is pool:
            _pool = None
    pool.shutdown(wait=False, cancel_futures=True)


def run_isolated(fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """Return fn(*args, **kwargs) computed in the worker process; its exceptions are raised here."""
    pool = _executor()
    try:
        future = pool.submit(fn, *args, **kwargs)
        return future.result(timeout=WAIT_SECONDS)
    except FutureTimeout:
        raise ServiceUnavailable("Too many uploads are being read right now; try again in a minute.",
                                 code="parser_busy") from None
    except BrokenProcessPool:
        _discard(pool)  # the worker died (killed, out of memory): the next call starts a new one
        raise ServiceUnavailable("Reading the file stopped unexpectedly; try again.", code="parser_failed") from None


def shutdown(*, wait: bool = False) -> None:
    """Stop the worker (tests, process exit); with `wait`, return once it has exited.

    A process that ends without running its exit handlers (os._exit, as a pytest-xdist worker does) leaves the
    worker waiting for work forever, and with it the forkserver and resource tracker it holds open: such a
    process stops it itself, with `wait`."""
    global _pool
    with _lock:
        pool = _pool
        _pool = None
    if pool is not None:
        pool.shutdown(wait=wait, cancel_futures=True)
