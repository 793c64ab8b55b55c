"""Structured key/value logging (structlog over the standard library); secrets are scrubbed from every line.

One handler on the root logger writes every line of the process: ours (structlog events) and the libraries'
(uvicorn's error and access logs, httpx, botocore, celery), in the same format (console or JSON). Its formatter:

- renders a traceback as plain text without local variables, bounded in size (a 10 MB local or exception
  message never becomes a 10 MB line, and rendering it costs milliseconds, not a minute);
- scrubs secret VALUES from the finished text, the traceback included: the process's own secrets
  (`register_secret_values`: HEADROOM_SECRET_KEY, the SMTP, database and Redis passwords), the current request's
  credentials (`bind_request_secrets`: its bearer token, cookies, CSRF token), and anything shaped like a secret
  (an `hr_` API token, `Bearer ...`, the value after a key named like password/secret/token/cookie/credential,
  URL userinfo `user:pass@`, a 40-character AWS secret access key, a long random token).
Event keys named like a secret are redacted whole as before.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import re
import sys
import threading
import traceback
from collections.abc import Iterable
from types import TracebackType
from typing import TYPE_CHECKING, Any, TextIO

import structlog

if TYPE_CHECKING:
    from headroom.platform.settings import Settings

REDACTED = "[redacted]"
# Size bounds: one string value of an event, one rendered traceback, one console line.
VALUE_LIMIT = 8 * 1024
EXCEPTION_LIMIT = 24 * 1024
LINE_LIMIT = 48 * 1024
# Frames kept per exception of a chain (the innermost ones, where the error is).
TRACEBACK_FRAMES = 40
# Shorter values are not scrubbed by value (they would blank ordinary words); patterns still apply.
MIN_SECRET_LENGTH = 6

_SECRET_KEYS = re.compile(r"(password|secret|token|authorization|cookie|api_key|access_key)", re.I)

# A key whose value is a secret: ...password..., ...secret..., ...token..., authorization, cookie, session,
# csrf, api key, access key, private key, signature, credential (X-Amz-Signature, X-Amz-Credential).
_KEY = (
    r"[A-Za-z0-9_\-]*(?:password|passwd|pwd|secret|token|authorization|cookie|session|csrf|api[_\-]?key|"
    r"access[_\-]?key|private[_\-]?key|signature|credential)[A-Za-z0-9_\-]*"
)
_NOT_KEY_CHAR = r"(?<![A-Za-z0-9_\-])"
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # 'password': 'x' / "password": "x" / \"password\": \"x\" (JSON inside JSON)
    (
        re.compile(
            r"(?P<q>\\?[\"'])(?P<k>" + _KEY + r")(?P=q)(?P<sep>\s*[:=]\s*)[bu]?(?P<vq>\\?[\"'])(?P<v>.*?)(?P=vq)",
            re.I,
        ),
        r"\g<q>\g<k>\g<q>\g<sep>\g<vq>" + REDACTED + r"\g<vq>",
    ),
    # 'password': 12345 (a quoted key with an unquoted value)
    (
        re.compile(r"(?P<q>\\?[\"'])(?P<k>" + _KEY + r")(?P=q)(?P<sep>\s*[:=]\s*)(?![\s\"'\\\[{(]|\[redacted\])"
                   r"[^\s,;&\"'\\)\]}]+", re.I),
        r"\g<q>\g<k>\g<q>\g<sep>" + REDACTED,
    ),
    # password='x' / secret_access_key=x / ?token=x&... / headroom_session=x; (reprs, query strings, cookies)
    (
        re.compile(_NOT_KEY_CHAR + r"(?P<k>" + _KEY + r")=(?!\[redacted\])(?:'[^']*'|\"[^\"]*\"|[^\s&,;'\"\\)\]}>]+)",
                   re.I),
        r"\g<k>=" + REDACTED,
    ),
    # Header lines: "Authorization: Basic x", "Cookie: a=b; c=d" (up to a quote, a backslash or the line end).
    (
        re.compile(_NOT_KEY_CHAR + r"(?P<k>(?:proxy-)?authorization|(?:set-)?cookie|x-csrf-token|x-api-key|"
                   r"x-amz-security-token)(?P<sep>\s*:\s*)(?![\s\"'\\]|\[redacted\])[^\r\n\"'\\]+", re.I),
        r"\g<k>\g<sep>" + REDACTED,
    ),
    # Bearer <token>: a token has a digit or symbol, or is long ("a bearer token is required" keeps its words).
    (re.compile(r"\b(?P<k>Bearer)\s+(?!\[redacted\])(?=[A-Za-z]*[0-9._~+/=\-]|[A-Za-z]{20})[A-Za-z0-9._~+/=\-]+",
                re.I), r"\g<k> " + REDACTED),
    # Headroom API tokens.
    (re.compile(r"(?<![A-Za-z0-9])hr_[A-Za-z0-9_\-]{8,}"), "hr_" + REDACTED),
    # URL userinfo: scheme://user:password@host
    (re.compile(r"(?P<s>\b[A-Za-z][A-Za-z0-9+.\-]*://)[^\s/@'\"\\<>]+@"), r"\g<s>" + REDACTED + "@"),
    # Query-string parameters that carry credentials under short names.
    (re.compile(r"(?P<k>[?&](?:key|code|sig|auth)=)[^&\s\"'\\#]+", re.I), r"\g<k>" + REDACTED),
    # An AWS access key ID: AKIA (long-term) or ASIA (temporary) and 16 capitals or digits (IAM User Guide,
    # "Unique identifiers": the prefixes of access key IDs).
    (re.compile(r"(?<![A-Za-z0-9])A[KS]IA[A-Z0-9]{16}(?![A-Za-z0-9])"), REDACTED),
    # An AWS secret access key: 40 characters of base64 with upper case, lower case and digits.
    (
        re.compile(r"(?<![A-Za-z0-9/+=])(?=[A-Za-z0-9/+]*[A-Z])(?=[A-Za-z0-9/+]*[a-z])(?=[A-Za-z0-9/+]*[0-9])"
                   r"[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"),
        REDACTED,
    ),
)
# A long random token (session cookies, URL-safe base64): 32+ characters mixing upper, lower and digits. Only for
# log lines: an error shown to people keeps long identifiers such as CloudFormation's generated role names
# (HeadroomStack-HeadroomReadOnlyRole-1A2B3C4D5E6F), which it would blank.
_RANDOM_TOKEN = re.compile(r"(?<![A-Za-z0-9_\-])(?=[A-Za-z0-9_\-]*[A-Z])(?=[A-Za-z0-9_\-]*[a-z])(?=[A-Za-z0-9_\-]*[0-9])"
                           r"[A-Za-z0-9_\-]{32,}")

_known_lock = threading.Lock()
_known: tuple[str, ...] = ()
_request_secrets: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar("headroom_request_secrets",
                                                                                 default=())


def register_secret_values(values: Iterable[str | None]) -> None:
    """Scrub these values (the process's own secrets) from every log line from now on."""
    global _known
    fresh = {v for v in values if v and len(v) >= MIN_SECRET_LENGTH}
    with _known_lock:
        _known = tuple(sorted(set(_known) | fresh, key=len, reverse=True))


def settings_secret_values(settings: Settings) -> list[str]:
    """The secrets a Settings object holds: the secret key, the metrics token and the SMTP, database (primary and
    read replica) and Redis passwords."""
    from sqlalchemy.engine import make_url

    values = [settings.secret_key]
    if settings.metrics_token is not None:
        values.append(settings.metrics_token.get_secret_value())
    if settings.smtp_password is not None:
        values.append(settings.smtp_password.get_secret_value())
    for url in (settings.database_url, settings.database_replica_url, settings.redis_url):
        if url:
            try:
                password = make_url(url).password
            except Exception:  # noqa: BLE001 - an unparsable URL has no password to register
                continue
            if password:
                values.append(str(password))
    return values


def bind_request_secrets(values: Iterable[str | None]) -> None:
    """Scrub these values (the current request's credentials) from log lines written in this context."""
    _request_secrets.set(tuple(sorted({v for v in values if v and len(v) >= MIN_SECRET_LENGTH}, key=len,
                                      reverse=True)))


def scrub(text: str, *, random_tokens: bool = True) -> str:
    """Remove secret values from a piece of log text (`random_tokens=False`: from an error message shown to
    people, keeping long identifiers; every secret named by its key, header, URL or AWS key shape still goes)."""
    for value in (*_request_secrets.get(), *_known):
        if value in text:
            text = text.replace(value, REDACTED)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return _RANDOM_TOKEN.sub(REDACTED, text) if random_tokens else text


def bound(text: str, limit: int) -> str:
    """Cut the middle out of a text longer than `limit`, at whitespace when there is some nearby (so no secret
    is cut in two halves that scrubbing would no longer recognise); keeps the start and the end (for a
    traceback: the outer frames, and the innermost ones with the exception line)."""
    if len(text) <= limit:
        return text
    room = max(limit - 64, 0)  # the marker's own length, so the result is at most `limit` characters
    head, tail = room * 3 // 4, room // 4
    cut_head = max(text.rfind("\n", head // 2, head), text.rfind(" ", head * 3 // 4, head))
    cut_tail_from = len(text) - tail
    nl = text.find("\n", cut_tail_from, cut_tail_from + tail // 2)
    sp = text.find(" ", cut_tail_from, cut_tail_from + tail // 4)
    candidates = [i for i in (nl, sp) if i >= 0]
    cut_tail = min(candidates) if candidates else cut_tail_from
    cut_head = cut_head if cut_head > 0 else head
    return f"{text[:cut_head]}\n... [{cut_tail - cut_head} characters cut] ...\n{text[cut_tail:]}"


def clean(text: str, limit: int) -> str:
    """Bound, then scrub, a piece of log text."""
    return scrub(bound(text, limit))


def mark_logged(exc: BaseException) -> None:
    """Note that an exception's traceback was logged, so the server's own report of it is dropped."""
    with contextlib.suppress(AttributeError, TypeError):  # exceptions without a __dict__ are reported twice
        exc.__headroom_logged__ = True  # type: ignore[attr-defined]


ExcInfo = tuple[type[BaseException], BaseException, TracebackType | None]


def _exc_info(value: Any) -> ExcInfo | None:
    if isinstance(value, BaseException):
        return (type(value), value, value.__traceback__)
    if isinstance(value, tuple) and len(value) == 3 and value[0] is not None:
        return value
    if value is True:
        info = sys.exc_info()
        return info if info[0] is not None else None
    return None


def format_traceback(info: ExcInfo) -> str:
    """A plain traceback (no local variables), at most TRACEBACK_FRAMES frames per exception, bounded."""
    exc_type, exc, tb = info
    lines = traceback.TracebackException(exc_type, exc, tb, limit=-TRACEBACK_FRAMES, capture_locals=False,
                                         compact=True).format()
    return bound("".join(lines).rstrip("\n"), EXCEPTION_LIMIT)


def _render_exception(_: Any, __: str, event: dict[str, Any]) -> dict[str, Any]:
    info = _exc_info(event.pop("exc_info", None))
    if info is not None:
        event["exception"] = format_traceback(info)
    event.pop("stack_info", None)
    return event


def _clean_value(value: Any, depth: int = 0) -> Any:
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return clean(value, VALUE_LIMIT)
    if depth < 3 and isinstance(value, dict) and len(value) <= 100:
        return {str(k): _clean_value(v, depth + 1) for k, v in value.items()}
    if depth < 3 and isinstance(value, (list, tuple)) and len(value) <= 100:
        return [_clean_value(v, depth + 1) for v in value]
    return clean(repr(value), VALUE_LIMIT)


def _clean_values(_: Any, __: str, event: dict[str, Any]) -> dict[str, Any]:
    for key, value in event.items():
        event[key] = clean(value, EXCEPTION_LIMIT) if key == "exception" and isinstance(value, str) else (
            _clean_value(value))
    return event


def _redact(_: Any, __: str, event: dict[str, Any]) -> dict[str, Any]:
    for key in list(event):
        if key != "event" and _SECRET_KEYS.search(key):
            event[key] = REDACTED
    return event


class _Formatter(structlog.stdlib.ProcessorFormatter):
    """Renders a record through structlog's processors, then scrubs (and in console mode bounds) the line."""

    def __init__(self, *, json: bool, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._json = json

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        # A JSON line is never cut (it would stop being JSON): its values were bounded one by one.
        return scrub(line) if self._json else clean(line, LINE_LIMIT)


class _DropServerReportOfLoggedErrors(logging.Filter):
    """uvicorn reports every exception an ASGI app raises; the app's own 500 handler already logged it."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not (record.name.startswith("uvicorn") and getattr(exc, "__headroom_logged__", False))


_handler: logging.Handler | None = None


_SELF_HANDLING_LOGGERS = ("uvicorn", "uvicorn.error", "uvicorn.access")


def configure_logging(level: str = "INFO", json: bool = False, *, stream: TextIO | None = None,
                      secrets: Iterable[str | None] = ()) -> None:
    """Set up logging for the process: structlog and every library logger through one scrubbing handler."""
    global _handler
    register_secret_values(secrets)
    numeric_level = logging.getLevelName(level.upper())
    shared: list[Any] = [
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        _redact,
    ]
    renderer: Any = (
        structlog.processors.JSONRenderer()
        if json
        else structlog.dev.ConsoleRenderer(colors=False, exception_formatter=structlog.dev.plain_traceback)
    )
    formatter = _Formatter(
        json=json,
        # The libraries' lines (uvicorn's access line, celery's task lines) carry the request or job id too.
        foreign_pre_chain=[structlog.contextvars.merge_contextvars, *shared],
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            _render_exception,
            _clean_values,
            renderer,
        ],
    )
    handler = logging.StreamHandler(stream if stream is not None else sys.stdout)
    handler.setFormatter(formatter)
    handler.addFilter(_DropServerReportOfLoggedErrors())
    root = logging.getLogger()
    if _handler is not None:
        root.removeHandler(_handler)
    root.addHandler(handler)
    root.setLevel(numeric_level)
    _handler = handler
    # Servers that install handlers of their own (uvicorn's default log config does, with propagate off) would
    # write past the scrubber: their lines go to the root handler instead.
    for name in _SELF_HANDLING_LOGGERS:
        library = logging.getLogger(name)
        for own in list(library.handlers):
            library.removeHandler(own)
        library.propagate = True
    structlog.configure(
        processors=[structlog.contextvars.merge_contextvars, *shared,
                    structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.make_filtering_bound_logger(numeric_level),
        # Not cached: a module-level logger follows a later reconfiguration (JSON or console, tests'
        # structlog.testing.capture_logs); building the bound logger per call costs microseconds.
        cache_logger_on_first_use=False,
    )


def reset_logging() -> None:
    """Undo configure_logging: remove its handler from the root logger and restore structlog's defaults."""
    global _handler
    if _handler is not None:
        logging.getLogger().removeHandler(_handler)
        _handler = None
    logging.getLogger().setLevel(logging.WARNING)
    structlog.reset_defaults()


def get_logger(name: str) -> Any:
    return structlog.get_logger(name)
