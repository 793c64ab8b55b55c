"""The API's fields in words: the one place a 422's human message gets the name of the field it is about.

Programs read the machine path (`details[].field`, `details[].loc`); people read the message, which starts with
the field's label ("Prometheus URL: ...", "Change 1: ...", "tikv.toml contents: ..."), never "base_url:" or
"changes[0]:". A request model's own `Field(title=...)` wins over this table (the validation handler looks it up);
a field in neither is written out from its name ("min_severity" -> "Min severity").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

FIELD_LABELS: dict[str, str] = {
    "access_key_id": "Access key ID",
    "as_it_was": "The state before the changes",
    "base_config": "Base config",
    "base_url": "Prometheus URL",
    "burst_horizon_hours": "Burst forecast horizon (hours)",
    "ceiling_horizon_days": "Ceiling forecast horizon (days)",
    "changes": "Changes",
    "cluster_id": "Cluster",
    "days": "Days",
    "content": "tikv.toml contents",
    "email": "Email",
    "end": "End",
    "external_id": "External ID",
    "families": "Rule families",
    "finding_ids": "Findings",
    "format": "Format",
    "label_selector": "Label selector",
    "lookback_days": "Lookback (days)",
    "manifest": "Manifest",
    "min_severity": "Minimum severity",
    "name": "Name",
    "node": "Node",
    "options": "Options",
    "password": "Password",
    "proposed": "proposed value",
    "quiet_hours": "Quiet hours",
    "rule": "Rule",
    "regions": "Regions",
    "renotify_hours": "Reminder interval (hours)",
    "role_arn": "Role ARN",
    "secret": "Secret",
    "secret_access_key": "Secret access key",
    "severity": "Severity",
    "sort": "Sort order",
    "start": "Start",
    "status": "Status",
    "status_address": "Status address",
    "step_seconds": "Step",
    "store_address": "Store address",
    "topology": "Topology",
    "until": "Until",
    "url": "URL",
}
# a list whose items are numbered from 1 in words: changes[0] is "Change 1"
LIST_ITEM_LABELS: dict[str, str] = {"changes": "Change", "regions": "Region"}
LOCATIONS = ("body", "query", "path", "header", "cookie")

_TOKEN = re.compile(r"\[(\d+)\]|\.?(\d+)(?=\.|\[|$)|\.?([^.\[\]]+)")
# a message that starts with a machine field path ("base_url: ", "changes[0]: ", "changes.0.proposed: ")
_PREFIX = re.compile(r"^([a-z_][a-z0-9_]*(?:\[\d+\]|\.\d+|\.[a-z_][a-z0-9_]*)*): ")


# pydantic's union members in a loc ("literal['toml','diff']", "function-after[...]", "list[str]", "str"): not fields
_FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TYPE_TAGS = frozenset({"str", "int", "float", "bool", "list", "dict", "none", "uuid"})


def _tokens(path: str | Sequence[str | int]) -> list[str | int]:
    if not isinstance(path, str):
        return [p for p in path if isinstance(p, int)
                or (p not in LOCATIONS and p not in _TYPE_TAGS and _FIELD_NAME.fullmatch(p))]
    out: list[str | int] = []
    for index, number, name in _TOKEN.findall(path):
        if index or number:
            out.append(int(index or number))
        elif name not in LOCATIONS:
            out.append(name)
    return out


def _words(name: str) -> str:
    spaced = name.replace("_", " ").strip()
    return spaced[:1].upper() + spaced[1:]


def field_label(path: str | Sequence[str | int], titles: dict[str, str] | None = None) -> str:
    """Name a field path ("changes[0].proposed", ("body", "base_url")) in words for a person."""
    tokens = _tokens(path)
    parts: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        following = tokens[i + 1] if i + 1 < len(tokens) else None
        if isinstance(token, str) and isinstance(following, int) and token in LIST_ITEM_LABELS:
            parts.append(f"{LIST_ITEM_LABELS[token]} {following + 1}")
            i += 2
            continue
        if isinstance(token, int):
            parts.append(f"item {token + 1}")
        else:
            label = (titles or {}).get(token) or FIELD_LABELS.get(token) or _words(token)
            parts.append(label if not parts else label[:1].lower() + label[1:] if label[1:2].islower() else label)
        i += 1
    return ", ".join(parts) or "Request"


def labelled(message: str) -> str:
    """Replace a machine field path at the start of a message with the field's label."""
    match = _PREFIX.match(message)
    if match is None:
        return message
    names = [t for t in _tokens(match.group(1)) if isinstance(t, str)]
    # only a path of known fields: "topology.yaml: ..." names a file, not a field
    if not names or not all(n in FIELD_LABELS or n in LIST_ITEM_LABELS for n in names):
        return message
    return f"{field_label(match.group(1))}: {message[match.end():]}"
