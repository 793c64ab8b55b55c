"""The scheduling lists of xdist_workers.py name files and directories that exist (a renamed file would silently
fall out of its group, and two files sharing the moto server's regions could then run at once)."""

from __future__ import annotations

from pathlib import Path

from xdist_workers import GROUPS, STARTED_FIRST, _group, _rank

ROOT = Path(__file__).resolve().parents[3]


def test_every_scheduled_path_exists() -> None:
    for group, paths in GROUPS.items():
        for path in paths:
            assert (ROOT / path).is_dir() if path.endswith("/") else (ROOT / path).is_file(), (group, path)
    for path in STARTED_FIRST:
        assert (ROOT / path).is_file(), path


def test_groups_go_first_then_the_files_that_start_processes() -> None:
    assert _group("backend/tests/sources/aws/test_aws_setup.py") == "moto"
    assert _group("backend/tests/patches/test_new_volume_script.py") == "moto-eu-north-1"
    assert _group("backend/tests/domain/catalog/test_catalog_price_list.py") == (
        "backend/tests/domain/catalog/test_catalog_price_list.py")
    ranks = [_rank(_group(p)) for p in ("backend/tests/sources/prometheus/test_promql.py",
                                        "worker/tests/test_worker.py", "backend/tests/domain/test_words.py")]
    assert ranks == [0, 1, 2]
