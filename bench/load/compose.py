"""docker-compose.yml's worker services and CPU weights, for the load test's `--workers compose` (bench/load_test.py).

The load test runs the production layout without a Docker engine: each worker service's queues and process count
are read from its `command`, and each service's `cpu_shares` (Docker's default: 1024) is applied as Docker applies
it, to a cgroup of the service's processes (cgroup v1's `cpu.shares`, or cgroup v2's `cpu.weight` converted as the
OCI runtimes convert it). A weight only matters while the cores are full: it decides who gets them then.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import yaml

REPO = Path(__file__).resolve().parents[2]
DEFAULT_SHARES = 1024  # Docker's default `cpu_shares` (docs/scaling.md, "CPU weights")
CGROUP_V1_CPU = Path("/sys/fs/cgroup/cpu")
CGROUP_V2 = Path("/sys/fs/cgroup")


@dataclass(frozen=True)
class WorkerService:
    name: str
    queues: tuple[str, ...]
    processes: int
    cpu_shares: int


def services(path: Path = REPO / "docker-compose.yml") -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(path.read_text())
    return dict(data["services"])


def cpu_shares(service: dict[str, Any]) -> int:
    return int(service.get("cpu_shares", DEFAULT_SHARES))


def worker_services(path: Path = REPO / "docker-compose.yml") -> list[WorkerService]:
    """The Celery worker services, in the file's order: queues from `-Q`, processes from `--concurrency=`."""
    found = []
    for name, service in services(path).items():
        command = [str(c) for c in service.get("command") or []]
        if command[:1] != ["celery"] or "worker" not in command:
            continue
        concurrency = next(c.split("=", 1)[1] for c in command if c.startswith("--concurrency="))
        found.append(WorkerService(name, tuple(command[command.index("-Q") + 1].split(",")), int(concurrency),
                                   cpu_shares(service)))
    return found


def v2_weight(shares: int) -> int:
    """cgroup v2's `cpu.weight` for a cgroup v1 `cpu.shares`, as runc and crun convert it (2..262144 onto
    1..10000)."""
    return 1 + ((shares - 2) * 9999) // 262142


class CpuGroups:
    """A cgroup per service under the CPU controller's root, each holding the service's process trees with its
    weight, as containers are; `close()` moves what still runs back to the root and removes the groups. Needs
    root and a writable cgroup tree (`available()`); without them the load test runs unweighted and says so."""

    def __init__(self, tag: str) -> None:
        self.v1 = (CGROUP_V1_CPU / "cpu.shares").is_file() or not (CGROUP_V2 / "cgroup.controllers").is_file()
        self.root = CGROUP_V1_CPU if self.v1 else CGROUP_V2
        self.tag = tag
        self.made: list[Path] = []

    def available(self) -> bool:
        return os.geteuid() == 0 and os.access(self.root, os.W_OK) and (
            (self.root / "cpu.shares").is_file() if self.v1 else
            "cpu" in (self.root / "cgroup.subtree_control").read_text().split())

    def place(self, service: str, shares: int, pids: list[int]) -> None:
        group = self.root / f"headroom-load-{self.tag}-{service}"
        if group not in self.made:
            group.mkdir(exist_ok=True)
            self.made.append(group)
        if self.v1:
            (group / "cpu.shares").write_text(str(shares))
        else:
            (group / "cpu.weight").write_text(str(v2_weight(shares)))
        for pid in tree(pids):
            with contextlib.suppress(ProcessLookupError):  # ended meanwhile
                (group / "cgroup.procs").write_text(str(pid))

    def shares(self) -> dict[str, int]:
        """The weight each group holds now, read back from the kernel (v1 shares, or v2 weights)."""
        name = "cpu.shares" if self.v1 else "cpu.weight"
        return {g.name: int((g / name).read_text()) for g in self.made}

    def close(self) -> None:
        for group in self.made:
            for pid in (group / "cgroup.procs").read_text().split():
                with contextlib.suppress(ProcessLookupError):
                    (self.root / "cgroup.procs").write_text(pid)
            group.rmdir()
        self.made.clear()


def tree(pids: list[int]) -> list[int]:
    found = []
    for pid in pids:
        try:
            proc = psutil.Process(pid)
            found += [proc.pid, *(c.pid for c in proc.children(recursive=True))]
        except psutil.NoSuchProcess:
            pass
    return found
