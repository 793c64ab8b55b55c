"""Advisor rules, one module per family; each module exposes `RULES: Sequence[Rule]` (see README.md).

RULE_MODULES is the explicit list the engine reads: a new rule module is added here (no discovery)."""

from headroom.domain.advisor.rules import (
    block_cache,
    block_size,
    burst,
    compaction,
    cost,
    disk,
    instance_ebs,
    projected,
    raft,
    thread_pools,
    titan,
    volume_ceilings,
)

RULE_MODULES = (
    block_cache,
    block_size,
    burst,
    compaction,
    cost,
    disk,
    instance_ebs,
    projected,
    raft,
    thread_pools,
    titan,
    volume_ceilings,
)
