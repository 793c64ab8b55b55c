"""`headroom burst` through Typer's CliRunner. Expected numbers from docs/reference/gp2-burst.md#the-credit-bucket, docs/reference/ec2-ebs-limits.md#the-burst-rule and
docs/reference/gp2-burst.md#burst-time-from-cloudwatch."""

from __future__ import annotations

import json

import pytest
from headroom.cli import app
from typer.testing import CliRunner

runner = CliRunner()


def run_json(*args: str) -> dict:  # type: ignore[type-arg]
    result = runner.invoke(app, ["burst", *args, "--json"])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def run_error(*args: str) -> str:
    result = runner.invoke(app, ["burst", *args])
    assert result.exit_code != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("args", "baseline", "to_empty", "refill"),
    [
        # docs/reference/gp2-burst.md#burst-time-from-cloudwatch: 500 GiB at 100% -> 3,600 s at 3,000 IOPS; full -> refill 0.
        (["--size-gib", "500", "--balance-percent", "100"], 1500, 3600, 0),
        (["--size-gib", "500", "--balance-percent", "100", "--demand-iops", "3000"], 1500, 3600, 0),
        # 50%: half the credits -> 1,800 s; refill 2.7e6 / 1,500 = 1,800 s.
        (["--size-gib", "500", "--balance-percent", "50"], 1500, 1800, 1800),
        # docs/reference/gp2-burst.md#worked-durations table 100 GiB: 2,000 s burst; refill from empty 18,000 s.
        (["--size-gib", "100", "--balance-percent", "0"], 300, 0, 18000),
        (["--size-gib", "100"], 300, 2000, 0),
        # demand below baseline never drains.
        (["--size-gib", "500", "--demand-iops", "1000"], 1500, None, 0),
        # 2,000 IOPS on 500 GiB: 5.4e6 / 500 = 10,800 s.
        (["--size-gib", "500", "--demand-iops", "2000"], 1500, 10800, 0),
    ],
)
def test_gp2(args: list[str], baseline: float, to_empty: float | None, refill: float) -> None:
    data = run_json("--type", "gp2", *args)
    assert data["baseline_iops"] == baseline
    assert data["burst_iops"] == 3000
    assert data["seconds_to_empty"] == (None if to_empty is None else pytest.approx(to_empty))
    assert data["refill_seconds"] == pytest.approx(refill)


def test_gp2_one_tib_does_not_burst() -> None:
    # docs/reference/gp2-burst.md#the-credit-bucket: >= 1 TiB, burst n/a.
    data = run_json("--type", "gp2", "--size-gib", "1024")
    assert data["bursts"] is False and data["burst_iops"] is None
    assert data["seconds_to_empty"] is None and data["refill_seconds"] is None


@pytest.mark.parametrize(
    ("volume_type", "demand", "to_empty", "refill_from_empty"),
    [
        # docs/reference/ebs-volume-types.md#limits-per-volume-type, docs/reference/gp2-burst.md#st1-and-sc1-throughput-credits st1 1 TiB: 1,048,576 MiB of credits, 40 -> 250 MiB/s.
        ("st1", None, 1_048_576 / 210, 1_048_576 / 40),
        ("st1", "145", 1_048_576 / 105, 1_048_576 / 40),
        ("st1", "40", None, 1_048_576 / 40),
        # sc1 1 TiB: 12 -> 80 MiB/s.
        ("sc1", None, 1_048_576 / 68, 1_048_576 / 12),
    ],
)
def test_hdd(volume_type: str, demand: str | None, to_empty: float | None, refill_from_empty: float) -> None:
    extra = ["--demand-mibps", demand] if demand else []
    data = run_json("--type", volume_type, "--size-gib", "1024", *extra)
    assert data["credit_unit"] == "MiB"
    assert data["seconds_to_empty"] == (None if to_empty is None else pytest.approx(to_empty))
    assert data["refill_from_empty_seconds"] == pytest.approx(refill_from_empty)


def test_gp3_has_no_bucket() -> None:
    data = run_json("--type", "gp3", "--size-gib", "500")
    assert data["bursts"] is False and data["seconds_to_empty"] is None


def test_instance_bucket() -> None:
    # docs/reference/ec2-ebs-limits.md#the-burst-rule: asterisk sizes hold the maximum for 30 minutes from full.
    data = run_json("--instance", "m5.2xlarge")
    assert data["io"]["seconds_to_empty"] == pytest.approx(1800)
    assert data["throughput"]["seconds_to_empty"] == pytest.approx(1800)
    assert data["io"]["baseline"] == 12000 and data["io"]["burst"] == 18750
    assert run_json("--instance", "m5.4xlarge")["bursts"] is False


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["--type", "gp9", "--size-gib", "100"], "unknown EBS volume type"),
        (["--type", "gp2", "--size-gib", "0"], "size must be 1-16,384 GiB"),
        (
            ["--type", "gp2", "--size-gib", "500", "--balance-percent", "101"],
            "--balance-percent must be 0-100",
        ),
        (["--type", "gp2", "--size-gib", "500", "--demand-iops", "-1"], "--demand-iops must be >= 0"),
        (["--type", "gp2", "--size-gib", "500", "--demand-mibps", "100"], "use --demand-iops"),
        (["--type", "st1", "--size-gib", "500", "--demand-iops", "100"], "use --demand-mibps"),
        (["--type", "gp2"], "--size-gib is required"),
        ([], "--type (gp2, st1, sc1) and --size-gib are required"),
        (["--instance", "m5.mega"], "unknown instance type"),
        (["--instance", "m5.large", "--type", "gp2"], "not both"),
    ],
)
def test_bad_input_is_one_line(args: list[str], reason: str) -> None:
    assert reason in run_error(*args)


def test_help() -> None:
    result = runner.invoke(app, ["burst", "--help"])
    assert result.exit_code == 0 and "--balance-percent" in result.stdout
