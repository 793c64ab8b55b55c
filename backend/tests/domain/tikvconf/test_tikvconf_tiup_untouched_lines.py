"""The TiUP in-place edit leaves every line it does not change as the user wrote it, byte for byte.

ruamel.yaml writes a whole document again in its own style: one indentation, flow maps re-spaced (`{ zone: a }`
-> `{zone: a}`), lines of only spaces dropped. The edit is the difference between its two dumps (before and after
the change) carried over to the user's text, so a diff of the real topology before and after the patch shows only
the changed keys' lines (and the maps the patch had to add to hold them).

Data: the public topologies in data/ (data/tiup/README.md names their sources: TiUP's own examples), which have
lines of only spaces (topology.example.yaml), flow maps written `{ a: b }` and `["zone","dc"]` (multi-dc.yaml) and
YAML anchors (topology-anchors.yaml).
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

import pytest
from headroom.domain.model import Change, EntityRef
from headroom.domain.tikvconf.change import PatchTarget
from headroom.domain.tikvconf.tiup import keep_untouched_lines, patch_topology
from ruamel.yaml import YAML

DATA = Path(__file__).parent / "data"
TOPOLOGIES = sorted([*DATA.glob("tiup/*.yaml"), *DATA.glob("topology-*.yaml")])
HEADERS = {"server_configs:", "tikv:", "config:"}  # the maps a patch adds where the topology has none


def _first_server(text: str) -> dict[str, Any]:
    return YAML(typ="safe", pure=True).load(text)["tikv_servers"][0]


def _changes(text: str) -> tuple[list[Change], list[PatchTarget]]:
    server = _first_server(text)
    host, port, status = server["host"], int(server.get("port") or 20160), int(server.get("status_port") or 20180)
    node = PatchTarget(status_address=f"{host}:{status}", address=f"{host}:{port}")
    one = EntityRef(kind="node", id="tikv-1", status_address=node.status_address)
    return [
        Change(target="tikv", key="storage.block-cache.capacity", current=None, proposed="16GiB", reason="r"),
        Change(target="tikv", key="raftstore.apply-pool-size", current=None, proposed=4, reason="r"),
        Change(target="tikv", key="readpool.unified.max-thread-count", current=None, proposed=10, reason="r",
               entity=one),
    ], [node]


@pytest.mark.parametrize("path", TOPOLOGIES, ids=lambda p: p.name)
def test_a_diff_of_the_topology_shows_only_the_changed_keys(path: Path) -> None:
    text = path.read_text()
    changes, nodes = _changes(text)
    if path.name == "topology-anchors.yaml":
        # its first instance shares an anchored config: a change on that node alone gives it its own copy (a
        # structural change, the note says so; test_tikvconf_tiup covers it), so only cluster-wide keys here
        changes = [c for c in changes if c.entity is None]
    patched = patch_topology(text, changes, nodes).text
    leaves = {c.key.split(".")[-1] for c in changes}
    diff = [line for line in difflib.unified_diff(text.splitlines(True), patched.splitlines(True), n=0)
            if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert diff, "the patch changed nothing"
    for line in diff:
        body = line[1:].strip()
        assert body in HEADERS or any(f"{leaf}:" in body for leaf in leaves), (path.name, line)
    # each changed key's line is removed only where it is written again with the new value
    removed = [line for line in diff if line.startswith("-")]
    assert len(removed) <= len([line for line in diff if line.startswith("+")])
    safe = YAML(typ="safe", pure=True)
    assert safe.load(patched) != safe.load(text)


def test_lines_of_only_spaces_and_flow_spacing_stay() -> None:
    text = (DATA / "tiup" / "topology.example.yaml").read_text()
    assert "\n    \n" in text  # the public file has lines of only spaces
    changes, nodes = _changes(text)
    patched = patch_topology(text, changes, nodes).text
    assert patched.count("\n    \n") == text.count("\n    \n")
    multi = (DATA / "topology-multi-dc.yaml").read_text()
    changes, nodes = _changes(multi)
    assert "{ zone: bj, dc: bja, rack: rack1, host: host1 }" in patch_topology(multi, changes, nodes).text


def test_an_indentation_the_dump_does_not_use_is_kept_for_new_keys() -> None:
    # four spaces per level and sequence items at the parent's column: ruamel dumps two and indents the items; the
    # key the patch adds is indented as its siblings in the user's file
    text = ("server_configs:\n    tikv:\n        storage.block-cache.capacity: 8GiB\n"
            "tikv_servers:\n- host: 10.0.1.1\n  config:\n      server.labels: { zone: a }\n")
    change = Change(target="tikv", key="raftstore.apply-pool-size", current=None, proposed=4, reason="r")
    patched = patch_topology(text, [change], []).text
    assert patched == text.replace("8GiB\n", "8GiB\n        raftstore.apply-pool-size: 4\n")


def test_a_result_that_would_read_otherwise_falls_back_to_the_dump() -> None:
    # keep_untouched_lines never returns a text that reads as other YAML than the edited dump
    assert keep_untouched_lines("a: 1\n", "a: 1\n", "a: 2\n") == "a: 2\n"
    assert keep_untouched_lines("a:   1   # one\n", "a: 1   # one\n", "a: 1   # one\nb: 2\n") == (
        "a:   1   # one\nb: 2\n")
