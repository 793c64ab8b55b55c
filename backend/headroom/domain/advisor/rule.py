"""An advisor rule: a stable id, what it proposes, and a pure evaluate(ctx) -> findings. Rules and the engine both
import this module; neither imports the other's internals."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from headroom.domain.advisor.context import Context
from headroom.domain.advisor.finding import Finding


@dataclass(frozen=True)
class Rule:
    """One advisor rule: a stable id, what it proposes, and a pure evaluate(ctx) -> findings."""

    id: str
    description: str
    evaluate: Callable[[Context], list[Finding]]
    family: str = ""
    tikv_keys: tuple[str, ...] = ()
    aws_actions: tuple[str, ...] = ()
    supersedes: tuple[str, ...] = ()
    sources: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON shape `headroom rules --json` prints."""
        return {
            "id": self.id,
            "family": self.family,
            "description": self.description,
            "tikv_keys": list(self.tikv_keys),
            "aws_actions": list(self.aws_actions),
            "supersedes": list(self.supersedes),
            "sources": list(self.sources),
        }


class RuleDiscoveryError(RuntimeError):
    """Two rules share an id, or a rules module exposes something that is not a Rule."""
