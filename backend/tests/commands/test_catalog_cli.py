"""`headroom catalog ...` through Typer's CliRunner. Expected numbers from docs/reference/ebs-volume-types.md#limits-per-volume-type, docs/reference/ebs-volume-types.md#gp3-limits-raised-in-2025, docs/reference/gp2-burst.md#the-credit-bucket, docs/reference/ebs-io-accounting.md#io-size-cap, docs/reference/ebs-volume-types.md#elastic-volumes-modifications, docs/reference/ebs-prices.md#prices-us-east-1, docs/reference/ec2-ebs-limits.md#limits-table."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from headroom.cli import app
from headroom.domain.catalog.instance_types import OVERRIDE_ENV, use_override_file
from typer.testing import CliRunner

runner = CliRunner()


@pytest.fixture(autouse=True)
def _no_catalog_override_left() -> Iterator[None]:
    """The catalog's override file is process configuration: every test leaves it unset."""
    yield
    use_override_file(None)


def run_json(*args: str) -> dict:  # type: ignore[type-arg]
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def run_error(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code != 0
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr  # one line, no usage box
    assert lines[0].startswith("headroom: error: ")
    return lines[0]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        # docs/reference/gp2-burst.md#gp2-throughput: 500 GiB gp2 -> baseline 1,500, burst 3,000, 250 MiB/s; docs/reference/ebs-prices.md#prices-us-east-1 $0.10/GB-month -> $50.
        (
            ["--type", "gp2", "--size-gib", "500"],
            {"baseline_iops": 1500, "burst_iops": 3000, "max_throughput_mibps": 250, "monthly_cost_usd": 50},
        ),
        # docs/reference/gp2-burst.md#the-credit-bucket: >= 1 TiB gp2 does not burst.
        (
            ["--type", "gp2", "--size-gib", "1000"],
            {"baseline_iops": 3000, "burst_iops": None, "max_throughput_mibps": 250, "monthly_cost_usd": 100},
        ),
        # docs/reference/ebs-prices.md#worked-example worked check: 500 GiB gp3 3,000 IOPS 250 MiB/s = $45.00.
        (
            ["--type", "gp3", "--size-gib", "500", "--iops", "3000", "--throughput", "250"],
            {"baseline_iops": 3000, "burst_iops": None, "max_throughput_mibps": 250, "monthly_cost_usd": 45},
        ),
        # docs/reference/ebs-volume-types.md#limits-per-volume-type: st1 1 TiB 40 -> 250 MiB/s burst; docs/reference/ebs-prices.md#prices-us-east-1 $0.045/GB-month.
        (
            ["--type", "st1", "--size-gib", "1024"],
            {"baseline_throughput_mibps": 40, "max_throughput_mibps": 250, "monthly_cost_usd": 46.08},
        ),
        # docs/reference/ebs-volume-types.md#limits-per-volume-type: io2 0.256 MiB/s per IOPS: 10,000 IOPS -> 2,560 MiB/s.
        (
            ["--type", "io2", "--size-gib", "100", "--iops", "10000"],
            {"baseline_iops": 10000, "max_throughput_mibps": 2560, "valid": True},
        ),
    ],
)
def test_volume_json(args: list[str], expected: dict[str, object]) -> None:
    data = run_json("catalog", "volume", *args, "--json")
    for key, value in expected.items():
        assert data[key] == (value if value is None or isinstance(value, bool) else pytest.approx(value)), key
    assert data["valid"] is True and data["problems"] == []


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["--type", "gp9", "--size-gib", "100"], "unknown EBS volume type 'gp9'"),
        (["--type", "gp2", "--size-gib", "20000"], "size must be 1-16,384 GiB"),
        (["--type", "gp3", "--size-gib", "100", "--iops", "90000"], "IOPS must be 3,000-80,000"),
        (["--type", "io1", "--size-gib", "100"], "io1 needs provisioned IOPS"),
        (["--type", "gp2", "--size-gib", "abc"], "--size-gib must be a number"),
        (["--type", "gp3", "--size-gib", "100", "--iops", "3000.5"], "--iops must be a whole number"),
        (["--size-gib", "100"], "--type is required"),
        (["--type", "gp2"], "--size-gib is required"),
    ],
)
def test_volume_bad_input_is_one_line(args: list[str], reason: str) -> None:
    assert reason in run_error("catalog", "volume", *args, "--json")


def test_volume_text_output() -> None:
    result = runner.invoke(app, ["catalog", "volume", "--type", "gp2", "--size-gib", "100"])
    assert result.exit_code == 0
    assert "baseline_iops" in result.stdout and "300" in result.stdout


def test_instance_json_m5_2xlarge() -> None:
    # docs/reference/ec2-ebs-limits.md#limits-table: 287.5 / 593.75 MB/s, 12,000 / 18,750 IOPS, asterisk; docs/reference/ec2-ebs-limits.md#units: 593.75 MB/s ≈ 566 MiB/s.
    data = run_json("catalog", "instance", "m5.2xlarge", "--json")
    assert data["baseline_iops"] == 12000 and data["max_iops"] == 18750
    assert data["baseline_throughput_mbps"] == 287.5 and data["max_throughput_mbps"] == 593.75
    assert data["baseline_throughput_mibps"] == pytest.approx(274.18, abs=0.01)
    assert data["max_throughput_mibps"] == pytest.approx(566.24, abs=0.01)
    assert data["bursts"] is True


