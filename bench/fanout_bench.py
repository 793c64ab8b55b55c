"""How long a scheduled round takes to publish: `JobContext.fan_out` of N tasks (one per cluster) to a real Redis.

A round over every cluster or source (docs/scaling.md, "How Headroom scales out") queues one task per item; at
10,000 clusters that is 10,000 tasks each 15 minutes (advice, fleet score) and each minute (ingest). The round
task publishes them all before it returns, so its time is the round's delay. Measured: the wall time of one
fan_out of N `fleet.score` tasks through the job context the worker builds (job_context: the real dispatch, the
real Celery client) and the CPU time it took (this process: the machine is shared, so wall time varies with
its load), then the queue's length (every task is there exactly once), on a Redis database of its
own that is emptied before and after.

    uv run python bench/fanout_bench.py --redis-url redis://127.0.0.1:6379/0 --out bench/results/fanout.json \\
        --label after
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import statistics
import time
import uuid
from pathlib import Path
from typing import Any

JOB = "fleet.score"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--redis-url", required=True, help="a Redis the bench may empty (its database 9 is used)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--label", default="run")
    args = parser.parse_args()

    import redis
    from headroom.jobs import all_jobs
    from headroom.platform.jobs.context import job_context
    from headroom.platform.jobs.registry import job as find_job
    from headroom.platform.settings import Settings

    all_jobs()
    url = args.redis_url.rsplit("/", 1)[0] + "/9"
    client = redis.Redis.from_url(url)
    settings = Settings(HEADROOM_ENV="test", HEADROOM_SECRET_KEY="fanout-bench-" + "x" * 32, REDIS_URL=url)
    ctx = job_context("postgresql+psycopg://unused/unused", settings)
    queue = find_job(JOB).queue
    results: dict[str, Any] = {}
    for n in args.sizes:
        ids = [uuid.uuid4() for _ in range(n)]
        seconds, cpu = [], []
        for attempt in range(args.repeat):
            client.flushdb()
            now = dt.datetime(2026, 1, 1, tzinfo=dt.UTC) + dt.timedelta(minutes=attempt)
            started, cpu0 = time.perf_counter(), time.process_time()
            summary = ctx.fan_out(JOB, "cluster_id", ids, now)
            seconds.append(time.perf_counter() - started)
            cpu.append(time.process_time() - cpu0)
            assert summary is not None and summary["queued"] == n, summary
            assert client.llen(queue) == n, (client.llen(queue), n)
        client.flushdb()
        results[str(n)] = {"seconds_median": round(statistics.median(seconds), 3),
                           "seconds": [round(s, 3) for s in seconds],
                           "cpu_seconds_median": round(statistics.median(cpu), 3),
                           "tasks_per_second": round(n / statistics.median(seconds))}
        print(f"{n:>6} tasks: {results[str(n)]['seconds_median']:.3f} s  ({results[str(n)]['tasks_per_second']}/s), "
              f"CPU {results[str(n)]['cpu_seconds_median']:.3f} s")
    if args.out:
        recorded = json.loads(args.out.read_text()) if args.out.exists() else {}
        recorded[args.label] = {"at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                                "machine": f"{platform.machine()}, {platform.python_version()}", "job": JOB,
                                "sizes": results}
        args.out.write_text(json.dumps(recorded, indent=2) + "\n")


if __name__ == "__main__":
    main()
