"""tikvconf: parse, patch and render TiKV configuration (pure: no database, no network, no clock).

The API and CLI call `artefact(patch, format, config_text=..., node=..., rollback=...)`; a Patch holds the
domain's Change records (headroom.domain.model) as the advisor's rules made them, so this package never
imports the advisor and never learns what a finding is.
"""

from headroom.domain.model import Change
from headroom.domain.tikvconf.change import Patch, PatchTarget, pd_url_of, resolve_nodes, target_node
from headroom.domain.tikvconf.defaults import (
    EffectiveValue,
    HostFacts,
    default_value,
    effective_value,
    fill_current,
    parse_version,
)
from headroom.domain.tikvconf.errors import (
    ConfigParseError,
    InvalidChangeValue,
    PatchConflict,
    TikvConfError,
    UnknownConfigKey,
    UnknownFormat,
)
from headroom.domain.tikvconf.keys import is_valid_key, known_keys, require_valid_key, template_keys
from headroom.domain.tikvconf.online import can_change_online, online_status
from headroom.domain.tikvconf.parse import (
    config_json_view,
    parse_toml,
    same_value,
    tiup_topology_view,
    toml_view,
    unknown_keys,
)
from headroom.domain.tikvconf.patch import AppliedPatch, Rollback, apply_changes, apply_rollback
from headroom.domain.tikvconf.render import FORMATS, ROLLBACK_HELP, Artefact, artefact, artefacts

__all__ = [
    "FORMATS",
    "ROLLBACK_HELP",
    "AppliedPatch",
    "Artefact",
    "Change",
    "ConfigParseError",
    "EffectiveValue",
    "HostFacts",
    "InvalidChangeValue",
    "PatchTarget",
    "Patch",
    "PatchConflict",
    "Rollback",
    "TikvConfError",
    "UnknownConfigKey",
    "UnknownFormat",
    "apply_changes",
    "apply_rollback",
    "artefact",
    "artefacts",
    "can_change_online",
    "config_json_view",
    "default_value",
    "effective_value",
    "fill_current",
    "is_valid_key",
    "known_keys",
    "online_status",
    "parse_toml",
    "parse_version",
    "require_valid_key",
    "pd_url_of",
    "resolve_nodes",
    "same_value",
    "target_node",
    "template_keys",
    "tiup_topology_view",
    "toml_view",
    "unknown_keys",
]
