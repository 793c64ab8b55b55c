"""`headroom advise` (findings for a snapshot, optionally after a what-if) and `headroom rules` (the rule list).

Exit codes: 0 when the advisor ran (with or without findings); 2 with a one-line message on a bad snapshot,
changes file or option.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from headroom.commands._output import fail, print_json


def _parse_now(text: str) -> datetime:
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        fail(f"--now: not an ISO 8601 time: {text!r}")
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _text(findings: list[dict[str, object]]) -> str:
    if not findings:
        return "No findings.\n"
    lines: list[str] = []
    for f in findings:
        lines.append(f"[{str(f['severity']).upper()}] {f['rule']}: {f['title']}")
        evidence = f.get("evidence") or {}
        assert isinstance(evidence, dict)
        for m in evidence.get("measures", []):
            limit = f" (limit {m['limit']:,.1f} {m['unit']})" if m.get("limit") is not None else ""
            lines.append(f"    {m['label']}: {m['value']:,.1f} {m['unit']}{limit}")
        for c in evidence.get("corroboration", []):
            lines.append(f"    - {c}")
        for c in f.get("changes", []) or []:  # type: ignore[attr-defined]
            lines.append(f"    change {c['target']} {c['key']}: {c.get('current')!r} -> {c['proposed']!r}")
        impact = f.get("impact") or {}
        assert isinstance(impact, dict)
        lines.append(f"    impact: {impact.get('summary', '')}")
        lines.append(f"    confidence {f['confidence']}, key {f['dedup_key']}")
        lines.append("")
    return "\n".join(lines)


def advise_command(
    snapshot: Annotated[Path, typer.Argument(help="Snapshot file (.json or .json.gz).")],
    output_format: Annotated[str, typer.Option("--format", help="json or text.")] = "json",
    what_if: Annotated[
        Path | None,
        typer.Option(
            "--what-if",
            help='Changes to try first: {"changes": [...]}, a list, or a findings file (all their changes).',
        ),
    ] = None,
    rule: Annotated[list[str] | None, typer.Option("--rule", help="Run only these rule ids.")] = None,
    now: Annotated[str | None, typer.Option("--now", help="Evaluation time (default: window end).")] = None,
) -> None:
    """Print the advisor's findings for a snapshot."""
    from headroom.domain.advisor.engine import run_rules
    from headroom.domain.advisor.whatif import WhatIfError, parse_changes
    from headroom.domain.advisor.whatif import what_if as run_what_if
    from headroom.domain.snapshot.errors import SnapshotError
    from headroom.domain.snapshot.files import load_snapshot
    from headroom.domain.units import format_quantity

    if output_format not in ("json", "text"):
        fail(f"--format: expected json or text, got {output_format!r}")
    try:
        snap = load_snapshot(snapshot)
    except SnapshotError as exc:
        fail(str(exc))
    when = _parse_now(now) if now else None
    try:
        if what_if is None:
            advice = run_rules(snap, now=when, rules=rule or None, on_error="skip")
            payload: dict[str, object] = {"findings": [f.to_dict() for f in advice.findings]}
            if advice.failures:
                payload["rule_errors"] = [{"rule": e.rule, "error": e.error} for e in advice.failures]
                for e in advice.failures:
                    sys.stderr.write(f"headroom: warning: rule {e.rule} failed: {e.error}\n")
        else:
            try:
                document = json.loads(what_if.read_text(encoding="utf-8"))
            except OSError as exc:
                fail(f"--what-if {what_if}: {exc.strerror or exc}")
            except json.JSONDecodeError as exc:
                fail(f"--what-if {what_if} line {exc.lineno}, column {exc.colno}: {exc.msg}")
            try:
                result = run_what_if(snap, parse_changes(document), now=when)
            except WhatIfError as exc:
                fail(f"--what-if {what_if}: {exc}")
            payload = {"findings": [f.to_dict() for f in result.findings_after], "what_if": result.to_dict()}
    except KeyError as exc:
        fail(str(exc.args[0]) if exc.args else str(exc))
    if output_format == "json":
        print_json(payload)
    else:
        findings_list = payload["findings"]
        assert isinstance(findings_list, list)
        what = payload.get("what_if")
        if isinstance(what, dict):
            sys.stdout.write(f"What-if: {len(what['changes'])} change(s) applied\n")
            for row in what["ceilings"]:
                ent, unit = row["entity"], row["unit"]

                def moved(before: float | None, after: float | None, unit: str = unit) -> str:
                    said = [("n/a" if v is None else format_quantity(v, unit)) for v in (before, after)]
                    return f"{said[0]} -> {said[1]}"

                parts = ""
                if row["instance_limit"] is not None:  # an instance: its own limit and its volumes' sum, apart
                    parts = (f" (the smaller of the instance's EBS limit "
                             f"{moved(row['instance_limit'], row['instance_limit_after'])} and its volumes' sum "
                             f"{moved(row['volumes_limit'], row['volumes_limit_after'])})")
                sys.stdout.write(
                    f"    {ent['kind']} {ent['id']} {row['dimension']}: ceiling in force "
                    f"{moved(row['ceiling'], row['ceiling_after'])}{parts}, headroom at p99 "
                    f"{moved(row['headroom_pct'], row['headroom_after_pct'], '%')}\n"
                )
            sys.stdout.write(f"    resolved: {len(what['resolved'])}, new: {len(what['new'])}\n\n")
        sys.stdout.write(_text(findings_list))


def rules_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List every advisor rule with its description and the tikv keys and AWS actions it can propose."""
    from headroom.domain.advisor.engine import rule_catalog

    rules = rule_catalog()
    if as_json:
        print_json({"rules": rules})
        return
    for r in rules:
        sys.stdout.write(f"{r['id']}: {r['description']}\n")
        if r["tikv_keys"]:
            sys.stdout.write(f"    tikv: {', '.join(r['tikv_keys'])}\n")
        if r["aws_actions"]:
            sys.stdout.write(f"    aws: {', '.join(r['aws_actions'])}\n")


def register(app: typer.Typer) -> None:
    """Add `headroom advise` and `headroom rules` to the CLI."""
    app.command("advise", help="Run the advisor on a snapshot and print its findings.")(advise_command)
    app.command("rules", help="List the advisor's rules.")(rules_command)
