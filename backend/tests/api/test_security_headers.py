"""Security headers (docs/security-headers.md): the API and the built front end it serves, through uvicorn on a
socket; /api/docs's own policy; frontend/nginx.conf generated from the same values and run by the real nginx."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.helpers import served_by_uvicorn, sign_up

REPO = Path(__file__).resolve().parents[3]
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
INDEX = b'<!doctype html><html><head><script type="module" src="/assets/index-3f2a9c1b.js"></script></head></html>'
IMMUTABLE = "public, max-age=31536000, immutable"


def _expected(csp: str | None = None) -> dict[str, str]:
    from headroom.platform.security_headers import APP_CSP

    return {
        "content-security-policy": csp or APP_CSP,
        "x-frame-options": "DENY",
        "x-content-type-options": "nosniff",
        "referrer-policy": "same-origin",
    }


def _assert_security_headers(response: httpx.Response, *, hsts: str | None) -> None:
    for name, value in _expected().items():
        assert response.headers.get_list(name) == [value], (response.url, name)
    assert response.headers.get("strict-transport-security") == hsts, response.url


@pytest.fixture()
def dist(tmp_path: Path) -> Path:
    root = tmp_path / "dist"
    (root / "assets").mkdir(parents=True)
    (root / "index.html").write_bytes(INDEX)
    (root / "assets" / "index-3f2a9c1b.js").write_text("export const x = 1;\n")
    (root / "favicon.svg").write_text("<svg/>")
    return root


def _app(app_ctx: Any, dist: Path, public_url: str) -> Any:
    from headroom.api.app import create_app

    # cookie_secure off: the test talks plain HTTP to 127.0.0.1 even when the public URL says https
    app_ctx.settings = app_ctx.settings.model_copy(update={"public_url": public_url, "cookie_secure": False})
    return create_app(app_ctx, frontend_dist=dist)


def _sign_up(client: httpx.Client, outbox: Path) -> dict[str, str]:
    """Sign up over HTTP as the front end would; the CSRF header its writes carry."""
    sign_up(client, outbox=outbox)
    return {"X-CSRF-Token": client.cookies.get("headroom_csrf", "")}


@pytest.mark.parametrize(("public_url", "hsts"), [("http://127.0.0.1:8000", None),
                                                   ("https://headroom.example.com", "max-age=31536000")])
def test_every_answer_of_the_served_app_carries_the_headers(app_ctx: Any, dist: Path, public_url: str,
                                                            hsts: str | None) -> None:
    app = _app(app_ctx, dist, public_url)
    outbox = app_ctx.mailer.directory
    with served_by_uvicorn(app) as port:
        base = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=base, timeout=20) as client:
            csrf = _sign_up(client, outbox)
            # the front end: pages (index.html at any path), a hashed asset, an icon; their caching stays
            for path, cache in (("/", "no-cache"), ("/clusters/1/metrics", "no-cache"), ("/settings/digest", "no-cache"),
                                ("/assets/index-3f2a9c1b.js", IMMUTABLE), ("/favicon.svg", "no-cache")):
                response = client.get(path)
                assert response.status_code == 200, path
                _assert_security_headers(response, hsts=hsts)
                assert response.headers.get_list("cache-control") == [cache], path
            # authenticated API answers: reads, writes, errors, a download; never stored
            answers = [
                client.get("/api/v1/auth/me"),
                client.get("/api/v1/clusters"),
                client.post("/api/v1/clusters", json={"name": "c1", "tikv_version": "v7.5.1"}, headers=csrf),
                client.get("/api/v1/clusters/00000000-0000-0000-0000-000000000000"),
                client.post("/api/v1/clusters", json={"name": ""}, headers=csrf),
                client.put("/api/v1/clusters", json={}, headers=csrf),
                client.get("/api/v1/org/audit-log"),
            ]
            for response in answers:
                assert response.status_code < 500, (response.request.url, response.text)
                _assert_security_headers(response, hsts=hsts)
                assert response.headers.get_list("cache-control") == ["no-store"], response.request.url
            assert {r.status_code for r in answers} >= {200, 201, 404, 405, 422}
            # an anonymous API answer, a health probe and the API's 404 under /api/ are not stored either
            for response in (httpx.get(f"{base}/api/v1/auth/me"), httpx.get(f"{base}/healthz"),
                             httpx.get(f"{base}/api/v1/nothing-here")):
                _assert_security_headers(response, hsts=hsts)
                assert response.headers["cache-control"] == "no-store"
            assert httpx.get(f"{base}/api/v1/auth/me").status_code == 401


def test_api_docs_page_has_a_policy_that_allows_exactly_what_it_loads(app_ctx: Any, dist: Path) -> None:
    """/api/docs (Swagger UI from the jsDelivr CDN): every script and style sheet it names is allowed by its own
    policy, its inline script by the hash of exactly its text, and nothing else is."""
    from headroom.platform.security_headers import inline_script_hashes

    app = _app(app_ctx, dist, "http://127.0.0.1:8000")
    with served_by_uvicorn(app) as port:
        response = httpx.get(f"http://127.0.0.1:{port}/api/docs")
    assert response.status_code == 200
    html = response.text
    assert "SwaggerUIBundle" in html and "'/api/v1/openapi.json'" in html
    policy = dict(part.strip().split(" ", 1) for part in response.headers["content-security-policy"].split(";"))
    assert response.headers["x-frame-options"] == "DENY"
    assert policy["frame-ancestors"] == "'none'"
    assert policy["connect-src"] == "'self'"
    script_sources = policy["script-src"].split()
    inline = re.findall(r"<script>(.*?)</script>", html, re.DOTALL)
    assert len(inline) == 1
    hashes = inline_script_hashes(html)
    assert [s for s in script_sources if s.startswith("'sha256-")] == hashes
    # a changed inline script is not allowed by the policy of this page
    assert inline_script_hashes(html.replace("deepLinking", "deepLinkinG")) != hashes
    for src in re.findall(r'<script src="([^"]+)"', html):
        assert any(src.startswith(origin + "/") for origin in script_sources if origin.startswith("https://")), src
    for href in re.findall(r'<link type="text/css" rel="stylesheet" href="([^"]+)"', html):
        assert any(href.startswith(o + "/") for o in policy["style-src"].split() if o.startswith("https://")), href
    for icon in re.findall(r'<link rel="shortcut icon" href="([^"]+)"', html):
        assert any(icon.startswith(o + "/") for o in policy["img-src"].split() if o.startswith("https://")), icon
    assert "'unsafe-inline'" not in policy["script-src"] and "'unsafe-eval'" not in policy["script-src"]


def test_the_real_build_has_no_inline_script() -> None:
    """frontend/dist/index.html as `npm run build` makes it: scripts only by src from /assets (script-src 'self')."""
    index = REPO / "frontend" / "dist" / "index.html"
    if not index.is_file():
        pytest.skip("frontend/dist is not built (npm run build)")
    html = index.read_text()
    scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", html, re.DOTALL)
    assert scripts, "no script at all: not the build"
    for attributes, body in scripts:
        assert body.strip() == "" and 'src="/assets/' in attributes, attributes
    assert "<style" not in html and " style=" not in html


# --- nginx ------------------------------------------------------------------------------------------------------


def test_nginx_files_are_generated_from_the_one_source() -> None:
    from headroom.platform.security_headers import nginx_hsts_map, nginx_snippet

    assert (REPO / "frontend" / "nginx-security-headers.conf").read_text() == nginx_snippet(), (
        "regenerate: uv run python -m headroom.platform.security_headers > frontend/nginx-security-headers.conf")
    conf = (REPO / "frontend" / "nginx.conf").read_text()
    assert nginx_hsts_map() in conf
    # every location that adds a header of its own includes the security headers (add_header is not inherited
    # into a location that has one); the proxied API locations add none (the API sends its own)
    blocks = re.findall(r"location ([^{]+)\{([^{}]*)\}", conf)  # no location here nests a block
    assert len(blocks) == len(re.findall(r"^\s*location ", conf, re.MULTILINE)) == 6
    for name, body in blocks:
        proxied = "proxy_pass" in body
        includes = "include /etc/nginx/headroom-security-headers.conf;" in body
        assert includes != proxied, name
    dockerfile = (REPO / "frontend" / "Dockerfile").read_text()
    assert "COPY frontend/nginx-security-headers.conf /etc/nginx/headroom-security-headers.conf" in dockerfile


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture()
def nginx_binary() -> str:
    if not os.access(NGINX, os.X_OK):
        pytest.skip("nginx is not installed (scripts/bootstrap.sh --test installs it)")
    return NGINX


def _nginx_config(tmp: Path, dist: Path, api_port: int, port: int) -> Path:
    """frontend/nginx.conf as the image runs it (conf.d/default.conf inside nginx's http block), with only the
    paths and addresses of this machine swapped in."""
    site = (REPO / "frontend" / "nginx.conf").read_text()
    site = site.replace("listen 8080;", f"listen 127.0.0.1:{port};")
    site = site.replace("root /usr/share/nginx/html;", f"root {dist};")
    site = site.replace("http://api:8000", f"http://127.0.0.1:{api_port}")
    site = site.replace("/etc/nginx/headroom-security-headers.conf", str(REPO / "frontend" / "nginx-security-headers.conf"))
    assert str(api_port) in site and str(dist) in site
    (tmp / "logs").mkdir()
    main = tmp / "nginx.conf"
    main.write_text(
        ""
        # as root, nginx's workers would switch to nobody, who cannot read pytest's private temporary folders
        + ("user root;\n" if os.geteuid() == 0 else "")
        + f"worker_processes 1;\ndaemon off;\npid {tmp}/nginx.pid;\nerror_log {tmp}/logs/error.log warn;\n"
        f"events {{ worker_connections 64; }}\n"
        f"http {{\n  include /etc/nginx/mime.types;\n  access_log off;\n"
        f"  client_body_temp_path {tmp}/body; proxy_temp_path {tmp}/proxy; fastcgi_temp_path {tmp}/fcgi;\n"
        f"  uwsgi_temp_path {tmp}/uwsgi; scgi_temp_path {tmp}/scgi;\n"
        f"{site}\n}}\n"
    )
    return main


@pytest.fixture()
def nginx_in_front(nginx_binary: str, app_ctx: Any, dist: Path, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The real nginx with frontend/nginx.conf, serving `dist` and proxying to the app under uvicorn."""
    app = _app(app_ctx, dist, "https://headroom.example.com")
    with served_by_uvicorn(app) as api_port:
        port = _free_port()
        work = tmp_path / "nginx"
        work.mkdir()
        config = _nginx_config(work, dist, api_port, port)
        check = subprocess.run([nginx_binary, "-t", "-c", str(config), "-p", str(work)], capture_output=True,
                               text=True, timeout=30)
        assert check.returncode == 0, check.stderr
        process = subprocess.Popen([nginx_binary, "-c", str(config), "-p", str(work)], stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    assert process.poll() is None, process.stderr.read() if process.stderr else ""
                    time.sleep(0.05)
            yield f"http://127.0.0.1:{port}", app_ctx.mailer.directory
        finally:
            process.terminate()
            process.wait(timeout=15)


def test_nginx_sends_the_same_headers_once_and_hsts_only_behind_https(nginx_in_front: tuple[str, Path]) -> None:
    base, outbox = nginx_in_front
    with httpx.Client(base_url=base, timeout=20) as web:
        for path, cache in (("/", "no-cache"), ("/clusters/1/findings", "no-cache"),
                            ("/assets/index-3f2a9c1b.js", IMMUTABLE), ("/favicon.svg", "no-cache")):
            plain = web.get(path)
            assert plain.status_code == 200, path
            _assert_security_headers(plain, hsts=None)
            assert plain.headers.get_list("cache-control") == [cache], path
            behind_tls = web.get(path, headers={"X-Forwarded-Proto": "https"})
            _assert_security_headers(behind_tls, hsts="max-age=31536000")
        missing = web.get("/assets/index-gone.js")
        assert missing.status_code == 404
        _assert_security_headers(missing, hsts=None)
        source_map = web.get("/assets/index-3f2a9c1b.js.map")
        assert source_map.status_code == 404
        _assert_security_headers(source_map, hsts=None)
        # The API through nginx: its own headers, each once (nginx adds none to /api/); this app's public URL is
        # https, so HSTS comes from the API whatever the scheme nginx saw.
        health = web.get("/healthz")
        _assert_security_headers(health, hsts="max-age=31536000")
        with httpx.Client(base_url=base, timeout=20) as client:
            csrf = _sign_up(client, outbox)
            for response in (client.get("/api/v1/auth/me"), client.post("/api/v1/clusters", json={"name": "n", "tikv_version": "v7.5.1"},
                                                                        headers=csrf)):
                assert response.status_code in (200, 201), response.text
                _assert_security_headers(response, hsts="max-age=31536000")
                assert response.headers.get_list("cache-control") == ["no-store"]
        docs = web.get("/api/docs")
        assert docs.status_code == 200
        assert "cdn.jsdelivr.net" in docs.headers["content-security-policy"]
        assert len(docs.headers.get_list("content-security-policy")) == 1


def test_nginx_names_the_session_request_for_a_browser_with_a_session_only(nginx_in_front: tuple[str, Path]) -> None:
    """The production page preloads the session as the API process's page does (SESSION_PRELOAD), as a Link header."""
    from headroom.api.app import SESSION_PRELOAD

    href = re.search(rb'href="([^"]+)"', SESSION_PRELOAD)
    assert href is not None
    expected = f"<{href[1].decode()}>; rel=preload; as=fetch; crossorigin=anonymous"
    base, _ = nginx_in_front
    with httpx.Client(base_url=base, timeout=20) as web:
        for path in ("/", "/clusters/1/metrics", "/index.html"):
            visitor = web.get(path)
            assert visitor.status_code == 200 and "link" not in visitor.headers, path
            signed_in = web.get(path, cookies={"headroom_session": "any-token"})
            assert signed_in.status_code == 200, path
            assert signed_in.headers.get_list("link") == [expected], path
            assert "Cookie" in signed_in.headers.get("vary", ""), path
            _assert_security_headers(signed_in, hsts=None)
            assert signed_in.headers.get_list("cache-control") == ["no-cache"], path
        asset = web.get("/assets/index-3f2a9c1b.js", cookies={"headroom_session": "any-token"})
        assert asset.status_code == 200 and "link" not in asset.headers


def _raw_get(web: httpx.Client, path: str, accept_encoding: str | None) -> tuple[httpx.Response, bytes]:
    request = web.build_request("GET", path)
    del request.headers["accept-encoding"]  # httpx's default names every coding it can decode
    if accept_encoding is not None:
        request.headers["accept-encoding"] = accept_encoding
    response = web.send(request, stream=True)
    try:
        return response, b"".join(response.iter_raw())
    finally:
        response.close()


def test_nginx_passes_the_apis_compression_through_and_gzips_other_text(nginx_in_front: tuple[str, Path],
                                                                        dist: Path) -> None:
    import gzip
    import json

    import brotli

    # A text file the build did not precompress, big enough to gain: nginx compresses it on the way out.
    notice = ("Headroom: storage advisor for TiKV on EC2 and EBS.\n" * 100).encode()
    (dist / "notice.txt").write_bytes(notice)
    base, _ = nginx_in_front
    with httpx.Client(base_url=base, timeout=20) as web:
        plain, plain_raw = _raw_get(web, "/api/v1/openapi.json", None)
        assert "content-encoding" not in plain.headers
        spec = json.loads(plain_raw)
        assert spec["info"]["title"] == "Headroom API"
        for coding, decode in (("gzip", gzip.decompress), ("br", brotli.decompress)):
            response, raw = _raw_get(web, "/api/v1/openapi.json", coding)
            assert response.headers.get_list("content-encoding") == [coding]
            assert "accept-encoding" in response.headers["vary"].lower()
            assert json.loads(decode(raw)) == spec
            assert len(raw) < len(plain_raw) / 4
            _assert_security_headers(response, hsts="max-age=31536000")
        text, raw = _raw_get(web, "/notice.txt", "gzip, br")
        assert text.headers.get_list("content-encoding") == ["gzip"]
        assert gzip.decompress(raw) == notice
        text, raw = _raw_get(web, "/notice.txt", None)
        assert "content-encoding" not in text.headers and raw == notice
