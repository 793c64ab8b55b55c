"""`headroom snapshot validate|schema`: check a snapshot file, print the snapshot JSON Schema."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from headroom.commands._output import fail, print_json
from headroom.domain.snapshot.errors import SnapshotError
from headroom.domain.snapshot.files import load_snapshot
from headroom.domain.snapshot.schema import snapshot_json_schema_text

snapshot_app = typer.Typer(
    help="Cluster snapshot files: validate them, print their JSON Schema.", no_args_is_help=True
)


@snapshot_app.command("validate")
def validate_command(
    file: Annotated[Path, typer.Argument(help="Snapshot file (.json or .json.gz).")],
) -> None:
    """Check that a snapshot file is valid; print a short summary as JSON."""
    try:
        snap = load_snapshot(file)
    except SnapshotError as exc:
        fail(str(exc))
    print_json(
        {
            "valid": True,
            "schema_version": snap.schema_version,
            "cluster": snap.cluster.name,
            "window": {"start": snap.window.start.isoformat(), "end": snap.window.end.isoformat()},
            "nodes": len(snap.nodes),
            "instances": len(snap.instances),
            "volumes": len(snap.volumes),
            "series": len(snap.series),
        }
    )


@snapshot_app.command("schema")
def schema_command() -> None:
    """Print the snapshot JSON Schema (the one published as docs/snapshot.schema.json)."""
    sys.stdout.write(snapshot_json_schema_text())


def register(app: typer.Typer) -> None:
    """Add `headroom snapshot ...` to the CLI."""
    app.add_typer(snapshot_app, name="snapshot")
