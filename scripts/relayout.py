"""One-off tool of the issue-11 relayout: moves modules to the feature layout and rewrites every reference.

    uv run python scripts/relayout.py          # rewrite old module paths in every text file (safe to re-run)
    uv run python scripts/relayout.py --move   # git mv the files first (done once, on main)

Branches that were cut before the move run it after merging main: it rewrites `headroom.services.findings`,
`from headroom.services import findings as service`, `headroom/services/findings.py` and the like to the new
paths. It is deleted once every branch of that period has landed.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "backend" / "headroom"

# Old module (or package) -> new. A package entry moves the whole folder.
PACKAGES = {
    "headroom.catalog": "headroom.domain.catalog",
    "headroom.physics": "headroom.domain.physics",
    "headroom.snapshot": "headroom.domain.snapshot",
    "headroom.forecast": "headroom.domain.forecast",
    "headroom.advisor": "headroom.domain.advisor",
    "headroom.tikvconf": "headroom.domain.tikvconf",
    "headroom.core": "headroom.platform",
    "headroom.deploy_templates": "headroom.sources.aws.deploy_templates",
}
MODULES = {
    # the ORM models live in each feature's models.py (scripts/split_models.py); store/ is gone
    "headroom.store.base": "headroom.platform.orm",
    "headroom.store.models_collect": "headroom.sources.models",
    "headroom.store.models_digest": "headroom.digest.models",
    "headroom.store.models_inventory": "headroom.inventory.models",
    "headroom.store.models_prometheus": "headroom.sources.prometheus.models",
    # the metric registry was `snapshot.metrics`, one of three meanings of "metrics"
    "headroom.snapshot.metrics": "headroom.domain.snapshot.registry",
    "headroom.domain.snapshot.metrics": "headroom.domain.snapshot.registry",
    "headroom.services.mail": "headroom.platform.mail",
    "headroom.services.ratelimit": "headroom.platform.ratelimit",
    "headroom.api.schemas.common": "headroom.platform.schemas",
    "headroom.jobs.registry": "headroom.platform.jobs.registry",
    "headroom.jobs.dispatch": "headroom.platform.jobs.dispatch",
    "headroom.jobs.runtime": "headroom.platform.jobs.runtime",
    # accounts
    "headroom.services.accounts": "headroom.accounts.service",
    "headroom.services.login_limits": "headroom.accounts.login_limits",
    "headroom.api.routers.auth": "headroom.accounts.auth_router",
    "headroom.api.routers.org": "headroom.accounts.org_router",
    "headroom.api.schemas.auth": "headroom.accounts.schemas",
    # clusters
    "headroom.services.clusters": "headroom.clusters.service",
    "headroom.services.demo": "headroom.clusters.demo",
    "headroom.jobs.demo": "headroom.clusters.jobs",
    "headroom.api.routers.clusters": "headroom.clusters.router",
    "headroom.api.schemas.clusters": "headroom.clusters.schemas",
    # findings
    "headroom.services.findings": "headroom.findings.service",
    "headroom.services.advice_runs": "headroom.findings.advice_runs",
    "headroom.services.evidence_series": "headroom.findings.evidence_series",
    "headroom.jobs.advice": "headroom.findings.jobs",
    "headroom.api.routers.findings": "headroom.findings.router",
    "headroom.api.schemas.findings": "headroom.findings.schemas",
    # patches
    "headroom.services.patches": "headroom.patches.service",
    "headroom.api.routers.patches": "headroom.patches.router",
    "headroom.api.schemas.patches": "headroom.patches.schemas",
    # metrics
    "headroom.services.metrics": "headroom.metrics.service",
    "headroom.api.routers.metrics": "headroom.metrics.router",
    # digest
    "headroom.services.digest": "headroom.digest.service",
    "headroom.jobs.digest": "headroom.digest.jobs",
    "headroom.api.routers.org_digest": "headroom.digest.router",
    # inventory
    "headroom.services.nodes": "headroom.inventory.service",
    "headroom.services.tikv_configs": "headroom.inventory.tikv_configs",
    "headroom.api.routers.nodes": "headroom.inventory.router",
    "headroom.api.schemas.nodes": "headroom.inventory.schemas",
    # timeseries
    "headroom.store.timeseries": "headroom.timeseries.repository",
    "headroom.store.copy_binary": "headroom.timeseries.copy_binary",
    "headroom.store.watermarks": "headroom.timeseries.watermarks",
    "headroom.services.snapshots": "headroom.timeseries.snapshots",
    "headroom.jobs.maintenance": "headroom.timeseries.jobs",
    "headroom.api.routers.snapshots": "headroom.timeseries.router",
    # sources
    "headroom.services.sources": "headroom.sources.service",
    "headroom.services.source_health": "headroom.sources.health",
    "headroom.api.routers.sources": "headroom.sources.router",
    "headroom.api.schemas.sources": "headroom.sources.schemas",
    "headroom.services.aws_ingest": "headroom.sources.aws.ingest",
    "headroom.services.aws_ops": "headroom.sources.aws.service",
    "headroom.collect.aws_metric_plan": "headroom.sources.aws.metric_plan",
    "headroom.collect.aws_session": "headroom.sources.aws.session",
    "headroom.collect.cloudwatch": "headroom.sources.aws.cloudwatch",
    "headroom.collect.ec2_inventory": "headroom.sources.aws.ec2_inventory",
    "headroom.collect.instance_catalog": "headroom.sources.aws.instance_catalog",
    "headroom.jobs.ingest_aws": "headroom.sources.aws.jobs",
    "headroom.api.routers.sources_aws_ops": "headroom.sources.aws.router",
    "headroom.api.routers.sources_aws_setup": "headroom.sources.aws.setup_router",
    "headroom.api.schemas.aws_ops": "headroom.sources.aws.schemas",
    "headroom.services.prometheus_ingest": "headroom.sources.prometheus.ingest",
    "headroom.services.prometheus_ops": "headroom.sources.prometheus.service",
    "headroom.collect.prometheus": "headroom.sources.prometheus.collector",
    "headroom.collect.promql": "headroom.sources.prometheus.promql",
    "headroom.collect.tikv_status": "headroom.sources.prometheus.tikv_status",
    "headroom.jobs.ingest_prometheus": "headroom.sources.prometheus.jobs",
    "headroom.api.routers.sources_prometheus_ops": "headroom.sources.prometheus.router",
    "headroom.api.schemas.prometheus_ops": "headroom.sources.prometheus.schemas",
}
# Packages emptied by the move (deleted with their __init__.py).
EMPTIED = ["services", "collect", "jobs", "api/routers", "api/schemas"]
NEW_PACKAGES = [
    "domain", "accounts", "clusters", "findings", "patches", "metrics", "inventory", "timeseries",
    "sources", "sources/aws", "sources/prometheus", "platform/jobs",
]  # fmt: skip
TEST_DIRS = {
    "advisor": "domain/advisor",
    "catalog": "domain/catalog",
    "physics": "domain/physics",
    "snapshot": "domain/snapshot",
    "forecast": "domain/forecast",
    "tikvconf": "domain/tikvconf",
    "collect_aws": "sources/aws",
    "collect_prometheus": "sources/prometheus",
    "advice": "findings",
    "store": "timeseries",
}

ALL = {**PACKAGES, **MODULES}
# `from headroom.store.models import Finding, Cluster`: each name goes to its feature's models module.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from split_models import OWNER  # noqa: E402

SYMBOLS = {
    "headroom.store.models": {
        name: f"headroom.{feature.replace('/', '.')}.models" for feature, names in OWNER.items() for name in names
    }
}
# Longest old path first so `headroom.services.findings` wins over any shorter prefix.
_ORDERED = sorted(ALL.items(), key=lambda kv: -len(kv[0]))
_DOTTED = re.compile(r"(?<![\w.])headroom(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
# `services/findings.py`-style paths relative to the package, as comments and docs write them.
_RELATIVE = re.compile(
    r"(?<![\w/.-])(?:services|collect|core|jobs|api/routers|api/schemas|store|advisor|tikvconf|snapshot|catalog"
    r"|physics|forecast|deploy_templates)(?:/[A-Za-z_][A-Za-z0-9_]*)*\.py"
)
_SLASHED = re.compile(r"(?<![\w])headroom(?:/[A-Za-z_][A-Za-z0-9_]*)+(?:\.py)?/?")


def new_module(old: str) -> str | None:
    """The new dotted path of `old` (a module, package or name below one), or None when it did not move."""
    for src, dst in _ORDERED:
        if old == src or old.startswith(src + "."):
            return dst + old[len(src) :]
    return None


def _rewrite_dotted(match: re.Match[str]) -> str:
    return new_module(match.group(0)) or match.group(0)


def _rewrite_slashed(match: re.Match[str]) -> str:
    text = match.group(0)
    trailing = "/" if text.endswith("/") else ""
    body = text.rstrip("/")
    suffix = ".py" if body.endswith(".py") else ""
    dotted = body.removesuffix(".py").replace("/", ".")
    moved = new_module(dotted)
    if moved is None:
        return text
    return moved.replace(".", "/") + suffix + trailing


def _rewrite_relative(match: re.Match[str]) -> str:
    moved = new_module("headroom." + match.group(0).removesuffix(".py").replace("/", "."))
    if moved is None:
        return match.group(0)
    return moved.removeprefix("headroom.").replace(".", "/") + ".py"


def _rewrite_import_froms(source: str) -> str:
    """Split `from headroom.pkg import mod, name` where `pkg.mod` moved into imports from the new places."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    lines = source.splitlines(keepends=True)
    edits: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
            continue
        if not node.module.startswith("headroom"):
            continue
        symbols = SYMBOLS.get(node.module, {})
        if (
            not symbols
            and not any(new_module(f"{node.module}.{a.name}") for a in node.names)
            and not new_module(node.module)
        ):
            continue
        indent = re.match(r"\s*", lines[node.lineno - 1]).group(0)  # type: ignore[union-attr]
        groups: dict[str, list[str]] = {}
        for alias in node.names:
            full = f"{node.module}.{alias.name}"
            moved = new_module(full)
            base_moved = new_module(node.module) or node.module
            if alias.name in symbols:
                groups.setdefault(symbols[alias.name], []).append(
                    alias.name if not alias.asname else f"{alias.name} as {alias.asname}"
                )
            elif moved is not None and moved != f"{base_moved}.{alias.name}":
                parent, _, leaf = moved.rpartition(".")
                local = alias.asname or alias.name
                groups.setdefault(parent, []).append(leaf if leaf == local else f"{leaf} as {local}")
            else:
                groups.setdefault(base_moved, []).append(
                    alias.name if not alias.asname else f"{alias.name} as {alias.asname}"
                )
        text = "".join(f"{indent}from {mod} import {', '.join(names)}\n" for mod, names in groups.items())
        edits.append((node.lineno - 1, node.end_lineno or node.lineno, text))
    for start, end, text in sorted(edits, reverse=True):
        lines[start:end] = [text]
    return "".join(lines)


