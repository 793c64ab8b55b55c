"""A Celery worker that also counts each job's CPU seconds, for the load test (bench/load_test.py).

    python bench/load/worker.py -A headroom_worker.celery_app worker -Q ingest,alerts --concurrency=2 ...

It is `celery` itself, with two counters added before the worker's pool forks, so every pool process has them:
each run of a job (Headroom's one runner, headroom.platform.jobs.runner.run_job) adds the process's CPU time over
the run to `cpu|<job>` in the Redis hash LOAD_CPU_KEY, and the CPU time spent inside the demo's simulator
(`simulate`, the demo's own cost, which a real collector does not have) to `cpu|<job>|simulator`. The hash lives
in the broker's Redis (REDIS_URL), read by the load test before and after each step.

With HEADROOM_LOAD_REPLAY=1 (load_test.py --replay) the demo's minutes are replayed instead of simulated for every
cluster: each process simulates a window (start, length, period, workload origin) once, for the first cluster that
asks, and every other cluster's ingest of the same window writes that recording through the real pipeline
(inventory, series, the store's write, watermarks, the sweep record). What is left out is only the simulator's
per-cluster work: each cluster's own seed and stored physics state (their values, not their shape: the same
series, entities and points). A window with an applied volume change is simulated as usual. The replays and the
simulations are counted in the process and added to LOAD_REPLAY_KEY with the job's CPU, in the same round trip.
"""

from __future__ import annotations

import os
import sys
import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

LOAD_CPU_KEY = "headroom:load:cpu"
LOAD_REPLAY_KEY = "headroom:load:replay"
REPLAY_WINDOWS_KEPT = 16  # windows a process keeps: the round's few distinct (start, end) pairs and a catch-up's


def replaying(simulate: Callable[..., Any], counts: Counter[str]) -> Callable[..., Any]:
    """`simulate`, recording each window once per process and replaying it for every later call with the same
    window (whatever its seed and state: see the module's docstring); `counts` gains "replayed" or "simulated"."""
    kept: OrderedDict[tuple[Any, ...], Any] = OrderedDict()

    def replay(scenario: Any, **kwargs: Any) -> Any:
        if kwargs.get("modified") or kwargs.get("lookback", True):  # an applied change, or not the ingest's call
            return simulate(scenario, **kwargs)
        key = (id(scenario), kwargs.get("hours"), kwargs.get("start"), kwargs.get("step_seconds", 60),
               kwargs.get("origin"), kwargs.get("state") is None)
        snap = kept.get(key)
        if snap is not None:
            kept.move_to_end(key)
            counts["replayed"] += 1
            return snap
        snap = kept[key] = simulate(scenario, **kwargs)
        if len(kept) > REPLAY_WINDOWS_KEPT:
            kept.popitem(last=False)
        counts["simulated"] += 1
        return snap

    return replay


def _install() -> None:
    import redis

    from demo_tenant import wrap_simulate  # bench/, put first on the path below
    from headroom.platform.jobs import runner
    from headroom.sources.demo import service as demo

    client = redis.Redis.from_url(os.environ["REDIS_URL"])
    windows: Counter[str] = Counter()
    if os.environ.get("HEADROOM_LOAD_REPLAY") == "1":  # inside the simulator's CPU counter: a replay is its cost
        demo.simulate = replaying(demo.simulate, windows)
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
            for kind, n in windows.items():
                pipe.hincrby(LOAD_REPLAY_KEY, kind, n)
            windows.clear()
            pipe.execute()

    # before the worker imports its tasks (headroom_worker.tasks and rounds take run_job by name)
    runner.run_job = counted_run_job
    for module in list(sys.modules.values()):
        if getattr(module, "run_job", None) is run_job:
            module.run_job = counted_run_job


def _read(redis_url: str, key: str) -> dict[str, bytes]:
    import redis

    return {k.decode(): v for k, v in redis.Redis.from_url(redis_url).hgetall(key).items()}


def read_cpu(redis_url: str) -> dict[str, float]:
    """Every job's CPU seconds so far (`job`, and `job|simulator` for the simulator's share)."""
    return {k.split("|", 1)[1]: float(v) for k, v in _read(redis_url, LOAD_CPU_KEY).items()}


def read_replays(redis_url: str) -> dict[str, int]:
    """Windows replayed and simulated so far (HEADROOM_LOAD_REPLAY=1)."""
    return {k: int(v) for k, v in _read(redis_url, LOAD_REPLAY_KEY).items()}


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    _install()
    from celery.__main__ import main

    sys.argv[0] = "celery"
    main()
