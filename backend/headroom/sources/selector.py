"""PromQL label selectors: the syntax of a Prometheus source's `label_selector` (e.g. `tidb_cluster="prod"`).

Pure (no network, no clock). The sources service validates a selector with it when a source is saved; the
Prometheus collector (`headroom.sources.prometheus.promql`) builds its queries from the parsed matchers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

MatchOp = Literal["=", "!=", "=~", "!~"]

_LABEL_NAME = r"[a-zA-Z_][a-zA-Z0-9_]*"
_MATCHER = re.compile(rf"\s*({_LABEL_NAME})\s*(=~|!~|!=|=)\s*\"((?:[^\"\\]|\\.)*)\"\s*(?:,|$)")


class SelectorError(ValueError):
    """A label selector that is not a list of PromQL label matchers."""


@dataclass(frozen=True)
class Matcher:
    """One PromQL label matcher, e.g. `tidb_cluster="prod"`."""

    name: str
    op: MatchOp
    value: str

    def render(self) -> str:
        """Return the matcher as PromQL text."""
        escaped = self.value.replace("\\", "\\\\").replace('"', '\\"')
        return f'{self.name}{self.op}"{escaped}"'

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Say whether a label set satisfies the matcher (regexes are anchored, as in PromQL)."""
        actual = labels.get(self.name, "")
        if self.op == "=":
            return actual == self.value
        if self.op == "!=":
            return actual != self.value
        found = re.fullmatch(self.value, actual) is not None
        return found if self.op == "=~" else not found


def parse_selector(text: str) -> tuple[Matcher, ...]:
    """Parse `a="x", b=~"y.*"` (braces optional) into matchers; raise SelectorError on anything else."""
    body = text.strip()
    if body.startswith("{") and body.endswith("}"):
        body = body[1:-1].strip()
    matchers: list[Matcher] = []
    pos = 0
    while pos < len(body):
        match = _MATCHER.match(body, pos)
        if match is None:
            raise SelectorError(
                f'label selector: expected name="value" (or !=, =~, !~) at character {pos + 1}: '
                f"{body[pos : pos + 30]!r}"
            )
        name, op, raw = match.groups()
        value = re.sub(r"\\(.)", r"\1", raw)
        if op in ("=~", "!~"):
            try:
                re.compile(value)
            except re.error as error:
                raise SelectorError(f"label selector: bad regex for {name}: {error}") from None
        matchers.append(Matcher(name, op, value))  # type: ignore[arg-type]
        pos = match.end()
    return tuple(matchers)


def render_selector(matchers: Iterable[Matcher]) -> str:
    """Render matchers as the inside of a PromQL selector (no braces)."""
    return ",".join(m.render() for m in matchers)


def matches_all(matchers: Iterable[Matcher], labels: Mapping[str, str]) -> bool:
    """Say whether a label set satisfies every matcher."""
    return all(m.matches(labels) for m in matchers)
