"""`headroom burst`: how long a credit bucket lasts at a demand, and how long it takes to refill.

Volume buckets: gp2 I/O credits, st1/sc1 throughput credits. Instance buckets (--instance): the EBS burst of
the asterisk sizes (EBSIOBalance% / EBSByteBalance%), modelled as in headroom.domain.physics.burst.
"""

from __future__ import annotations

from typing import Any

import typer

from headroom.commands._output import fail, print_json
from headroom.commands.catalog import parse_number
from headroom.domain.catalog import CatalogError, instance_limits, volume_limits
from headroom.domain.physics.burst import CreditBucket, InstanceEbsBucket, volume_bucket


def bucket_report(bucket: CreditBucket, balance_percent: float, demand: float | None) -> dict[str, Any]:
    """Describe a bucket at a balance and a demand (default: its burst rate) as a JSON-ready dict."""
    balance = bucket.credits_from_percent(balance_percent)
    rate = bucket.burst_rate if demand is None else demand
    return {
        "unit": bucket.unit,
        "bursts": bucket.bursts,
        "baseline": bucket.baseline_rate,
        "burst": bucket.burst_rate if bucket.bursts else None,
        "capacity_credits": bucket.capacity,
        "balance_percent": balance_percent,
        "balance_credits": balance,
        "demand": rate,
        "served_now": bucket.served_rate(balance, rate),
        "seconds_to_empty": bucket.seconds_to_empty(balance, rate),
        "refill_seconds": bucket.refill_seconds(balance, 0.0),
        "refill_from_empty_seconds": bucket.refill_seconds(0.0, 0.0),
    }


def _volume_payload(
    volume_type: str,
    size_gib: float,
    balance_percent: float,
    demand_iops: float | None,
    demand_mibps: float | None,
) -> dict[str, Any]:
    try:
        limits = volume_limits(volume_type, size_gib, iops=None)
    except CatalogError as exc:
        fail(str(exc))
    # io1/io2 need IOPS to be valid; they have no bucket, so report them without judging the size alone.
    size_problems = [p for p in limits.problems if "needs provisioned IOPS" not in p]
    if size_problems:
        fail("invalid volume: " + "; ".join(size_problems))
    bucket = volume_bucket(limits)
    payload: dict[str, Any] = {
        "volume_type": limits.volume_type,
        "size_gib": limits.size_gib,
        "bursts": limits.bursts,
        "baseline_iops": limits.baseline_iops,
        "burst_iops": limits.burst_iops,
        "baseline_throughput_mibps": limits.baseline_throughput_mibps,
        "burst_throughput_mibps": limits.burst_throughput_mibps,
        "balance_percent": balance_percent,
    }
    if bucket is None:
        payload.update({"credit_unit": None, "seconds_to_empty": None, "refill_seconds": None})
        payload["note"] = f"{limits.volume_type} has no burst bucket: it delivers its provisioned rate"
        return payload
    if bucket.unit == "IOPS":
        if demand_mibps is not None:
            fail(f"{limits.volume_type} credits are I/O credits: use --demand-iops")
        demand = demand_iops
    else:
        if demand_iops is not None:
            fail(f"{limits.volume_type} credits are throughput credits: use --demand-mibps")
        demand = demand_mibps
    report = bucket_report(bucket, balance_percent, demand)
    key = "demand_iops" if bucket.unit == "IOPS" else "demand_mibps"
    payload.update(
        {
            "credit_unit": "I/O" if bucket.unit == "IOPS" else "MiB",
            "capacity_credits": report["capacity_credits"],
            "balance_credits": report["balance_credits"],
            key: report["demand"],
            "served_now": report["served_now"],
            "seconds_to_empty": report["seconds_to_empty"],
            "refill_seconds": report["refill_seconds"],
            "refill_from_empty_seconds": report["refill_from_empty_seconds"],
        }
    )
    return payload


def _instance_payload(
    name: str, balance_percent: float, demand_iops: float | None, demand_mibps: float | None
) -> dict[str, Any]:
    try:
        inst = instance_limits(name)
    except CatalogError as exc:
        fail(str(exc))
    return {
        "instance_type": inst.name,
        "bursts": inst.bursts,
        "model": "capacity = 1800 s x (max - baseline), earned at baseline (docs/reference/ec2-ebs-limits.md#the-burst-rule, approximate)",
        "io": bucket_report(InstanceEbsBucket.for_iops(inst), balance_percent, demand_iops),
        "throughput": bucket_report(InstanceEbsBucket.for_throughput(inst), balance_percent, demand_mibps),
    }


def burst_command(
    volume_type: str = typer.Option(None, "--type", help="Volume type with a bucket: gp2, st1, sc1."),
    size_gib: str = typer.Option(None, "--size-gib", help="Volume size in GiB."),
    instance: str = typer.Option(
        None, "--instance", help="Instance type (instance EBS burst) instead of a volume."
    ),
    balance_percent: str = typer.Option(
        "100", "--balance-percent", help="Credit balance, 0-100 (default 100)."
    ),
    demand_iops: str = typer.Option(None, "--demand-iops", help="Demand in IOPS (gp2; default full burst)."),
    demand_mibps: str = typer.Option(
        None, "--demand-mibps", help="Demand in MiB/s (st1/sc1; default full burst)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """How long a burst bucket lasts at a demand, and how long it takes to refill from a balance."""
    pct = parse_number("--balance-percent", balance_percent)
    assert pct is not None
    if not 0 <= pct <= 100:
        fail(f"--balance-percent must be 0-100, got {balance_percent}")
    d_iops = parse_number("--demand-iops", demand_iops)
    d_mibps = parse_number("--demand-mibps", demand_mibps)
    for option, value in (("--demand-iops", d_iops), ("--demand-mibps", d_mibps)):
        if value is not None and value < 0:
            fail(f"{option} must be >= 0")
    if instance and volume_type:
        fail("give --type/--size-gib for a volume or --instance for an instance, not both")
    if instance:
        payload = _instance_payload(instance, pct, d_iops, d_mibps)
    else:
        if not volume_type:
            fail("--type (gp2, st1, sc1) and --size-gib are required, or --instance")
        size = parse_number("--size-gib", size_gib)
        if size is None:
            fail("--size-gib is required")
        payload = _volume_payload(volume_type, size, pct, d_iops, d_mibps)
    if as_json:
        print_json(payload)
        return
    for key, value in payload.items():
        if isinstance(value, dict):
            typer.echo(f"{key}:")
            for k, v in value.items():
                typer.echo(f"  {k}: {'-' if v is None else v}")
        else:
            typer.echo(f"{key}: {'-' if value is None else value}")


def register(app: typer.Typer) -> None:
    """Add the `burst` command to the headroom CLI."""
    app.command("burst")(burst_command)