def test_instance_unknown_is_one_line() -> None:
    assert "unknown instance type 'm5.mega'" in run_error("catalog", "instance", "m5.mega", "--json")
    assert "instance type is required" in run_error("catalog", "instance")


def test_list_instances_family() -> None:
    # docs/reference/ec2-ebs-limits.md#limits-table: m5 large..16xlarge = 7 sizes; large/xlarge/2xlarge burst.
    data = run_json("catalog", "list-instances", "--family", "m5", "--json")
    assert [d["size"] for d in data] == [
        "large",
        "xlarge",
        "2xlarge",
        "4xlarge",
        "8xlarge",
        "12xlarge",
        "16xlarge",
    ]
    assert [d["bursts"] for d in data] == [True, True, True, False, False, False, False]
    assert "no instance types of family" in run_error("catalog", "list-instances", "--family", "zz9")


def test_volume_types_json() -> None:
    data = run_json("catalog", "volume-types", "--json")
    gp3 = next(d for d in data if d["volume_type"] == "gp3")
    # docs/reference/ebs-volume-types.md#gp3-limits-raised-in-2025 (2025): 80,000 IOPS, 2,000 MiB/s, 64 TiB.
    assert (gp3["max_iops"], gp3["max_throughput_mibps"], gp3["max_size_gib"]) == (80000, 2000, 65536)


@pytest.mark.parametrize(
    "args",
    [
        ["catalog", "--help"],
        ["catalog", "volume", "--help"],
        ["catalog", "instance", "--help"],
        ["catalog", "list-instances", "--help"],
        ["catalog", "refresh-instances", "--help"],
    ],
)
def test_help(args: list[str]) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 0
    assert "Usage" in result.stdout


def test_refresh_instances_requires_out() -> None:
    assert "--out PATH is required" in run_error("catalog", "refresh-instances")


def test_refresh_instances_against_moto(
    aws_endpoint_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "instances.json"
    data = run_json(
        "catalog",
        "refresh-instances",
        "--region",
        "us-east-1",
        "--endpoint-url",
        aws_endpoint_url,
        "--out",
        str(out),
        "--instance-type",
        "m5.2xlarge",
        "--instance-type",
        "r5b.large",
        "--no-prices",  # the Price List API has its own tests (tests/domain/catalog/test_catalog_price_list.py)
        "--json",
    )
    assert data["instance_types"] == 2 and Path(data["path"]) == out
    monkeypatch.setenv(OVERRIDE_ENV, str(out))
    inst = run_json("catalog", "instance", "r5b.large", "--json")
    # docs/reference/ec2-ebs-limits.md#limits-table r5b.large 1,250 / 10,000 Mbps, 5,417 / 43,333 IOPS, served from the override file.
    assert (inst["baseline_iops"], inst["max_iops"]) == (5417, 43333)
    assert inst["source"].startswith("override")


def test_refresh_instances_unreachable_endpoint_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "x")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "x")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    line = run_error(
        "catalog",
        "refresh-instances",
        "--endpoint-url",
        "http://127.0.0.1:9",
        "--out",
        str(tmp_path / "x.json"),
    )
    assert "refresh failed" in line
    assert not (tmp_path / "x.json").exists()


def test_node_ceilings_json() -> None:
    # KloudDB's example: m5.2xlarge caps at 18,750 IOPS whatever the volumes (docs/reference/ec2-ebs-limits.md#limits-table); two gp3 16,000 IOPS volumes.
    data = run_json(
        "catalog",
        "node",
        "--instance",
        "m5.2xlarge",
        "--volume",
        "gp3:1000:16000:1000",
        "--volume",
        "gp3:1000:16000:1000",
        "--json",
    )
    assert data["sustained_iops"] == {
        "volumes": 32000,
        "instance": 12000,
        "effective": 12000,
        "binding": "instance",
    }
    assert data["burst_iops"]["effective"] == 18750
    # gp3 alone binds: 3,000 IOPS / 125 MiB/s defaults (docs/reference/ebs-volume-types.md#limits-per-volume-type).
    single = run_json("catalog", "node", "--instance", "m5.2xlarge", "--volume", "gp3:500", "--json")
    assert single["sustained_iops"]["binding"] == "volumes"
    assert single["sustained_throughput_mibps"]["effective"] == pytest.approx(125)


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["--volume", "gp3:500"], "--instance is required"),
        (["--instance", "m5.large"], "at least one --volume"),
        (["--instance", "m5.large", "--volume", "gp3"], "--volume must be TYPE:SIZE_GIB"),
        (["--instance", "m5.large", "--volume", "gp3:500:100"], "IOPS must be 3,000-80,000"),
        (["--instance", "m5.large", "--volume", "gp3:x"], "--volume size must be a number"),
    ],
)
def test_node_bad_input(args: list[str], reason: str) -> None:
    assert reason in run_error("catalog", "node", *args)
