"""Read YAML with the Go parsers TiUP has used for topologies: gopkg.in/yaml.v2 (up to TiUP v1.16.2) and
gopkg.in/yaml.v3 (from v1.16.3; pingcap/tiup CHANGELOG, #2558).

goyaml/ is a small Go program (go.mod pins yaml.v2 v2.4.0 and yaml.v3 v3.0.1, go.sum is committed) that prints
each parser's reading with every scalar's type. It is built once per source version into the temporary directory
(the Go module proxy serves both modules). Without Go the tests that need it fail when CI is set (CI=true) and
are skipped with the reason elsewhere; scripts/bootstrap.sh --test installs Go.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

SOURCE = Path(__file__).parent / "goyaml"
PARSERS = ("v2", "v3")


def _go() -> str | None:
    found = shutil.which("go")
    if found:
        return found
    return "/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None


@functools.cache
def _binary() -> Path:
    go = _go()
    if go is None:
        message = ("Go is not installed: the TiUP topology tests read the artefacts with gopkg.in/yaml.v2 and v3 "
                   "through backend/tests/domain/tikvconf/goyaml (install Go 1.19+: scripts/bootstrap.sh --test)")
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    digest = hashlib.sha256()
    for name in ("go.mod", "go.sum", "main.go"):
        digest.update((SOURCE / name).read_bytes())
    where = Path(tempfile.gettempdir()) / f"headroom-goyaml-{digest.hexdigest()[:16]}"
    binary = where / "goyaml"
    if binary.exists():
        return binary
    where.mkdir(parents=True, exist_ok=True)
    building = where / f"goyaml.{os.getpid()}"
    env = {**os.environ, "GOFLAGS": "-mod=mod", "CGO_ENABLED": "0"}
    built = subprocess.run([go, "build", "-o", str(building), "."], cwd=SOURCE, env=env, capture_output=True,
                           text=True, timeout=600, check=False)
    if built.returncode != 0:
        pytest.fail(f"building goyaml failed (the Go module proxy must serve gopkg.in/yaml.v2 and v3):\n"
                    f"{built.stderr}", pytrace=False)
    building.replace(binary)
    return binary


def _typed(node: dict[str, Any]) -> Any:
    """A parser's node as Python, each scalar as (type, value) so that 1, 1.0, true and "1" stay apart; a map
    key that was read as a string is the plain string."""
    ((kind, value),) = node.items()
    if kind == "map":
        return {(key[1] if key[0] == "str" else key): val for key, val in
                ((_typed(k), _typed(v)) for k, v in value)}
    if kind == "seq":
        return [_typed(item) for item in value]
    if kind == "int":
        return ("int", int(value))
    if kind == "float":
        return ("float", float(value))
    return (kind, value)


def meant(value: Any) -> Any:
    """What we wrote, in the form `read` gives: scalars as (type, value)."""
    if isinstance(value, dict):
        return {str(k): meant(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [meant(item) for item in value]
    if value is None:
        return ("null", None)
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int):
        return ("int", value)
    if isinstance(value, float):
        return ("float", value)
    if isinstance(value, str):
        return ("str", value)
    raise TypeError(f"no YAML scalar for {value!r}")


def read(text: str) -> dict[str, Any]:
    """{"v2": reading, "v3": reading} of `text`; a parser that refuses the text gives ("error", message)."""
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", encoding="utf-8", delete=False) as handle:
        handle.write(text)
    try:
        ran = subprocess.run([str(_binary()), handle.name], capture_output=True, text=True, timeout=60,
                             check=False)
    finally:
        os.unlink(handle.name)
    assert ran.returncode == 0, ran.stderr
    out = json.loads(ran.stdout)
    return {p: (("error", out[f"{p}_error"]) if f"{p}_error" in out else _typed(out[p])) for p in PARSERS}


def flatten(tree: Any, prefix: str = "") -> dict[str, Any]:
    """Nested maps of a reading to dotted keys (TiUP's FlattenMap); other values are leaves."""
    out: dict[str, Any] = {}
    for key, value in (tree or {}).items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten(value, name + "."))
        else:
            out[name] = value
    return out
