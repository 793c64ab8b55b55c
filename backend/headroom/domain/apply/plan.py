"""The plan of an apply (docs/apply.md): which of a finding's changes Headroom may carry out itself, in which
order, what guards watch it and when each step can be undone. Pure: data in, data out.

What may be applied (everything else stays a downloadable artefact, with the reason in words):
- an EBS volume's type, IOPS or throughput: one `ec2:ModifyVolume` per volume, online while the volume stays
  in use (docs/reference/ebs-modify.md#online);
- a TiKV key that is online on the node's version (domain.tikvconf.online), set with `POST /config` on the
  node's status port (docs/reference/tikv-metrics.md#status-port).
Refused: a volume's size (it can never shrink back, docs/reference/ebs-modify.md#no-shrink, and the file system
must be grown on the host), an instance type (the instance must be stopped), a new volume or a RAID change, and
any TiKV key that needs a restart.

Undo: a TiKV key at once (set the value it had); a volume modification only six hours after it began
(docs/reference/ebs-modify.md#six-hours).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from headroom.domain.model import Change, EntityRef
from headroom.domain.tikvconf.online import can_change_online, online_status

StepKind = Literal["ebs_modify_volume", "tikv_online_config"]
Weekday = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
WEEKDAYS: tuple[Weekday, ...] = get_args(Weekday)
# docs/reference/ebs-modify.md#six-hours: a volume can be modified again only six hours after a modification.
EBS_MODIFY_COOLDOWN = dt.timedelta(hours=6)
APPLICABLE_VOLUME_KEYS = ("volume.type", "volume.iops", "volume.throughput")
_TIME = re.compile(r"([01][0-9]|2[0-3]):([0-5][0-9])")

_REFUSED_AWS: dict[str, str] = {
    "volume.size": "A larger volume can never be made smaller again, and its file system must then be grown on "
                   "the instance: download the patch and run it yourself.",
    "instance.type": "Changing the instance type stops and starts the instance: download the patch and do it in "
                     "a maintenance window.",
    "volume.create": "A new volume has to be attached, formatted and mounted on the instance: download the patch.",
    "volume.raid0-stripes": "Striping volumes means rebuilding the data directory: download the patch.",
}


class PlanStep(BaseModel):
    """One step of a plan: one change on one volume or one TiKV node, and the change that undoes it."""

    model_config = ConfigDict(frozen=True)

    position: int = Field(description="Order of the step, from 1: steps run one at a time, in this order.")
    kind: StepKind = Field(description="ebs_modify_volume: an EBS volume modification; tikv_online_config: a TiKV "
                                       "key set online on one node's status port.")
    target: str = Field(description="The volume id, or the TiKV node's status address.")
    change: Change
    undo: Change = Field(description="The change that puts the value back.")
    undo_after_seconds: int = Field(description="How long after the step starts it can be undone (0: at once).")
    undo_note: str = Field(description="When and how the step can be undone, in words.")


class Refusal(BaseModel):
    """A change of the finding's fix that Headroom will not apply itself, and why."""

    model_config = ConfigDict(frozen=True)

    key: str
    target: str | None
    reason: str


