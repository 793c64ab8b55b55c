"""`headroom simulate`: turn a scenario file into a cluster snapshot (the fleet simulator)."""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated

import typer

from headroom.commands._output import fail
from headroom.domain.snapshot.errors import ScenarioError, SnapshotError
from headroom.domain.snapshot.files import save_snapshot, snapshot_to_json
from headroom.domain.snapshot.scenario import Monitoring, load_scenario
from headroom.domain.snapshot.simulate import simulate


def _parse_start(text: str) -> datetime:
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        fail(f"--start: not an ISO 8601 time: {text!r} (e.g. 2026-01-05T00:00:00Z)")
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def simulate_command(
    scenario: Annotated[Path, typer.Argument(help="Scenario YAML file (see examples/scenarios/).")],
    hours: Annotated[
        float, typer.Option("--hours", help="Length of the simulated window, in hours.")
    ] = 168.0,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Write the snapshot here (.json, or .json.gz); default stdout."),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Random seed: same seed, same snapshot.")] = 0,
    step: Annotated[
        int, typer.Option("--step", help="Seconds between points (CloudWatch 1-minute = 60).")
    ] = 60,
    start: Annotated[
        str | None,
        typer.Option(
            "--start", help="Window start, ISO 8601 (default: the scenario's start, else now − hours)."
        ),
    ] = None,
    monitoring: Annotated[
        str | None,
        typer.Option(
            "--monitoring",
            help="EC2 CloudWatch monitoring: basic (5-minute EC2 metrics, AWS's default), detailed (1-minute) "
            "or minute (every series at 1 minute, no gaps); default: the scenario's.",
        ),
    ] = None,
) -> None:
    """Simulate a fleet described by a scenario and write its snapshot (JSON, 60 s steps by default)."""
    if hours <= 0:
        fail(f"--hours: must be positive, got {hours:g}")
    if step <= 0 or 3600 % step:
        fail(f"--step: must divide an hour into whole steps (60, 300, ...), got {step}")
    try:
        parsed = load_scenario(scenario)
    except ScenarioError as exc:
        fail(f"{scenario}: {exc}")
    begin = _parse_start(start) if start else parsed.start
    if begin is None:
        now = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
        begin = now - timedelta(hours=hours)
    if monitoring not in (None, "basic", "detailed", "minute"):
        fail(f"--monitoring: basic, detailed or minute, got {monitoring!r}")
    chosen = (
        Monitoring(ec2=monitoring, gaps=parsed.monitoring.gaps)
        if monitoring
        else None
    )
    try:
        snapshot = simulate(parsed, hours=hours, seed=seed, start=begin, step_seconds=step, monitoring=chosen)
    except ScenarioError as exc:
        fail(f"{scenario}: {exc}")
    if out is None:
        sys.stdout.write(snapshot_to_json(snapshot) + "\n")
        return
    try:
        save_snapshot(snapshot, out)
    except SnapshotError as exc:
        fail(str(exc))
    sys.stderr.write(
        f"headroom: wrote {out} ({len(snapshot.nodes)} nodes, {len(snapshot.series)} series, {hours:g} h)\n"
    )


def register(app: typer.Typer) -> None:
    """Add `headroom simulate` to the CLI."""
    app.command("simulate", help="Simulate a fleet from a scenario YAML into a snapshot JSON.")(
        simulate_command
    )
