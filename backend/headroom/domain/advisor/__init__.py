"""The advisor (pure): a cluster snapshot in, findings out. See engine.py, finding.py, context.py; the evidence,
impact and severity vocabulary is headroom.domain.model's."""

from headroom.domain.advisor.context import Context
from headroom.domain.advisor.engine import advise, discover_rules, resolve_conflicts, rule_catalog
from headroom.domain.advisor.finding import Finding, make_dedup_key
from headroom.domain.advisor.rule import Rule
from headroom.domain.model import Change, EntityRef, Option

__all__ = [
    "Change",
    "Context",
    "EntityRef",
    "Finding",
    "Option",
    "ReferenceLine",
    "Rule",
    "advise",
    "discover_rules",
    "make_dedup_key",
    "resolve_conflicts",
    "rule_catalog",
]
