"""How long a scheduled round takes to publish: `JobContext.fan_out` of N items (one per cluster) to a real Redis.

A round over every cluster or source (docs/scaling.md, "How Headroom scales out") queues a run of its job per
item; at 10,000 clusters that is 10,000 runs each 15 minutes (advice, fleet score) and each minute (ingest). The
round task publishes them all before it returns, so its time is the round's delay. Measured: the wall time of one
fan_out of N items of `--job` through the job context the worker builds (job_context: the real dispatch, the
real Celery client) and the CPU time it took (this process: the machine is shared, so wall time varies with
its load), on a Redis database of its own that is emptied before and after. Then the queue is read back, every
message decoded: it must hold exactly the messages the round reported and carry exactly the N items, once each.

A message carries its items in the kwargs' `items` (several per message), or one item in the kwargs' `--key`
(one task per item, before rounds were published several per message): the same script measures an older
checkout too (PYTHONPATH=<its backend directory>), as the anchor of a before/after comparison.

    uv run python bench/fanout_bench.py --redis-url redis://127.0.0.1:6379/0 --out bench/results/fanout.json \\
        --label after
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import json
import os
import platform
import statistics
import time
import uuid
from pathlib import Path
from typing import Any


def queued_items(client: Any, queue: str, key: str) -> tuple[int, list[str]]:
    """The messages on `queue` and every item they carry (Celery's message protocol 2 over Redis)."""
    raws = client.lrange(queue, 0, -1)
    items: list[str] = []
    for raw in raws:
        _args, kwargs, _embed = json.loads(base64.b64decode(json.loads(raw)["body"]))
        items.extend(kwargs["items"] if "items" in kwargs else [kwargs[key]])
    return len(raws), items


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--redis-url", required=True, help="a Redis the bench may empty (its database 9 is used)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--label", default="run")
    parser.add_argument("--job", default="fleet.score", help="a fanned-out job (fleet.score: 50 items a message)")
    parser.add_argument("--key", default="cluster_id", help="the job's item parameter")
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
    queue = find_job(args.job).queue
    # One small round first, untimed: the Celery client, its connection and the round's Redis script are made
    # once per process, not per round.
    client.flushdb()
    ctx.fan_out(args.job, args.key, [uuid.uuid4() for _ in range(10)], dt.datetime(2025, 1, 1, tzinfo=dt.UTC))
    load_before = os.getloadavg()
    results: dict[str, Any] = {}
    for n in args.sizes:
        ids = [uuid.uuid4() for _ in range(n)]
        seconds, cpu, messages = [], [], 0
        for attempt in range(args.repeat):
            client.flushdb()
            now = dt.datetime(2026, 1, 1, tzinfo=dt.UTC) + dt.timedelta(minutes=attempt)
            started, cpu0 = time.perf_counter(), time.process_time()
            summary = ctx.fan_out(args.job, args.key, ids, now)
            seconds.append(time.perf_counter() - started)
            cpu.append(time.process_time() - cpu0)
            assert summary is not None and summary["queued"] == n, summary
            messages, items = queued_items(client, queue, args.key)
            assert messages == summary.get("messages", n), (messages, summary)
            assert sorted(items) == sorted(str(i) for i in ids), "the queue does not carry exactly the N items"
        client.flushdb()
        results[str(n)] = {"seconds_median": round(statistics.median(seconds), 3),
                           "seconds": [round(s, 3) for s in seconds],
                           "cpu_seconds_median": round(statistics.median(cpu), 3),
                           "cpu_seconds": [round(c, 3) for c in cpu],
                           "messages": messages,
                           "tasks_per_second": round(n / statistics.median(seconds))}
        print(f"{n:>6} items: {results[str(n)]['seconds_median']:.3f} s  ({results[str(n)]['tasks_per_second']}/s), "
              f"CPU {results[str(n)]['cpu_seconds_median']:.3f} s, {messages} messages")
    load_after = os.getloadavg()
    print(f"load average (1 min) {load_before[0]:.2f} -> {load_after[0]:.2f}")
    if args.out:
        recorded = json.loads(args.out.read_text()) if args.out.exists() else {}
        recorded[args.label] = {"at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                                "machine": f"{platform.machine()}, {platform.python_version()}", "job": args.job,
                                "load_average_1m": [round(load_before[0], 2), round(load_after[0], 2)],
                                "sizes": results}
        args.out.write_text(json.dumps(recorded, indent=2) + "\n")


if __name__ == "__main__":
    main()
