"""The CPU of rendering a node's tikv.toml artefacts from one patching of the file (render.artefacts, as the configs
download and the tests' artefact checks do now) against one patching per artefact (render.artefact called per
format, as before), in the same process, in turn, on TiKV's own config template and on a small TiUP file.

Two sets: the configs download's pair (merged and diff of one node) and every format with its rollback (18).
`uv run python bench/tikv_artefacts_bench.py [rounds]` prints one JSON object (and writes
bench/results/tikv_artefacts.json): the median CPU seconds per set each way, their ratio, and the load average
around the run.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from headroom.domain.model import Change
from headroom.domain.tikvconf.change import Patch
from headroom.domain.tikvconf.render import FORMATS, artefact, artefacts

ROOT = Path(__file__).resolve().parents[1]
FILES = {
    # TiKV's own template (58 KB, mostly comments): the largest file a user is likely to upload
    "template": ROOT / "backend/tests/domain/tikvconf/data/tikv-toml/tikv-v8.5.0-config-template.toml",
    "tiup": ROOT / "examples/configs/tiup-8vcpu-32gib.toml",
}
# What the advisor's rules propose on a TiKV (sizes, thread pools, titan), as the real-config tests use
CHANGES = tuple(
    Change(target="tikv", key=key, proposed=value, reason="bench")
    for key, value in (
        ("storage.block-cache.capacity", "14GiB"),
        ("storage.scheduler-worker-pool-size", 6),
        ("readpool.unified.max-thread-count", 10),
        ("raftstore.store-io-pool-size", 2),
        ("rocksdb.defaultcf.block-size", "32KB"),
        ("rocksdb.titan.enabled", True),
    )
)
SETS: dict[str, tuple[tuple[str, ...], tuple[bool, ...]]] = {
    "merged_and_diff": (("merged", "diff"), (False,)),
    "every_format_and_rollback": (FORMATS, (False, True)),
}


def _one_by_one(patch: Patch, text: str, formats: tuple[str, ...], rollbacks: tuple[bool, ...]) -> float:
    started = time.process_time()
    for fmt in formats:
        for rollback in rollbacks:
            artefact(patch, fmt, config_text=text, rollback=rollback)
    return time.process_time() - started


def _at_once(patch: Patch, text: str, formats: tuple[str, ...], rollbacks: tuple[bool, ...]) -> float:
    started = time.process_time()
    artefacts(patch, config_text=text, formats=formats, rollbacks=rollbacks)
    return time.process_time() - started


def main(rounds: int) -> dict[str, Any]:
    patch = Patch(cluster="bench", changes=CHANGES)
    load_before = os.getloadavg()
    result: dict[str, Any] = {
        "what": "CPU seconds to render a set of tikv.toml artefacts (median over rounds), one patching per "
        "artefact against one patching for the set",
        "rounds": rounds,
    }
    for name, path in FILES.items():
        text = path.read_bytes().decode("utf-8")
        for set_name, (formats, rollbacks) in SETS.items():
            _at_once(patch, text, formats, rollbacks)  # warm: imports, key tables
            times: dict[str, list[float]] = {"one_by_one": [], "at_once": []}
            for _ in range(rounds):
                times["one_by_one"].append(_one_by_one(patch, text, formats, rollbacks))
                times["at_once"].append(_at_once(patch, text, formats, rollbacks))
            before, after = (statistics.median(times[k]) for k in ("one_by_one", "at_once"))
            result[f"{name}.{set_name}"] = {
                "one_by_one_s": round(before, 4),
                "at_once_s": round(after, 4),
                "ratio": round(after / before, 3),
            }
    result["loadavg_before"] = [round(x, 2) for x in load_before]
    result["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    return result


if __name__ == "__main__":
    outcome = main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
    out = Path(__file__).resolve().parent / "results" / "tikv_artefacts.json"
    out.write_text(json.dumps(outcome, indent=2) + "\n")
    print(json.dumps(outcome, indent=2))
