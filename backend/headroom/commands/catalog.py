"""`headroom catalog ...`: EBS volume limits and cost, instance EBS limits, the instance catalog refresh."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import typer

from headroom.commands._output import fail, print_json
from headroom.domain.catalog import (
    CatalogError,
    instance_limits,
    list_instance_types,
    list_volume_types,
    volume_limits,
)
from headroom.domain.catalog.volume_types import VolumeLimits
from headroom.domain.physics.ceilings import node_ceilings

catalog_app = typer.Typer(
    name="catalog",
    help="AWS limits and prices: EBS volume types, EC2 instance EBS limits.",
    no_args_is_help=True,
)


def parse_number(option: str, value: str | None, *, integer: bool = False) -> float | None:
    """Parse a numeric option given as text so bad input ends in one line, not a usage box."""
    if value is None:
        return None
    try:
        number = float(value.replace(",", "").replace("_", ""))
    except ValueError:
        fail(f"{option} must be a number, got {value!r}")
    if not math.isfinite(number):
        fail(f"{option} must be a finite number, got {value!r}")
    if integer and not number.is_integer():
        fail(f"{option} must be a whole number, got {value!r}")
    return number


def _require(option: str, value: str | None, *, integer: bool = False) -> float:
    number = parse_number(option, value, integer=integer)
    if number is None:
        fail(f"{option} is required")
    return number


def _print_pairs(pairs: dict[str, Any]) -> None:
    width = max(len(k) for k in pairs)
    for key, value in pairs.items():
        shown = "-" if value is None else (f"{value:,.6g}" if isinstance(value, float) else value)
        typer.echo(f"{key.ljust(width)}  {shown}")


@catalog_app.command("volume")
def volume_command(
    volume_type: str = typer.Option(None, "--type", help="EBS volume type: gp2, gp3, io1, io2, st1, sc1."),
    size_gib: str = typer.Option(None, "--size-gib", help="Volume size in GiB (whole number)."),
    iops: str = typer.Option(None, "--iops", help="Provisioned IOPS (gp3 default 3000; io1/io2 required)."),
    throughput: str = typer.Option(None, "--throughput", help="Provisioned MiB/s (gp3 only; default 125)."),
    region: str = typer.Option("us-east-1", "--region", help="Region for prices (us-east-1 data only)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Show the IOPS and throughput limits, burst behaviour and monthly cost of one EBS volume."""
    if not volume_type:
        fail("--type is required (gp2, gp3, io1, io2, st1, sc1)")
    size = _require("--size-gib", size_gib)
    iops_n = parse_number("--iops", iops, integer=True)
    tput = parse_number("--throughput", throughput)
    try:
        limits = volume_limits(
            volume_type, size, int(iops_n) if iops_n is not None else None, tput, region=region
        )
    except CatalogError as exc:
        fail(str(exc))
    if not limits.valid:
        fail("invalid volume: " + "; ".join(limits.problems))
    if as_json:
        print_json(limits.to_dict())
        return
    _print_pairs(
        {
            "volume": f"{limits.volume_type} {limits.size_gib:,.0f} GiB",
            "baseline_iops": limits.baseline_iops,
            "burst_iops": limits.burst_iops,
            "baseline_throughput_mibps": limits.baseline_throughput_mibps,
            "burst_throughput_mibps": limits.burst_throughput_mibps,
            "max_throughput_mibps": limits.max_throughput_mibps,
            "io_chunk_kib": limits.io_chunk_kib,
            "monthly_cost_usd": limits.monthly_cost_usd,
        }
    )


