"""Render a Patch as the artefacts a user applies: TOML, merged file, diff, TiUP, Operator, SQL, tikv-ctl,
AWS CLI, Terraform, and the rollback of each, all generated together from the same changes.

`artefact(patch, format)` is what the API calls. Each Artefact has a file name, a media type and a text body.
Sources for the command forms:
- SQL: docs/reference/tikv-config.md#set-config, PingCAP "Modify Configuration Dynamically" (`SET CONFIG tikv \\`key\\` = value`, per instance by status address; batch
  changes
  are not atomic, check SHOW WARNINGS; a SET CONFIG change must also go into `tiup cluster edit-config` or a
  later
  `tiup cluster reload/upgrade` overwrites it), via docs/reference/tikv-config.md#keys-and-defaults.
- tikv-ctl: `tikv-ctl --host <ip>:20160 modify-tikv-config -n <name> -v <value>` (cmd/tikv-ctl/src/cmd.rs),
  via
  docs/reference/tikv-config.md#keys-and-defaults; values unquoted like `8MB`, `true`, `1h`.
- TiUP: `server_configs.tikv` takes dotted keys; `tikv_servers[].config` overrides them per instance;
  `tiup cluster reload <cluster> -R tikv` restarts TiKV one instance at a time.
- TiDB Operator (v1.x, `pingcap.com/v1alpha1` TidbCluster): `spec.tikv.config` is a TOML string (`config: |`),
  the
  form the docs use since v1.1 (pingcap/docs-tidb-operator `zh/configure-a-tidb-cluster.md`, TiKV section);
  the older nested-YAML form is deprecated. All TiKV pods share it: per-node values cannot be expressed there.
- AWS: docs/reference/ebs-volume-types.md#elastic-volumes-modifications (up to four modifications per volume in a rolling 24 hours: one modify-volume call per
  volume).
"""

from __future__ import annotations

import difflib
import json
import math
import re
import shlex
import textwrap
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import tomlkit
import yaml

from headroom.domain.model import Change
from headroom.domain.tikvconf.change import Patch, split_address, target_node
from headroom.domain.tikvconf.errors import PatchConflict, TikvConfError, UnknownFormat
from headroom.domain.tikvconf.keys import check_value, require_valid_key
from headroom.domain.tikvconf.online import can_change_online, online_status, version_assumptions
from headroom.domain.tikvconf.parse import config_number, flatten, same_value
from headroom.domain.tikvconf import shell
from headroom.domain.tikvconf.patch import AppliedPatch, apply_changes, apply_rollback, split_lines
from headroom.domain.tikvconf.shell import FilesystemGrow, NewVolume, Restart, VolumeCheck
from headroom.domain.tikvconf.yamlscalar import QuotingSafeDumper
from headroom.domain.units import setting_text

Format = Literal["toml", "merged", "diff", "tiup", "operator", "sql", "tikv-ctl", "aws", "terraform"]
FORMATS: tuple[Format, ...] = (
    "toml",
    "merged",
    "diff",
    "tiup",
    "operator",
    "sql",
    "tikv-ctl",
    "aws",
    "terraform",
)
_FILES: dict[str, tuple[str, str]] = {
    "toml": ("tikv-patch.toml", "application/toml"),
    "merged": ("tikv.toml", "application/toml"),
    "diff": ("tikv.toml.diff", "text/x-diff"),
    "tiup": ("tiup-edit-config.yaml", "application/yaml"),
    "operator": ("tidbcluster-tikv-config.yaml", "application/yaml"),
    "sql": ("set-config.sql", "application/sql"),
    "tikv-ctl": ("tikv-ctl.sh", "text/x-shellscript"),
    "aws": ("aws-modify.sh", "text/x-shellscript"),
    "terraform": ("headroom-patch.tf", "text/plain"),
}
# Every format has its rollback, in the same form (rollback=True): the undo of a diff is a diff, of SET CONFIG is
# SQL, of the AWS script a script. The one-file bundle that held them all, split by text lines, ran as none.
ROLLBACK_HELP = (
    "format=rollback is gone: ask for the format you applied with rollback=true (API ?format=sql&rollback=true, "
    "CLI --format sql --rollback): each rollback is a file of that format, ready to run"
)
# TiUP restarts TiKV one at a time, each store's leaders evicted first, but restarts a node anyway once
# --transfer-timeout (600 s) has passed: a long timeout keeps it waiting for the leaders, and -N restarts one node so
# the operator can check the cluster between nodes (docs/reference/rolling-restart.md#config-changes-that-need-a-restart).
RESTART_STEPS = (
    "tiup cluster edit-config {cluster}   # put the keys under server_configs.tikv (see the tiup artefact)",
    "tiup cluster reload {cluster} -R tikv --transfer-timeout 3600   # rolling restart, one TiKV at a time, "
    "leaders moved off first",
    "or one node at a time, checking that every store is Up in between (tiup ctl:v<version> pd store): "
    "tiup cluster reload {cluster} -R tikv -N <host:port> --transfer-timeout 3600",
)
EDIT_CONFIG_REMINDER = (
    "SET CONFIG also writes each TiKV's tikv.toml, but `tiup cluster reload/upgrade` regenerates that file "
    "from the topology: put the same values into `tiup cluster edit-config {cluster}` (no reload needed), "
    "or the next reload overwrites them (PingCAP, Modify Configuration Dynamically)."
)


@dataclass(frozen=True)
class Artefact:
    """One rendered artefact: what to save it as, its media type, its text, and notes for the user."""

    format: str
    filename: str
    media_type: str
    body: str
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Setting:
    """One line to render: `key` to `value` (None: unset or unknown) on `node` (None: every node); `source`
    is the label the patch gives the change (where it comes from)."""

    key: str
    value: Any
    previous: Any
    reason: str
    source: str
    node: str | None
    online: bool


# ---------------------------------------------------------------------------------------------------- values


def toml_value(value: Any) -> str:
    """Write a value as TOML does ("4GiB" quoted, 8, true, ["no", "lz4"])."""
    text: str = tomlkit.item(value).as_string()
    return text


def sql_value(value: Any) -> str:
    """Write a value as SET CONFIG expects: strings and sizes quoted ('16GiB'), booleans and numbers bare."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"
    raise TikvConfError(f"{value!r} cannot be set with SET CONFIG (scalars only)")


def ctl_value(value: Any) -> str:
    """Write a value as tikv-ctl's `-v` takes it: unquoted `8MB`, `true`, `1h` (shell-quoted if needed)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return shlex.quote(value)
    raise TikvConfError(f"{value!r} cannot be set with tikv-ctl (scalars only)")


def _comment_lines(text: str, prefix: str, width: int = 100) -> list[str]:
    lines: list[str] = []
    for paragraph in text.splitlines() or [""]:
        wrapped = textwrap.wrap(
            paragraph, width=width - len(prefix), break_long_words=False, break_on_hyphens=False
        ) or [""]
        lines.extend(f"{prefix}{line}".rstrip() for line in wrapped)
    return lines


def _shown(value: Any) -> str:
    return "unset (the version's default)" if value is None else json.dumps(value)


def _moved(change: Change) -> str:
    """An AWS change in words, each value in its unit: "125 MiB/s -> 300 MiB/s", "not set -> 3,000 IOPS" (gp2 has no
    provisioned IOPS or throughput), "gp2 -> gp3"."""
    return f"{setting_text(change.key, change.current)} -> {setting_text(change.key, change.proposed)}"


# ----------------------------------------------------------------------------------------------------
# settings


def _settings(ctx: _Context, changes: Sequence[Change], validate: bool = True) -> list[Setting]:
    settings: list[Setting] = []
    for change in changes:
        require_valid_key(change.key)
        if validate and change.proposed is not None:
            # Rollback values come from the user's file or the snapshot: render them as they were.
            check_value(change.key, change.proposed)
        settings.append(
            Setting(
                key=change.key,
                value=change.proposed,
                previous=change.current,
                reason=change.reason,
                source=ctx.sources.get(id(change), ""),
                node=target_node(change),
                online=change.proposed is not None
                and can_change_online(change.key, change.current, change.proposed, ctx.patch.tikv_version),
            )
        )
    return settings


