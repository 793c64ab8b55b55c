"""Schema building blocks shared by the API's request and response models."""

from __future__ import annotations

import datetime as dt
import functools
import types
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Union, get_args, get_origin

import regex

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    EmailStr,
    Field,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    field_validator,
)
from pydantic_core import PydanticCustomError

# PostgreSQL integer and bigint ranges: a larger number can't be compared with or stored in such a column.
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1


# Instants a request may name (metric windows, snooze times, expiries): Headroom's data starts long after 2000
# and nothing it schedules reaches 2100; outside that, date arithmetic (a window's default start) could overflow.
EARLIEST = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)
LATEST = dt.datetime(2100, 1, 1, tzinfo=dt.UTC)


def _in_range(value: dt.datetime) -> dt.datetime:
    aware = value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)
    if not EARLIEST <= aware < LATEST:
        raise PydanticCustomError("datetime_out_of_range", "must be between 2000-01-01 and 2100-01-01 (UTC)")
    return value


Instant = Annotated[dt.datetime, AfterValidator(_in_range)]


def pattern_described(expected: str) -> WrapValidator:
    """Put after a Field(pattern=...) in an Annotated str: a value that does not match is refused with a message
    that says in words what is expected ("expected an AWS region code like us-east-1"), never the regular
    expression; the OpenAPI document still carries the pattern."""

    def explain(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        try:
            return handler(value)
        except ValidationError as exc:
            if any(e["type"] == "string_pattern_mismatch" for e in exc.errors()):
                raise PydanticCustomError("string_pattern_mismatch", "expected {expected}",
                                          {"expected": expected}) from None
            raise

    return WrapValidator(explain)


def _email_problem(value: Any, reason: str) -> str:
    """email-validator's reason in words a person acts on (its special-use message names no domain)."""
    if "special-use or reserved name" in reason and isinstance(value, str) and "@" in value:
        domain = value.rsplit("@", 1)[1].strip().rstrip(".")
        return (f"{domain} is a special-use domain (like .test, .invalid, .local or localhost: RFC 6761) that can "
                "never receive email; use an address at a real domain")
    return reason[:1].lower() + reason[1:].rstrip(".")


def _explain_email(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    try:
        return handler(value)
    except ValidationError as exc:
        for error in exc.errors():
            reason = (error.get("ctx") or {}).get("reason")
            if error["type"] == "value_error" and reason:
                raise PydanticCustomError("email_invalid", "not a valid email address: {problem}",
                                          {"problem": _email_problem(value, str(reason))}) from None
        raise


# An email address (email-validator's checks, as EmailStr), refused with one sentence that says what is wrong.
Email = Annotated[EmailStr, WrapValidator(_explain_email)]


# --- names as a person sees them ---------------------------------------------------------------------------
#
# A name's length is what the page shows: user-perceived characters (Unicode extended grapheme clusters, UAX #29,
# https://www.unicode.org/reports/tr29/), as the browser's Intl.Segmenter counts them, not code points: "👍🏽" is
# one character but two code points, "é" written as e + U+0301 one character but two. Names are stored NFC
# (UAX #15) and refuse control characters (Unicode category Cc: NUL, U+0002, tabs, newlines), which no name needs
# and which would break the YAML and shell artefacts that quote a cluster's name. The columns hold
# STORED_PER_SHOWN code points per shown character, which the OpenAPI document gives as maxLength.
STORED_PER_SHOWN = 4
_GRAPHEME = regex.compile(r"\X")


def shown_length(text: str) -> int:
    """The number of characters a person sees in `text` (extended grapheme clusters)."""
    return len(_GRAPHEME.findall(text))


def _name_checker(max_chars: int) -> Callable[[str], str]:
    def check(value: str) -> str:
        value = unicodedata.normalize("NFC", value)
        control = next((c for c in value if unicodedata.category(c) == "Cc"), None)
        if control is not None:
            raise PydanticCustomError("name_control_character",
                                      "must not contain control characters (found U+{code})",
                                      {"code": f"{ord(control):04X}"})
        shown = shown_length(value)
        if shown > max_chars:
            raise PydanticCustomError("name_too_long", "must be at most {max} characters (it has {shown})",
                                      {"max": max_chars, "shown": shown})
        return value

    return check


def _name_field(max_chars: int) -> Any:
    return Field(max_length=max_chars * STORED_PER_SHOWN,
                 description=f"At most {max_chars} characters as shown (extended grapheme clusters; up to "
                 f"{max_chars * STORED_PER_SHOWN} code points); no control characters.")


# A name or label: at most so many characters as shown, NFC, no control characters.
Name100 = Annotated[str, _name_field(100), AfterValidator(_name_checker(100))]
Name200 = Annotated[str, _name_field(200), AfterValidator(_name_checker(200))]


def _accepts_null(annotation: Any) -> bool:
    if annotation is None or annotation is Any or annotation is type(None):
        return True
    return get_origin(annotation) in (Union, types.UnionType) and type(None) in get_args(annotation)


def _is_only(annotation: Any, kind: type) -> bool:
    """Whether a field's type is `kind`, or `kind | None`."""
    if annotation is kind:
        return True
    return (get_origin(annotation) in (Union, types.UnionType)
            and {a for a in get_args(annotation) if a is not type(None)} == {kind})


def _drop_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


def Omittable(**constraints: Any) -> Any:  # noqa: N802 - used like pydantic's Field
    """An update field that may be omitted (the stored value is kept) but not sent as null: give it a type without
    None. The OpenAPI document shows it as optional and not nullable; an explicit null is a 422 naming the field."""
    return Field(default=None, json_schema_extra=_drop_default, **constraints)


class Input(BaseModel):
    """Base for request bodies: unknown fields are an error, not silently dropped; null is refused for a field
    whose type has no None (an `Omittable` field of an update), with a message naming it."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    @field_validator("*", mode="before")
    @classmethod
    def _refuse_null(cls, value: Any, info: ValidationInfo) -> Any:
        if info.field_name is None:
            return value
        kind = _field_kind(cls, info.field_name)
        if value is None:
            if not kind.accepts_null:
                raise PydanticCustomError("null_not_allowed", "cannot be null; omit the field to keep its current value"
                                          if kind.omittable else "cannot be null")
            return value
        # A JSON boolean is true or false: pydantic's lax mode would read 0, 1, "yes", "off" as one, so a client
        # sending `"include_viewers": 0` would be answered as if it had meant false.
        if kind.boolean and not isinstance(value, bool):
            raise PydanticCustomError("bool_type", "must be true or false (a JSON boolean)")
        # and a JSON number is not true or false: lax mode would read `"days": true` as 1 day
        if kind.number and isinstance(value, bool):
            raise PydanticCustomError("number_type", "must be a number, not true or false")
        return value


@dataclass(frozen=True, slots=True)
class _FieldKind:
    accepts_null: bool
    omittable: bool  # its default is None: omitting it keeps the stored value
    boolean: bool  # bool or bool | None
    number: bool  # int or float (or either | None)


@functools.cache
def _field_kind(model: type[BaseModel], name: str) -> _FieldKind:
    """What `Input._refuse_null` checks of one field, read from its annotation once per model class and field."""
    field = model.model_fields[name]
    annotation = field.annotation
    return _FieldKind(accepts_null=_accepts_null(annotation), omittable=field.default is None,
                      boolean=_is_only(annotation, bool), number=_is_only(annotation, int) or _is_only(annotation, float))


class Output(BaseModel):
    model_config = ConfigDict(from_attributes=True)


class ErrorBody(BaseModel):
    code: str
    message: str = Field(description="For people: one sentence naming the field in words (\"Prometheus URL: ...\", "
                         "\"Change 1: ...\"), never its machine path.")
    details: Any = Field(default=None, description="For programs: a 422's fields as `field` (the path, e.g. "
                         "changes[0]) and, for a request that failed validation, `loc` (the location list) and "
                         "`label` (the field in words).")


class ErrorResponse(BaseModel):
    error: ErrorBody
