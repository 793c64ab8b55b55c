"""Reading tikv.toml, TiKV's /config JSON and a TiUP topology into one dotted-key view."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from headroom.domain.tikvconf.errors import ConfigParseError
from headroom.domain.tikvconf.parse import (
    config_json_view,
    same_value,
    tiup_topology_view,
    toml_view,
    unknown_keys,
)

EXAMPLES = Path(__file__).resolve().parents[4] / "examples" / "configs"


def test_toml_view_of_a_tiup_file() -> None:
    view = toml_view((EXAMPLES / "tiup-8vcpu-32gib.toml").read_text())
    assert view["storage.block-cache.capacity"] == "8GiB"
    assert view["rocksdb.defaultcf.block-size"] == "64KB"
    assert view["server.labels"] == {
        "zone": "us-east-1a",
        "host": "ip-10-0-1-5",
    }  # free-form table kept whole
    assert view["rocksdb.defaultcf.compression-per-level"][-1] == "zstd"
    assert unknown_keys(view) == []


def test_toml_view_of_dotted_and_inline_keys() -> None:
    view = toml_view((EXAMPLES / "manual-dotted-keys.toml").read_text())
    assert view["storage.block-cache.capacity"] == "6GB"
    assert view["rocksdb.writecf.block-size"] == "32KB"
    assert view["memory-usage-limit"] == "12GB"


def test_config_json_view_matches_domain_sample() -> None:
    # docs/reference/tikv-metrics.md#config-json: nested objects with kebab-case keys; sizes as strings.
    payload = {
        "readpool": {"unified": {"min-thread-count": 1, "max-thread-count": 8}},
        "storage": {"scheduler-worker-pool-size": 4, "block-cache": {"capacity": "14745MiB"}},
        "rocksdb": {
            "rate-bytes-per-sec": "10GiB",
            "titan": {"enabled": True},
            "defaultcf": {"block-size": "32KiB", "titan": {"min-blob-size": "32KiB"}},
        },
        "server": {"labels": {}},
    }
    view = config_json_view(json.dumps(payload))
    assert view["readpool.unified.max-thread-count"] == 8
    assert view["rocksdb.defaultcf.titan.min-blob-size"] == "32KiB"
    assert view["server.labels"] == {}
    # The JSON's "32KiB" and the file's "32KB" are the same size to TiKV (KB is 1024).
    assert same_value("rocksdb.defaultcf.block-size", view["rocksdb.defaultcf.block-size"], "32KB")
    assert not same_value("rocksdb.defaultcf.block-size", "32KiB", "64KB")


def test_tiup_topology_view() -> None:
    topology = """
global:
  user: tidb
server_configs:
  tikv:
    storage.block-cache.capacity: 16GiB
    raftstore.apply-pool-size: 3
    rocksdb:
      defaultcf:
        block-size: 32KB
tikv_servers:
  - host: 10.0.1.5
    port: 20160
    config:
      raftstore.apply-pool-size: 4
  - host: 10.0.1.6
"""
    view = tiup_topology_view(topology)
    assert view.global_config["storage.block-cache.capacity"] == "16GiB"
    assert view.global_config["rocksdb.defaultcf.block-size"] == "32KB"
    assert view.for_instance("10.0.1.5", 20160)["raftstore.apply-pool-size"] == 4
    assert view.for_instance("10.0.1.6", 20160)["raftstore.apply-pool-size"] == 3


def test_tiup_topology_reads_yaml_1_2_as_tiup_does() -> None:
    # TiUP reads its topology with gopkg.in/yaml.v3 (YAML 1.2): only true/false are booleans. PyYAML's
    # YAML 1.1 read `[no, no, lz4]` as [False, False, "lz4"] and `level: off` as False, values TiKV would refuse.
    topology = """
server_configs:
  tikv:
    rocksdb.defaultcf.compression-per-level: [no, no, lz4, lz4, lz4, zstd, zstd]
    log.level: off
    rocksdb.titan.enabled: true
    security.redact-info-log: "on"
tikv_servers:
  - host: 10.0.1.5
"""
    view = tiup_topology_view(topology).for_instance("10.0.1.5", 20160)
    assert view["rocksdb.defaultcf.compression-per-level"] == ["no", "no", "lz4", "lz4", "lz4", "zstd", "zstd"]
    assert view["log.level"] == "off"
    assert view["rocksdb.titan.enabled"] is True
    assert view["security.redact-info-log"] == "on"


@pytest.mark.parametrize(
    ("text", "line", "column"),
    [
        ("[storage]\nscheduler-worker-pool-size = = 4\n", 2, 30),  # the second '=' (0-based col 29)
        ('[storage]\ndata-dir = "/data\n', 2, 18),  # unterminated string: the newline
        ("[storage]\n[storage]\n", 2, 1),  # table defined twice
        ("a = 1\n[rocksdb\nx = 2\n", 2, 9),
    ],
)
def test_malformed_toml_names_line_and_column(text: str, line: int, column: int) -> None:
    with pytest.raises(ConfigParseError) as raised:
        toml_view(text, source="tikv.toml")
    assert (raised.value.line, raised.value.column) == (line, column)
    message = str(raised.value)
    assert message.startswith(f"tikv.toml line {line}, column {column}: ")
    assert "\n" not in message


def test_malformed_json_and_yaml_name_the_line() -> None:
    with pytest.raises(ConfigParseError) as raised:
        config_json_view('{"storage": {\n "x": }\n}')
    assert raised.value.line == 2
    with pytest.raises(ConfigParseError) as raised_yaml:
        tiup_topology_view("server_configs:\n  tikv: [\n")
    assert raised_yaml.value.line == 3


def test_a_port_less_instance_is_the_one_on_20160_and_lends_nothing_to_its_neighbours() -> None:
    # Regression: two TiKV on one host (20160 without a port, 20161 with one): the first's per-instance config was
    # keyed by the bare host and applied to every instance on it. TiUP's default tikv port is 20160.
    topology = """
server_configs:
  tikv:
    storage.block-cache.capacity: 8GiB
tikv_servers:
  - host: 10.0.1.7
    config:
      storage.block-cache.capacity: 12GiB
  - host: 10.0.1.7
    port: 20161
"""
    view = tiup_topology_view(topology)
    assert view.for_instance("10.0.1.7", 20160)["storage.block-cache.capacity"] == "12GiB"
    assert view.for_instance("10.0.1.7", None)["storage.block-cache.capacity"] == "12GiB"
    assert view.for_instance("10.0.1.7", 20161)["storage.block-cache.capacity"] == "8GiB"
