"""Time the front end in headless Chromium: the Metrics tab's first chart over N cold loads, every page over M.

Runs e2e/bench/page-times.spec.ts (Playwright, the e2e tests' browser) against a running Headroom (`--url` with
`--password-file`, the demo login's password file) or one this script starts with `headroom up` (embedded
PostgreSQL, the demo fleet simulated in its first minutes; stopped at the end). Writes
bench/results/page_times.json and adds a line to bench/metrics_first_chart.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from frontend_budget import build, start_server, stop_server

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "bench" / "results" / "page_times.json"
REPORT = REPO / "bench" / "metrics_first_chart.md"
BUDGET_MS = 1000


def run_spec(url: str, password_file: Path, out: Path, runs: int, page_runs: int) -> dict[str, object]:
    env = os.environ | {
        "HEADROOM_E2E_BASE_URL": url,
        "HEADROOM_E2E_DEMO_PASSWORD_FILE": str(password_file),
        "HEADROOM_E2E_OUTBOX_DIR": str(password_file.parent / "outbox"),
        "HEADROOM_E2E_CHROMIUM": os.environ.get("HEADROOM_E2E_CHROMIUM", "/usr/bin/chromium"),
        "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1",
        "HEADROOM_BENCH_OUT": str(out),
        "HEADROOM_BENCH_RUNS": str(runs),
        "HEADROOM_BENCH_PAGE_RUNS": str(page_runs),
    }
    subprocess.run(["npx", "--no-install", "playwright", "test", "-c", "playwright.bench.config.ts"],
                   cwd=REPO / "e2e", env=env, check=True)
    result: dict[str, object] = json.loads(out.read_text())
    return result


JOB_ENDED = re.compile(r"^(?P<at>\S+Z) \[info\s*\] job\.ended .*?job=(?P<job>\S+) .*?seconds=(?P<seconds>[0-9.]+)")


def scheduled_jobs(server_log: Path, started: str, finished: str) -> dict[str, object]:
    """The server's own scheduled jobs (the demo fleet's simulation, ingest, rollups...) that ran while the pages
    were measured, read from its log: how long they ran in all, and whether any ran into a load's window (the spec
    starts its loads between :20 and :55 of a minute)."""
    start, end = (dt.datetime.fromisoformat(t.replace("Z", "+00:00")) for t in (started, finished))
    runs = []
    for line in server_log.read_text(errors="replace").splitlines():
        match = JOB_ENDED.match(line)
        if match is None:
            continue
        ended = dt.datetime.fromisoformat(match["at"].replace("Z", "+00:00"))
        seconds = float(match["seconds"])
        began = ended - dt.timedelta(seconds=seconds)
        if start <= ended and began <= end:
            runs.append((match["job"], began, ended, seconds))
    minutes = max(1.0, (end - start).total_seconds() / 60)
    in_window = sorted({job for job, began, ended, _ in runs if ended.second >= 20 or began.second >= 20
                        or (ended - began).total_seconds() >= 20})
    return {
        "what": "the server's scheduled jobs (in its own process) while the pages were measured",
        "runs": len(runs),
        "seconds_total": round(sum(r[3] for r in runs), 1),
        "seconds_per_minute": round(sum(r[3] for r in runs) / minutes, 2),
        "latest_end_second_of_minute": max((r[2].second for r in runs), default=None),
        "jobs_reaching_the_load_window": in_window,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a running Headroom serving the built front end (default: start one)")
    parser.add_argument("--password-file", type=Path, help="with --url: its <HEADROOM_DATA_DIR>/demo-password.txt")
    parser.add_argument("--runs", type=int, default=20, help="cold loads of the Metrics tab")
    parser.add_argument("--page-runs", type=int, default=5, help="cold loads of every page (p50/p95 per page)")
    parser.add_argument("--no-build", action="store_true", help="serve frontend/dist as it is")
    parser.add_argument("--label", default="", help="what was measured (e.g. a commit's change)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    proc = None
    if args.url is None:
        if not args.no_build:
            build()
        data_dir = Path(tempfile.mkdtemp(prefix="headroom-page-times-"))
        proc, url = start_server(data_dir, demo_fleet=True)
        password_file = data_dir / "demo-password.txt"
    else:
        if args.password_file is None:
            raise SystemExit("--url needs --password-file")
        url, password_file = args.url, args.password_file
    try:
        result = run_spec(url, password_file, args.out, args.runs, args.page_runs)
        if proc is not None:
            result["scheduled_jobs"] = scheduled_jobs(data_dir / "server.log", str(result["started_at"]),
                                                      str(result["finished_at"]))
    finally:
        if proc is not None:
            stop_server(proc, data_dir)

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                            text=True).stdout.strip()
    result["commit"] = commit
    result["label"] = args.label
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    first = result["metrics_first_chart"]
    pages = result["page_content"]
    assert isinstance(first, dict) and isinstance(pages, dict)
    # A page is over the budget when its p95 is (with 5 loads: its slowest load).
    slowest = max(pages["pages"], key=lambda p: p["p95_ms"])
    over = [f"{p['page']} {p['p95_ms']:,}" for p in pages["pages"] if p["p95_ms"] > BUDGET_MS]
    cpu = result.get("metrics_first_chart_cpu")
    assert isinstance(cpu, dict)
    line = (f"| {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} | {commit} {args.label} | {len(first['runs'])} | "
            f"{first['p50_ms']:,} | {first['p95_ms']:,} | {first['max_ms']:,} | "
            f"{cpu['p50_ms']:,} / {cpu['p95_ms']:,} ({len(cpu['runs'])}) | "
            f"{' '.join(f'{x:.2f}' for x in first['load_average_before'])} | "
            f"{' '.join(f'{x:.2f}' for x in first['load_average_after'])} | "
            f"{' '.join(f'{x:.2f}' for x in pages['load_average_before'])} | "
            f"{slowest['page']} {slowest['p50_ms']:,} / {slowest['p95_ms']:,} ({len(slowest['runs'])}) | "
            f"{', '.join(over) or 'none'} |\n")
    with REPORT.open("a") as report:
        report.write(line)
    print(line, end="")
    if "scheduled_jobs" in result:
        print("scheduled jobs while measuring:", json.dumps(result["scheduled_jobs"]))
    sys.exit(0)


if __name__ == "__main__":
    main()
