"""Storage physics (pure): I/O accounting, credit buckets (gp2, st1/sc1, instance EBS), node ceilings."""

from headroom.domain.physics.burst import (
    CreditBucket,
    Gp2Bucket,
    HddThroughputBucket,
    InstanceEbsBucket,
    gp2_burst_duration_seconds,
    gp2_refill_seconds,
    gp2_seconds_to_empty,
    volume_bucket,
)
from headroom.domain.physics.ceilings import EffectiveCeiling, NodeCeilings, node_ceilings
from headroom.domain.physics.io import (
    BindingLimit,
    IoProfile,
    binding_limit,
    io_profile,
    volume_binding_limit,
)

__all__ = [
    "BindingLimit",
    "EffectiveCeiling",
    "CreditBucket",
    "Gp2Bucket",
    "HddThroughputBucket",
    "InstanceEbsBucket",
    "IoProfile",
    "NodeCeilings",
    "binding_limit",
    "gp2_burst_duration_seconds",
    "gp2_refill_seconds",
    "gp2_seconds_to_empty",
    "io_profile",
    "node_ceilings",
    "volume_binding_limit",
    "volume_bucket",
]
