"""A Celery worker that also counts each job's CPU seconds, for the load test (bench/load_test.py).

    python bench/load/worker.py -A headroom_worker.celery_app worker -Q ingest,alerts --concurrency=2 ...

It is `celery` itself, with two counters added before the worker's pool forks, so every pool process has them:
each run of a job (Headroom's one runner, headroom.platform.jobs.runner.run_job) adds the process's CPU time over
the run to `cpu|<job>` in the Redis hash LOAD_CPU_KEY, and the CPU time spent inside the demo's simulator
(`simulate`, the demo's own cost, which a real collector does not have) to `cpu|<job>|simulator`. The hash lives
in the broker's Redis (REDIS_URL), read by the load test before and after each step.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

LOAD_CPU_KEY = "headroom:load:cpu"


def _install() -> None:
    import redis

    from demo_tenant import wrap_simulate  # bench/, put first on the path below
    from headroom.platform.jobs import runner
    from headroom.sources.demo import service as demo

    client = redis.Redis.from_url(os.environ["REDIS_URL"])
    simulator_cpu = wrap_simulate(demo)  # ingest_window and _fleet look the name up in the module at each call
    run_job = runner.run_job

    def counted_run_job(job: Any, *args: Any, **kwargs: Any) -> Any:
        began, simulated = time.process_time(), simulator_cpu()
        try:
            return run_job(job, *args, **kwargs)
        finally:
            pipe = client.pipeline(transaction=False)
            pipe.hincrbyfloat(LOAD_CPU_KEY, f"cpu|{job.name}", time.process_time() - began)
            if simulator_cpu() > simulated:
                pipe.hincrbyfloat(LOAD_CPU_KEY, f"cpu|{job.name}|simulator", simulator_cpu() - simulated)
            pipe.execute()

    # before the worker imports its tasks (headroom_worker.tasks and rounds take run_job by name)
    runner.run_job = counted_run_job
    for module in list(sys.modules.values()):
        if getattr(module, "run_job", None) is run_job:
            module.run_job = counted_run_job


def read_cpu(redis_url: str) -> dict[str, float]:
    """Every job's CPU seconds so far (`job`, and `job|simulator` for the simulator's share)."""
    import redis

    raw = redis.Redis.from_url(redis_url).hgetall(LOAD_CPU_KEY)
    return {k.decode().split("|", 1)[1]: float(v) for k, v in raw.items()}


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    _install()
    from celery.__main__ import main

    sys.argv[0] = "celery"
    main()
