"""A tikv.toml value in words for people (the change ledger, the weekly email): as TiKV's config writes it, and an
absent value said as such, with the version's default when it is known."""

from __future__ import annotations

from typing import Any

from headroom.domain.tikvconf.defaults import HostFacts, default_value
from headroom.domain.tikvconf.errors import TikvConfError
from headroom.domain.tikvconf.keys import known_keys
from headroom.domain.units import format_size, setting_text


def config_value_text(key: str, value: Any, default: Any = None) -> str:
    """Write a tikv.toml value as the config writes it: a size in its binary unit ("8GiB", also when it is held as
    bytes; "14745MiB (14.4 GiB)" from 1 GiB on, as setting_text reads a size), true/false, 4, ["no", "lz4"]; an absent value as "not set", with `default` when it is known
    ("not set (TiKV default 8GiB)")."""
    if value is None:
        return "not set" if default is None else f"not set (TiKV default {config_value_text(key, default)})"
    spec = known_keys().get(key)
    if (spec is not None and spec.kind == "size" and isinstance(value, int) and not isinstance(value, bool)
            and value >= 0):
        value = format_size(value)  # "14745MiB", which setting_text reads as "14745MiB (14.4 GiB)"
    return setting_text(key, value)


def known_default(key: str, version: str | None, hosts: list[HostFacts | None],
                  config: dict[str, Any] | None = None) -> Any:
    """The version's default of `key`, when every host given computes the same one; else None (not known)."""
    values = []
    for host in hosts or [None]:
        try:
            effective = default_value(key, version, host, config)
        except TikvConfError:
            return None
        if effective.value is None:
            return None
        values.append(effective.value)
    first = values[0]
    return first if all(v == first for v in values) else None