def inverse_changes(changes: Sequence[Change]) -> list[Change]:
    """The rollback: each change back to its previous value (None if unset or unknown), last first."""
    return [
        change.model_copy(update={"current": change.proposed, "proposed": change.current})
        for change in reversed(changes)
    ]


@dataclass(frozen=True)
class _Context:
    patch: Patch
    tikv: list[Change]
    aws: list[Change]
    config_text: str | None
    node: str | None
    applied: AppliedPatch | None
    rollback: bool
    sources: dict[int, str]  # id() of a change in `tikv` -> its finding in words (the title), "" when not given


def _undo(change: Change) -> Change:
    return change.model_copy(update={"reason": f"Undo: {change.reason}" if change.reason else "Undo."})


def _node_changes(patch: Patch, node: str | None) -> list[tuple[Change, str]]:
    """The patch's tikv changes for `node`'s file (every node's when None), each with its finding's title."""
    return [
        (change, patch.source_title(i))
        for i, change in enumerate(patch.changes)
        if change.target == "tikv" and (node is None or target_node(change) in (None, node))
    ]


def _applied(config_text: str | None, labelled: list[tuple[Change, str]], source: str) -> AppliedPatch | None:
    """Patch the tikv.toml text once; every artefact of the patch, and the rollback of each, is read from it
    (rendering never changes an AppliedPatch: a rollback copies the items it puts back)."""
    if config_text is None:
        return None
    return apply_changes(config_text, [change for change, _ in labelled], source)


def _context(
    patch: Patch,
    labelled: list[tuple[Change, str]],
    config_text: str | None,
    node: str | None,
    rollback: bool,
    applied: AppliedPatch | None,
) -> _Context:
    """What every renderer reads (frozen: the formats of one patching share it); `labelled` is `_node_changes`."""
    tikv = [change for change, _ in labelled]
    sources = {id(change): label for change, label in labelled}
    aws = list(patch.aws_changes())
    if rollback:
        # Each inverse keeps the label of the change it undoes (applied.applied holds the patch's own objects).
        pairs = (
            list(zip(applied.applied, applied.rollback_changes(), strict=True))[::-1]
            if applied is not None
            else list(zip(tikv[::-1], inverse_changes(tikv), strict=True))
        )
        undone = [(original, _undo(inverse)) for original, inverse in pairs]
        sources = {id(inverse): sources.get(id(original), "") for original, inverse in undone}
        tikv = [inverse for _, inverse in undone]
        aws = [_undo(c) for c in inverse_changes(aws)]
    return _Context(patch, tikv, aws, config_text, node, applied, rollback, sources)


def _title(ctx: _Context, what: str) -> str:
    patch = ctx.patch
    version = f" (TiKV {patch.tikv_version})" if patch.tikv_version else ""
    kind = "Rollback of the Headroom patch" if ctx.rollback else "Headroom patch"
    scope = f", node {_store(ctx, ctx.node)}" if ctx.node else ""
    return f"{kind} for cluster {patch.cluster}{version}{scope}: {what}"


def _sources(ctx: _Context) -> list[str]:
    seen: dict[str, None] = {}
    for change in ctx.tikv:
        label = ctx.sources.get(id(change))
        if label:
            seen.setdefault(label, None)
    return list(seen)


# ---------------------------------------------------------------------------------------------------- toml


def _toml_fragment(ctx: _Context, header: bool = True) -> str:
    settings = _settings(ctx, [c for c in ctx.tikv if c.proposed is not None], not ctx.rollback)
    unset = [c for c in ctx.tikv if c.proposed is None]
    by_key: dict[str, Setting] = {}
    # The nodes each key is set for (None among them: every node), so the comment names all of them.
    nodes_of: dict[str, list[str | None]] = {}
    for setting in settings:
        earlier = by_key.get(setting.key)
        if earlier is not None and not same_value(setting.key, earlier.value, setting.value):
            raise _differs_by_node(ctx, setting.key)
        by_key.setdefault(setting.key, setting)
        nodes_of.setdefault(setting.key, []).append(setting.node)
    groups: dict[tuple[str, ...], list[Setting]] = {}
    for setting in by_key.values():
        groups.setdefault(tuple(setting.key.split(".")[:-1]), []).append(setting)
    lines: list[str] = []
    if header:
        lines += _comment_lines(_title(ctx, "tikv.toml keys"), "# ")
        for label in _sources(ctx):
            lines.append(f"# finding: {label}")
        lines.append("")
    for path in sorted(groups, key=lambda p: (len(p) > 0, list(groups).index(p))):
        if path:
            lines.append(f"[{'.'.join(path)}]")
        for setting in groups[path]:
            lines += _comment_lines(setting.reason, "# ") if setting.reason else []
            where = _where(ctx, nodes_of[setting.key])
            lines.append(f"# was {_shown(setting.previous)}{_finding(setting.source)}{where}")
            lines.append(f"{setting.key.split('.')[-1]} = {toml_value(setting.value)}")
        lines.append("")
    for change in unset:
        lines.append(
            f"# remove {change.key} (it was not set before the patch; TiKV falls back to its default)"
        )
    return "\n".join(lines).rstrip("\n") + "\n"


def _differs_by_node(ctx: _Context, key: str, changes: Sequence[Change] | None = None) -> PatchConflict:
    """A file with one value per key asked for nodes whose values differ (a rollback of nodes that ran different
    values before the patch, most often): say each node's value and how to ask for one node's file."""
    values = [(target_node(c), c.proposed) for c in (changes if changes is not None else ctx.tikv)
              if c.key == key and c.proposed is not None]
    shown = ", ".join(f"{_store(ctx, node)}: {setting_text(key, value)}" for node, value in values)
    what = "the rollback" if ctx.rollback else "this file"
    return PatchConflict(
        f"{key} differs by node ({shown}), and {what} holds one value per key: download it one node at a time "
        "(node=<store address>), or use a format that sets each node's own value (tiup, sql, tikv-ctl)"
    )


def _store(ctx: _Context, node: str | None) -> str:
    """A node as TiKV, PD and TiDB Dashboard name it: its store address (a change holds its status address)."""
    return "every node" if node is None else ctx.patch.store_address(node)


def _finding(title: str) -> str:
    """Name a change's finding in words after its previous value ("; finding: <title>"), nothing when unknown."""
    return f"; finding: {title}" if title else ""


def _where(ctx: _Context, nodes: Sequence[str | None]) -> str:
    """Say which nodes a key is set on: nothing when every node, else each of them by store address."""
    if None in nodes:
        return ""
    stores = sorted({_store(ctx, node) for node in nodes})
    every = {_store(ctx, node.status_address) for node in ctx.patch.nodes}
    if every and set(stores) == every:
        return f"; on every node ({', '.join(stores)})"
    return f"; only on {', '.join(stores)}"


def _render_toml(ctx: _Context) -> tuple[str, list[str]]:
    return _toml_fragment(ctx), []


def _require_config(ctx: _Context, fmt: str) -> AppliedPatch:
    if ctx.applied is None or ctx.config_text is None:
        raise TikvConfError(f"the {fmt} artefact needs the current tikv.toml (config_text)")
    return ctx.applied


def _render_merged(ctx: _Context) -> tuple[str, list[str]]:
    applied = _require_config(ctx, "merged")
    if ctx.rollback:
        return apply_rollback(applied.text, applied.rollback), list(applied.notes)
    return applied.text, list(applied.notes)


def _render_diff(ctx: _Context) -> tuple[str, list[str]]:
    applied = _require_config(ctx, "diff")
    before, after = applied.original, applied.text
    if ctx.rollback:
        before, after = after, apply_rollback(applied.text, applied.rollback)
    lines = list(
        difflib.unified_diff(
            split_lines(before),  # at LF only: str.splitlines also breaks at U+2028 and the like
            split_lines(after),
            fromfile="a/tikv.toml",
            tofile="b/tikv.toml",
        )
    )
    text = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )
    return text, list(applied.notes)


# ---------------------------------------------------------------------------------------------------- tiup