class MaintenanceWindow(BaseModel):
    """When a plan may run: from `start` to `end` (UTC, HH:MM) on the given weekdays; an end before the start
    runs past midnight into the next day."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    start: str = Field(description="Start time, UTC, HH:MM (24-hour).")
    end: str = Field(description="End time, UTC, HH:MM (24-hour); earlier than the start: the next day.")
    weekdays: list[Weekday] = Field(min_length=1, max_length=7, description="The days (UTC) the window opens on.")

    @field_validator("start", "end")
    @classmethod
    def _hh_mm(cls, value: str) -> str:
        if not _TIME.fullmatch(value):
            raise ValueError("must be a time of day as HH:MM, 00:00 to 23:59")
        return value

    @model_validator(mode="after")
    def _not_empty(self) -> MaintenanceWindow:
        if self.start == self.end:
            raise ValueError("the window must not start and end at the same time")
        if len(set(self.weekdays)) != len(self.weekdays):
            raise ValueError("each weekday may be listed once")
        return self

    def minutes(self) -> tuple[int, int]:
        """Return the start and end as minutes after midnight."""
        (h1, m1), (h2, m2) = (map(int, t.split(":")) for t in (self.start, self.end))
        return h1 * 60 + m1, h2 * 60 + m2

    def contains(self, at: dt.datetime) -> bool:
        """Whether `at` falls inside the window (a window past midnight belongs to the day it opened)."""
        at = at.astimezone(dt.UTC)
        start, end = self.minutes()
        minute = at.hour * 60 + at.minute
        today = WEEKDAYS[at.weekday()]
        yesterday = WEEKDAYS[(at.weekday() - 1) % 7]
        if start < end:
            return today in self.weekdays and start <= minute < end
        return (today in self.weekdays and minute >= start) or (yesterday in self.weekdays and minute < end)


def refusal_reason(change: Change, version: str | None) -> str | None:
    """Say in words why Headroom will not apply `change` itself (None: it may)."""
    if change.target == "aws":
        if change.key in APPLICABLE_VOLUME_KEYS:
            if change.entity is None or change.entity.volume() is None:
                return "The change does not name the volume it is for."
            if change.proposed is None:
                return "The change has no new value."
            return None
        return _REFUSED_AWS.get(change.key, "Headroom cannot make this change itself: download the patch.")
    if change.proposed is None:
        return "Removing a key from tikv.toml takes a restart: download the patch."
    if not can_change_online(change.key, change.current, change.proposed, version):
        status = online_status(change.key, version)
        on = f" on TiKV {version}" if version else ""
        why = "is not known to change online" if not status.known else "cannot be changed online"
        return f"The TiKV setting {change.key} {why}{on}: it needs a rolling restart, so download the patch."
    return None


def _undo(change: Change, target: str) -> Change:
    """Return the change that puts `change`'s value back on `target`."""
    return change.model_copy(update={"current": change.proposed, "proposed": change.current,
                                     "reason": "undo: put the value back"})


def build_steps(
    changes: Sequence[Change], *, tikv_nodes: Sequence[str], version: str | None,
) -> tuple[list[PlanStep], list[Refusal]]:
    """Order the applicable changes one step per volume or node (volumes first, then TiKV nodes in address
    order; a change for every node becomes one step per node) and list the refused ones with their reason."""
    refusals: list[Refusal] = []
    volume_steps: list[tuple[str, Change]] = []
    node_steps: list[tuple[str, Change]] = []
    for change in changes:
        reason = refusal_reason(change, version)
        if reason is not None:
            refusals.append(Refusal(key=change.key, target=change.applies_to(), reason=reason))
            continue
        if change.target == "aws":
            assert change.entity is not None
            volume = change.entity.volume()
            assert volume is not None
            volume_steps.append((volume, change))
            continue
        node = change.applies_to()
        targets = [node] if node is not None else sorted(tikv_nodes)
        if not targets:
            refusals.append(Refusal(key=change.key, target=None,
                                    reason="No TiKV node of the cluster has a status address to set it on."))
        for address in targets:
            entity = change.entity or EntityRef(kind="node", id=address)
            located = change.model_copy(update={"entity": entity.model_copy(update={"status_address": address})})
            node_steps.append((address, located))
    steps: list[PlanStep] = []
    for target, change in volume_steps:
        steps.append(PlanStep(
            position=len(steps) + 1, kind="ebs_modify_volume", target=target, change=change,
            undo=_undo(change, target), undo_after_seconds=int(EBS_MODIFY_COOLDOWN.total_seconds()),
            undo_note="Six hours after the modification starts: AWS allows one modification of a volume every six "
                      "hours. The old type, IOPS or throughput can then be set again.",
        ))
    for target, change in sorted(node_steps, key=lambda item: item[0]):
        steps.append(PlanStep(
            position=len(steps) + 1, kind="tikv_online_config", target=target, change=change,
            undo=_undo(change, target), undo_after_seconds=0,
            undo_note="At once: the value it had is set again on the node's status port.",
        ))
    return steps, refusals
