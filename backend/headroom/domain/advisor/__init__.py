"""The advisor (pure): a cluster snapshot in, findings out. See engine.py, finding.py, context.py."""

from headroom.domain.advisor.context import Context
from headroom.domain.advisor.engine import Rule, advise, discover_rules, resolve_conflicts, rule_catalog
from headroom.domain.advisor.finding import (
    Evidence,
    Finding,
    Impact,
    Measure,
    Option,
    ReferenceLine,
    SeriesRef,
    make_dedup_key,
)
from headroom.domain.model import Change, EntityRef

__all__ = [
    "Change",
    "Context",
    "EntityRef",
    "Evidence",
    "Finding",
    "Impact",
    "Measure",
    "Option",
    "ReferenceLine",
    "Rule",
    "SeriesRef",
    "advise",
    "discover_rules",
    "make_dedup_key",
    "resolve_conflicts",
    "rule_catalog",
]
