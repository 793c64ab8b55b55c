"""Shared helpers for CLI commands: JSON on stdout, one-line errors on stderr with a non-zero exit."""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

import typer


def print_json(payload: Any) -> None:
    """Write a JSON document to stdout (stable key order, no trailing garbage)."""
    sys.stdout.write(json.dumps(payload, indent=2, sort_keys=False, default=str) + "\n")


def fail(message: str, code: int = 2) -> NoReturn:
    """Print a one-line reason to stderr and exit non-zero."""
    sys.stderr.write(f"headroom: error: {message}\n")
    raise typer.Exit(code)
