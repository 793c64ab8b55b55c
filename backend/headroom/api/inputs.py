"""Request-wide input guards: a body size limit (413) and no NUL characters in any string (422 naming the field).

Both answer in the one error shape. The size limit is a pure ASGI middleware, so it holds for every route and for
bodies streamed without a Content-Length; the NUL check is a dependency of every /api/v1 route, run before the
handler, so it names the query parameter, path parameter or body field (PostgreSQL text cannot store U+0000, and no
name, tag, selector or address legitimately contains it).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from fastapi import Request
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from headroom.platform.errors import InvalidInput
from headroom.platform.labels import field_label

NUL = "\x00"


def _too_large_message(limit: int) -> str:
    return f"The request body is larger than this server accepts ({limit:,} bytes)."


class BodySizeLimit:
    """Refuse request bodies over `max_bytes` with 413: by Content-Length up front, else while streaming."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            await _send_413(send, self.max_bytes)
            return
        received = 0

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    # An HTTPException: FastAPI lets it through its body parsing, the app's handler renders it.
                    raise StarletteHTTPException(413, _too_large_message(self.max_bytes))
            return message

        await self.app(scope, limited_receive, send)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def _send_413(send: Send, limit: int) -> None:
    body = json.dumps(
        {"error": {"code": "payload_too_large", "message": _too_large_message(limit), "details": {"limit_bytes": limit}}}
    ).encode()
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


def _strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """Every string in a decoded JSON value (object keys included) with its dotted path."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            child = f"{path}.{key}" if path else str(key)
            yield child, str(key)
            yield from _strings(item, child)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, f"{path}.{index}" if path else str(index))


def _refuse(field: str, where: str, text: str = "") -> InvalidInput:
    shown = field.replace(NUL, "\\u0000")
    message = "must not contain the NUL character (U+0000)"
    detail: dict[str, Any] = {"field": shown, "label": field_label(shown), "message": message, "in": where}
    if "\n" in text:  # a file's content (tikv.toml, a topology): say where, as its own parser would
        before = text[: text.index(NUL)]
        detail["line"], detail["column"] = before.count("\n") + 1, len(before) - (before.rfind("\n") + 1) + 1
        message += f" (line {detail['line']}, column {detail['column']})"
    return InvalidInput(f"{shown}: {message}.", details=[detail])


async def refuse_nul_characters(request: Request) -> None:
    """422 naming the field when a path parameter, query parameter or JSON body string contains U+0000."""
    for name, value in request.path_params.items():
        if NUL in str(value):
            raise _refuse(name, "path")
    for name, value in request.query_params.multi_items():
        if NUL in name or NUL in value:
            raise _refuse(name, "query")
    route = request.scope.get("route")
    if getattr(route, "body_field", None) is None:
        return
    raw = await request.body()
    if b"\x00" not in raw and b"\\u0000" not in raw.lower():
        return
    try:
        decoded = json.loads(raw)
    except ValueError:
        # Not JSON: the body's own validation answers (a raw NUL byte is not valid JSON either).
        return
    for path, text in _strings(decoded, ""):
        if NUL in text:
            raise _refuse(path or "body", "body", text)
