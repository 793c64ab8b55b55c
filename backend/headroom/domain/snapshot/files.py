"""Read and write snapshot files (JSON, or gzip-compressed JSON when the name ends in .gz)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from headroom.domain.snapshot.errors import SnapshotError, describe_validation_error
from headroom.domain.snapshot.schema import SCHEMA_VERSION, Snapshot


def snapshot_from_dict(document: Any) -> Snapshot:
    """Validate a decoded JSON document as a snapshot; errors name the path of the bad field."""
    if not isinstance(document, dict):
        raise SnapshotError("(root): a snapshot is a JSON object")
    version = document.get("schema_version")
    if version != SCHEMA_VERSION:
        raise SnapshotError(
            f"schema_version: this Headroom reads version {SCHEMA_VERSION}, the file says {version!r}"
        )
    try:
        return Snapshot.model_validate(document)
    except ValidationError as exc:
        raise SnapshotError(describe_validation_error(exc)) from None


def snapshot_to_json(snapshot: Snapshot, *, indent: int | None = None) -> str:
    """Serialise a snapshot to JSON text (compact unless indent is given)."""
    return snapshot.model_dump_json(indent=indent, exclude_none=False)


def load_snapshot(path: str | Path) -> Snapshot:
    """Read a snapshot file (.json or .json.gz)."""
    p = Path(path)
    try:
        raw = gzip.decompress(p.read_bytes()) if p.name.endswith(".gz") else p.read_bytes()
    except OSError as exc:
        raise SnapshotError(f"{p}: {exc.strerror or exc}") from None
    try:
        document = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SnapshotError(f"{p}: not JSON ({exc})") from None
    try:
        return snapshot_from_dict(document)
    except SnapshotError as exc:
        raise SnapshotError(f"{p}: {exc}") from None


def save_snapshot(snapshot: Snapshot, path: str | Path) -> Path:
    """Write a snapshot file; a name ending in .gz is gzip-compressed."""
    p = Path(path)
    data = snapshot_to_json(snapshot).encode()
    if p.name.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    try:
        p.write_bytes(data)
    except OSError as exc:
        raise SnapshotError(f"{p}: {exc.strerror or exc}") from None
    return p