def _split_by_node(ctx: _Context) -> tuple[dict[str, Setting], dict[str, dict[str, Setting]], list[str]]:
    """Split settings into cluster-wide ones and per-node overrides (one value on every node is global)."""
    settings = _settings(ctx, [c for c in ctx.tikv if c.proposed is not None], not ctx.rollback)
    notes: list[str] = []
    global_settings: dict[str, Setting] = {}
    per_node: dict[str, dict[str, Setting]] = {}
    for setting in settings:
        if setting.node is None:
            global_settings[setting.key] = setting
        else:
            per_node.setdefault(setting.node, {})[setting.key] = setting
    all_nodes = {node.status_address for node in ctx.patch.nodes}
    if all_nodes and set(per_node) == all_nodes:
        for key in sorted({k for values in per_node.values() for k in values}):
            values = [values[key] for values in per_node.values() if key in values]
            if len(values) != len(all_nodes) or key in global_settings:
                continue
            # The value most nodes take goes to server_configs.tikv; the others stay as per-instance overrides
            # (TiUP: "if an instance has a configuration item with the same name, the instance's takes effect").
            common = max(values, key=lambda s: sum(same_value(key, s.value, o.value) for o in values))
            global_settings[key] = common
            for node_settings in per_node.values():
                if key in node_settings and same_value(key, node_settings[key].value, common.value):
                    node_settings.pop(key)
    per_node = {node: values for node, values in per_node.items() if values}
    unset = [c.key for c in ctx.tikv if c.proposed is None]
    if unset:
        notes.append("remove these keys (they were not set before the patch): " + ", ".join(unset))
    return global_settings, per_node, notes

# TiUP accepts cluster names of letters, digits, '-', '_' and '.' (tiup pkg/cluster/spec ValidateClusterNameOrError).
_TIUP_NAME = re.compile(r"[A-Za-z0-9_.\-]+")
TIUP_PLACEHOLDER = "<tiup-cluster-name>"


def tiup_cluster_name(tiup_name: str | None) -> str:
    """The cluster's name in a tiup command line, decided here for every artefact, the API's and the CLI's alike:
    the TiUP name when one was given (and TiUP could have it), else a placeholder. Headroom's own name for the
    cluster is a display name ("demo-prod (demo)", or one that merely looks like a TiUP name): TiUP's may differ,
    and a tiup command run with the wrong one reloads another cluster or none."""
    return tiup_name if tiup_name and _TIUP_NAME.fullmatch(tiup_name) else TIUP_PLACEHOLDER


def tiup_name_note(display_name: str, tiup_name: str | None) -> str | None:
    """What to replace when the command lines hold the placeholder (None when they hold the TiUP name)."""
    if tiup_cluster_name(tiup_name) != TIUP_PLACEHOLDER:
        return None
    given = f" ({tiup_name!r} is not a name TiUP could have)" if tiup_name else ""
    return (f"replace {TIUP_PLACEHOLDER} with this cluster's name in `tiup cluster list` (Headroom calls it "
            f"{display_name!r}; TiUP's name may differ){given}")


def _render_tiup(ctx: _Context) -> tuple[str, list[str]]:
    global_settings, per_node, notes = _split_by_node(ctx)
    document: dict[str, Any] = {}
    if global_settings:
        document["server_configs"] = {"tikv": {key: s.value for key, s in global_settings.items()}}
    if per_node:
        servers = []
        for status_address, settings in per_node.items():
            node = ctx.patch.node(status_address)
            host, port = _host_port(node.server_address())
            entry: dict[str, Any] = {"host": host}
            if port is not None:
                entry["port"] = port
            entry["config"] = {key: s.value for key, s in settings.items()}
            servers.append(entry)
        document["tikv_servers"] = servers
    cluster = tiup_cluster_name(ctx.patch.tiup_name)
    replace = tiup_name_note(ctx.patch.cluster, ctx.patch.tiup_name)
    if replace is not None:
        notes.append(replace)
    if ctx.rollback and document:
        notes.append(
            "These are the values the nodes ran before the patch, written as explicit keys: merged in, they stay "
            "pinned (a key your topology did not set would no longer follow server_configs or TiKV's default). The "
            "exact rollback is the topology the patch was made from: keep it (headroom patch --topology FILE "
            "--rollback, or the API's tiup patch with rollback, hands it back as it was)."
        )
    offline = sorted(
        {s.key for s in [*global_settings.values(), *(x for v in per_node.values() for x in v.values())]}
        - {s.key for s in _settings(ctx, ctx.tikv, False) if s.online}
    )
    lines = _comment_lines(_title(ctx, "TiUP topology changes"), "# ")
    lines += [
        f"# 1. tiup cluster edit-config {cluster}",
        "#    merge the keys below into the topology: server_configs.tikv applies to every TiKV,",
        "#    tikv_servers[].config overrides it for one instance (matched by host and port).",
    ]
    if offline:
        lines.append(f"# 2. tiup cluster reload {cluster} -R tikv --transfer-timeout 3600   # needed for: {', '.join(offline)}")
    else:
        lines.append(f"# 2. apply online with the sql artefact, or: tiup cluster reload {cluster} -R tikv --transfer-timeout 3600")
    for note in notes:
        lines += _comment_lines(note, "# ")
    # Each reason once, however many instances take its keys: reason -> (key, value before) -> where.
    said: dict[str, dict[tuple[str, str], list[str]]] = {}
    on: str | None
    for on, key, setting in [
        *((None, k, s) for k, s in global_settings.items()),
        *((n, k, s) for n, v in per_node.items() for k, s in v.items()),
    ]:
        where = said.setdefault(setting.reason, {}).setdefault((key, _shown(setting.previous)), [])
        where.append("" if on is None else _store(ctx, on))
    for reason, keys in said.items():
        was = "; ".join(
            f"{key} was {previous}" + (f" on {', '.join(w for w in where if w)}" if all(where) else "")
            for (key, previous), where in keys.items()
        )
        lines += _comment_lines(f"{reason} ({was})", "# ")
    body = "\n".join(lines) + "\n"
    if document:
        # quoted where YAML 1.1 or 1.2 could read a string as another type: TiUP read topologies with yaml.v2
        # (YAML 1.1, `no` is false) up to v1.16.2 (yamlscalar)
        body += yaml.dump(document, Dumper=QuotingSafeDumper, sort_keys=False, default_flow_style=False,
                          allow_unicode=True)
    return body, notes


def _host_port(address: str) -> tuple[str, int | None]:
    return split_address(address)


# ----------------------------------------------------------------------------------------------------
# operator


def _one_value_per_key(ctx: _Context) -> tuple[_Context, list[str]]:
    """Give every pod one value per key: where nodes were given different numbers, the smallest of them.

    Each node's value was sized within its own host (threads within its vCPUs, the block cache within its
    memory), so the smallest is one every pod can take; a larger one may not fit the smaller hosts. Different
    non-numeric values stay as they are (the TOML rendering then refuses them).
    """
    by_key: dict[str, list[Change]] = {}
    for change in ctx.tikv:
        if change.proposed is not None and target_node(change) is not None:
            by_key.setdefault(change.key, []).append(change)
    chosen: dict[str, Any] = {}
    notes: list[str] = []
    for key, changes in by_key.items():
        numbers = [config_number(c.proposed) for c in changes]
        if len({json.dumps(c.proposed) for c in changes}) < 2 or any(n is None for n in numbers):
            continue
        smallest = min(zip(numbers, changes, strict=True), key=lambda p: p[0] or 0.0)[1]
        chosen[key] = smallest.proposed
        given = ", ".join(f"{_store(ctx, target_node(c))}: {c.proposed}" for c in changes)
        notes.append(
            f"{key} differs by node ({given}); spec.tikv.config has no per-pod form, so every pod gets "
            f"{smallest.proposed}, the smallest, which every node's budget allows"
        )
    if not chosen or ctx.rollback:
        return ctx, []
    tikv = [
        c.model_copy(update={"proposed": chosen[c.key]}) if c.key in chosen and c.proposed is not None else c
        for c in ctx.tikv
    ]
    sources = {id(new): ctx.sources.get(id(old), "") for old, new in zip(ctx.tikv, tikv, strict=True)}
    applied = apply_changes(ctx.config_text, tikv) if ctx.config_text is not None else None
    return _Context(ctx.patch, tikv, ctx.aws, ctx.config_text, ctx.node, applied, ctx.rollback, sources), notes


