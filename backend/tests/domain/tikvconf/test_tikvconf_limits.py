"""Bounds on config documents (domain/tikvconf/limits.py, docs/upload-limits.md): size before parsing, a bounded YAML
loader (aliases, expansion, nesting, tags), and values a JSONB column refuses (nan, inf, NUL). Every refusal is
a ConfigParseError naming the key path and the line; real-shaped topologies still parse."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from headroom.domain.tikvconf import ConfigParseError, parse_toml, tiup_topology_view
from headroom.domain.tikvconf import limits
from headroom.domain.tikvconf.errors import ConfigTooLarge
from headroom.domain.tikvconf.limits import (
    MAX_TOML_BYTES,
    MAX_TOPOLOGY_BYTES,
    MAX_YAML_ALIASES,
    MAX_YAML_NODES,
    drop_unstorable,
    first_unstorable,
)

DATA = Path(__file__).resolve().parent / "data"


def _refusal(call: Any) -> ConfigParseError:
    with pytest.raises(ConfigParseError) as caught:
        call()
    return caught.value


@pytest.mark.parametrize(
    ("text", "line", "column", "message"),
    [
        ("# c\n[storage]\nx = 1\n\n[storage.block-cache]\ncapacity = nan\n", 6, 12,
         "storage.block-cache.capacity: nan is not a finite number; nan and inf are never valid TiKV settings"),
        ("[rocksdb]\ndefaultcf.x = 1\ndefaultcf.y = -inf\n", 3, 15, "rocksdb.defaultcf.y: -inf is not a finite"),
        ("a = 1\nb = [\n  1.0,\n  inf,\n]\n", 2, 5, "b[1]: inf is not a finite number"),  # the whole array
        ("[a]\nx = 1\n[b]\ny = 2\n[a.c]\nz = nan\n", 6, 5, "a.c.z: nan"),  # an out-of-order table
        ("[[x]]\ny = 1\n[[x]]\ny = +nan\n", 4, 5, "x[1].y: nan"),  # an array of tables
        ("big = 1e400\n", 1, 7, "big: inf is not a finite number"),  # overflows to inf
        ('[server]\nlabels = { zone = "a\\u0000" }\n', 2, 19, "server.labels.zone: contains a NUL character"),
        ('[log]\n\n  file = "x\\U00000000"  # c\n', 3, 10, "log.file: contains a NUL character (\\u0000)"),
        ('a = 1\n["bad\\u0000"]\nz = 1\n', 2, 6, "bad\\u0000: the key contains a NUL character"),
        ("a = 1\n# \x00\n", 2, 3, "the file contains a NUL character (byte 0x00)"),
        ('a = "\ud800"\n', 1, 6, "not valid Unicode text (a lone surrogate character)"),
    ],
)
def test_toml_values_a_jsonb_column_refuses(text: str, line: int, column: int, message: str) -> None:
    error = _refusal(lambda: parse_toml(text))
    assert (error.line, error.column) == (line, column)
    assert error.message.startswith(message), error.message


def bomb(levels: int, fan_out: int = 10) -> str:
    lines = ["server_configs:", "  tikv:", "    a0: &a0 [" + ",".join(["x"] * fan_out) + "]"]
    lines += [f"    a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * fan_out) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("text", "line", "column", "message"),
    [
        (bomb(7), 7, 9, "server_configs.tikv.a4: the document expands to more than 50,000 values"),
        ("global:\n  user: tidb\ntikv_servers: 5\n", 3, 15, "tikv_servers must be a list of hosts"),
        ("tikv_servers:\n  - host: a\n    config: !!binary aGVsbG8=\n", 3, 13,
         "tikv_servers[0].config: a YAML !!binary value is not allowed"),
        ("tikv_servers:\n  - host: a\n    config:\n      server.labels: !!set {x, y}\n", 4, 22,
         "tikv_servers[0].config.server.labels: a YAML !!set value is not allowed"),
        ("server_configs:\n  tikv:\n    a: !!timestamp 2001-12-14\n", 3, 8,
         "server_configs.tikv.a: a YAML !!timestamp value is not allowed"),
        ("server_configs:\n  tikv:\n    a: !!omap [b: 1]\n", 3, 8, "server_configs.tikv.a: a YAML !!omap value"),
        ("server_configs:\n  tikv:\n    !!binary aGk=: 1\n", 3, 5, "server_configs.tikv (a key): a YAML !!binary key"),
        ("server_configs:\n  tikv:\n    a: !foo x\n", 3, 8, "server_configs.tikv.a: a YAML !foo value"),
        ("server_configs:\n  tikv: &t\n    a: *t\n", 3, 8,
         "server_configs.tikv.a: the alias *t is inside the node it names (a recursive alias)"),
        ("server_configs:\n  tikv:\n    a: &x [1, *x]\n", 3, 15, "server_configs.tikv.a[1]: the alias *x is inside"),
        ("server_configs:\n  tikv:\n    storage.block-cache.capacity: .nan\n", 3, 35,
         "server_configs.tikv.storage.block-cache.capacity: .nan is not a finite number"),
        ("server_configs:\n  tikv:\n    x: -1.0e+400\n", 3, 8, "server_configs.tikv.x: -1.0e+400 is not a finite"),
        ('server_configs:\n  tikv:\n    x: "a\\0b"\n', 3, 8, "server_configs.tikv.x: contains a NUL character"),
        ("a: " + "9" * 5000 + "\n", 1, 4, "a: the number 99999999999999999999... is too long"),
        ("a: " + "[" * 5000 + "]" * 5000 + "\n", 1, 104, "a[0][0][0][0][0]...[0][0][0]: nested more than 100"),
        ("tikv_servers:\n  - host: a\n    port: '20160'\n", 3, 11, "tikv_servers[0].port must be a port number"),
        ("tikv_servers:\n  - host: a\n    port: 70000\n", 3, 11, "tikv_servers[0].port must be a port number"),
        ("tikv_servers:\n  - port: 20160\n", 2, 5, "tikv_servers[0] has no host"),
        ("tikv_servers:\n  - host: [a]\n", 2, 11, "tikv_servers[0].host must be a host name or IP address"),
        ("tikv_servers:\n  - 10.0.1.1\n", 2, 5, "tikv_servers[0] must be a mapping with a host"),
        ("tikv_servers:\n  - host: a\n    config: [1]\n", 3, 13, "tikv_servers[0].config must be a mapping of"),
        ("server_configs: tikv\n", 1, 17, "server_configs must be a mapping of components"),
        ("server_configs:\n  tikv: 3\n", 2, 9, "server_configs.tikv must be a mapping of TiKV settings"),
        ("- a\n- b\n", 1, 1, "the document must be a mapping of sections"),
        ("a: \ud800\n", 1, 4, "not valid Unicode text (a lone surrogate character)"),
    ],
)
def test_topology_refusals_name_the_key_and_line(text: str, line: int, column: int, message: str) -> None:
    error = _refusal(lambda: tiup_topology_view(text))
    assert (error.line, error.column) == (line, column)
    assert error.message.startswith(message), error.message
    assert str(error) == f"topology.yaml line {line}, column {column}: {error.message}"


def test_expansion_and_alias_limits_are_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each bound on its own: 50,000 values take 2-5 s of CPU to compose on a loaded 2-core machine, past the
    # CPU budget (2 s, tested in test_config_upload_limits.py), which would refuse the document first.
    monkeypatch.setattr(limits, "MAX_PARSE_CPU_SECONDS", 600.0)
    # four levels: a3 stands for 10,000 strings in 1,111 lists, well inside the limit
    assert tiup_topology_view(bomb(4)).global_config["a3"][9][9][9][9] == "x"
    head = "server_configs:\n  tikv:\n    n: 1\n"
    under = "a: &a [" + ",".join(["x"] * 99) + "]\nb: [" + ",".join(["*a"] * 495) + "]\n"  # 49,501 + 100
    assert tiup_topology_view(head + under).global_config == {"n": 1}
    over = "a: &a [" + ",".join(["x"] * 99) + "]\nb: [" + ",".join(["*a"] * 500) + "]\n"  # 50,001
    error = _refusal(lambda: tiup_topology_view(head + over))
    assert error.message.startswith("b: the document expands to more than 50,000 values") and error.line == 5
    flat = "c: [" + ",".join(["1"] * 50_000) + "]\n"  # no aliases: 100 KB of tiny values
    error = _refusal(lambda: tiup_topology_view(head + flat))
    assert error.message == "c: the document has more than 50,000 values" and error.line == 4
    scalars = "a: &a x\nb: [" + ",".join(["*a"] * MAX_YAML_ALIASES) + "]\n"
    assert tiup_topology_view(head + scalars).global_config == {"n": 1}
    error = _refusal(lambda: tiup_topology_view(head + scalars.replace("[", "[*a,")))
    assert error.message == "b[1000]: more than 1,000 aliases (*name) in one document"
    assert MAX_YAML_NODES == 50_000


def test_size_is_checked_before_parsing() -> None:
    at_limit = "#" + "x" * (MAX_TOML_BYTES - 8) + "\na = 1\n"
    assert len(at_limit.encode()) == MAX_TOML_BYTES
    assert parse_toml(at_limit).unwrap() == {"a": 1}
    with pytest.raises(ConfigTooLarge) as caught:
        parse_toml(at_limit + "\n")
    assert (caught.value.size, caught.value.limit) == (MAX_TOML_BYTES + 1, MAX_TOML_BYTES)
    # multi-byte characters count as bytes: 90,000 "é" are 180,000 bytes of YAML comment, under 512 KiB
    assert tiup_topology_view("# " + "é" * 90_000 + "\n").per_host == {}
    with pytest.raises(ConfigTooLarge) as caught:
        tiup_topology_view("# " + "é" * 300_000 + "\n")
    assert caught.value.size == 600_003 and caught.value.limit == MAX_TOPOLOGY_BYTES
    assert str(caught.value) == "topology.yaml: the file is 600,003 bytes; the limit is 524,288 bytes (512 KiB)"


def test_real_shaped_topologies_parse() -> None:
    multi_dc = tiup_topology_view((DATA / "topology-multi-dc.yaml").read_text())
    assert multi_dc.global_config["storage.block-cache.capacity"] == "24GiB"
    assert set(multi_dc.per_host) == {"10.0.1.16:20160", "10.0.1.16:20161", "10.0.1.17:20160"}
    assert multi_dc.for_instance("10.0.1.17", 20160)["raftstore.raft-max-election-timeout-ticks"] == 1020
    anchors = tiup_topology_view((DATA / "topology-anchors.yaml").read_text())
    assert anchors.for_instance("10.0.2.2", 20160) == {
        "storage.block-cache.capacity": "16GiB",
        "server.labels": {"zone": "us-east-1a", "since": "2024-05-01"},  # a plain date stays text
        "raftstore.store-io-pool-size": 2,
    }
    assert anchors.for_instance("10.0.2.3", 20160)["raftstore.store-io-pool-size"] == 1


def test_unstorable_values_are_found_and_dropped() -> None:
    live = {
        "storage": {"block-cache": {"capacity": "8GiB", "ratio": math.nan}},
        "server": {"labels": {"zone": "a", "b\x00": "c"}},
        "list": [1, [2, -math.inf]],
        "ok": 1.5,
    }
    assert first_unstorable(live) == (("storage", "block-cache", "ratio"), "nan is not a finite number; "
                                      "nan and inf are never valid TiKV settings")
    clean, dropped = drop_unstorable(live)
    assert clean == {"storage": {"block-cache": {"capacity": "8GiB"}}, "server": {"labels": {"zone": "a"}}, "ok": 1.5}
    assert [key for key, _ in dropped] == ["storage.block-cache.ratio", "server.labels.b\\u0000", "list"]
    assert first_unstorable(clean) is None

