"""The JSON columns of a stored finding, typed: a row's evidence, options, sources, notes, impact and group are the
domain's pydantic models (headroom.domain.model) on the way in and on the way out, so renaming a field of those
models breaks at type-check time in every reader instead of turning into a missing dict key at run time.

Written strictly (an object that does not validate is never stored). Read leniently, because rows outlive the
version that wrote them: a key a later version dropped is ignored, a field added since takes its default, and a
part the current models reject reads as absent (None, or the option left out), logged as
`finding.stored_json_invalid` with the column and pydantic's error locations. The advice run rewrites every
active finding's JSON on its next pass, so only resolved rows keep an old shape.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

from headroom.domain.model import Evidence, FindingGroup, Impact, Option
from headroom.platform.logging import get_logger

log = get_logger("headroom.findings.stored")

M = TypeVar("M", bound=BaseModel)

# The keys kept in the evidence column next to the Evidence fields (the table has no columns for them).
EVIDENCE_EXTRAS = ("options", "sources", "notes")


def _errors(exc: ValidationError) -> list[str]:
    return [f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}" for e in exc.errors()[:5]]


def read_lenient(model: type[M], data: Any, column: str) -> M | None:
    """Validate one stored JSON object: None for an empty one, or (logged) for one the model rejects."""
    if not isinstance(data, dict) or not data:
        return None
    known = {key: value for key, value in data.items() if key in model.model_fields}
    try:
        return model.model_validate(known)
    except ValidationError as exc:
        log.warning("finding.stored_json_invalid", column=column, model=model.__name__, errors=_errors(exc))
        return None


class StoredEvidence(BaseModel):
    """A finding's evidence column: the advisor's Evidence and, next to its fields, the finding's ranked options,
    its sources and notes (one JSON object: the Evidence's keys plus `options`, `sources`, `notes`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    evidence: Evidence | None = None
    options: tuple[Option, ...] = ()
    sources: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Return the column's JSON: the Evidence's fields (none without one) and the three lists."""
        out: dict[str, Any] = self.evidence.model_dump(mode="json") if self.evidence is not None else {}
        out["options"] = [o.model_dump(mode="json") for o in self.options]
        out["sources"] = list(self.sources)
        out["notes"] = list(self.notes)
        return out

    @classmethod
    def from_json(cls, data: Any) -> StoredEvidence:
        """Read the column's JSON leniently (see the module): what no longer validates is left out, logged."""
        if not isinstance(data, dict):
            return cls()
        rest = dict(data)
        extras = {key: rest.pop(key, None) for key in EVIDENCE_EXTRAS}
        options = [read_lenient(Option, o, "findings.evidence.options") for o in extras["options"] or ()]
        return cls(
            evidence=read_lenient(Evidence, rest, "findings.evidence"),
            options=tuple(o for o in options if o is not None),
            sources=tuple(str(s) for s in extras["sources"] or ()),
            notes=tuple(str(n) for n in extras["notes"] or ()),
        )


class StoredEvidenceJSON(TypeDecorator[StoredEvidence]):
    """The evidence column: a StoredEvidence in, the same out (JSON shape: StoredEvidence.to_json)."""

    impl = JSONB
    cache_ok = True

    def process_bind_param(self, value: StoredEvidence | None, dialect: Dialect) -> Any:
        return (value if value is not None else StoredEvidence()).to_json()

    def process_result_value(self, value: Any, dialect: Dialect) -> StoredEvidence:
        return StoredEvidence.from_json(value)


class _PartJSON(TypeDecorator[M], Generic[M]):
    """A nullable finding part (a domain model) in a JSONB column."""

    impl = JSONB
    cache_ok = True
    model: type[M]
    column: str

    def process_bind_param(self, value: M | None, dialect: Dialect) -> Any:
        return None if value is None else self.model.model_validate(value).model_dump(mode="json")

    def process_result_value(self, value: Any, dialect: Dialect) -> M | None:
        return read_lenient(self.model, value, self.column)


class ImpactJSON(_PartJSON[Impact]):
    """The impact column: an Impact, or none (stored as {}: the column is NOT NULL)."""

    cache_ok = True
    model = Impact
    column = "findings.impact"

    def process_bind_param(self, value: Impact | None, dialect: Dialect) -> Any:
        return {} if value is None else super().process_bind_param(value, dialect)


class FindingGroupJSON(_PartJSON[FindingGroup]):
    """The finding_group column: the domain FindingGroup with every key as stored, or NULL."""

    cache_ok = True
    model = FindingGroup
    column = "findings.finding_group"
