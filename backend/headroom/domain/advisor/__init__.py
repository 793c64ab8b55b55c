"""The advisor (pure): a cluster snapshot in, findings out. See engine.py, finding.py, context.py; the evidence,
impact and severity vocabulary is headroom.domain.model's."""

from headroom.domain.advisor.context import Context
from headroom.domain.advisor.engine import Rule, advise, discover_rules, resolve_conflicts, rule_catalog
from headroom.domain.advisor.finding import EntityRef, Finding, Option, ProposedChange, make_dedup_key

__all__ = [
    "Context",
    "EntityRef",
    "Finding",
    "Option",
    "ProposedChange",
    "Rule",
    "advise",
    "discover_rules",
    "make_dedup_key",
    "resolve_conflicts",
    "rule_catalog",
]