@catalog_app.command("volume-types")
def volume_types_command(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """List the EBS volume types with their size, IOPS and throughput ranges."""
    rows = [
        {
            "volume_type": s.name,
            "media": s.media,
            "min_size_gib": s.min_size_gib,
            "max_size_gib": s.max_size_gib,
            "min_iops": s.min_iops,
            "max_iops": s.max_iops,
            "max_iops_per_gib": s.max_iops_per_gib,
            "max_throughput_mibps": s.max_throughput_mibps,
            "io_chunk_kib": s.io_chunk_kib,
            "bursts": s.bursts,
            "source": s.source,
        }
        for s in list_volume_types()
    ]
    if as_json:
        print_json(rows)
        return
    for r in rows:
        typer.echo(
            f"{r['volume_type']:4} {r['min_size_gib']}-{r['max_size_gib']} GiB  "
            f"IOPS {r['min_iops']}-{r['max_iops']}  <= {r['max_throughput_mibps']:g} MiB/s  "
            f"bursts={r['bursts']}"
        )


@catalog_app.command("instance")
def instance_command(
    name: str = typer.Argument(None, help="Instance type, e.g. m5.2xlarge."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Show the EBS-optimized limits (MB/s as AWS quotes them, and MiB/s) and price of an instance type."""
    if not name:
        fail("an instance type is required, e.g. `headroom catalog instance m5.2xlarge`")
    try:
        limits = instance_limits(name)
    except CatalogError as exc:
        fail(str(exc))
    if as_json:
        print_json(limits.to_dict())
        return
    _print_pairs({k: v for k, v in limits.to_dict().items() if k not in ("source",)})


@catalog_app.command("list-instances")
def list_instances_command(
    family: str = typer.Option(None, "--family", help="Only this family, e.g. m5."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List the instance types in the catalog (built-in plus the override file)."""
    try:
        items = list_instance_types(family)
    except CatalogError as exc:
        fail(str(exc))
    if family and not items:
        fail(f"no instance types of family {family!r} in the catalog")
    if as_json:
        print_json([i.to_dict() for i in items])
        return
    for i in items:
        typer.echo(
            f"{i.name:14} IOPS {i.baseline_iops:>8,.0f}/{i.max_iops:<8,.0f} "
            f"MB/s {i.baseline_throughput_mbps:>8,.2f}/{i.max_throughput_mbps:<8,.2f} bursts={i.bursts}"
        )


def parse_volume_spec(spec: str, region: str) -> VolumeLimits:
    """Parse TYPE:SIZE_GIB[:IOPS[:MIBPS]] (e.g. gp3:500:6000:250) into valid VolumeLimits, else fail."""
    parts = spec.split(":")
    if not 2 <= len(parts) <= 4 or not parts[0]:
        fail(f"--volume must be TYPE:SIZE_GIB[:IOPS[:MIBPS]], got {spec!r}")
    size = _require("--volume size", parts[1])
    iops_n = parse_number("--volume IOPS", parts[2] or None, integer=True) if len(parts) > 2 else None
    tput = parse_number("--volume MiB/s", parts[3] or None) if len(parts) > 3 else None
    try:
        limits = volume_limits(
            parts[0], size, int(iops_n) if iops_n is not None else None, tput, region=region
        )
    except CatalogError as exc:
        fail(str(exc))
    if not limits.valid:
        fail(f"invalid volume {spec!r}: " + "; ".join(limits.problems))
    return limits


@catalog_app.command("node")
def node_command(
    instance: str = typer.Option(None, "--instance", help="Instance type, e.g. m5.2xlarge."),
    volume: list[str] = typer.Option(  # noqa: B006
        None, "--volume", help="TYPE:SIZE_GIB[:IOPS[:MIBPS]], repeatable (e.g. gp3:500:6000:250)."
    ),
    raid0: bool = typer.Option(False, "--raid0", help="The volumes form one RAID 0 stripe."),
    region: str = typer.Option("us-east-1", "--region", help="Region for volume prices."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Show a node's effective IOPS and MiB/s ceilings (volumes vs instance), sustained and burst."""
    if not instance:
        fail("--instance is required")
    if not volume:
        fail("at least one --volume TYPE:SIZE_GIB[:IOPS[:MIBPS]] is required")
    try:
        inst = instance_limits(instance)
    except CatalogError as exc:
        fail(str(exc))
    vols = [parse_volume_spec(v, region) for v in volume]
    ceilings = node_ceilings(inst, vols, raid0=raid0)
    payload = ceilings.to_dict()
    payload["monthly_cost_usd"] = sum(v.monthly_cost_usd for v in vols) + (inst.monthly_price_usd or 0.0)
    payload["instance_price_known"] = inst.monthly_price_usd is not None
    if as_json:
        print_json(payload)
        return
    for key in ("sustained_iops", "burst_iops", "sustained_throughput_mibps", "burst_throughput_mibps"):
        c = payload[key]
        typer.echo(
            f"{key:28} {c['effective']:>10,.1f}  (volumes {c['volumes']:,.1f}, "
            f"instance {c['instance']:,.1f}; binds: {c['binding']})"
        )


@catalog_app.command("refresh-instances")
def refresh_instances_command(
    region: str = typer.Option("us-east-1", "--region", help="AWS region to ask."),
    endpoint_url: str = typer.Option(None, "--endpoint-url", help="EC2 endpoint (e.g. a moto server)."),
    out: str = typer.Option(None, "--out", help="Where to write the override JSON."),
    instance_type: list[str] = typer.Option(  # noqa: B006
        None, "--instance-type", help="Only these types (repeatable); default all."
    ),
    prices: bool = typer.Option(
        True, "--prices/--no-prices", help="Also read the region's on-demand prices (pricing:GetProducts)."
    ),
    pricing_endpoint_url: str = typer.Option(
        None, "--pricing-endpoint-url", help="Price List API endpoint (default: AWS's us-east-1 one)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Fetch EBS limits (EC2 DescribeInstanceTypes) and on-demand prices (AWS Price List API) into an override
    file for HEADROOM_INSTANCE_CATALOG; without pricing:GetProducts the built-in us-east-1 prices stay."""
    if not out:
        fail("--out PATH is required")
    # Imported here so the pure catalog commands never load boto3.
    from botocore.exceptions import BotoCoreError, ClientError

    from headroom.sources.aws.instance_catalog import refresh_instance_catalog

    try:
        result = refresh_instance_catalog(
            Path(out),
            region=region,
            endpoint_url=endpoint_url,
            instance_types=instance_type or None,
            prices=prices,
            pricing_endpoint_url=pricing_endpoint_url,
        )
    except (BotoCoreError, ClientError, OSError) as exc:
        fail(f"refresh failed: {' '.join(str(exc).split())}")
    payload = {
        "path": str(result.path),
        "region": result.region,
        "instance_types": result.instance_types,
        "priced": result.priced,
        "prices": result.prices_note,
    }
    if as_json:
        print_json(payload)
    else:
        typer.echo(f"wrote {result.instance_types} instance types to {result.path}")
        typer.echo(f"prices for {result.priced} of them: {result.prices_note}")
        typer.echo(f"use it: export HEADROOM_INSTANCE_CATALOG={result.path}")


def register(app: typer.Typer) -> None:
    """Add the `catalog` command group to the headroom CLI."""
    app.add_typer(catalog_app, name="catalog")