# A TidbCluster's name becomes part of its Services' and Pods' names: a DNS-1123 label (Kubernetes, Object Names
# and IDs), at most 63 characters.
_K8S_NAME = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


def _render_operator(ctx: _Context) -> tuple[str, list[str]]:
    notes: list[str] = []
    node_specific = sorted({c.key for c in ctx.tikv if target_node(c) is not None})
    if node_specific:
        notes.append(
            "TiDB Operator gives every TiKV pod the same config; these node-specific changes are applied to "
            "all pods: " + ", ".join(node_specific)
        )
    ctx, one_value_notes = _one_value_per_key(ctx)
    notes += one_value_notes
    whole = ctx.applied is not None
    if whole:
        toml_text = _render_merged(ctx)[0]
        how = "the whole config string, your current spec.tikv.config with the changes merged in"
    else:
        if ctx.rollback and ctx.node is None:
            # every pod shares one config string: nodes that ran different values cannot all get theirs back
            for key in dict.fromkeys(c.key for c in ctx.tikv):
                values = [c.proposed for c in ctx.tikv if c.key == key and c.proposed is not None]
                if any(not same_value(key, values[0], v) for v in values[1:]):
                    raise _differs_by_node(ctx, key)
        everywhere = [(c, c.model_copy(update={"entity": None})) for c in ctx.tikv]
        cluster_wide = _Context(
            ctx.patch,
            [copy for _, copy in everywhere],
            ctx.aws,
            None,
            None,
            None,
            ctx.rollback,
            {id(copy): ctx.sources.get(id(c), "") for c, copy in everywhere},
        )
        toml_text = _toml_fragment(cluster_wide, header=False)
        how = "only the changed keys: merge them into your existing spec.tikv.config string"
        if ctx.rollback:
            notes.append(
                "These are the values the nodes ran before the patch: merged in, a key your manifest did not set "
                "stays pinned (a default that follows the pod's memory would no longer follow it). The exact "
                "rollback comes from your manifest: headroom patch --manifest FILE --rollback (or the API's operator "
                "patch with rollback), a JSON patch that removes what the patch added."
            )
    lines = _comment_lines(_title(ctx, "TidbCluster spec.tikv.config"), "# ")
    lines += _comment_lines(
        "TiDB Operator v1.x takes spec.tikv.config as a TOML string (config: |). This is " + how + ". "
        "A merge patch replaces the string as a whole. With configUpdateStrategy: RollingUpdate the Operator "
        "restarts TiKV pods one at a time, evicting leaders first.",
        "# ",
    )
    for note in notes:
        lines += _comment_lines(note, "# ")
    lines += _comment_lines(
        "TiDB Operator v2 (TiKVGroup, core.pingcap.com/v1alpha1) takes the same TOML string under "
        "spec.template.spec.config (docs-tidb-operator v2.0 component-configuration).",
        "# ",
    )
    name = ctx.patch.cluster if _K8S_NAME.fullmatch(ctx.patch.cluster) else None
    if name is None:
        notes.append(
            f"{ctx.patch.cluster!r} is not a Kubernetes object name: put your TidbCluster's metadata.name "
            "(kubectl get tc -A) in place of <tidbcluster-name>"
        )
    shown = name or "<tidbcluster-name>"
    if whole:
        lines += _comment_lines(
            "The string below is the node's config as Headroom read it (its tikv.toml or live /config) with the "
            "changes merged in, not your manifest's own string: a merge patch with it replaces spec.tikv.config "
            "whole, so keys your manifest sets and the node does not report would go. To change only the proposed "
            "keys of your manifest, give it to Headroom (Patches page: Patch your own manifest; or headroom patch "
            "--manifest), which keeps every other key.",
            "# ",
        )
        filename = _filename(ctx.patch, "operator", ctx.rollback, None)
        # A shell reads <namespace> as a redirection: the namespace comes from a variable that must be set.
        namespace = '"${NAMESPACE:?set NAMESPACE to the namespace of the TidbCluster}"'
        lines.append(f"# kubectl -n {namespace} patch tc {shlex.quote(shown)} --type merge --patch-file "
                     f"{shlex.quote(filename)}")
    else:
        lines += _comment_lines(
            "Do NOT apply or merge-patch this file as it is: it holds only the changed keys, and spec.tikv.config "
            f"is one string that a patch replaces whole, dropping every other key. Open kubectl -n <namespace> "
            f"edit tc {shown} and add these lines to the config string (or download the merged form with the "
            "node's config collected).",
            "# ",
        )
    lines += [
        "apiVersion: pingcap.com/v1alpha1",
        "kind: TidbCluster",
        "metadata:",
        f"  name: {json.dumps(shown)}",
        "spec:",
        "  tikv:",
        "    config: |",
    ]
    lines += [f"      {line}".rstrip() for line in toml_text.splitlines()]
    return "\n".join(lines) + "\n", notes


# ---------------------------------------------------------------------------------------------------- sql /
# tikv-ctl


def _offline_block(ctx: _Context, settings: Sequence[Setting], prefix: str) -> list[str]:
    if not settings:
        return []
    cluster = tiup_cluster_name(ctx.patch.tiup_name)
    lines = [f"{prefix}Needs a rolling restart (these keys cannot change online):"]
    for setting in settings:
        where = f" on {_store(ctx, setting.node)}" if setting.node else ""
        value = "remove the key" if setting.value is None else f"= {toml_value(setting.value)}"
        lines.append(f"{prefix}  {setting.key} {value}{where}   ({online_status(setting.key, ctx.patch.tikv_version).source})")
    lines += [f"{prefix}  " + step.format(cluster=cluster) for step in RESTART_STEPS]
    return lines


def _collapse_nodes(ctx: _Context, settings: Sequence[Setting]) -> list[Setting]:
    """Turn one value set node by node on every TiKV into one cluster-wide setting (one SET CONFIG tikv)."""
    all_nodes = {node.status_address for node in ctx.patch.nodes}
    by_key: dict[str, list[Setting]] = {}
    for setting in settings:
        by_key.setdefault(setting.key, []).append(setting)
    collapsed: list[Setting] = []
    for setting in settings:
        group = by_key[setting.key]
        nodes = {s.node for s in group}
        uniform = all(same_value(setting.key, group[0].value, s.value) for s in group)
        if all_nodes and None not in nodes and nodes == all_nodes and uniform:
            if setting is group[0]:
                collapsed.append(Setting(**{**setting.__dict__, "node": None}))
            continue
        collapsed.append(setting)
    return collapsed


def _online_disagreements(ctx: _Context) -> list[str]:
    """Say where the finding called a change online but TiKV's online table says it needs a restart."""
    version = ctx.patch.tikv_version
    return [
        f"{c.key}: the finding marks it online, but {online_status(c.key, version).source}; needs a rolling restart"
        for c in ctx.tikv
        if c.online and c.proposed is not None and not can_change_online(c.key, c.current, c.proposed, version)
    ]


def _render_sql(ctx: _Context) -> tuple[str, list[str]]:
    settings = _settings(ctx, ctx.tikv, not ctx.rollback)
    online = [s for s in settings if s.online and s.value is not None]
    offline = [s for s in settings if not (s.online and s.value is not None)]
    lines = _comment_lines(_title(ctx, "online TiKV changes (run in a TiDB session)"), "-- ")
    lines += _comment_lines(EDIT_CONFIG_REMINDER.format(cluster=tiup_cluster_name(ctx.patch.tiup_name)), "-- ")
    replace = tiup_name_note(ctx.patch.cluster, ctx.patch.tiup_name)
    lines += _comment_lines(replace[0].upper() + replace[1:] + ".", "-- ") if replace else []
    lines += _comment_lines(
        "Changes are not atomic across instances: run SHOW WARNINGS after each statement.", "-- "
    )
    assumed = version_assumptions({s.key for s in online}, ctx.patch.tikv_version)
    if assumed:
        lines += _comment_lines(
            "The TiKV version is unknown, so these statements assume a recent release: "
            + "; ".join(assumed)
            + ". On an older TiKV, change those keys in the config and restart instead.",
            "-- ",
        )
    for setting in _collapse_nodes(ctx, online):
        lines.append("")
        lines += _comment_lines(
            f"{setting.reason} (was {_shown(setting.previous)}{_finding(setting.source)})", "-- "
        )
        target = "tikv" if setting.node is None else json.dumps(setting.node)
        lines.append(f"SET CONFIG {target} `{setting.key}` = {sql_value(setting.value)};")
        lines.append("SHOW WARNINGS;")
    if online:
        lines.append("")
        names = ", ".join(sorted({f"'{s.key}'" for s in online}))
        lines.append(f"SHOW CONFIG WHERE type = 'tikv' AND name IN ({names});")
    if offline:
        lines.append("")
        lines += _offline_block(ctx, offline, "-- ")
    return "\n".join(lines) + "\n", [*_online_disagreements(ctx), *([replace] if replace else [])]


