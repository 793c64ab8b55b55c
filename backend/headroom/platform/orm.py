"""The ORM base: a declarative base with a naming convention so constraint names (and migrations) are stable,
and the column helpers every feature's models.py uses."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from sqlalchemy import DateTime, Enum, ForeignKey, MetaData, func
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

from headroom.domain.model import Change

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {dt.datetime: DateTime(timezone=True)}


def uuid_pk() -> Mapped[uuid.UUID]:
    return mapped_column(primary_key=True, default=uuid.uuid4)


def created_at_column() -> Mapped[dt.datetime]:
    return mapped_column(DateTime(timezone=True), server_default=func.now(), nullable=False)


# What a finding or a time series is recorded against (a TiKV node is `tikv_node` in the tables); shared by the
# findings and the series tables, so it sits below both.
ENTITY_KINDS = ("cluster", "tikv_node", "instance", "volume")


def enum_column(name: str, values: tuple[str, ...]) -> Enum:
    # VARCHAR + CHECK instead of native PG enums: adding a value later is a plain migration.
    return Enum(*values, name=name, native_enum=False, create_constraint=True, length=32)


def fk_column(target: str, *, nullable: bool = False, ondelete: str = "CASCADE") -> Any:
    return mapped_column(ForeignKey(target, ondelete=ondelete), nullable=nullable, index=True)


class ChangeJSON(TypeDecorator[Change]):
    """A domain Change in a JSONB column: written as its JSON, read back through Change.model_validate."""

    impl = JSONB
    cache_ok = True

    def process_bind_param(self, value: Change | dict[str, Any] | None, dialect: Dialect) -> Any:
        return None if value is None else Change.model_validate(value).model_dump(mode="json")

    def process_result_value(self, value: Any, dialect: Dialect) -> Change | None:
        return None if value is None else Change.model_validate(value)


class ChangeListJSON(TypeDecorator[list[Change]]):
    """A list of domain Changes in a JSONB column (same JSON as ChangeJSON, in order)."""

    impl = JSONB
    cache_ok = True

    def process_bind_param(self, value: list[Change] | None, dialect: Dialect) -> Any:
        if value is None:
            return None
        return [Change.model_validate(c).model_dump(mode="json") for c in value]

    def process_result_value(self, value: Any, dialect: Dialect) -> list[Change] | None:
        return None if value is None else [Change.model_validate(c) for c in value]
