"""Several API worker processes (PROMETHEUS_MULTIPROC_DIR, prometheus_client's multiprocess mode): a scrape of any
one of them reports every process's HTTP latency summed (docs/operations.md, "Several processes, one truth")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

SCRIPT = """
import multiprocessing
import sys

from headroom.platform import telemetry


def observe(n):
    for _ in range(n):
        telemetry.HTTP_DURATION.labels(route="/api/v1/clusters", method="GET", status_class="2xx").observe(0.2)


if __name__ == "__main__":
    children = [multiprocessing.get_context("fork").Process(target=observe, args=(n,)) for n in (3, 4)]
    for child in children:
        child.start()
    for child in children:
        child.join()
        assert child.exitcode == 0
    sys.stdout.write(telemetry.exposition([]).decode())
"""


def test_one_scrape_sums_every_worker_process(tmp_path: Path) -> None:
    multiproc = tmp_path / "prom"
    multiproc.mkdir()
    script = tmp_path / "workers.py"
    script.write_text(SCRIPT)
    done = subprocess.run(
        [sys.executable, str(script)],
        env={**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(multiproc)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(done.stdout)
        for s in family.samples
    }
    labels = {"method": "GET", "route": "/api/v1/clusters", "status_class": "2xx"}

    def value(name: str, **extra: str) -> float:
        return samples[(name, tuple(sorted({**labels, **extra}.items())))]

    assert value("headroom_http_request_duration_seconds_count") == 7
    assert value("headroom_http_request_duration_seconds_bucket", le="0.25") == 7
    assert value("headroom_http_request_duration_seconds_bucket", le="0.1") == 0
    assert len(list(multiproc.iterdir())) == 2  # one file per process that observed
    assert "process_resident_memory_bytes" not in done.stdout  # per-process figures cannot be merged