def _render_tikv_ctl(ctx: _Context) -> tuple[str, list[str]]:
    settings = _settings(ctx, ctx.tikv, not ctx.rollback)
    online = [s for s in settings if s.online and s.value is not None]
    offline = [s for s in settings if not (s.online and s.value is not None)]
    notes: list[str] = []
    lines = ["#!/usr/bin/env bash"]
    lines += _comment_lines(_title(ctx, "online TiKV changes with tikv-ctl"), "# ")
    lines += _comment_lines(
        "tikv-ctl talks to each TiKV's server (gRPC) address. With TiUP: tiup ctl:v<version> tikv --host ... "
        + EDIT_CONFIG_REMINDER.format(cluster=tiup_cluster_name(ctx.patch.tiup_name)),
        "# ",
    )
    replace = tiup_name_note(ctx.patch.cluster, ctx.patch.tiup_name)
    lines += _comment_lines(replace[0].upper() + replace[1:] + ".", "# ") if replace else []
    lines.append("set -euo pipefail")
    all_hosts = [node.server_address() for node in ctx.patch.nodes]
    for setting in online:
        lines.append("")
        lines += _comment_lines(f"{setting.reason} (was {_shown(setting.previous)}{_finding(setting.source)})", "# ")
        if setting.node is not None:
            hosts = [ctx.patch.node(setting.node).server_address()]
        elif all_hosts:
            hosts = all_hosts
        else:
            hosts = ["<tikv-ip>:20160"]
            notes.append("the snapshot listed no nodes: replace <tikv-ip> and repeat for every TiKV")
        for host in hosts:
            lines.append(
                f"tikv-ctl --host {host} modify-tikv-config -n {setting.key} -v {ctl_value(setting.value)}"
            )
    if offline:
        lines.append("")
        lines += _offline_block(ctx, offline, "# ")
    return "\n".join(lines) + "\n", sorted(set(notes)) + _online_disagreements(ctx)


# ---------------------------------------------------------------------------------------------------- aws

_VOLUME_FLAGS = {
    "volume.type": "--volume-type",
    "volume.iops": "--iops",
    "volume.throughput": "--throughput",
    "volume.size": "--size",
}
# How describe-volumes names each attribute (the script skips a volume that already has every new value).
_VOLUME_ATTRIBUTES = {"volume.type": "VolumeType", "volume.iops": "Iops", "volume.throughput": "Throughput",
                      "volume.size": "Size"}
_AWS_KEYS = (*_VOLUME_FLAGS, "instance.type", "volume.create")
# A new volume (e.g. a dedicated Raft log disk): `proposed` is its spec {type, size_gib, iops, throughput_mibps,
# availability_zone, attach_to, node, mount, role, raft_key, raft_dir, raft_dir_now}. The AWS script picks a free
# device name from the instance's block device mappings (shell.NewVolume); Terraform's attachment names one, the
# first AWS recommends for EBS on Linux (docs/reference/new-volumes.md#device-names), which the user may change.
_NEW_VOLUME_DEVICE = "/dev/sdf"
_RAFT_KEYS = ("raft-engine.dir", "raftstore.raftdb-path")
_VOLUME_TF = {
    "volume.type": "type",
    "volume.iops": "iops",
    "volume.throughput": "throughput",
    "volume.size": "size",
}


def _aws_groups(ctx: _Context) -> tuple[dict[str, list[Change]], dict[str, list[Change]]]:
    volumes: dict[str, list[Change]] = {}
    instances: dict[str, list[Change]] = {}
    for change in ctx.aws:
        volume_id = change.entity.volume() if change.entity is not None else None
        instance_id = change.entity.instance() if change.entity is not None else None
        if change.key in _VOLUME_FLAGS:
            if not volume_id:
                raise TikvConfError(f"{change.key} needs a volume id in its entity")
            volumes.setdefault(volume_id, []).append(change)
        elif change.key == "instance.type":
            if not instance_id:
                raise TikvConfError("instance.type needs an instance id in its entity")
            instances.setdefault(instance_id, []).append(change)
        elif change.key == "volume.create":
            spec = change.proposed if isinstance(change.proposed, dict) else change.current
            if not isinstance(spec, dict) or not spec.get("type") or not spec.get("size_gib"):
                raise TikvConfError("volume.create needs a spec with at least type and size_gib")
        else:
            raise TikvConfError(f"unknown AWS change {change.key!r}: expected one of {', '.join(_AWS_KEYS)}")
    return volumes, instances


def _aws_value(value: Any) -> str:
    return shlex.quote(str(value))


_INTEGER_FLAGS = frozenset({"volume.iops", "volume.throughput", "volume.size"})


def _aws_flag_value(key: str, value: Any) -> str:
    """The CLI value of a volume flag: --iops, --throughput and --size take integers (the AWS CLI rejects "250.0":
    "invalid literal for int() with base 10"); a fractional need is rounded up so the volume is not short of it."""
    if key in _INTEGER_FLAGS and isinstance(value, int | float) and not isinstance(value, bool):
        return str(math.ceil(value) if value != int(value) else int(value))
    return _aws_value(value)


def _creations(ctx: _Context) -> list[Change]:
    return [c for c in ctx.aws if c.key == "volume.create"]


def _new_volume_name(change: Change) -> str:
    spec = change.proposed if isinstance(change.proposed, dict) else change.current
    spec = spec if isinstance(spec, dict) else {}
    entity = change.entity
    owner = (entity.node or entity.instance() if entity is not None else None) or "tikv"
    return f"{owner}-{spec.get('role', 'data')}"


def _spec(change: Change) -> dict[str, Any]:
    spec = change.proposed if isinstance(change.proposed, dict) else change.current
    return spec if isinstance(spec, dict) else {}


def _new_volumes(ctx: _Context) -> list[tuple[NewVolume, Change]]:
    """The patch's volume.create changes as the volumes the AWS script makes (forward) or removes (rollback): each
    found again by its finding's key (the patch's label of the change; else the cluster and the volume's name) and
    its node, both tags on the volume."""
    found: list[tuple[NewVolume, Change]] = []
    for index, change in enumerate(ctx.patch.changes):
        if change.target != "aws" or change.key != "volume.create" or not isinstance(change.proposed, dict):
            continue
        spec = change.proposed
        entity = change.entity
        name = _new_volume_name(change)
        instance_id = str(spec.get("attach_to") or (entity.instance() if entity is not None else "") or "")
        if not instance_id:
            raise TikvConfError(f"volume.create {name}: the spec names no instance to attach to (attach_to)")
        node_name = str(spec.get("node") or (entity.node if entity is not None else None) or instance_id)
        key = ctx.patch.source(index) or f"{ctx.patch.cluster}/{name}"
        raft_key = str(spec.get("raft_key") or "")
        raft_dir = str(spec.get("raft_dir") or "")
        targets = [n for n in ctx.patch.nodes if node_name in (n.name, n.status_address, n.address)] or list(
            ctx.patch.nodes_on(instance_id))
        status_address = targets[0].status_address if len(targets) == 1 else ""
        for other in ctx.patch.tikv_changes():  # the directory the patch's own tikv.toml change gives
            node_of = target_node(other)
            if other.key in _RAFT_KEYS and (not raft_key or other.key == raft_key) and isinstance(
                    other.proposed, str) and node_of in (node_name, status_address or None):
                raft_key, raft_dir = other.key, other.proposed
        flags = [f"--volume-type {_aws_value(spec['type'])}", f"--size {_aws_value(int(spec['size_gib']))}"]
        if spec.get("iops"):
            flags.append(f"--iops {_aws_value(int(spec['iops']))}")
        if spec.get("throughput_mibps"):
            flags.append(f"--throughput {_aws_value(int(spec['throughput_mibps']))}")
        tags = (
            ("Name", name),
            (shell.FINDING_TAG, key),
            (shell.NODE_TAG, node_name),
            ("headroom:role", str(spec.get("role", "data"))),
            ("headroom:cluster", ctx.patch.cluster),
        )
        volume = NewVolume(
            name=name, key=key[:256], node=node_name, instance_id=instance_id,
            availability_zone=str(spec.get("availability_zone") or ""), create_flags=" ".join(flags),
            tags=tuple((k, v[:256]) for k, v in tags), raft_key=raft_key or "raft-engine.dir",
            mount=str(spec.get("mount") or ""), raft_dir=raft_dir, raft_dir_now=str(spec.get("raft_dir_now") or ""),
            status_address=status_address, finding=ctx.patch.source_title(index),
        )
        found.append((volume, change))
    return found


