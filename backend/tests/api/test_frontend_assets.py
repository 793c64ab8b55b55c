"""The built front end as the API process serves it: precompressed files sent as they are, cache headers."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]
IMMUTABLE = "public, max-age=31536000, immutable"
SCRIPT = ("export function f(){return 'headroom';}\n" * 400).encode()
INDEX = b'<!doctype html><html><head><script type="module" src="/assets/index-3f2a9c1b.js"></script></head></html>'
# Not real brotli (Python has no encoder without a package): the server never decodes, it sends the file as it is.
FAKE_BROTLI = b"\x1b brotli stand-in"


@pytest.fixture()
def dist(tmp_path: Path) -> Path:
    """A dist folder as `vite build` leaves it: hashed assets with .gz/.br beside them, the manifest in .vite/."""
    root = tmp_path / "dist"
    (root / "assets").mkdir(parents=True)
    (root / ".vite").mkdir()
    (root / "index.html").write_bytes(INDEX)
    (root / "index.html.gz").write_bytes(gzip.compress(INDEX))
    (root / "assets" / "index-3f2a9c1b.js").write_bytes(SCRIPT)
    (root / "assets" / "index-3f2a9c1b.js.gz").write_bytes(gzip.compress(SCRIPT))
    (root / "assets" / "index-3f2a9c1b.js.br").write_bytes(FAKE_BROTLI)
    (root / "favicon.svg").write_text("<svg/>")
    (root / ".vite" / "manifest.json").write_text('{"index.html": {"file": "assets/index-3f2a9c1b.js"}}')
    return root


def _get_raw(web: Any, path: str, accept_encoding: str | None) -> tuple[Any, bytes]:
    headers = {"Accept-Encoding": accept_encoding} if accept_encoding is not None else {}
    with web.stream("GET", path, headers=headers) as response:
        return response, b"".join(response.iter_raw())


@pytest.mark.parametrize(
    ("accept_encoding", "coding"),
    [
        ("gzip, deflate", "gzip"),
        ("gzip, deflate, br, zstd", "br"),
        ("br;q=0, gzip", "gzip"),
        ("gzip;q=0, br;q=0.5", "br"),
        ("*", "br"),
        ("*, br;q=0", "gzip"),
        ("identity", None),
        ("gzip;q=0", None),
        ("", None),
    ],
)
def test_hashed_asset_is_sent_precompressed_and_cached_for_a_year(
    app_ctx: Any, dist: Path, accept_encoding: str, coding: str | None
) -> None:
    from fastapi.testclient import TestClient
    from headroom.api.app import create_app

    with TestClient(create_app(app_ctx, frontend_dist=dist)) as web:
        response, raw = _get_raw(web, "/assets/index-3f2a9c1b.js", accept_encoding)
    assert response.status_code == 200
    assert response.headers["cache-control"] == IMMUTABLE
    assert response.headers["vary"] == "Accept-Encoding"
    assert response.headers["content-type"].split(";")[0] in {"text/javascript", "application/javascript"}
    assert response.headers.get("content-encoding") == coding
    assert int(response.headers["content-length"]) == len(raw)
    if coding == "gzip":
        assert len(raw) < len(SCRIPT) / 10
        assert gzip.decompress(raw) == SCRIPT
    elif coding == "br":
        assert raw == FAKE_BROTLI
    else:
        assert raw == SCRIPT


def test_index_html_is_revalidated_and_compressed_at_every_page_path(app_ctx: Any, dist: Path) -> None:
    from fastapi.testclient import TestClient
    from headroom.api.app import create_app

    with TestClient(create_app(app_ctx, frontend_dist=dist)) as web:
        for path in ("/", "/index.html", "/clusters/1/metrics", "/assets/index-gone.js"):
            response, raw = _get_raw(web, path, "gzip")
            assert response.status_code == 200, path
            assert response.headers["cache-control"] == "no-cache", path
            assert response.headers["content-encoding"] == "gzip", path
            assert response.headers["vary"] == "Accept-Encoding", path
            assert gzip.decompress(raw) == INDEX, path
        plain = web.get("/", headers={"Accept-Encoding": "identity"})
        assert plain.content == INDEX
        assert "content-encoding" not in plain.headers
        # a file the build did not compress (too small to gain) is sent as it is, revalidated
        icon, raw = _get_raw(web, "/favicon.svg", "gzip, br")
        assert raw == b"<svg/>"
        assert "content-encoding" not in icon.headers
        assert "vary" not in icon.headers
        assert icon.headers["cache-control"] == "no-cache"


def test_a_page_for_a_browser_with_a_session_preloads_the_session_and_a_visitors_does_not(
    app_ctx: Any, dist: Path
) -> None:
    from fastapi.testclient import TestClient
    from headroom.api.app import create_app

    preload = b'<link rel="preload" href="/api/v1/auth/me" as="fetch" crossorigin="anonymous">'
    with TestClient(create_app(app_ctx, frontend_dist=dist)) as web:
        _, visitor = _get_raw(web, "/settings/tokens", "identity")
        web.cookies.set("headroom_session", "any-token")
        response, signed_in = _get_raw(web, "/settings/tokens", "identity")
        _, script = _get_raw(web, "/assets/index-3f2a9c1b.js", "identity")
    assert visitor == INDEX
    assert response.status_code == 200
    # the preload in the head, after the entry script's tag; nothing else changed
    assert signed_in == INDEX.replace(b"</head>", preload + b"\n  </head>")
    assert response.headers["cache-control"] == "no-cache"
    assert "Cookie" in response.headers["vary"]
    assert script == SCRIPT  # assets are never rewritten


def test_build_manifest_is_not_served_and_api_responses_are_compressed_per_request(app_ctx: Any, dist: Path) -> None:
    from fastapi.testclient import TestClient
    from headroom.api.app import create_app

    with TestClient(create_app(app_ctx, frontend_dist=dist)) as web:
        manifest, raw = _get_raw(web, "/.vite/manifest.json", "gzip")
        assert gzip.decompress(raw) == INDEX  # the app's page, not the manifest
        health, raw = _get_raw(web, "/healthz", "gzip, br")
        assert "content-encoding" not in health.headers  # too small to gain (platform/compression.py)
        assert json.loads(raw) == {"status": "ok"}
        api_json, raw = _get_raw(web, "/api/v1/openapi.json", "gzip")
        assert api_json.headers["content-encoding"] == "gzip"
        assert json.loads(gzip.decompress(raw))["info"]["title"] == "Headroom API"
        api_json, raw = _get_raw(web, "/api/v1/openapi.json", "identity")
        assert "content-encoding" not in api_json.headers
        assert json.loads(raw)["info"]["title"] == "Headroom API"


def test_the_real_build_ships_gzip_and_brotli_beside_each_script(app_ctx: Any) -> None:
    """frontend/dist as `npm run build` makes it (scripts/bootstrap.sh builds it before the tests)."""
    from fastapi.testclient import TestClient
    from headroom.api.app import create_app

    built = REPO / "frontend" / "dist"
    manifest_file = built / ".vite" / "manifest.json"
    if not manifest_file.is_file():
        pytest.skip("frontend/dist is not built (npm run build)")
    manifest = json.loads(manifest_file.read_text())
    entry = next(item["file"] for item in manifest.values() if item.get("isEntry"))
    scripts = sorted(path.relative_to(built).as_posix() for path in (built / "assets").glob("*.js"))
    assert entry in scripts
    with TestClient(create_app(app_ctx, frontend_dist=built)) as web:
        for script in scripts:
            original = (built / script).read_bytes()
            gz, br = built / f"{script}.gz", built / f"{script}.br"
            if len(original) >= 1000:
                assert gz.is_file() and br.is_file(), script
            response, raw = _get_raw(web, f"/{script}", "gzip")
            assert response.headers["cache-control"] == IMMUTABLE, script
            if gz.is_file():
                assert response.headers["content-encoding"] == "gzip", script
                assert gzip.decompress(raw) == original, script
            else:  # a chunk of a few bytes, which gzip's header would make larger
                assert "content-encoding" not in response.headers, script
                assert raw == original, script
            if br.is_file():
                brotli, raw = _get_raw(web, f"/{script}", "gzip, br")
                assert brotli.headers["content-encoding"] == "br", script
                assert raw == br.read_bytes(), script


def test_the_real_page_runs_the_first_requests_script_first_and_on_its_own(app_ctx: Any) -> None:
    """The built page (frontend/vite.config.ts, firstRequestsScript) asks for src/boot.ts's chunk first, as an async
    module of its own: it runs when it has arrived, not after the app's entry; what it imports is built and small."""
    built = REPO / "frontend" / "dist"
    manifest_file = built / ".vite" / "manifest.json"
    if not manifest_file.is_file():
        pytest.skip("frontend/dist is not built (npm run build)")
    manifest = json.loads(manifest_file.read_text())
    boot, app = manifest["src/boot.ts"], manifest["index.html"]
    assert boot["isEntry"] and app["isEntry"]
    page = (built / "index.html").read_text()
    boot_tag = f'<script type="module" async crossorigin src="/{boot["file"]}"></script>'
    app_tag = f'<script type="module" crossorigin src="/{app["file"]}"></script>'
    assert boot_tag in page and app_tag in page
    assert page.index('<meta charset="UTF-8" />') < page.index(boot_tag) < page.index(app_tag)
    # It does not wait for the app: nothing it imports is the app's entry or imports it.
    closure, todo = set(), [*boot.get("imports", [])]
    while todo:
        key = todo.pop()
        if key not in closure:
            closure.add(key)
            todo.extend(manifest[key].get("imports", []))
    assert "index.html" not in closure
    size = sum((built / manifest[key]["file"]).stat().st_size for key in closure) + (built / boot["file"]).stat().st_size
    assert size < 20_000, f"the first-requests script and its imports are {size} bytes"
