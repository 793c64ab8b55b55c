"""Fix builders shared by the AWS rule families: volume configurations that meet a need, instance upgrades.

Volume fixes (PingCAP's AWS article, docs/reference/pingcap-guidance.md#volume-choice-on-aws; docs/reference/ebs-volume-types.md#limits-per-volume-type, docs/reference/ebs-volume-types.md#gp3-limits-raised-in-2025, docs/reference/ebs-prices.md#prices-us-east-1), ranked by monthly cost:
- gp3 at the IOPS / MiB/s needed (an existing gp3: raise IOPS/throughput; gp2: migrate to gp3). gp3 rules:
  3,000-80,000 IOPS, <= 500 IOPS/GiB, 125-2,000 MiB/s, <= 0.25 MiB/s per IOPS (docs/reference/ebs-volume-types.md#gp3-limits-raised-in-2025).
- io2 at the IOPS needed (0.256 MiB/s per IOPS, <= 1,000 IOPS/GiB, docs/reference/ebs-volume-types.md#limits-per-volume-type).
- gp2 grown to the size whose 3 IOPS/GiB baseline (and 0.75 MiB/s per GiB) meets the need (docs/reference/gp2-burst.md#gp2-throughput).
- RAID 0 of 2 gp3 volumes of half the size (docs/reference/pingcap-guidance.md#volume-choice-on-aws, "Disk striping": "stripe several volumes together as a RAID
  0 array to multiply storage power"); needs a new array and a data move, so it is never the primary change.
The primary `changes` are the cheapest option that Elastic Volumes can apply in place (docs/reference/ebs-volume-types.md#elastic-volumes-modifications).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from headroom.domain.advisor.context import Context
from headroom.domain.catalog import InstanceLimits, VolumeLimits, list_instance_types, volume_limits
from headroom.domain.catalog.volume_types import GP2_MAX_IOPS, gp2_baseline_iops, gp2_throughput_mibps
from headroom.domain.model import Change, EntityRef, Impact, Option
from headroom.domain.physics.ceilings import headroom_pct
from headroom.domain.units import format_quantity, format_usd_change

from ._common import PINGCAP_GP3_DATA_IOPS, PINGCAP_GP3_DATA_MIBPS, TARGET_UTILISATION, round_up
from ._lookback import judge_cut

GP3_MIN_IOPS, GP3_MAX_IOPS, GP3_IOPS_PER_GIB = 3000, 80_000, 500  # docs/reference/ebs-volume-types.md#gp3-limits-raised-in-2025
GP3_MIN_MIBPS, GP3_MAX_MIBPS, GP3_MIBPS_PER_IOPS = 125.0, 2000.0, 0.25  # docs/reference/ebs-volume-types.md#gp3-limits-raised-in-2025
IO2_MAX_IOPS, IO2_IOPS_PER_GIB, IO2_MIBPS_PER_IOPS = 256_000, 1000, 0.256  # docs/reference/ebs-volume-types.md#limits-per-volume-type
IOPS_STEP, MIBPS_STEP = 500, 25.0  # Headroom choice: round proposals to readable steps
# AWS "Amazon EBS volume types" (https://docs.aws.amazon.com/ebs/latest/userguide/ebs-volume-types.html) and
# PingCAP's TiDB Cloud article (docs/reference/pingcap-guidance.md#volume-choice-on-aws): io2 is designed for 99.999% durability, gp2 / gp3 / io1 for 99.8-99.9%. Every fix that moves an io2 off io2
# says so, whatever the rule (the cost rule, a ceiling rule's gp3 or RAID 0 option).
IO2_DURABILITY_NOTE = (
    "gives up io2's durability: io2 is designed for 99.999%, {target} for 99.8-99.9% (AWS: Amazon EBS volume "
    "types; PingCAP blog on EBS)"
)


def trade_off_notes(current: VolumeLimits, cfg: VolumeConfig) -> list[str]:
    """Return what a volume fix gives up that its price does not show (today: io2's durability)."""
    if current.volume_type == "io2" and cfg.volume_type != "io2":
        return [IO2_DURABILITY_NOTE.format(target=cfg.volume_type)]
    return []


def instance_sized(need: float, cap: float | None, step: float, floor: float) -> float:
    """Return `need` capped at what the instance can carry (`cap`, rounded up to `step`), never below `floor`."""
    if cap is None or cap <= 0:
        return need
    return min(need, max(floor, round_up(cap, step)))


@dataclass(frozen=True)
class VolumeConfig:
    """A candidate volume configuration and its limits (via the catalog)."""

    label: str
    volume_type: str
    size_gib: float
    iops: int | None
    throughput_mibps: float | None
    stripes: int
    limits: VolumeLimits
    in_place: bool

    @property
    def iops_ceiling(self) -> float:
        """Sustained IOPS of the whole configuration (stripes add up)."""
        return self.limits.baseline_iops * self.stripes

    @property
    def mibps_ceiling(self) -> float:
        """Sustained MiB/s of the whole configuration."""
        return self.limits.baseline_throughput_mibps * self.stripes

    @property
    def monthly_cost(self) -> float:
        """Monthly USD of the whole configuration."""
        return self.limits.monthly_cost_usd * self.stripes


def gp3_config(
    size_gib: float,
    need_iops: float,
    need_mibps: float,
    *,
    data: bool,
    pressured: str | None = None,
    current: VolumeLimits | None = None,
    instance_cap: tuple[float, float] | None = None,
) -> VolumeConfig | None:
    """Return the gp3 of this size that provides need_iops / need_mibps (None if gp3 cannot).

    The dimension under pressure ("iops" / "throughput") gets at least PingCAP's TiKV figure (4,000 IOPS /
    400 MiB/s for data volumes, docs/reference/pingcap-guidance.md#aws-deployment; gp3's free 3,000 / 125 for raft volumes, docs/reference/pingcap-guidance.md#raft-engine-disk); neither
    attribute drops below what a current gp3 already provisions. Nothing is provisioned above what the instance
    can carry (`instance_cap`: its sustained EBS IOPS and MiB/s, docs/reference/ec2-ebs-limits.md#limits-table: the node gets the smaller of
    the instance limit and its volumes): 400 MiB/s behind an instance that sustains 298 pays for 102 it cannot use.
    """
    cap_iops, cap_mibps = instance_cap if instance_cap is not None else (None, None)
    mibps = max(GP3_MIN_MIBPS, round_up(need_mibps, MIBPS_STEP))
    iops = max(GP3_MIN_IOPS, int(round_up(need_iops, IOPS_STEP)))
    if pressured == "iops":
        iops = max(iops, PINGCAP_GP3_DATA_IOPS if data else GP3_MIN_IOPS)
    elif pressured == "throughput":
        mibps = max(mibps, PINGCAP_GP3_DATA_MIBPS if data else GP3_MIN_MIBPS)
    mibps = instance_sized(mibps, cap_mibps, MIBPS_STEP, GP3_MIN_MIBPS)
    iops = int(instance_sized(iops, cap_iops, IOPS_STEP, GP3_MIN_IOPS))
    if current is not None and current.volume_type == "gp3":
        iops = max(iops, current.provisioned_iops or GP3_MIN_IOPS)
        mibps = max(mibps, current.provisioned_throughput_mibps or GP3_MIN_MIBPS)
    iops = max(iops, int(round_up(mibps / GP3_MIBPS_PER_IOPS, IOPS_STEP)))  # docs/reference/ebs-volume-types.md#gp3-limits-raised-in-2025: <= 0.25 MiB/s per IOPS
    if iops > GP3_MAX_IOPS or mibps > GP3_MAX_MIBPS:
        return None
    size = max(size_gib, math.ceil(iops / GP3_IOPS_PER_GIB))  # docs/reference/ebs-volume-types.md#gp3-limits-raised-in-2025: <= 500 IOPS/GiB
    lim = volume_limits("gp3", size, iops, mibps)
    if not lim.valid:
        return None
    return VolumeConfig(
        f"gp3 {format_quantity(size, 'GiB')}, {format_quantity(iops, 'IOPS')}, {format_quantity(mibps, 'MiB/s')}", "gp3", size, iops, mibps, 1, lim, True
    )


def io2_config(size_gib: float, need_iops: float, need_mibps: float) -> VolumeConfig | None:
    """Return the io2 of this size that provides the need (None if io2 cannot)."""
    iops = int(max(round_up(need_iops, IOPS_STEP), round_up(need_mibps / IO2_MIBPS_PER_IOPS, IOPS_STEP), 100))
    if iops > IO2_MAX_IOPS:
        return None
    size = max(size_gib, math.ceil(iops / IO2_IOPS_PER_GIB), 4)
    lim = volume_limits("io2", size, iops)
    if not lim.valid:
        return None
    return VolumeConfig(f"io2 {format_quantity(size, 'GiB')}, {format_quantity(iops, 'IOPS')}", "io2", size, iops, None, 1, lim, True)


def gp2_grow_config(size_gib: float, need_iops: float, need_mibps: float) -> VolumeConfig | None:
    """Return the smallest gp2 at least this size whose sustained baseline meets the need (None if none)."""
    size = max(size_gib, math.ceil(need_iops / 3), math.ceil(need_mibps / 0.75))  # docs/reference/gp2-burst.md#baseline-and-burst: 3 IOPS/GiB, 256 KiB
    if gp2_baseline_iops(size) < need_iops or size > 16_384 or need_iops > GP2_MAX_IOPS:
        return None
    if gp2_throughput_mibps(size)[0] < need_mibps:
        return None
    lim = volume_limits("gp2", size)
    return VolumeConfig(f"gp2 grown to {format_quantity(size, 'GiB')}", "gp2", size, None, None, 1, lim, True)


def raid0_gp3_config(
    size_gib: float, need_iops: float, need_mibps: float, stripes: int = 2
) -> VolumeConfig | None:
    """Return a RAID 0 of `stripes` gp3 volumes of size/stripes that together meet the need."""
    member_size = math.ceil(size_gib / stripes)
    iops = max(GP3_MIN_IOPS, int(round_up(need_iops / stripes, IOPS_STEP)))
    mibps = max(GP3_MIN_MIBPS, round_up(need_mibps / stripes, MIBPS_STEP))
    iops = max(iops, int(round_up(mibps / GP3_MIBPS_PER_IOPS, IOPS_STEP)))
    lim = volume_limits("gp3", member_size, iops, mibps)
    if not lim.valid:
        return None
    return VolumeConfig(
        f"RAID 0 of {stripes} × gp3 {format_quantity(member_size, 'GiB')}, {format_quantity(iops, 'IOPS')}, {format_quantity(mibps, 'MiB/s')} each",
        "gp3",
        member_size,
        iops,
        mibps,
        stripes,
        lim,
        False,
    )


def _ceiling_summary(dimension: str, before: float, cfg: VolumeConfig, effective: float) -> str:
    """The option's effect in words, each number the one it is: the volume's new ceiling is what the fix provisions
    (the value its artefacts set: --throughput 300), and the node's limit, when the instance's sustained EBS limit
    binds first, is said apart ("the node gets 298 MiB/s"), never in place of the value set."""
    unit = "IOPS" if dimension == "iops" else "MiB/s"
    what = "IOPS" if dimension == "iops" else "throughput"
    provisioned = cfg.iops_ceiling if dimension == "iops" else cfg.mibps_ceiling
    per_volume = cfg.iops if dimension == "iops" else cfg.throughput_mibps
    text = f"{what} ceiling {format_quantity(before, unit)} -> {format_quantity(provisioned, unit)}"
    if cfg.stripes > 1 and per_volume is not None:
        text += f" ({cfg.stripes} volumes of {format_quantity(per_volume, unit)})"
    if effective < provisioned:
        text += (f", of which the node gets {format_quantity(effective, unit)} (the instance's sustained EBS limit "
                 "binds first)")
    return text


def volume_changes(
    entity: EntityRef, current: VolumeLimits, cfg: VolumeConfig, reason: str
) -> list[Change]:
    """Return the AWS changes (one ModifyVolume: type, size, IOPS, throughput) that turn current into cfg."""
    out: list[Change] = []
    if cfg.stripes > 1:
        out.append(
            Change(
                target="aws",
                key="volume.raid0-stripes",
                current=1,
                proposed=cfg.stripes,
                online=False,
                reason=reason + " (new RAID 0 array; data must be moved: PingCAP's Best Practices for TiDB on AWS Cloud, 'Disk striping')",
                entity=entity,
            )
        )
    if cfg.volume_type != current.volume_type:
        out.append(
            Change(
                target="aws",
                key="volume.type",
                current=current.volume_type,
                proposed=cfg.volume_type,
                online=cfg.in_place,
                reason=reason,
                entity=entity,
            )
        )
    if cfg.size_gib != current.size_gib:
        out.append(
            Change(
                target="aws",
                key="volume.size",
                current=current.size_gib,
                proposed=cfg.size_gib,
                online=cfg.in_place,
                reason=reason,
                entity=entity,
            )
        )
    if cfg.iops is not None and cfg.iops != current.provisioned_iops:
        out.append(
            Change(
                target="aws",
                key="volume.iops",
                current=current.provisioned_iops,
                proposed=cfg.iops,
                online=cfg.in_place,
                reason=reason,
                entity=entity,
            )
        )
    if cfg.throughput_mibps is not None and cfg.throughput_mibps != current.provisioned_throughput_mibps:
        out.append(
            Change(
                target="aws",
                key="volume.throughput",
                current=current.provisioned_throughput_mibps,
                proposed=cfg.throughput_mibps,
                online=cfg.in_place,
                reason=reason,
                entity=entity,
            )
        )
    return out


def volume_options(
    entity: EntityRef,
    current: VolumeLimits,
    need_iops: float,
    need_mibps: float,
    *,
    data: bool,
    observed_iops_p99: float,
    observed_mibps_p99: float,
    dimension: str,
    reason: str,
    instance_cap: tuple[float, float] | None = None,
) -> list[Option]:
    """Return the fixes that meet (need_iops, need_mibps), cheapest first; in-place fixes before rebuilds."""
    candidates: list[VolumeConfig] = []
    # Size to what the node can use: beyond the instance's sustained EBS limits (docs/reference/ec2-ebs-limits.md#limits-table) a volume's
    # extra IOPS / MiB/s are paid for and never delivered; the instance findings say when the instance binds.
    capped = False
    if instance_cap is not None:
        floor_iops = PINGCAP_GP3_DATA_IOPS if data and dimension == "iops" else 0.0
        floor_mibps = PINGCAP_GP3_DATA_MIBPS if data and dimension == "throughput" else 0.0
        capped = max(need_iops, floor_iops) > instance_cap[0] or max(need_mibps, floor_mibps) > instance_cap[1]
        need_iops, need_mibps = min(need_iops, instance_cap[0]), min(need_mibps, instance_cap[1])
    for cfg in (
        gp3_config(
            current.size_gib,
            need_iops,
            need_mibps,
            data=data,
            pressured=dimension,
            current=current,
            instance_cap=instance_cap,
        ),
        gp2_grow_config(current.size_gib, need_iops, need_mibps) if current.volume_type == "gp2" else None,
        io2_config(current.size_gib, need_iops, need_mibps),
        raid0_gp3_config(current.size_gib, need_iops, need_mibps),
    ):
        if cfg is not None:
            candidates.append(cfg)
    candidates.sort(key=lambda c: (not c.in_place, c.monthly_cost, c.label))
    options: list[Option] = []
    before_cost = current.monthly_cost_usd
    cur_limit = current.baseline_iops if dimension == "iops" else current.baseline_throughput_mibps
    observed = observed_iops_p99 if dimension == "iops" else observed_mibps_p99
    if (
        capped
        and instance_cap is not None
        and cur_limit >= (instance_cap[0] if dimension == "iops" else instance_cap[1])
    ):
        # The volume already has all the instance can carry on the dimension under pressure: any volume fix pays
        # for what the node cannot use, and the instance findings own the fix.
        return []
    for cfg in candidates:
        new_limit = cfg.iops_ceiling if dimension == "iops" else cfg.mibps_ceiling
        if capped and new_limit <= cur_limit:
            continue  # sized to what the instance carries, it does not raise the ceiling under pressure
        notes: list[str] = []
        effective = new_limit
        if instance_cap is not None:
            cap = instance_cap[0] if dimension == "iops" else instance_cap[1]
            if cap < new_limit:
                effective = cap
            if cap < new_limit and not capped:
                notes.append(
                    f"the instance's sustained EBS limit ({format_quantity(cap, 'IOPS' if dimension == 'iops' else 'MiB/s')}) "
                    "binds before this volume's (AWS EBS-optimized instances: the smaller of instance and volumes)"
                )
        if instance_cap is not None and capped:
            notes.append(
                f"sized to what the instance can carry: it sustains {format_quantity(instance_cap[0], 'IOPS')} / "
                f"{format_quantity(instance_cap[1], 'MiB/s')} of EBS (AWS EBS-optimized instances); provisioning more pays for IOPS or "
                "throughput the node cannot use (a larger instance would: see the instance findings)"
            )
        notes.extend(trade_off_notes(current, cfg))
        if not cfg.in_place:
            notes.append(
                "RAID 0 needs a new array and a data move; striping N volumes divides durability (PingCAP, Best Practices for TiDB on AWS Cloud)"
            )
        unit = "IOPS" if dimension == "iops" else "MiB/s"
        instance_limit = None if instance_cap is None else instance_cap[0 if dimension == "iops" else 1]
        options.append(
            Option(
                label=cfg.label,
                changes=volume_changes(entity, current, cfg, reason),
                impact=Impact(
                    summary=_ceiling_summary(dimension, cur_limit, cfg, effective)
                    + f"; {format_usd_change(cfg.monthly_cost - before_cost)}/month",
                    metric="sustained IOPS ceiling"
                    if dimension == "iops"
                    else "sustained throughput ceiling",
                    unit=unit,
                    before=cur_limit,
                    after=effective,
                    # the limit this volume's I/O meets first, before and after: its own or its instance's
                    headroom_before_pct=headroom_pct(observed, cur_limit, instance_limit),
                    headroom_after_pct=headroom_pct(observed, new_limit, instance_limit),
                    monthly_cost_before_usd=round(before_cost, 2),
                    monthly_cost_after_usd=round(cfg.monthly_cost, 2),
                    monthly_cost_delta_usd=round(cfg.monthly_cost - before_cost, 2),
                    price_region=current.cost_breakdown.price_region,
                ),
                notes=notes,
            )
        )
    return options


def family_upgrades(current: InstanceLimits) -> list[InstanceLimits]:
    """Return the larger sizes of the same family, smallest first (by sustained limits, then vCPUs)."""
    same = [i for i in list_instance_types(current.family) if i.name != current.name]
    bigger = [
        i
        for i in same
        if (i.vcpus or 0) > (current.vcpus or 0)
        and i.baseline_throughput_mibps >= current.baseline_throughput_mibps
        and i.baseline_iops >= current.baseline_iops
    ]
    return sorted(bigger, key=lambda i: (i.vcpus or 0, i.baseline_throughput_mibps, i.name))


def smallest_instance_clearing(
    current: InstanceLimits, need_iops: float, need_mibps: float
) -> InstanceLimits | None:
    """Return the smallest larger size of the family whose sustained EBS limits clear the need."""
    for cand in family_upgrades(current):
        if cand.baseline_iops >= need_iops and cand.baseline_throughput_mibps >= need_mibps:
            return cand
    return None


def cheaper_alternatives(
    current: InstanceLimits, need_iops: float, need_mibps: float, exclude: str, limit: int = 3
) -> list[InstanceLimits]:
    """Return up to `limit` instance types of any family that keep the vCPUs and memory, clear the need on
    their sustained (baseline) EBS limits, and have a known price: those of the current architecture first
    (another one needs other TiKV binaries), each group cheapest first (excluding `exclude`)."""
    arch = architecture(current)
    out = [
        i
        for i in list_instance_types()
        if i.name not in (current.name, exclude)
        and (i.vcpus or 0) >= (current.vcpus or 0)
        and (i.memory_gib or 0.0) >= (current.memory_gib or 0.0)
        and i.baseline_iops >= need_iops
        and i.baseline_throughput_mibps >= need_mibps
        and i.monthly_price_usd is not None
    ]
    return sorted(out, key=lambda i: (architecture(i) != arch, i.monthly_price_usd or 0.0, i.name))[:limit]


def is_graviton(name: str) -> bool:
    """Whether an instance family is AWS Graviton (arm64): m6g, m7g, r6g, c7g, ... (the family ends in g)."""
    family = name.split(".")[0]
    return family.rstrip("dn").endswith("g")


def architecture(inst: InstanceLimits) -> str:
    """Return the type's CPU architecture: the catalog's (DescribeInstanceTypes), else arm64 for Graviton."""
    return inst.architecture or ("arm64" if is_graviton(inst.name) else "x86_64")


def architecture_change_note(current: InstanceLimits, proposed: InstanceLimits) -> str | None:
    """Say what a move to another CPU architecture needs, or None when the architecture stays."""
    before, after = architecture(current), architecture(proposed)
    if before == after:
        return None
    return (
        f"architecture change {before} -> {after}: TiKV needs {after} binaries or images "
        f"({'AWS Graviton' if after == 'arm64' else 'Intel/AMD'}); check every tool on the host runs on {after}"
    )


def price_notes(ctx: Context, inst: InstanceLimits) -> list[str]:
    """Say so when the prices are another region's than the cluster's (prices differ by region)."""
    region = ctx.cluster.region
    if inst.price_region is None or inst.price_region == region:
        return []
    return [
        f"prices are {inst.price_region} on-demand; {region} prices differ "
        "(`headroom catalog refresh-instances --prices --region " + region + "` reads them)"
    ]


def instance_upgrade(
    ctx: Context,
    iid: str,
    inst: InstanceLimits,
    need_iops: float,
    need_mibps: float,
    reason: str,
    observed_mibps_p99: float | None = None,
) -> tuple[list[Change], Impact, list[Option]]:
    entity = ctx.entity_for_instance(iid)
    target = smallest_instance_clearing(inst, need_iops, need_mibps)
    if target is None:
        return (
            [],
            Impact(
                summary=f"no larger {inst.family} size clears {format_quantity(need_mibps, 'MiB/s')} / {format_quantity(need_iops, 'IOPS')}"
            ),
            [],
        )
    before, after = inst.monthly_price_usd, target.monthly_price_usd
    delta = round(after - before, 2) if before is not None and after is not None else None
    change = Change(
        target="aws",
        key="instance.type",
        current=inst.name,
        proposed=target.name,
        online=False,  # stop / modify-instance-attribute / start (a rolling restart of this TiKV)
        reason=reason,
        entity=entity,
    )
    volumes = ctx.attached_volumes_ceiling(iid, "throughput")
    volumes_mibps = volumes.value if volumes is not None else None
    impact = Impact(
        summary=(
            f"sustained EBS {format_quantity(inst.baseline_throughput_mibps, 'MiB/s')} -> {format_quantity(target.baseline_throughput_mibps, 'MiB/s')}, "
            f"{format_quantity(inst.baseline_iops, 'IOPS')} -> {format_quantity(target.baseline_iops, 'IOPS')}"
            + (f"; {format_usd_change(delta)}/month ({inst.price_label})" if delta is not None else "; price unknown")
        ),
        metric="instance sustained EBS throughput",
        unit="MiB/s",
        before=inst.baseline_throughput_mibps,
        after=target.baseline_throughput_mibps,
        # against the smaller of the instance's own limit and its volumes' together, as the what-if's instance row
        headroom_before_pct=headroom_pct(observed_mibps_p99, inst.baseline_throughput_mibps, volumes_mibps)
        if observed_mibps_p99 is not None
        else None,
        headroom_after_pct=headroom_pct(observed_mibps_p99, target.baseline_throughput_mibps, volumes_mibps)
        if observed_mibps_p99 is not None
        else None,
        monthly_cost_before_usd=round(before, 2) if before is not None else None,
        monthly_cost_after_usd=round(after, 2) if after is not None else None,
        monthly_cost_delta_usd=delta,
        price_region=inst.price_region if delta is not None else None,
    )
    # Another family may cut one of the instance's EBS limits while raising the other: such a cut keeps the peak
    # of the lookback with the same margin, and waits while the history is shorter (rules/_lookback.py).
    judged = judge_cut(ctx, "instance", iid, 0.0, None, 0.0, None)
    cut_iops = max(need_iops, judged.iops / TARGET_UTILISATION)
    cut_mibps = max(need_mibps, judged.mibps / TARGET_UTILISATION)
    alternatives = []
    held = False
    for alt in cheaper_alternatives(inst, need_iops, need_mibps, exclude=target.name):
        cuts = alt.baseline_iops < inst.baseline_iops or alt.baseline_throughput_mibps < inst.baseline_throughput_mibps
        if cuts and judged.held:
            held = True
        elif not cuts or (alt.baseline_iops >= cut_iops and alt.baseline_throughput_mibps >= cut_mibps):
            alternatives.append(alt)
    held_note = [f"a family with a lower EBS limit than {inst.name}'s is held: {judged.held_text()}"] if held else []
    options = [
        Option(
            label=f"{inst.name} -> {target.name} (same family)",
            changes=[change],
            impact=impact,
            notes=[*price_notes(ctx, inst), *held_note],
        )
    ]
    for alt in alternatives:
        alt_delta = (
            round(alt.monthly_price_usd - before, 2)
            if (before is not None and alt.monthly_price_usd is not None)
            else None
        )
        notes = ["another family: check CPU and memory per vCPU for TiKV"]
        arch_note = architecture_change_note(inst, alt)
        if arch_note is not None:
            notes.append(arch_note)
        notes.extend(price_notes(ctx, inst))
        options.append(
            Option(
                label=f"{inst.name} -> {alt.name}",
                changes=[change.model_copy(update={"proposed": alt.name})],
                impact=Impact(
                    summary=(
                        f"sustained EBS {format_quantity(inst.baseline_throughput_mibps, 'MiB/s')} -> "
                        f"{format_quantity(alt.baseline_throughput_mibps, 'MiB/s')}"
                        + (f"; {format_usd_change(alt_delta)}/month ({inst.price_label})" if alt_delta is not None else "")
                    ),
                    metric="instance sustained EBS throughput",
                    unit="MiB/s",
                    before=inst.baseline_throughput_mibps,
                    after=alt.baseline_throughput_mibps,
                    monthly_cost_before_usd=round(before, 2) if before is not None else None,
                    monthly_cost_after_usd=round(alt.monthly_price_usd, 2)
                    if alt.monthly_price_usd is not None
                    else None,
                    monthly_cost_delta_usd=alt_delta,
                    price_region=inst.price_region if alt_delta is not None else None,
                ),
                notes=notes,
            )
        )
    return [change], impact, options