def _render_creations(ctx: _Context, volumes: Sequence[tuple[NewVolume, Change]]) -> list[str]:
    lines: list[str] = []
    for volume, change in volumes:
        spec = _spec(change)
        lines.append("")
        if ctx.rollback:
            lines += _comment_lines(
                f"Remove the new volume {volume.name!r} ({spec.get('type')}, {spec.get('size_gib')} GiB), found by "
                f"its tags, only after TiKV no longer uses it: {volume.raft_key} rolled back and {volume.node} "
                f"restarted, the file system at its mount point unmounted and out of /etc/fstab.",
                "# ",
            )
            lines += shell.remove_step(volume)
            continue
        lines += shell.new_volume_step(
            volume, reason_lines=_comment_lines(f"new volume {volume.name}: " + change.reason, "# ")
        )
    return lines


def _volume_check(ctx: _Context, volume_id: str, changes: Sequence[Change], notes: list[str]) -> tuple[
    VolumeCheck | None, list[str]
]:
    """The modify-volume call of one volume (None if nothing to change) and its comment lines."""
    lines: list[str] = []
    for change in changes:
        lines += _comment_lines(f"{volume_id} {change.key}: {_moved(change)}: " + change.reason, "# ")
    flags: list[str] = []
    undo: list[str] = []
    target: list[str] = []
    for change in changes:
        if change.proposed is None:
            lines.append(f"# {change.key}: previous value unknown, not changed")
            continue
        if ctx.rollback and change.key == "volume.size":
            lines.append(f"# {change.key}: EBS volumes cannot shrink; the size stays {change.current}")
            notes.append(f"{volume_id}: an EBS volume cannot be made smaller, the size is not rolled back")
            continue
        flags.append(f"{_VOLUME_FLAGS[change.key]} {_aws_flag_value(change.key, change.proposed)}")
        target.append(f"{_VOLUME_ATTRIBUTES[change.key]}={_aws_flag_value(change.key, change.proposed)}")
        if change.current is not None and change.key != "volume.size":
            undo.append(f"{_VOLUME_FLAGS[change.key]} {_aws_flag_value(change.key, change.current)}")
    if not flags:
        return None, lines
    entity = changes[0].entity
    what = "; ".join(_moved(c) for c in changes if c.proposed is not None)
    instance_id = entity.instance() if entity is not None and entity.kind == "volume" else None
    grows = not ctx.rollback and any(c.key == "volume.size" and c.proposed is not None for c in changes)
    check = VolumeCheck(
        volume_id=volume_id,
        instance_id=instance_id,
        modify_flags=" ".join(flags),
        undo_flags=" ".join(undo),
        what=what,
        target=" ".join(target),
        grow=_filesystem_grow(ctx, instance_id) if grows else None,
    )
    if grows:
        lines += _comment_lines(
            "A larger volume gives TiKV nothing until its partition and filesystem grow: once the modification "
            "is optimizing, the script grows them on the host (growpart when the filesystem is on a partition, "
            "then xfs_growfs or resize2fs; AWS: https://docs.aws.amazon.com/ebs/latest/userguide/recognize-expanded-volume-linux.html), through tiup cluster exec when "
            "TIUP_CLUSTER is set, else it prints the command.",
            "# ",
        )
    return check, lines


def _filesystem_grow(ctx: _Context, instance_id: str | None) -> FilesystemGrow:
    """Where the host step runs (the one TiKV node on the volume's instance) and what node_exporter reported of its
    data mount; unknown (None) when the instance runs no known node or several."""
    nodes = ctx.patch.nodes_on(instance_id) if instance_id else ()
    if len(nodes) != 1:
        return FilesystemGrow(node=None, fstype=None, mount=None)
    node = nodes[0]
    return FilesystemGrow(node=node.server_address(), fstype=node.data_fstype, mount=node.data_mount)


def _restart(ctx: _Context, instance_id: str, change: Change) -> Restart:
    nodes = ctx.patch.nodes_on(instance_id)
    if not nodes and change.entity is not None and change.entity.tikv_node():
        nodes = (ctx.patch.node(str(change.entity.tikv_node())),)
    return Restart(
        instance_id=instance_id,
        from_type=str(change.current),
        to_type=str(change.proposed),
        stores=tuple((node.store_id, node.server_address()) for node in nodes),
    )


