"""The HTTP security headers, once: the API process sends them (SecurityHeaders below) and nginx's are generated
from here (`python -m headroom.platform.security_headers` writes frontend/nginx-security-headers.conf; a test
checks the file and frontend/nginx.conf against these values). Why each value: docs/security-headers.md.

Sources: MDN, HTTP headers reference (https://developer.mozilla.org/en-US/docs/Web/HTTP/Headers); OWASP Secure
Headers Project (https://owasp.org/www-project-secure-headers/); W3C Content Security Policy Level 3
(https://www.w3.org/TR/CSP3/); RFC 6797, HTTP Strict Transport Security (https://www.rfc-editor.org/rfc/rfc6797).
"""

from __future__ import annotations

import base64
import hashlib
import re
import sys
from collections.abc import Iterable
from typing import Any

# CSP3 hash source of the weekly email's kept <style> block (backend/tests/digest/test_build.py recomputes it).
WEEKLY_EMAIL_STYLE_HASH = "'sha256-KNox195J7tFo/v6oRdnmiE9LavyC/pHJIKBGtGmUX2Q='"

# The dashboard's policy. The built front end (frontend/dist/index.html) loads one module script and its
# stylesheets from /assets and has no inline script, so scripts and style sheets come from 'self' only.
APP_CSP_DIRECTIVES: tuple[tuple[str, str], ...] = (
    ("default-src", "'self'"),
    ("script-src", "'self'"),
    # <style> elements and style sheets: ours only, and the one <style> block of the weekly email (its dark-mode
    # and narrow-screen rules, which cannot be inlined: headroom.digest.build) by its hash, so the preview frame
    # shows the email as its recipients' clients do. A test renders the email and checks this hash against it.
    ("style-src", f"'self' {WEEKLY_EMAIL_STYLE_HASH}"),
    # style="" attributes: needed by the weekly email's preview (Settings > Weekly email), whose HTML is shown in a
    # sandboxed srcdoc frame, which inherits this policy (CSP3, "Policy inheritance" of srcdoc documents): an email's
    # styles can only be inline attributes. React's and Recharts' style props are set through the CSSOM, which CSP
    # does not govern. An attribute can restyle an element but cannot run script or load anything (img-src and
    # friends still apply), and React escapes every attribute we render, so this is the narrowest opening that
    # keeps the preview as the recipients see it. Other <style> elements stay forbidden (style-src above).
    ("style-src-attr", "'unsafe-inline'"),
    # data: for the weekly email preview's charts, inlined as data: URIs by the API.
    ("img-src", "'self' data:"),
    ("font-src", "'self'"),
    ("connect-src", "'self'"),
    ("object-src", "'none'"),
    ("base-uri", "'none'"),
    ("form-action", "'self'"),
    # Nobody frames the dashboard (clickjacking of admin actions); X-Frame-Options below says the same to
    # browsers without CSP2.
    ("frame-ancestors", "'none'"),
)

# The API docs (/api/docs): FastAPI's Swagger UI page loads its script and style sheet from the jsDelivr CDN and
# starts with one inline script, allowed by its hash (computed from the page itself, docs_csp below).
SWAGGER_CDN = "https://cdn.jsdelivr.net"
SWAGGER_FAVICON_ORIGIN = "https://fastapi.tiangolo.com"


def _policy(directives: Iterable[tuple[str, str]]) -> str:
    return "; ".join(f"{name} {value}" for name, value in directives)


APP_CSP = _policy(APP_CSP_DIRECTIVES)
# Our own pages are never framed, by anyone (the CSP's frame-ancestors 'none' for older browsers).
FRAME_OPTIONS = "DENY"
# Responses are taken as the type they declare (no MIME sniffing of a JSON answer or a download into HTML).
CONTENT_TYPE_OPTIONS = "nosniff"
# same-origin: the full URL to ourselves, nothing to any other site. Sign-up, invitation and unsubscribe links
# carry their token in the URL; other sites (the AWS docs, a Grafana, Slack) never see it in a Referer. Our own
# server already has that URL (it served the page), and Origin headers keep their value (with no-referrer, a
# same-origin POST would send "Origin: null", Fetch standard, "append a request Origin header").
REFERRER_POLICY = "same-origin"
# RFC 6797: one year, the figure the OWASP Secure Headers Project recommends. No includeSubDomains: Headroom
# usually lives on one host of a domain whose other hosts are not ours to force onto HTTPS; no preload (a
# browser-vendor list, the domain owner's decision). Sent only when HEADROOM_PUBLIC_URL is https (a browser
# ignores it over plain HTTP anyway, RFC 6797 section 8.1).
HSTS = "max-age=31536000"
# Answers that are not files of the built front end (those set their own Cache-Control): never stored by a
# browser or a shared cache (RFC 9111 section 5.2.2.5). Every /api/v1 answer is someone's data or a session.
NO_STORE = "no-store"


