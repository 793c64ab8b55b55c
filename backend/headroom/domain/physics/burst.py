"""Credit buckets: gp2 I/O credits, st1/sc1 throughput credits, and the instance-level EBS burst.

One model serves all three (a token bucket): credits are earned at the baseline rate and spent at the served
rate, so the balance moves at (baseline - served) per second, bounded by [0, capacity]. While credits remain
the bucket serves up to its burst rate; once empty it serves at most the baseline.

- gp2 (docs/reference/gp2-burst.md#the-credit-bucket, AWS "General Purpose SSD volumes"): capacity 5.4 million I/O credits, earned at 3
  credits/GiB/s (= the baseline IOPS), burst to 3,000 IOPS; volumes whose baseline is >= 3,000 (>= 1 TiB) do
  not burst. `Burst duration = credit_balance / (3000 - baseline)`; refill from empty = 5.4e6 / baseline.
- st1/sc1 (docs/reference/ebs-volume-types.md#limits-per-volume-type, docs/reference/gp2-burst.md#st1-and-sc1-throughput-credits, AWS "Throughput Optimized HDD and Cold HDD volumes"): throughput credits in MiB, 1 TiB of credits per TiB of volume,
  earned at the baseline (40 / 12 MiB/s per TiB), burst to 250 / 80 MiB/s per TiB, capped at 500 / 250
  MiB/s.
- Instance EBS burst (docs/reference/ec2-ebs-limits.md#the-burst-rule, docs/reference/cloudwatch.md#instance-ebs-metrics: EBSIOBalance% / EBSByteBalance%): AWS documents only that the asterisk
  sizes "can support maximum performance for 30 minutes at least once every 24 hours". Model (an
  approximation, not an AWS formula): a bucket sized so that a full bucket sustains the maximum for 30
  minutes while earning at the baseline, capacity = 1,800 s × (maximum - baseline), refilled at the baseline
  rate when demand is below it. AWS guarantees only "once every 24 hours", so real refills may be slower
  than this model says.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from headroom.domain.catalog.volume_types import GP2_BURST_IOPS, VOLUME_TYPES, gp2_baseline_iops
from headroom.domain.units import gib_to_tib

if TYPE_CHECKING:
    from headroom.domain.catalog.instance_types import InstanceLimits
    from headroom.domain.catalog.volume_types import VolumeLimits

GP2_BUCKET_CREDITS = 5_400_000.0  # docs/reference/gp2-burst.md#the-credit-bucket "up to 5.4 million I/O credits"
HDD_CREDIT_MIB_PER_GIB = 1024.0  # docs/reference/gp2-burst.md#st1-and-sc1-throughput-credits "1 TiB of credits per TiB of volume" = 1,024 MiB per GiB
INSTANCE_BURST_SECONDS = 30 * 60  # docs/reference/ec2-ebs-limits.md#the-burst-rule "maximum performance for 30 minutes"


@dataclass(frozen=True)
class CreditBucket:
    """A credit bucket: `baseline_rate` earned per second, up to `burst_rate` served while credits remain."""

    kind: str
    unit: str  # "IOPS" or "MiB/s"; credits are unit × seconds (I/Os or MiB)
    capacity: float
    baseline_rate: float
    burst_rate: float

    @property
    def bursts(self) -> bool:
        """Whether the bucket ever lets demand above the baseline through."""
        return self.capacity > 0 and self.burst_rate > self.baseline_rate

    def credits_from_percent(self, balance_percent: float) -> float:
        """Convert a balance percentage (BurstBalance, EBSIOBalance%) to credits."""
        if not 0 <= balance_percent <= 100:
            raise ValueError(f"balance percent must be 0-100, got {balance_percent}")
        return self.capacity * balance_percent / 100.0

    def percent(self, balance_credits: float) -> float:
        """Convert credits to a balance percentage (100 for a bucket of zero capacity)."""
        if self.capacity <= 0:
            return 100.0
        return 100.0 * self._clamp(balance_credits) / self.capacity

    def _clamp(self, balance: float) -> float:
        return min(max(balance, 0.0), self.capacity)

    def served_rate(self, balance_credits: float, demand: float) -> float:
        """Return the rate served right now: the demand, capped at burst with credits, at baseline without."""
        cap = self.burst_rate if self._clamp(balance_credits) > 0 and self.bursts else self.baseline_rate
        return min(max(demand, 0.0), cap)

    def step(self, balance_credits: float, demand: float, dt_seconds: float) -> tuple[float, float]:
        """Advance the bucket `dt_seconds` at a constant demand; return (new balance, mean served rate)."""
        if dt_seconds < 0:
            raise ValueError("dt_seconds must be non-negative")
        if demand < 0:
            raise ValueError("demand must be non-negative")
        balance = self._clamp(balance_credits)
        if dt_seconds == 0:
            return balance, self.served_rate(balance, demand)
        target = min(demand, self.burst_rate) if self.bursts else min(demand, self.baseline_rate)
        if target <= self.baseline_rate:
            return self._clamp(balance + (self.baseline_rate - target) * dt_seconds), target
        drain = target - self.baseline_rate
        t_empty = balance / drain
        if t_empty >= dt_seconds:
            return self._clamp(balance - drain * dt_seconds), target
        # The bucket empties inside the step: burst until empty, then the baseline for the rest.
        # Written as the baseline plus the burst's share of the step, so a tiny step (a subnormal dt) cannot
        # underflow the baseline away (target x t + baseline x (dt - t)) / dt did: Hypothesis found dt = 5e-324.
        served = self.baseline_rate + drain * (t_empty / dt_seconds)
        return 0.0, served

    def seconds_to_empty(self, balance_credits: float, demand: float | None = None) -> float | None:
        """Seconds to empty at a constant demand (default: full burst); None if it never drains."""
        rate = self.burst_rate if demand is None else demand
        target = min(rate, self.burst_rate) if self.bursts else min(rate, self.baseline_rate)
        if target <= self.baseline_rate:
            return None
        return self._clamp(balance_credits) / (target - self.baseline_rate)

    def refill_seconds(self, balance_credits: float, demand: float = 0.0) -> float | None:
        """Seconds from a balance to full at a constant demand (default idle); None if it never fills."""
        if not self.bursts:
            return None  # no bucket to refill (gp2 >= 1 TiB: "n/a" in the docs/reference/gp2-burst.md#worked-durations table)
        missing = self.capacity - self._clamp(balance_credits)
        if missing <= 0:
            return 0.0
        if demand >= self.baseline_rate:
            return None
        return missing / (self.baseline_rate - max(demand, 0.0))


@dataclass(frozen=True)
class Gp2Bucket(CreditBucket):
    """The gp2 I/O credit bucket of one volume (docs/reference/gp2-burst.md#the-credit-bucket)."""

    size_gib: float = 0.0

    @classmethod
    def for_size(cls, size_gib: float) -> Gp2Bucket:
        """Build the bucket of a gp2 volume of this size."""
        baseline = gp2_baseline_iops(size_gib)
        return cls(
            kind="gp2",
            unit="IOPS",
            capacity=GP2_BUCKET_CREDITS,
            baseline_rate=baseline,
            burst_rate=max(float(GP2_BURST_IOPS), baseline),
            size_gib=float(size_gib),
        )


def drain_demand(served: NDArray[np.float64], baseline: float) -> float:
    """The demand a bucket drained at: the 95th percentile of the rates served above the baseline (NaN if none).

    The burst rule sizes its fix on it, and the what-if replays a resized gp2 with it where the old bucket was
    empty (there the served rate is the baseline cap, not what the workload asked for)."""
    over = served > baseline * 1.001
    return float(np.nanpercentile(served[over], 95)) if over.any() else float("nan")


def replay_balance(
    bucket: CreditBucket, start_percent: float, demand: NDArray[np.float64], step_seconds: float
) -> NDArray[np.float64]:
    """The balance (percent) a bucket holds after each step of `demand` (NaN: no sample, the balance holds)."""
    credits = bucket.credits_from_percent(min(max(start_percent, 0.0), 100.0))
    out = np.empty(len(demand))
    for i, rate in enumerate(demand):
        if np.isfinite(rate):
            credits, _ = bucket.step(credits, max(float(rate), 0.0), step_seconds)
        out[i] = bucket.percent(credits)
    return out


@dataclass(frozen=True)
class HddThroughputBucket(CreditBucket):
    """The st1/sc1 throughput credit bucket of one volume, in MiB (docs/reference/ebs-volume-types.md#limits-per-volume-type, docs/reference/gp2-burst.md#st1-and-sc1-throughput-credits)."""

    size_gib: float = 0.0

    @classmethod
    def for_volume(cls, volume_type: str, size_gib: float) -> HddThroughputBucket:
        """Build the bucket of an st1 or sc1 volume of this size."""
        spec = VOLUME_TYPES.get(volume_type)
        if spec is None or spec.baseline_mibps_per_tib is None or spec.burst_mibps_per_tib is None:
            raise ValueError(f"{volume_type!r} has no throughput credit bucket (st1 and sc1 do)")
        tib = gib_to_tib(size_gib)
        return cls(
            kind=spec.name,
            unit="MiB/s",
            capacity=HDD_CREDIT_MIB_PER_GIB * size_gib,
            baseline_rate=min(spec.baseline_mibps_per_tib * tib, spec.max_throughput_mibps),
            burst_rate=min(spec.burst_mibps_per_tib * tib, spec.max_throughput_mibps),
            size_gib=float(size_gib),
        )


@dataclass(frozen=True)
class InstanceEbsBucket(CreditBucket):
    """The instance-level EBS burst bucket (EBSIOBalance% or EBSByteBalance%); see the module docstring."""

    instance_type: str = ""

    @classmethod
    def _build(cls, kind: str, unit: str, name: str, baseline: float, maximum: float) -> InstanceEbsBucket:
        extra = max(maximum - baseline, 0.0)
        return cls(
            kind=kind,
            unit=unit,
            capacity=INSTANCE_BURST_SECONDS * extra,
            baseline_rate=baseline,
            burst_rate=max(maximum, baseline),
            instance_type=name,
        )

    @classmethod
    def for_iops(cls, instance: InstanceLimits) -> InstanceEbsBucket:
        """Build the I/O bucket (EBSIOBalance%) of an instance type, in IOPS."""
        return cls._build("instance-io", "IOPS", instance.name, instance.baseline_iops, instance.max_iops)

    @classmethod
    def for_throughput(cls, instance: InstanceLimits) -> InstanceEbsBucket:
        """Build the byte bucket (EBSByteBalance%) of an instance type, in MiB/s."""
        return cls._build(
            "instance-byte",
            "MiB/s",
            instance.name,
            instance.baseline_throughput_mibps,
            instance.max_throughput_mibps,
        )


def volume_bucket(limits: VolumeLimits) -> CreditBucket | None:
    """Return the credit bucket of a volume (gp2 IOPS, st1/sc1 MiB/s), or None for types without one."""
    if limits.volume_type == "gp2":
        return Gp2Bucket.for_size(limits.size_gib)
    if limits.volume_type in ("st1", "sc1"):
        return HddThroughputBucket.for_volume(limits.volume_type, limits.size_gib)
    return None


def gp2_burst_duration_seconds(credit_balance: float, baseline_iops: float) -> float | None:
    """The documented formula `credit_balance / (3000 - baseline)` (docs/reference/gp2-burst.md#the-credit-bucket); None when baseline >= 3,000."""
    if baseline_iops >= GP2_BURST_IOPS:
        return None
    return credit_balance / (GP2_BURST_IOPS - baseline_iops)


def _gp2_balance(bucket: CreditBucket, balance_percent: float | None, balance_credits: float | None) -> float:
    if balance_percent is not None and balance_credits is not None:
        raise ValueError("give balance_percent or balance_credits, not both")
    if balance_credits is not None:
        return balance_credits
    return bucket.credits_from_percent(100.0 if balance_percent is None else balance_percent)


def gp2_seconds_to_empty(
    size_gib: float,
    demand_iops: float = GP2_BURST_IOPS,
    *,
    balance_percent: float | None = None,
    balance_credits: float | None = None,
) -> float | None:
    """Seconds a gp2 volume sustains `demand_iops` from a balance (default full); None if it never drains."""
    bucket = Gp2Bucket.for_size(size_gib)
    return bucket.seconds_to_empty(_gp2_balance(bucket, balance_percent, balance_credits), demand_iops)


def gp2_refill_seconds(
    size_gib: float,
    *,
    balance_percent: float | None = None,
    balance_credits: float | None = None,
    demand_iops: float = 0.0,
) -> float | None:
    """Seconds for a gp2 bucket to refill from a balance (default empty) at a demand below baseline."""
    bucket = Gp2Bucket.for_size(size_gib)
    if balance_percent is None and balance_credits is None:
        balance_credits = 0.0
    return bucket.refill_seconds(_gp2_balance(bucket, balance_percent, balance_credits), demand_iops)