def _render_aws(ctx: _Context) -> tuple[str, list[str]]:
    volumes, instances = _aws_groups(ctx)
    notes: list[str] = []
    lines = ["#!/usr/bin/env bash"]
    lines += _comment_lines(_title(ctx, "AWS changes"), "# ")
    lines.append("set -euo pipefail")
    if not volumes and not instances and not _creations(ctx):
        lines.append("# no AWS changes in this patch")
        return "\n".join(lines) + "\n", notes
    new_volumes = _new_volumes(ctx)
    for volume, _ in new_volumes:
        if not volume.mount:
            notes.append(f"{volume.name}: the node's storage.data-dir is unknown: set MOUNT_{shell.volume_variable(volume)} "
                         "at the top of the AWS script (it stops until set)")
        if not volume.raft_dir_now and not ctx.rollback:
            notes.append(f"{volume.name}: where the Raft log is now is unknown: set "
                         f"RAFT_DIR_NOW_{shell.volume_variable(volume)} at the top of the AWS script")
    checks: list[tuple[VolumeCheck | None, list[str]]] = [
        _volume_check(ctx, volume_id, changes, notes) for volume_id, changes in volumes.items()
    ]
    restarts: list[tuple[str, Restart | None, Change]] = []
    for instance_id, changes in instances.items():
        change = changes[-1]
        restart = _restart(ctx, instance_id, change) if change.proposed is not None else None
        restarts.append((instance_id, restart, change))
    to_restart = [r for _, r, _ in restarts if r is not None]
    to_modify = [c for c, _ in checks if c is not None]
    if any(r.stores and any(store_id is None for store_id, _ in r.stores) or not r.stores for r in to_restart):
        notes.append("set the TiKV store ids at the top of the script (pd-ctl: store): the snapshot has not all")
    if not ctx.patch.pd_url and to_restart:
        notes.append("set PD_URL at the top of the script, or pass --pd http://<pd>:2379")
    if not ctx.patch.region:
        notes.append("the region is unknown: set REGION at the top of the script, or pass --region")
    lines.append("")
    grows = any(c.grow is not None for c in to_modify)
    cluster_name = tiup_cluster_name(ctx.patch.cluster)
    lines += shell.header(
        region=ctx.patch.region,
        tikv_version=ctx.patch.tikv_version,
        pd_url=ctx.patch.pd_url,
        restarts=to_restart,
        undo_script=_filename(ctx.patch, "aws", not ctx.rollback, ctx.node),
        grows=grows,
        tiup_cluster=None if cluster_name.startswith("<") else cluster_name,
        removes_volumes=ctx.rollback and bool(new_volumes),
    )
    if new_volumes:
        lines += shell.new_volume_settings(
            [v for v, _ in new_volumes], rollback=ctx.rollback,
            state_file=_filename(ctx.patch, "aws", False, ctx.node).removesuffix(_FILES["aws"][0]) + "new-volumes.tsv",
        )
    lines.append("")
    lines += shell.library(volumes=bool(to_modify), restarts=bool(to_restart), grows=grows)
    if new_volumes:
        lines += shell.new_volume_library(rollback=ctx.rollback)
    lines += shell.settings_check(to_restart, grows)
    if new_volumes:
        lines += shell.new_volume_settings_check([v for v, _ in new_volumes], rollback=ctx.rollback)
    if to_modify:
        lines.append("")
        lines += _comment_lines(
            "EBS Elastic Volumes allows up to four modifications per volume in a rolling 24 hours, each "
            "after the previous one completed (AWS, Amazon EBS Elastic Volumes; before 2026 the rule was one "
            "modification, then at least 6 hours before the next, and AWS may still apply it in some Regions): a "
            "volume's changes go in ONE modify-volume call. A rollback is another modification and counts against "
            "the same limit. Size grows within seconds; IOPS and throughput changes take minutes to hours (a fully "
            "used 1 TiB volume about 6 hours; AWS, Monitor the progress of Amazon EBS volume modifications). "
            "A volume can be modified again only when its last modification is completed (modifying -> optimizing "
            "-> completed): every volume is checked before any is changed, so the script changes all or none.",
            "# ",
        )
        lines += shell.volume_preflight(to_modify)
    if to_restart:
        lines += shell.restart_preflight(to_restart)
    if new_volumes and not ctx.rollback:
        lines += shell.new_volume_preflight([v for v, _ in new_volumes])
    elif new_volumes:
        lines += shell.remove_preflight([v for v, _ in new_volumes])
    plan = [f"{c.volume_id}: {c.what}" for c in to_modify]
    if plan or new_volumes:
        lines += ["", 'say "This script changes:"']
        lines += [f"say {shlex.quote('  - ' + item)}" for item in plan]
        lines += shell.new_volume_plan([v for v, _ in new_volumes], rollback=ctx.rollback)
        lines.append('confirm "Change them now?"')
    for check, comments in checks:
        lines.append("")
        lines += comments
        if check is not None:
            lines += shell.volume_step(check)
    lines += _render_creations(ctx, new_volumes)
    for instance_id, restart, change in restarts:
        lines.append("")
        node = (change.entity.node if change.entity is not None else None) or "its TiKV"
        lines += _comment_lines(f"{instance_id} instance type: {_moved(change)}: " + change.reason, "# ")
        if restart is None:
            lines.append("# previous instance type unknown: not changed")
            continue
        lines += _comment_lines(
            f"Stopping the instance restarts {node}: one instance at a time, only when every store is Up; "
            "its stores' leaders are moved away first (pd-ctl scheduler add evict-leader-scheduler), the "
            "script waits until PD reports each store Up again and its leaders back, and removes the scheduler "
            "(PingCAP PD Control: https://docs.pingcap.com/tidb/stable/pd-control).",
            "# ",
        )
        lines += shell.restart_steps(restart)
    if grows:
        lines += ["", "grow_report"]
    lines += ["", 'say "done"']
    return "\n".join(lines) + "\n", notes


