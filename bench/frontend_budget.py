"""The front end's first-load budget: initial JavaScript per route (gzipped) and the bytes a first load moves.

For every path in frontend/route-paths.json the initial JavaScript is the build's entry chunk, the route's lazy
page modules (the router's `import(...)` calls, as the build's frontend/dist/.vite/route-preload.json lists them) and
every chunk those import statically, read off Vite's build manifest (frontend/dist/.vite/manifest.json); each file is gzipped at level 9 and summed. The budget is
150 KB (the budget in bench/README.md). Then, against a running Headroom (`--url`, or one this script starts with `headroom up`), it
fetches each route's first load (the page, its initial JavaScript and CSS) with and without
`Accept-Encoding: gzip, br` and sums the body bytes received.

    uv run python bench/frontend_budget.py                 # build, start a server, measure, write the results
    uv run python bench/frontend_budget.py --no-build --url http://127.0.0.1:8000
    uv run python bench/frontend_budget.py --label before --out bench/results/frontend_budget_before.json
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
FRONTEND = REPO / "frontend"
BUDGET_KB = 150.0  # the goal: "Initial JavaScript of any route <= 150 KB gzipped"


def build() -> None:
    """Build the front end as `npm run build` does, with Vite's manifest."""
    subprocess.run(["npm", "run", "--silent", "build", "--", "--manifest"], cwd=FRONTEND, check=True)


def route_modules(dist: Path) -> dict[str, list[str]]:
    """Each route path with the lazy page modules it and its ancestors import, from the build's own table
    (frontend/build/route-preload.ts reads the router files for it; the server names the same chunks in the page)."""
    table = json.loads((dist / ".vite" / "route-preload.json").read_text())
    return {path: route["modules"] for path, route in table["routes"].items()}


def static_closure(manifest: dict[str, Any], keys: list[str]) -> list[str]:
    """The chunk files of these manifest entries and of everything they import statically."""
    seen: dict[str, None] = {}
    files: dict[str, None] = {}
    todo = list(keys)
    while todo:
        key = todo.pop()
        if key in seen:
            continue
        seen[key] = None
        item = manifest[key]
        files[item["file"]] = None
        todo.extend(item.get("imports", []))
    return list(files)


def css_of(manifest: dict[str, Any], keys: list[str]) -> list[str]:
    seen: dict[str, None] = {}
    css: dict[str, None] = {}
    todo = list(keys)
    while todo:
        key = todo.pop()
        if key in seen:
            continue
        seen[key] = None
        css.update(dict.fromkeys(manifest[key].get("css", [])))
        todo.extend(manifest[key].get("imports", []))
    return list(css)


def gz_size(path: Path) -> int:
    return len(gzip.compress(path.read_bytes(), compresslevel=9, mtime=0))


def initial_js(dist: Path) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The entry and, per route, the initial JavaScript files with raw and gzipped sizes."""
    manifest = json.loads((dist / ".vite" / "manifest.json").read_text())
    entries = [key for key, item in manifest.items() if item.get("isEntry")]
    paths = json.loads((FRONTEND / "route-paths.json").read_text())["paths"]
    modules = route_modules(dist)
    missing = sorted(set(paths) - set(modules))
    if missing:
        raise SystemExit(f"route-paths.json lists paths the router files do not: {missing}")
    per_route: dict[str, dict[str, Any]] = {}
    for path in paths:
        lazy = [m for m in modules[path] if m in manifest]
        files = static_closure(manifest, entries + lazy)
        per_route[path] = {
            "lazy_modules": lazy,
            "js_files": files,
            "css_files": css_of(manifest, entries + lazy),
            "js_raw_bytes": sum((dist / f).stat().st_size for f in files),
            "js_gzip_bytes": sum(gz_size(dist / f) for f in files),
        }
    chunks = {
        item["file"]: (dist / item["file"]).stat().st_size
        for item in manifest.values()
        if item["file"].endswith(".js")
    }
    largest = max(chunks.items(), key=lambda kv: kv[1])
    summary = {
        "entry": entries,
        "js_chunks": len(chunks),
        "largest_chunk": {
            "file": largest[0],
            "raw_bytes": largest[1],
            "gzip_bytes": gz_size(dist / largest[0]),
        },
    }
    return summary, per_route


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(data_dir: Path, *, demo_fleet: bool = False) -> tuple[subprocess.Popen[bytes], str]:
    """Start `headroom up` on a free port (embedded PostgreSQL in `data_dir`), with the demo fleet if asked."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = os.environ | {
        "HEADROOM_DATA_DIR": str(data_dir),
        "HEADROOM_PUBLIC_URL": url,
        "HEADROOM_DEMO_FLEET": "true" if demo_fleet else "false",
    }
    log = (data_dir / "server.log").open("wb")
    proc = subprocess.Popen(
        ["uv", "run", "headroom", "up", "--port", str(port)],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"headroom up exited; see {data_dir / 'server.log'}")
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        time.sleep(1)
    proc.terminate()
    raise SystemExit("headroom up did not answer /healthz within 180 s")


