"""Errors raised by the tikv.toml patcher; each carries a one-line message the API and CLI can show as-is."""

from __future__ import annotations

from typing import Any


class TikvConfError(ValueError):
    """Base class: bad input to tikvconf (a config, a key, a value, a format)."""


class ConfigParseError(TikvConfError):
    """A config document could not be parsed; `line` and `column` are 1-based (0 when unknown)."""

    def __init__(self, message: str, line: int = 0, column: int = 0, source: str = "tikv.toml") -> None:
        self.message = message
        self.line = line
        self.column = column
        self.source = source
        where = f"{source} line {line}, column {column}: " if line else f"{source}: "
        super().__init__(where + message)

    def __reduce__(self) -> tuple[Any, ...]:
        # pickled as built (a parse run in another process raises it in the API's): line and column kept
        return (ConfigParseError, (self.message, self.line, self.column, self.source))


class ConfigTooLarge(ConfigParseError):
    """A config document is over the size limit; refused before parsing (domain/tikvconf/limits.py)."""

    def __init__(self, size: int, limit: int, source: str, *, at_least: bool = False) -> None:
        self.size = size
        self.limit = limit
        over = "at least " if at_least else ""
        self.at_least = at_least
        super().__init__(
            f"the file is {over}{size:,} bytes; the limit is {limit:,} bytes ({limit // 1024:,} KiB)", 0, 0, source
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (_too_large, (self.size, self.limit, self.source, self.at_least))


def _too_large(size: int, limit: int, source: str, at_least: bool) -> ConfigTooLarge:
    return ConfigTooLarge(size, limit, source, at_least=at_least)


class UnknownConfigKey(TikvConfError):
    """A change names a key that TiKV does not have (not in the config template)."""

    def __init__(self, key: str, suggestions: tuple[str, ...] = ()) -> None:
        self.key = key
        self.suggestions = suggestions
        hint = f" (did you mean {', '.join(suggestions)}?)" if suggestions else ""
        super().__init__(f"unknown TiKV config key {key!r}{hint}")


class InvalidChangeValue(TikvConfError):
    """A change's proposed value does not fit the key (e.g. a size key given 'lots')."""


class UnknownFormat(TikvConfError):
    """An artefact format that render does not know."""


class PatchConflict(TikvConfError):
    """The patch cannot be applied to this document without touching something else."""