def _tf_name(entity_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", entity_id)


# Which aws_ebs_volume arguments the AWS provider takes with each volume type (terraform-provider-aws,
# internal/service/ec2/ebs_volume.go: resourceEBSVolumeCustomizeDiff and resourceEBSVolumeUpdate), restated in
# docs/reference/terraform-aws-provider.md#aws_ebs_volume-arguments-by-volume-type: `iops` only with io1, io2 or
# gp3 (and required with io1 and io2), `throughput` only with gp3, within 125-1000.
TF_IOPS_TYPES = frozenset({"io1", "io2", "gp3"})
TF_IOPS_REQUIRED_TYPES = frozenset({"io1", "io2"})
TF_THROUGHPUT_TYPES = frozenset({"gp3"})
TF_THROUGHPUT_RANGE = (125, 1000)
_TF_PROVIDER_RULES = "terraform-provider-aws, internal/service/ec2/ebs_volume.go"


def _tf_volume_rules(volume_type: Any, attributes: list[tuple[str, Any]]) -> tuple[
    list[tuple[str, Any]], list[str]
]:
    """Fit an aws_ebs_volume block to the provider's rules for its new type: drop the arguments that type does not
    take (and tell the user to remove them from their resource), and say when the type needs one it lacks."""
    if not isinstance(volume_type, str):
        return attributes, []
    allowed = {"iops": volume_type in TF_IOPS_TYPES, "throughput": volume_type in TF_THROUGHPUT_TYPES}
    kept = [(name, value) for name, value in attributes if allowed.get(name, True)]
    remove = [name for name, ok in allowed.items() if not ok]
    comments: list[str] = []
    if remove:
        names = " and ".join(f"`{name}`" for name in remove)
        comments += _comment_lines(
            f"REMOVE {names} from this resource: the AWS provider takes iops only with type io1, io2 or gp3 "
            f"and throughput only with gp3 ({_TF_PROVIDER_RULES}); left in, a new volume fails at plan "
            f"(\"'iops' must not be set when 'type' is '{volume_type}'\") and an existing one fails at apply "
            "(ModifyVolume) or never stops showing a diff.",
            "  # ",
        )
    if volume_type in TF_IOPS_REQUIRED_TYPES and not any(name == "iops" for name, _ in kept):
        comments += _comment_lines(
            f"Keep `iops` set in this resource: the AWS provider requires it with type {volume_type} "
            f"({_TF_PROVIDER_RULES}).",
            "  # ",
        )
    low, high = TF_THROUGHPUT_RANGE
    for name, value in kept:
        if name == "throughput" and isinstance(value, int | float) and not low <= value <= high:
            comments += _comment_lines(
                f"throughput {value} is outside {low}-{high}, the range the AWS provider's schema accepts "
                f"({_TF_PROVIDER_RULES}): use a provider release that accepts it, or the AWS script.",
                "  # ",
            )
    return kept, comments


def _tf_block(kind: str, name: str, attributes: list[tuple[str, Any]], comments: list[str]) -> list[str]:
    inner: list[str] = []
    if kind == "aws_ebs_volume":
        volume_type = next((value for attribute, value in attributes if attribute == "type"), None)
        attributes, inner = _tf_volume_rules(volume_type, attributes)
    width = max(len(attribute) for attribute, _ in attributes)
    lines = [*comments, f'resource "{kind}" "{name}" {{']
    lines.append(
        "  # Keep every other argument as in your configuration; change only these"
        + (", and remove what the next lines name." if inner else ".")
    )
    lines += inner
    for attribute, value in attributes:
        lines.append(f"  {attribute.ljust(width)} = {json.dumps(value)}")
    lines.append("}")
    return lines


def _render_terraform(ctx: _Context) -> tuple[str, list[str]]:
    volumes, instances = _aws_groups(ctx)
    lines = _comment_lines(_title(ctx, "Terraform attribute changes"), "# ")
    lines += _comment_lines(
        "Resource names are placeholders named after the AWS ids: apply the attribute values to the "
        "resources that manage these volumes and instances in your configuration (find them with: terraform "
        "state list | xargs -n1 terraform state show | grep -B20 <volume or instance id>), keeping every other "
        "argument. A resource Terraform does not manage yet can be adopted with an import block "
        "(import { to = aws_ebs_volume.<name>, id = \"<volume id>\" }, Terraform 1.5+). Terraform changes an aws_ebs_volume in place with one "
        "ModifyVolume call (four per volume per rolling 24 hours, AWS Elastic Volumes); changing instance_type "
        "stops "
        "and starts the instance, restarting its TiKV: one at a time, leaders evicted first.",
        "# ",
    )
    if not volumes and not instances and not _creations(ctx):
        lines.append("# no AWS changes in this patch")
    for change in _creations(ctx):
        name = _tf_name(_new_volume_name(change))
        lines.append("")
        if ctx.rollback or not isinstance(change.proposed, dict):
            lines.append(f"# rollback: remove aws_ebs_volume.{name} and aws_volume_attachment.{name} once TiKV no "
                         "longer uses the volume")
            continue
        spec = change.proposed
        attributes: list[tuple[str, Any]] = [
            ("availability_zone", spec.get("availability_zone") or "<availability zone of the instance>"),
            ("type", spec["type"]),
            ("size", int(spec["size_gib"])),
        ]
        if spec.get("iops"):
            attributes.append(("iops", int(spec["iops"])))
        if spec.get("throughput_mibps"):
            attributes.append(("throughput", int(spec["throughput_mibps"])))
        lines += _tf_block("aws_ebs_volume", name, attributes, [f"# new volume: {change.reason}"])
        if spec.get("attach_to"):
            lines.append("")
            lines.append(f'resource "aws_volume_attachment" "{name}" {{')
            lines.append(f'  device_name = "{_NEW_VOLUME_DEVICE}"')
            lines.append(f"  volume_id   = aws_ebs_volume.{name}.id")
            lines.append(f"  instance_id = {json.dumps(spec['attach_to'])}")
            lines.append("}")
    for volume_id, changes in volumes.items():
        attributes = [
            (_VOLUME_TF[c.key], int(_aws_flag_value(c.key, c.proposed)) if c.key in _INTEGER_FLAGS else c.proposed)
            for c in changes
            if c.proposed is not None and not (ctx.rollback and c.key == "volume.size")
        ]
        if not attributes:
            continue
        comments = [f"# {volume_id}: {c.key} {_moved(c)}" for c in changes]
        if any(name == "size" for name, _ in attributes):
            comments += _comment_lines(
                "Terraform stops at ModifyVolume: once the modification is optimizing, grow the partition and "
                "filesystem on the host or TiKV gains nothing (growpart when on a partition, then xfs_growfs or "
                "resize2fs; the AWS artefact runs this step; AWS: "
                "https://docs.aws.amazon.com/ebs/latest/userguide/recognize-expanded-volume-linux.html).",
                "# ",
            )
        lines.append("")
        lines += _tf_block("aws_ebs_volume", _tf_name(volume_id), attributes, comments)
    for instance_id, changes in instances.items():
        change = changes[-1]
        if change.proposed is None:
            continue
        lines.append("")
        comments = [f"# {instance_id}: instance_type {_moved(change)}"]
        lines += _tf_block(
            "aws_instance", _tf_name(instance_id), [("instance_type", change.proposed)], comments
        )
    return "\n".join(lines) + "\n", []


# ----------------------------------------------------------------------------------------------------
# dispatch
#
# Every renderer's text passes through `visible_controls` in `artefact` below, whatever its format: a shell
# script, SQL, HCL, YAML and TOML all get a control character a person cannot see written as its \uXXXX escape
# (the formats' own rules are next to `_CONTROL`). A renderer never escapes them itself.

_RENDERERS: dict[str, Callable[[_Context], tuple[str, list[str]]]] = {
    "toml": _render_toml,
    "merged": _render_merged,
    "diff": _render_diff,
    "tiup": _render_tiup,
    "operator": _render_operator,
    "sql": _render_sql,
    "tikv-ctl": _render_tikv_ctl,
    "aws": _render_aws,
    "terraform": _render_terraform,
}


def file_slug(text: str) -> str:
    """A file-name-safe form of a cluster or node name (every artefact's file names use it)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "cluster"


def _filename(patch: Patch, fmt: str, rollback: bool, node: str | None) -> str:
    base = _FILES[fmt][0]
    parts = [file_slug(patch.cluster) if patch.cluster and not patch.cluster.startswith("<") else ""]
    if node:
        parts.append(file_slug(node))
    if rollback:
        parts.append("rollback")
    prefix = "-".join(part for part in parts if part)
    return f"{prefix}-{base}" if prefix else base


def _check_format(format: str) -> None:
    if format == "rollback":
        raise UnknownFormat(ROLLBACK_HELP)
    if format not in _FILES:
        raise UnknownFormat(f"unknown format {format!r}: expected one of {', '.join(FORMATS)}")


def _render(patch: Patch, format: str, ctx: _Context) -> Artefact:
    body, notes = _RENDERERS[format](ctx)
    notes = [*notes, *_raft_engine_off_notes(ctx)]
    return Artefact(format, _filename(patch, format, ctx.rollback, ctx.node), _FILES[format][1],
                    visible_controls(body), tuple(notes))


def artefact(
    patch: Patch,
    format: str,
    *,
    config_text: str | None = None,
    node: str | None = None,
    rollback: bool = False,
    config_source: str = "tikv.toml",
) -> Artefact:
    """Render `patch` as one artefact; `config_text` is the current tikv.toml (needed by merged and diff).

    `node` (a status address) narrows tikv changes to that node's file; `rollback=True` renders the inverse
    (previous values; for merged/diff, back to the original file byte for byte). `config_source` names the
    file in parse errors.
    """
    _check_format(format)
    labelled = _node_changes(patch, node)
    applied = _applied(config_text, labelled, config_source)
    return _render(patch, format, _context(patch, labelled, config_text, node, rollback, applied))


# C0 control characters other than tab, LF and CR, and DEL: neither YAML 1.2 (section 5.1, "Character Set") nor
# TOML 1.0 ("Control characters other than tab (U+0000 to U+0008, U+000A to U+001F, U+007F) are not permitted in
# comments") allows them raw, so one that reached an artefact from stored text (a cluster name saved before names
# refused them, a note) is written as its escape, which both read in a quoted string and a person reads in a
# comment. C1 characters (U+0080-U+009F, NEL among them) are left as they are: TOML allows them in comments, and a
# user's own file comes back byte for byte.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def visible_controls(text: str) -> str:
    """Replace each control character a YAML or TOML file may not hold by its \\uXXXX escape."""
    return _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04X}", text)


def _raft_engine_off_notes(ctx: _Context) -> list[str]:
    """Moving raft-engine.dir does nothing where the file turns Raft Engine off: TiKV keeps the Raft log in
    RocksDB at raftstore.raftdb-path then (TiKV configuration file: raft-engine.enable, raftstore.raftdb-path)."""
    if ctx.config_text is None or not any(c.key == "raft-engine.dir" for c in ctx.tikv):
        return []
    try:
        enabled = flatten(tomllib.loads(ctx.config_text)).get("raft-engine.enable")
    except tomllib.TOMLDecodeError:
        return []
    if enabled is not False:
        return []
    return [
        "raft-engine.dir: this file sets [raft-engine] enable = false, so TiKV keeps the Raft log in RocksDB "
        "(raftstore.raftdb-path) and moving raft-engine.dir will not take effect; move raftstore.raftdb-path "
        "instead, or enable Raft Engine first"
    ]


def artefacts(
    patch: Patch,
    *,
    config_text: str | None = None,
    node: str | None = None,
    formats: Sequence[str] | None = None,
    rollbacks: Sequence[bool] = (False, True),
    config_source: str = "tikv.toml",
) -> dict[str, Artefact]:
    """Render several artefacts from one patching of tikv.toml: each of `formats` (every format when None; then
    merged and diff only when tikv.toml is given) as it is (key "sql") and as its rollback ("sql.rollback"),
    as `rollbacks` asks. Each is the same, byte for byte, as `artefact` renders it alone."""
    wanted: list[str]
    if formats is None:
        wanted = [fmt for fmt in FORMATS if config_text is not None or fmt not in ("merged", "diff")]
    else:
        wanted = list(formats)
    for fmt in wanted:
        _check_format(fmt)
    labelled = _node_changes(patch, node)
    applied = _applied(config_text, labelled, config_source)
    contexts = {rollback: _context(patch, labelled, config_text, node, rollback, applied) for rollback in rollbacks}
    rendered: dict[str, Artefact] = {}
    for fmt in wanted:
        for rollback in rollbacks:
            rendered[f"{fmt}.rollback" if rollback else fmt] = _render(patch, fmt, contexts[rollback])
    return rendered
