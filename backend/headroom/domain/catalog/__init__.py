"""The catalog of AWS limits and prices: EBS volume types, EC2 instance EBS limits, EBS prices (pure data)."""

from headroom.domain.catalog.errors import CatalogError, UnknownInstanceType, UnknownVolumeType
from headroom.domain.catalog.instance_types import InstanceLimits, instance_limits, list_instance_types
from headroom.domain.catalog.prices import CostBreakdown, ebs_monthly_cost
from headroom.domain.catalog.volume_types import (
    PROVISIONED_IOPS_TYPES,
    PROVISIONED_THROUGHPUT_TYPES,
    VolumeLimits,
    list_volume_types,
    volume_limits,
    volume_type_spec,
)

__all__ = [
    "PROVISIONED_IOPS_TYPES",
    "PROVISIONED_THROUGHPUT_TYPES",
    "CatalogError",
    "CostBreakdown",
    "InstanceLimits",
    "UnknownInstanceType",
    "UnknownVolumeType",
    "VolumeLimits",
    "ebs_monthly_cost",
    "instance_limits",
    "list_instance_types",
    "list_volume_types",
    "volume_limits",
    "volume_type_spec",
]