_TEST_DIR = re.compile(r"(?<![\w.-])tests/(" + "|".join(TEST_DIRS) + r")/")


def rewrite_text(path: Path, text: str) -> str:
    if path.suffix == ".py":
        text = _rewrite_import_froms(text)
    text = _TEST_DIR.sub(lambda m: f"tests/{TEST_DIRS[m.group(1)]}/", text)
    text = _DOTTED.sub(_rewrite_dotted, text)
    text = _SLASHED.sub(_rewrite_slashed, text)
    return _RELATIVE.sub(_rewrite_relative, text)


def tracked_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    skip = ("uv.lock", "package-lock.json", "openapi.json", "schema.d.ts", "scripts/relayout.py")
    files = []
    for name in out.splitlines():
        if name.endswith(skip) or name.startswith(("frontend/node_modules", "migrations/versions/")):
            continue
        path = ROOT / name
        if (
            path.suffix
            in {
                ".py",
                ".md",
                ".toml",
                ".ini",
                ".cfg",
                ".sh",
                ".yml",
                ".yaml",
                ".txt",
                ".json",
                ".ts",
                ".tsx",
                "",
            }
            and path.is_file()
        ):
            files.append(path)
    return files


def git(*args: str) -> None:
    subprocess.run(["git", *args], cwd=ROOT, check=True)