def stop_server(proc: subprocess.Popen[bytes], data_dir: Path) -> None:
    """Stop the server and the embedded PostgreSQL it started (which outlives it), then remove its data."""
    proc.terminate()
    proc.wait(timeout=60)
    pid_file = data_dir / "postgres" / "pgserver" / "postmaster.pid"
    if pid_file.is_file():
        postmaster = int(pid_file.read_text().split()[0])
        os.kill(postmaster, signal.SIGTERM)
        deadline = time.monotonic() + 30
        while pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.5)
    shutil.rmtree(data_dir, ignore_errors=True)


def sample_url(path: str) -> str:
    return re.sub(r":\w+", "1", path)


def wire_bytes(url: str, per_route: dict[str, dict[str, Any]], accept_encoding: str) -> dict[str, int]:
    """Body bytes received for each route's first load (page, initial JS and CSS) with this Accept-Encoding."""
    result: dict[str, int] = {}
    headers = {"Accept-Encoding": accept_encoding}
    with httpx.Client(base_url=url, timeout=30) as client:
        for path, route in per_route.items():
            total = 0
            for target in [sample_url(path), *(f"/{f}" for f in route["js_files"] + route["css_files"])]:
                with client.stream("GET", target, headers=headers) as response:
                    response.raise_for_status()
                    for _ in response.iter_raw():
                        pass
                    total += response.num_bytes_downloaded
            result[path] = total
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-build", action="store_true", help="measure frontend/dist as it is")
    parser.add_argument("--url", help="a running Headroom serving this frontend/dist (default: start one)")
    parser.add_argument("--label", default="after")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "frontend_budget.json")
    args = parser.parse_args()
    if not args.no_build:
        build()
    dist = FRONTEND / "dist"
    summary, per_route = initial_js(dist)

    proc = None
    url = args.url
    if url is None:
        data_dir = Path(tempfile.mkdtemp(prefix="headroom-frontend-budget-"))
        proc, url = start_server(data_dir)
    try:
        identity = wire_bytes(url, per_route, "identity")
        compressed = wire_bytes(url, per_route, "gzip, deflate, br")
    finally:
        if proc is not None:
            stop_server(proc, data_dir)

    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
    ).stdout.strip()
    over = [p for p, r in per_route.items() if r["js_gzip_bytes"] / 1000 > BUDGET_KB]
    print(
        f"{args.label} at {commit}: {summary['js_chunks']} JS chunks, largest {summary['largest_chunk']['file']} "
        f"{summary['largest_chunk']['raw_bytes'] / 1000:.0f} KB ({summary['largest_chunk']['gzip_bytes'] / 1000:.0f} KB gz)"
    )
    print(
        "| route | initial JS (KB gz) | initial JS (KB raw) | first load, identity (KB) | first load, gzip/br (KB) |"
    )
    print("|---|---|---|---|---|")
    for path, route in per_route.items():
        print(
            f"| `{path}` | {route['js_gzip_bytes'] / 1000:.1f} | {route['js_raw_bytes'] / 1000:.0f} | "
            f"{identity[path] / 1000:.0f} | {compressed[path] / 1000:.0f} |"
        )
    for path in per_route:
        per_route[path]["wire_identity_bytes"] = identity[path]
        per_route[path]["wire_compressed_bytes"] = compressed[path]
    record = {
        "label": args.label,
        "commit": commit,
        "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "budget_kb_gzip": BUDGET_KB,
        "over_budget": over,
        **summary,
        "routes": per_route,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=2) + "\n")
    print(f"over budget ({BUDGET_KB:.0f} KB gz): {over or 'none'}; written {args.out}")
    sys.exit(1 if over else 0)


if __name__ == "__main__":
    main()
