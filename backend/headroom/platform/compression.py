"""Compression of the API's answers: Brotli when the client accepts it, else gzip, else none.

The Metrics tab reads 90-215 KB of JSON per view; numbers and repeated keys shrink 5-10 times. The response path is
Starlette's GZipMiddleware's (its responders: a minimum size, no double encoding, no 206 partial answers, no
already-compressed media types such as the patch bundles' application/zip or text/event-stream, streamed bodies
compressed chunk by chunk, `Vary: Accept-Encoding`); what is added here is the choice of coding by the
Accept-Encoding weights (RFC 9110 section 12.5.3: `q=0` means "not acceptable", which Starlette's substring test
ignores) and a Brotli responder around the `brotli` package (RFC 7932).

Levels: gzip 6 (zlib's default, the usual balance for per-request compression) and Brotli quality 5 (of 0-11;
quality 4-5 is what compresses dynamic content faster than gzip 6 does with a smaller result, while 11 is meant for
files compressed once at build time, as the front end's are: frontend/vite.config.ts).
Sources: RFC 9110 (https://www.rfc-editor.org/rfc/rfc9110#name-accept-encoding), RFC 7932
(https://www.rfc-editor.org/rfc/rfc7932), zlib manual (https://www.zlib.net/manual.html, Z_DEFAULT_COMPRESSION is 6),
Brotli's quality parameter (https://github.com/google/brotli/blob/master/c/include/brotli/encode.h).
"""

from __future__ import annotations

import brotli
from starlette.datastructures import Headers, MutableHeaders
from starlette.middleware.gzip import GZipResponder, IdentityResponder
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# Below this many bytes the coding's own overhead and the CPU are not worth it (an error body, a 204, /auth/me).
MINIMUM_SIZE = 1024
GZIP_LEVEL = 6
BROTLI_QUALITY = 5
# What the server can produce, best first.
CODINGS = ("br", "gzip")


def accepted_encodings(header: str) -> set[str]:
    """The content codings an Accept-Encoding header accepts (q > 0; `*` stands for any not listed)."""
    weights: dict[str, float] = {}
    for part in header.split(","):
        name, *params = (piece.strip() for piece in part.split(";"))
        if not name:
            continue
        weight = 1.0
        for param in params:
            key, _, value = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    weight = float(value)
                except ValueError:
                    weight = 0.0
        weights[name.lower()] = weight
    accepted = {name for name, weight in weights.items() if weight > 0}
    if "*" in accepted:
        accepted |= {coding for coding in CODINGS if coding not in weights}
    return accepted


def chosen_coding(header: str | None) -> str | None:
    """The coding to answer with: the best of ours the client accepts (None: send the body as it is)."""
    accepted = accepted_encodings(header or "")
    return next((coding for coding in CODINGS if coding in accepted), None)


class BrotliResponder(IdentityResponder):
    """Starlette's responder with a Brotli stream in place of gzip's (flushed after each chunk of a stream)."""

    content_encoding = "br"

    def __init__(self, app: ASGIApp, minimum_size: int, quality: int = BROTLI_QUALITY) -> None:
        super().__init__(app, minimum_size)
        self.quality = quality
        self._compressor: brotli.Compressor | None = None

    async def apply_compression(self, body: bytes, *, more_body: bool) -> bytes:
        if self._compressor is None:
            self._compressor = brotli.Compressor(mode=brotli.MODE_TEXT, quality=self.quality)
        out: bytes = self._compressor.process(body)
        tail: bytes = self._compressor.flush() if more_body else self._compressor.finish()
        return out + tail


class Compression:
    """Compress answers of at least `minimum_size` bytes with the best coding the client accepts."""

    def __init__(self, app: ASGIApp, minimum_size: int = MINIMUM_SIZE) -> None:
        self.app = app
        self.minimum_size = minimum_size

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        coding = chosen_coding(Headers(scope=scope).get("accept-encoding"))
        responder: ASGIApp
        if coding == "br":
            responder = BrotliResponder(self.app, self.minimum_size)
        elif coding == "gzip":
            responder = GZipResponder(self.app, self.minimum_size, compresslevel=GZIP_LEVEL)
        else:
            # Still adds `Vary: Accept-Encoding` to an answer that would have been compressed for another client.
            responder = IdentityResponder(self.app, self.minimum_size)
        await responder(scope, receive, _vary_once(send))


def _vary_once(send: Send) -> Send:
    """Send with each Vary token once: an answer that already varied on Accept-Encoding (the front end's
    precompressed files) gets it added again by the responders."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = MutableHeaders(raw=message.setdefault("headers", []))
            if "vary" in headers:
                tokens = [t.strip() for t in ",".join(headers.getlist("vary")).split(",") if t.strip()]
                headers["Vary"] = ", ".join(dict.fromkeys(tokens, None))
        await send(message)

    return sending