def move() -> None:
    for pkg in NEW_PACKAGES:
        (PKG / pkg).mkdir(parents=True, exist_ok=True)
    for old, new in PACKAGES.items():
        src = PKG / Path(*old.split(".")[1:])
        dst = PKG / Path(*new.split(".")[1:])
        if dst.exists() and (dst / "__init__.py").exists() and not src.exists():
            continue
        if old == "headroom.core":
            for item in sorted(src.iterdir()):
                if item.name != "__pycache__":
                    git("mv", str(item), str(dst / item.name))
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        git("mv", str(src), str(dst))
    for old, new in MODULES.items():
        src = PKG / (str(Path(*old.split(".")[1:])) + ".py")
        dst = PKG / (str(Path(*new.split(".")[1:])) + ".py")
        dst.parent.mkdir(parents=True, exist_ok=True)
        git("mv", str(src), str(dst))
    for pkg in NEW_PACKAGES:
        init = PKG / pkg / "__init__.py"
        if not init.exists():
            init.write_text("")
            git("add", str(init))
    for gone in EMPTIED:
        git("rm", "-q", str(PKG / gone / "__init__.py"))
    tests = ROOT / "backend" / "tests"
    for old, new in TEST_DIRS.items():
        (tests / new).parent.mkdir(parents=True, exist_ok=True)
        git("mv", str(tests / old), str(tests / new))


def main() -> int:
    if "--move" in sys.argv:
        move()
    changed = 0
    for path in tracked_files():
        before = path.read_text()
        after = rewrite_text(path, before)
        if after != before:
            path.write_text(after)
            changed += 1
    print(f"relayout: rewrote {changed} files")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
