"""The worker's logging: Celery's start-up hands logging to Headroom's handler, so Celery's own lines and our
tasks' lines are scrubbed of secrets like the API's."""

from __future__ import annotations

import logging
import os
from typing import Any


def test_celery_log_setup_uses_the_scrubbing_handler(worker_env: dict[str, str], capsys: Any) -> None:
    assert os.environ["REDIS_URL"]  # set by worker_redis_url: importing the Celery app needs it
    from headroom.platform.logging import reset_logging
    from headroom_worker.celery_app import app

    app.log.already_setup = False
    app.log.setup(loglevel="INFO", redirect_stdouts=False)  # what `celery worker` does at start
    try:
        logging.getLogger("celery.worker.consumer.connection").info(
            "Connected to %s", "redis://:br0ker-Pass@127.0.0.1:6379/3")
        try:
            raise RuntimeError("task failed calling http://scraper:pr0m-Pass@127.0.0.1:9090 with Bearer hr_AbcDef123456")
        except RuntimeError:
            logging.getLogger("celery.app.trace").exception("Task ingest.prometheus raised unexpected")
    finally:
        reset_logging()
    out = capsys.readouterr().out

    assert "Connected to redis://[redacted]@127.0.0.1:6379/3" in out, out
    assert "Task ingest.prometheus raised unexpected" in out and "Traceback (most recent call last):" in out
    assert "br0ker-Pass" not in out and "pr0m-Pass" not in out and "hr_AbcDef123456" not in out