def common_headers(*, https: bool) -> dict[str, str]:
    """The headers every response carries, whatever it is (CSP apart: it depends on the page)."""
    headers = {
        "X-Frame-Options": FRAME_OPTIONS,
        "X-Content-Type-Options": CONTENT_TYPE_OPTIONS,
        "Referrer-Policy": REFERRER_POLICY,
    }
    if https:
        headers["Strict-Transport-Security"] = HSTS
    return headers


_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)


def inline_script_hashes(html: str) -> list[str]:
    """CSP source expressions ('sha256-...') for each inline <script> of a page (CSP3 hash sources)."""
    return [
        "'sha256-" + base64.b64encode(hashlib.sha256(body.encode()).digest()).decode() + "'"
        for body in _INLINE_SCRIPT.findall(html)
    ]


def docs_csp(html: str) -> str:
    """The policy of the Swagger UI page `html`: the CDN's script and styles, its own inline scripts by hash."""
    hashes = " ".join(inline_script_hashes(html))
    directives = dict(APP_CSP_DIRECTIVES)
    directives["script-src"] = f"'self' {SWAGGER_CDN} {hashes}".strip()
    directives["style-src"] = f"'self' {SWAGGER_CDN}"
    directives["img-src"] = f"'self' data: {SWAGGER_FAVICON_ORIGIN}"
    return _policy(directives.items())


class SecurityHeaders:
    """Pure ASGI middleware: every HTTP answer gets the common headers, the dashboard's CSP (unless the route set
    its own, as /api/docs does) and Cache-Control: no-store unless it set its own (the front end's files do)."""

    def __init__(self, app: Any, *, https: bool) -> None:
        self.app = app
        self.headers = [(k.lower().encode(), v.encode()) for k, v in common_headers(https=https).items()]

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                raw = list(message.get("headers", ()))
                present = {name.lower() for name, _ in raw}
                raw += [(name, value) for name, value in self.headers if name not in present]
                if b"content-security-policy" not in present:
                    raw.append((b"content-security-policy", APP_CSP.encode()))
                if b"cache-control" not in present:
                    raw.append((b"cache-control", NO_STORE.encode()))
                message = {**message, "headers": raw}
            await send(message)

        await self.app(scope, receive, send_with_headers)


NGINX_HSTS_VARIABLE = "$headroom_hsts"


def nginx_snippet() -> str:
    """frontend/nginx-security-headers.conf: included in each nginx location that serves the front end's files
    (a location with an add_header of its own inherits none from the server level, the nginx add_header docs).
    The API's answers through nginx carry the API's own headers, so the /api/ location does not include it."""
    lines = [
        "# Generated from backend/headroom/platform/security_headers.py by",
        "#   uv run python -m headroom.platform.security_headers > frontend/nginx-security-headers.conf",
        "# Do not edit by hand: backend/tests/api/test_security_headers.py checks it. Why: docs/security-headers.md.",
        f'add_header Content-Security-Policy "{APP_CSP}" always;',
    ]
    lines += [f'add_header {name} "{value}" always;' for name, value in common_headers(https=False).items()]
    lines.append(f"# {NGINX_HSTS_VARIABLE}: \"{HSTS}\" when the request reached the TLS terminator over https,")
    lines.append("# else empty, and nginx sends no header with an empty value (the map in nginx.conf).")
    lines.append(f"add_header Strict-Transport-Security {NGINX_HSTS_VARIABLE} always;")
    return "\n".join(lines) + "\n"


def nginx_hsts_map() -> str:
    """The map block of frontend/nginx.conf that sets $headroom_hsts."""
    return (
        f"map $http_x_forwarded_proto {NGINX_HSTS_VARIABLE} {{\n"
        f'    https "{HSTS}";\n'
        f'    default "";\n'
        f"}}\n"
    )


if __name__ == "__main__":
    sys.stdout.write(nginx_snippet())
