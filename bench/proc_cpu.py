"""Per-process CPU of a whole run (`.ci/run`, a Playwright project...), sampled from /proc.

    python3 bench/proc_cpu.py record OUT.json [SECONDS]   # samples every SECONDS (2) until SIGTERM/SIGINT
    python3 bench/proc_cpu.py report OUT.json ROOT...     # CPU by kind of process, for the processes under ROOT

`record` reads every process's utime + stime (/proc/PID/stat) every few seconds and keeps the last value seen, and
the machine's busy time (/proc/stat) over the whole recording. A process that lives less than one interval is not
seen: its CPU is in its parent's `kids` (cutime + cstime, counted once the parent has waited for it), which is why
the report prints both. `report` keeps the processes whose command line, or an ancestor's, contains one of the
ROOT strings (a clone's path), and groups them by what they are (pytest workers, e2e servers, moto, Chromium...).
Standard library only, so it runs before `uv sync`.
"""

from __future__ import annotations

import collections
import json
import os
import re
import signal
import sys
import time
from pathlib import Path
from typing import Any

TICK = os.sysconf("SC_CLK_TCK")
KINDS = (  # (kind, pattern on the command line); the first match wins
    ("pytest worker", r"exec\(eval\(sys\.stdin"),
    ("pytest (controller)", r"bin/pytest"),
    ("e2e server (headroom serve)", r"headroom serve"),
    ("moto server", r"moto_server"),
    ("AWS CLI", r"awscli/bin/"),
    ("mypy", r"\bmypy\b"),
    ("Chromium", r"chrom|headless_shell"),
    ("vitest", r"vitest"),
    ("eslint", r"eslint"),
    ("tsc", r"\btsc\b"),
    ("Playwright (node)", r"playwright"),
    ("vite build", r"vite build"),
    ("npm", r"\bnpm\b"),
    ("Celery worker", r"celery"),
    ("headroom CLI", r"bin/headroom|headroom\.cli"),
    ("PostgreSQL", r"^postgres"),
    ("Prometheus", r"prometheus"),
    ("other Python", r"python"),
    ("other node", r"\bnode\b"),
)


def _busy() -> int:
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    return sum(fields) - fields[3] - fields[4]  # all but idle and iowait


def record(out: Path, interval: float) -> None:
    procs: dict[str, dict[str, Any]] = {}
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    busy0, t0 = _busy(), time.time()
    while not stop:
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                stat = Path(f"/proc/{pid}/stat").read_text()
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            close = stat.rfind(")")
            fields = stat[close + 2:].split()
            ut, st, cut, cst = (int(x) for x in fields[11:15])
            p = procs.setdefault(f"{pid}:{fields[19]}", {"pid": int(pid), "ppid": int(fields[1]),
                                                          "comm": stat[stat.find("(") + 1:close],
                                                          "first_cpu": (ut + st) / TICK,
                                                          "first_seen": time.time() - t0})
            p.update(cpu=(ut + st) / TICK, kids=(cut + cst) / TICK, last_seen=time.time() - t0)
            if cmd.strip():
                p["cmd"] = cmd.strip()[:400]
        time.sleep(interval)
    out.write_text(json.dumps({"wall": time.time() - t0, "busy_cpu": (_busy() - busy0) / TICK,
                               "interval": interval, "procs": list(procs.values())}))


def report(path: Path, roots: list[str]) -> None:
    data = json.loads(path.read_text())
    procs = data["procs"]
    by_pid = {p["pid"]: p for p in procs}

    def under_root(p: dict[str, Any]) -> bool:
        for _ in range(64):
            if any(r in p.get("cmd", "") for r in roots):
                return True
            parent = by_pid.get(p["ppid"])
            if parent is None or parent is p:
                return False
            p = parent
        return False

    cpu: collections.Counter[str] = collections.Counter()
    kids: collections.Counter[str] = collections.Counter()
    count: collections.Counter[str] = collections.Counter()
    for p in procs:
        if not under_root(p):
            continue
        cmd = p.get("cmd", p["comm"])
        kind = next((k for k, pattern in KINDS if re.search(pattern, cmd)), "other: " + p["comm"])
        # a process already running when the recording started counts from its first sample
        cpu[kind] += p["cpu"] - (p["first_cpu"] if p["first_seen"] <= 2 * data["interval"] else 0.0)
        kids[kind] += p["kids"]
        count[kind] += 1
    print(f"recorded {data['wall']:.0f} s; the machine's busy CPU over it: {data['busy_cpu']:.0f} s")
    print(f"{'kind':32s} {'CPU s':>8s} {'processes':>10s} {'kids s':>8s}  (kids: children waited for, seen or not)")
    for kind, seconds in cpu.most_common():
        print(f"{kind:32s} {seconds:8.1f} {count[kind]:10d} {kids[kind]:8.1f}")
    print(f"{'all seen':32s} {sum(cpu.values()):8.1f}")


def main(argv: list[str]) -> None:
    if len(argv) >= 2 and argv[0] == "record":
        record(Path(argv[1]), float(argv[2]) if len(argv) > 2 else 2.0)
    elif len(argv) >= 3 and argv[0] == "report":
        report(Path(argv[1]), argv[2:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
