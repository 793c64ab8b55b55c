"""One-off step of the issue-11 relayout: split headroom/store/models*.py into each feature's models.py.

Run once on main (`uv run python scripts/split_models.py`), then `scripts/relayout.py` rewrites the imports
(`from headroom.store.models import Finding, Cluster` becomes one import per feature). Deleted with relayout.py.
"""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "backend" / "headroom"
SOURCES = ["store/models.py", "sources/models.py", "digest/models.py", "inventory/models.py",
           "sources/prometheus/models.py"]  # fmt: skip

# Every class and constant of the old modules -> the feature whose models.py owns it.
OWNER = {
    "accounts": ["ROLES", "Organization", "User", "Membership", "UserSession", "ApiToken", "Invitation", "AuditLog"],
    "clusters": ["DEPLOYMENT_KINDS", "Cluster"],
    "findings": ["ENTITY_KINDS", "SEVERITIES", "FINDING_STATUSES", "CHANGE_TARGETS", "AdviceRun", "Finding",
                 "Recommendation"],
    "patches": ["Patch"],
    "sources": ["SOURCE_STATUSES", "AWS_AUTH_KINDS", "PROM_AUTH_KINDS", "_SourceHealth", "AwsConnection",
                "PrometheusSource", "SWEEP_KINDS", "AWS_BACKFILL_STATES", "BACKFILL_SOURCE_KINDS", "CollectionSweep",
                "AwsBackfill", "BackfillStep"],
    "sources/prometheus": ["BACKFILL_STATUSES", "FLAVOURS", "PrometheusBackfill", "PrometheusNodeTarget"],
    "inventory": ["VOLUME_ROLES", "CONFIG_SOURCES", "Instance", "Volume", "TikvNode", "TikvConfig",
                  "InventoryChange", "InstanceTypeLimits"],
    "timeseries": ["ROLLUP_RESOLUTIONS", "MetricSeries", "MetricPoints", "MetricRollup", "MetricRollupDirty",
                   "IngestWatermark"],
    "digest": ["DIGEST_SEND_STATUSES", "OrgDigestSettings", "DigestSend", "EmailVerification"],
}  # fmt: skip
DOCS = {
    "accounts": "Organisations, users, memberships (roles), sessions, API tokens, invitations and the audit log.",
    "clusters": "TiKV clusters: one row per cluster an organisation watches (demo clusters are marked).",
    "findings": "Advice runs, the findings they store (one row per dedup key) and each finding's recommendations.",
    "patches": "Saved patches: the selected findings' changes, rendered per target on request.",
    "sources": "Data sources (AWS connections, Prometheus sources) with their health, and collection bookkeeping:\n"
    "one row per sweep and the history backfills' progress and planned steps, so a killed backfill resumes.",
    "sources/prometheus": "Prometheus history backfills and the node targets a Prometheus source maps to TiKV nodes.",
    "inventory": "What runs where: EC2 instances, EBS volumes, TiKV nodes, their config versions, inventory changes\n"
    "and the account's DescribeInstanceTypes limits.",
    "timeseries": "The time-series tables (see docs/timeseries.md): `metric_series` names a series; `metric_points`\n"
    "packs one series' hour of 1-minute points into one row (a 60-slot float8 array, NULL where no point),\n"
    "range-partitioned by day; `metric_rollups` packs a series' day of 5-minute or 1-hour aggregates (avg, max,\n"
    "min, count arrays); ingest watermarks.",
    "digest": "Tables of the weekly advisory email: per-org settings, one row per (org, ISO week) send, verified\n"
    "emails. `digest_sends` is the idempotency record: its unique (org_id, week_start) key is claimed with\n"
    "INSERT ... ON CONFLICT before anything is sent, so a retried or duplicated task never sends a week twice.",
}
HELPERS = {"_enum": "enum_column", "_fk": "fk_column"}


def main() -> None:
    owner_of = {name: feature for feature, names in OWNER.items() for name in names}
    imports: list[str] = []
    segments: dict[str, list[str]] = {f: [] for f in OWNER}
    helper_src: list[str] = []
    for rel in SOURCES:
        text = (PKG / rel).read_text()
        lines = text.splitlines(keepends=True)
        tree = ast.parse(text)
        prev_end = 0
        for node in tree.body:
            start = prev_end
            end = node.end_lineno or node.lineno
            chunk = "".join(lines[start:end])
            prev_end = end
            if isinstance(node, ast.Import | ast.ImportFrom):
                if not (isinstance(node, ast.ImportFrom) and node.module == "headroom.platform.orm"):
                    imports.append("".join(lines[node.lineno - 1 : end]))
                continue
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
                continue  # the module docstring
            if isinstance(node, ast.FunctionDef) and node.name in HELPERS:
                helper_src.append(chunk)
                continue
            if isinstance(node, ast.ClassDef):
                name = node.name
            elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                name = node.targets[0].id
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                name = node.target.id
            else:
                raise SystemExit(f"{rel}:{node.lineno}: no owner for this statement")
            if name not in owner_of:
                raise SystemExit(f"{rel}:{node.lineno}: no owner for {name}")
            segments[owner_of[name]].append(chunk.strip("\n") + "\n")
    header_imports = "".join(sorted(set(imports)))
    for feature, chunks in segments.items():
        body = "\n\n".join(chunks)
        for old, new in HELPERS.items():
            body = body.replace(f"{old}(", f"{new}(")
        used_constants = {
            n
            for f, names in OWNER.items()
            if f != feature
            for n in names
            if n.isupper() and re.search(rf"(?<![\w.]){n}(?!\w)", body)
        }
        extra = "".join(
            f"from headroom.{owner_of[n].replace('/', '.')}.models import {n}\n" for n in sorted(used_constants)
        )
        doc = DOCS[feature]
        out = (
            f'"""{doc}"""\n\nfrom __future__ import annotations\n\n{header_imports}'
            "from headroom.platform.orm import Base, created_at_column, enum_column, fk_column, uuid_pk\n"
            f"{extra}\n\n{body}"
        )
        (PKG / feature / "models.py").write_text(out)
    base = (PKG / "store" / "base.py").read_text()
    helpers = "\n\n".join(h.strip("\n") for h in helper_src)
    for old, new in HELPERS.items():
        helpers = helpers.replace(f"def {old}(", f"def {new}(")
    base = base.replace(
        '"""Declarative base with a naming convention so constraint names (and migrations) are stable."""',
        '"""The ORM base: a declarative base with a naming convention so constraint names (and migrations) are stable,\n'
        'and the column helpers every feature\'s models.py uses."""',
    )
    base = base.replace("from typing import", "from typing import Any\nfrom typing import")
    base = base.replace(
        "from sqlalchemy import DateTime, MetaData, func",
        "from typing import Any\n\nfrom sqlalchemy import DateTime, Enum, ForeignKey, MetaData, func",
    )
    marker = "def import_all_models()"
    base = base.replace(marker, helpers + "\n\n\n" + marker)
    (PKG / "platform" / "orm.py").write_text(base)
    subprocess.run(["git", "rm", "-q", *[str(PKG / s) for s in [*SOURCES, "platform/orm.py", "store/__init__.py"]]],
                   cwd=ROOT, check=True)  # fmt: skip
    subprocess.run(["git", "add", str(PKG)], cwd=ROOT, check=True)


if __name__ == "__main__":
    main()
