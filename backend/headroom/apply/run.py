"""Running an approved plan (docs/apply.md "Running a plan"): one step at a time, each verified, watched and judged
by the plan's guards; an automatic rollback when a guard trips; a kill switch; a volume's undo once AWS allows it
and a user confirms it.

The run is a state machine stored in apply_plans / apply_steps and advanced by the job `apply.advance` (queued
when a run starts, a stop is asked or an undo confirmed, and every minute by its schedule), so a step's watch
costs no worker and a worker lost mid-run loses nothing:
- a step `pending` starts only while the organisation and the cluster allow apply, the plan is not being stopped,
  and the maintenance window (if any) is open; these are checked again before every step;
- `running`: a TiKV key: the value before is read from the node and recorded (committed) before anything is
  set; then POST /config and the read-back (inventory.tikv_config_set). A volume: ec2:ModifyVolume through the
  organisation's write role, then DescribeVolumesModifications until `optimizing` or `completed` (the new
  performance applies from `optimizing`: docs/reference/ebs-modify.md#online), polled at each advance;
- `verifying`: the watch; when it ends the guards are read (domain.apply.run.judge) and the step is `done`, or
  the run rolls back.
A step being carried out holds its row lock (FOR UPDATE); another advance skips a locked step (SKIP LOCKED), so a
step is never carried out twice at once, and a step found done is never repeated. Re-setting a TiKV key to the
same value, or finding a volume's modification already started, makes a retried step harmless.

Rollback: TiKV keys are set back to the value recorded before, on every node the run changed, newest first, each
read back. A volume cannot be modified again for six hours (docs/reference/ebs-modify.md#six-hours): the run
stops, the organisation's alert channels get one alert, and the volume's undo waits for a user to confirm it, no
earlier than six hours after its modification started.
"""

from __future__ import annotations

import datetime as dt
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from headroom.accounts.models import Organization, User
from headroom.accounts.service import audit
from headroom.alerts import service as alerts_service
from headroom.apply.models import ApplyPlan, ApplyStepRun
from headroom.clusters.models import Cluster
from headroom.clusters.service import get_cluster
from headroom.domain.apply.guards import Guard
from headroom.domain.apply.plan import EBS_MODIFY_COOLDOWN, PlanStep
from headroom.domain.apply.run import WATCH_GRACE, GuardReading, awaiting_data, judge, p99, watch_state
from headroom.domain.derived import latency_ms
from headroom.domain.snapshot import metric_ids as mid
from headroom.domain.snapshot.labels import shown_scale
from headroom.domain.snapshot.registry import REGISTRY
from headroom.domain.tikvconf.parse import flatten, same_value
from headroom.domain.units import setting_text
from headroom.inventory import tikv_config_set
from headroom.inventory.models import Instance, TikvNode, Volume
from headroom.inventory.tikv_status import StatusPortError, fetch_config
from headroom.platform.errors import Conflict, PermissionDenied
from headroom.platform.jobs.context import JobContext
from headroom.platform.logging import get_logger
from headroom.platform.principal import Principal
from headroom.timeseries import repository as ts

log = get_logger("headroom.apply.run")

WEEK = dt.timedelta(days=7)
ORG_OFF = "Apply was turned off for the organisation"
CLUSTER_OFF = "Apply was turned off for the cluster"
# ec2:ModifyVolume's parameters for the change keys a plan applies (AWS ModifyVolume API reference:
# https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_ModifyVolume.html).
MODIFY_PARAMS = {"volume.type": "VolumeType", "volume.iops": "Iops", "volume.throughput": "Throughput"}
ORIGINAL_FIELDS = {"volume.type": "OriginalVolumeType", "volume.iops": "OriginalIops",
                   "volume.throughput": "OriginalThroughput"}
TARGET_FIELDS = {"volume.type": "TargetVolumeType", "volume.iops": "TargetIops",
                 "volume.throughput": "TargetThroughput"}
# docs/reference/ebs-modify.md#online: the new performance applies from `optimizing`.
MODIFICATION_IN_EFFECT = ("optimizing", "completed")
LATENCY_PARTS = {"derived.read_latency_ms": (mid.EBS_TOTAL_READ_TIME, mid.EBS_READ_OPS),
                 "derived.write_latency_ms": (mid.EBS_TOTAL_WRITE_TIME, mid.EBS_WRITE_OPS)}
APPLIED = ("verifying", "done")
FINAL_STEP = ("done", "failed", "undone", "skipped", "stopped", "unknown")
DEFAULT_VOLUME_TAG = ("headroom-apply", "true")  # the write role template's default tag (sources/aws templates)


def _when(at: dt.datetime) -> str:
    return f"{at.astimezone(dt.UTC):%Y-%m-%d %H:%M} UTC"


# --------------------------------------------------------------------------------------------- the API's part


def _plan(db: Session, principal: Principal, plan_id: uuid.UUID) -> ApplyPlan:
    row = db.scalar(select(ApplyPlan).where(ApplyPlan.org_id == principal.org_id, ApplyPlan.id == plan_id)
                    .with_for_update())
    if row is None:
        from headroom.platform.errors import NotFound

        raise NotFound("plan not found")
    return row


def _gates(db: Session, plan: ApplyPlan, now: dt.datetime) -> tuple[str | None, str | None]:
    """(why apply is not allowed now, why the window is closed now) for the plan, each None when fine."""
    org = db.get(Organization, plan.org_id)
    cluster = db.get(Cluster, plan.cluster_id)
    off = None
    if org is None or not org.apply_enabled:
        off = ORG_OFF
    elif cluster is None or not cluster.apply_enabled:
        off = CLUSTER_OFF
    window = plan.maintenance_window
    closed = None
    if window is not None and not window.contains(now):
        closed = (f"Outside the plan's maintenance window ({window.start}-{window.end} UTC on "
                  f"{', '.join(d.capitalize() for d in window.weekdays)}); it is {now.astimezone(dt.UTC):%a %H:%M} "
                  "UTC now.")
    return off, closed


def start_run(db: Session, principal: Principal, plan_id: uuid.UUID, *, now: dt.datetime) -> ApplyPlan:
    """Start running an approved plan (admins and owners), while apply is on and its window open."""
    principal.require("admin")
    plan = _plan(db, principal, plan_id)
    if plan.status != "approved":
        raise Conflict(f"This plan is {plan.status.replace('_', ' ')}; only an approved plan can be run.")
    get_cluster(db, principal, plan.cluster_id)
    off, closed = _gates(db, plan, now)
    if off is not None:
        raise PermissionDenied(f"{off}: an owner can turn it on in Settings › Apply.", code="apply_off")
    if closed is not None:
        raise Conflict(closed, code="outside_window")
    plan.status, plan.run_by_user_id, plan.run_started_at = "running", principal.user_id, now
    plan.outcome = "Running."
    db.flush()
    audit(db, principal, "apply.run_started", target_kind="apply_plan", target_id=plan.id,
          details={"finding_id": str(plan.finding_id) if plan.finding_id else None, "steps": len(plan.steps)})
    return plan


def stop_run(db: Session, principal: Principal, plan_id: uuid.UUID, *, now: dt.datetime) -> ApplyPlan:
    """The kill switch (admins and owners): no further step starts; the step being carried out finishes its
    read-back; every step ends in a recorded state."""
    principal.require("admin")
    plan = _plan(db, principal, plan_id)
    if plan.status != "running":
        raise Conflict(f"This plan is {plan.status.replace('_', ' ')}; only a running plan can be stopped.")
    _request_stop(db, plan, principal, now)
    return plan


def stop_all(db: Session, principal: Principal, *, now: dt.datetime) -> list[uuid.UUID]:
    """Stop every running plan of the organisation (admins and owners); return the plans stopped."""
    principal.require("admin")
    plans = list(db.scalars(select(ApplyPlan).where(ApplyPlan.org_id == principal.org_id,
                                                    ApplyPlan.status == "running").with_for_update()))
    for plan in plans:
        _request_stop(db, plan, principal, now)
    return [p.id for p in plans]


def _request_stop(db: Session, plan: ApplyPlan, principal: Principal, now: dt.datetime) -> None:
    if plan.stop_requested_at is None:
        plan.stop_requested_at = now
        audit(db, principal, "apply.run_stop_requested", target_kind="apply_plan", target_id=plan.id,
              details={"finding_id": str(plan.finding_id) if plan.finding_id else None})
        # kept as the outcome: a step being carried out finishes first, and its advance settles the rest
        plan.outcome = f"Stopped by {_email(db, principal.user_id) or 'an API token'} at {_when(now)}."
    _settle_stop(db, plan, now, plan.outcome)


def confirm_undo(db: Session, principal: Principal, plan_id: uuid.UUID, *, now: dt.datetime) -> ApplyPlan:
    """Confirm the undo of the plan's applied steps (admins and owners): TiKV settings are set back at once (a
    setting that changes online changes back the same way); a volume only once AWS allows it again, six hours
    after its modification started (refused before, with the time, when no setting is left to set back)."""
    principal.require("admin")
    plan = _plan(db, principal, plan_id)
    if plan.status == "running":
        raise Conflict("The plan is still running: stop it first.")
    waiting = [s for s in _steps(db, plan, lock=True)
               if (s.status == "done" or _left_changed(plan, s)) and s.undo_confirmed_at is None]
    keys = [s for s in waiting if _step(plan, s).kind != "ebs_modify_volume"]
    volumes = [s for s in waiting if _step(plan, s).kind == "ebs_modify_volume"]
    if not waiting:
        raise Conflict("This plan has no applied change waiting to be undone.")
    earliest = max((s.undo_not_before or now for s in volumes), default=now)
    if now < earliest and not keys:
        raise Conflict(f"AWS allows a volume to be modified again only six hours after its last modification "
                       f"started: the undo can be confirmed from {_when(earliest)}.", code="too_early",
                       details={"undo_not_before": earliest.isoformat()})
    off, _ = _gates(db, plan, now)
    if off is not None:
        raise PermissionDenied(f"{off}: an owner can turn it on in Settings › Apply.", code="apply_off")
    steps = keys + (volumes if now >= earliest else [])
    for s in steps:
        s.undo_confirmed_at = now
    later = (f" The volume change{'s' if len(volumes) != 1 else ''} can be undone from {_when(earliest)}."
             if volumes and now < earliest else "")
    plan.outcome = (plan.outcome + " " if plan.outcome else "") + f"Undo confirmed at {_when(now)}.{later}"
    db.flush()
    audit(db, principal, "apply.undo_confirmed", target_kind="apply_plan", target_id=plan.id,
          details={"steps": [s.position for s in steps]})
    return plan


# ------------------------------------------------------------------------------------------------ the steps


def _left_changed(plan: ApplyPlan, run: ApplyStepRun) -> bool:
    """Whether a TiKV step's setting may still hold the run's value: it was sent and read back, and setting it back
    failed (the rollback or an undo was refused, or the node did not answer). A person sets it back with the undo."""
    return run.status == "failed" and "read_back" in run.observed and _step(plan, run).kind != "ebs_modify_volume"


def _needs_person(db: Session, plan: ApplyPlan) -> bool:
    """Whether a stopped run still leaves something for a person: a volume change waiting for its confirmed undo,
    or a TiKV setting that could not be set back."""
    return any((r.status in ("done", "undoing") and _step(plan, r).kind == "ebs_modify_volume")
               or _left_changed(plan, r) for r in _steps(db, plan))


def _steps(db: Session, plan: ApplyPlan, *, lock: bool = False) -> list[ApplyStepRun]:
    query = (select(ApplyStepRun).where(ApplyStepRun.org_id == plan.org_id, ApplyStepRun.plan_id == plan.id)
             .order_by(ApplyStepRun.position))
    return list(db.scalars(query.with_for_update() if lock else query))


def _step(plan: ApplyPlan, run: ApplyStepRun) -> PlanStep:
    return next(s for s in plan.steps if s.position == run.position)


def _lock_step(db: Session, run: ApplyStepRun) -> ApplyStepRun | None:
    """Lock a step's row, or None when another advance holds it (it is being carried out)."""
    return db.scalar(select(ApplyStepRun).where(ApplyStepRun.id == run.id).with_for_update(skip_locked=True)
                     .execution_options(populate_existing=True))


def _email(db: Session, user_id: uuid.UUID | None) -> str | None:
    user = db.get(User, user_id) if user_id else None
    return user.email if user is not None else None


def _audit(db: Session, plan: ApplyPlan, action: str, run: ApplyStepRun, step: PlanStep, **details: Any) -> None:
    audit(db, plan.org_id, action, target_kind="apply_plan", target_id=plan.id,
          details={"position": run.position, "target": step.target, "key": step.change.key, **details})


def _settle_stop(db: Session, plan: ApplyPlan, now: dt.datetime, outcome: str) -> bool:
    """Put every step of a plan being stopped in a recorded state; return whether the plan is now stopped (False
    while a step is being carried out: its advance finishes the read-back and settles the rest)."""
    in_flight = False
    for run in _steps(db, plan):
        if run.status in FINAL_STEP or run.status == "undone":
            continue
        locked = _lock_step(db, run)
        if locked is None:
            in_flight = True
            continue
        step = _step(plan, locked)
        if locked.status == "pending":
            locked.status = "stopped"
            _audit(db, plan, "apply.step_stopped", locked, step, state="not started")
        elif locked.status == "verifying":
            locked.status, locked.watch_until = "done", None
            locked.observed = {**locked.observed, "note": "The run was stopped during this step's watch: the change "
                                                          "stays applied and was not judged."}
            _audit(db, plan, "apply.step_stopped", locked, step, state="applied, not judged")
        elif locked.status in ("running", "undoing"):
            # Not locked: no advance is carrying it out (a worker was lost). What was last read is recorded.
            locked.status = "unknown"
            locked.error = ("The run was stopped while this step was being carried out; its last reading: "
                            + _last_read(locked.observed))
            _audit(db, plan, "apply.step_stopped", locked, step, state="unknown")
    if in_flight:
        return False
    plan.status, plan.run_finished_at, plan.outcome = "stopped", now, outcome
    db.flush()
    return True


def _last_read(observed: dict[str, Any]) -> str:
    if "read_back" in observed:
        return f"it reported {setting_text('', observed['read_back'])}."
    if "modification_state" in observed:
        return f"the volume modification was {observed['modification_state']}."
    if "before" in observed:
        return "the value before was read; nothing was sent."
    return "nothing was read or sent."


# ---------------------------------------------------------------------------------------------- the executors


@dataclass(frozen=True)
class Effects:
    """How a run reaches the world: the TiKV status ports and the EC2 API through the write role."""

    set_key: Callable[[str, str, Any], tikv_config_set.SetResult]
    read_key: Callable[[str, str], Any]
    ec2: Callable[[Organization, str], Any]


def _read_key(address: str, key: str) -> Any:
    config, _ = fetch_config(address)
    return flatten(config).get(key)


def _set_key(address: str, key: str, value: Any) -> tikv_config_set.SetResult:
    return tikv_config_set.set_config_key(address, key, value)


class _NoSecrets:
    def decrypt(self, ciphertext: str) -> str:  # the write role is assumed with Headroom's own credentials
        raise ValueError("the write role needs no stored secret")


def write_role_ec2(endpoint_url: str | None) -> Callable[[Organization, str], Any]:
    """EC2 clients as the organisation's write role (STS AssumeRole with its external ID), per region."""
    from headroom.sources.aws.session import clients_for

    @dataclass
    class _Role:
        org_id: Any
        role_arn: str | None
        external_id: str
        auth_kind: str = "assume_role"
        access_key_id: str | None = None
        secret_access_key_enc: str | None = None

    def ec2(org: Organization, region: str) -> Any:
        role = _Role(org.id, org.apply_role_arn, org.aws_external_id)
        return clients_for(role, region, _NoSecrets(), endpoint_url=endpoint_url).ec2()

    return ec2


def default_effects(ctx: JobContext) -> Effects:
    return Effects(set_key=_set_key, read_key=_read_key, ec2=write_role_ec2(ctx.settings.aws_endpoint_url))


class StepFailed(Exception):
    """A step could not be carried out; the message says why in words."""


def _volume_row(db: Session, org_id: uuid.UUID, volume_id: str) -> Volume | None:
    return db.scalar(select(Volume).where(Volume.org_id == org_id, Volume.volume_id == volume_id))


# A region's name begins an availability zone's (us-east-1 in us-east-1a, us-west-2 in the Local Zone
# us-west-2-lax-1a): AWS, Regions and Zones (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/using-regions-availability-zones.html).
_REGION_OF_ZONE = re.compile(r"^([a-z]{2}(?:-gov)?-[a-z]+-\d+)")


# The inventory columns of ModifyVolume's change keys.
VOLUME_COLUMNS = {"volume.type": "volume_type", "volume.iops": "iops", "volume.throughput": "throughput_mibps"}


def _record_volume(db: Session, org_id: uuid.UUID, volume_id: str, read_back: dict[str, Any], now: dt.datetime
                   ) -> None:
    """Write what AWS read back once a modification is in effect onto the volume's inventory row, and when, so the
    pages show the volume as it now is without waiting for the next inventory sweep (which reads the same). A new
    type whose IOPS or throughput AWS did not report leaves them unknown until that sweep."""
    volume = _volume_row(db, org_id, volume_id)
    if volume is None:
        return
    values = {VOLUME_COLUMNS[k]: v for k, v in read_back.items() if k in VOLUME_COLUMNS and v is not None}
    if "volume_type" in values and values["volume_type"] != volume.volume_type:
        volume.iops = volume.throughput_mibps = None
    for column, value in values.items():
        setattr(volume, column, str(value) if column == "volume_type" else int(value))
    volume.modified_at = now


def _region(db: Session, volume: Volume) -> str | None:
    """The volume's region: its instance's, else the one its availability zone names."""
    instance = db.get(Instance, volume.instance_ref_id) if volume.instance_ref_id else None
    if instance is not None and instance.region:
        return instance.region
    found = _REGION_OF_ZONE.match(volume.availability_zone or "")
    return found.group(1) if found else None


def _tag_refusal(org: Organization, volume: Volume | None, volume_id: str, region: str | None) -> str | None:
    key, value = ((org.apply_volume_tag_key, org.apply_volume_tag_value or "") if org.apply_volume_tag_key
                  else DEFAULT_VOLUME_TAG)
    if volume is None:
        return f"Headroom does not know the volume {volume_id} (not in the EC2 inventory): nothing was sent."
    if volume.tags.get(key) != value:
        return (f"The volume {volume_id} does not carry the tag {key}={value} your write role requires: Headroom "
                "did not try to modify it (AWS would refuse it). Tag it, or apply the patch yourself.")
    if not region:
        return f"Headroom does not know the region of the volume {volume_id}: nothing was sent."
    return None


def _modification(ec2: Any, volume_id: str) -> dict[str, Any] | None:
    """The volume's newest modification. Two with the same start time (AWS allows one every six hours, but an
    endpoint that keeps whole minutes, as moto does, can report a modification and its undo at one time): the one
    listed last, the later one."""
    found = ec2.describe_volumes_modifications(VolumeIds=[volume_id]).get("VolumesModifications", [])
    if not found:
        return None
    never = dt.datetime.min.replace(tzinfo=dt.UTC)
    return dict(max(enumerate(found), key=lambda im: (im[1].get("StartTime") or never, im[0]))[1])


def _modify_volume(db: Session, plan: ApplyPlan, run: ApplyStepRun, changes: dict[str, Any],
                   effects: Effects, *, undo: bool) -> dict[str, Any]:
    """Start (or find started) the volume's modification of every key in `changes` in one ModifyVolume call (AWS
    allows one modification of a volume every six hours: docs/reference/ebs-modify.md#online); return what was
    observed: per key the value before (`before_all`) and the target AWS reports (`read_back_all`)."""
    org = db.get(Organization, plan.org_id)
    assert org is not None
    step = _step(plan, run)
    volume = _volume_row(db, plan.org_id, step.target)
    region = _region(db, volume) if volume is not None else None
    refusal = _tag_refusal(org, volume, step.target, region)
    if refusal is not None:
        raise StepFailed(refusal)
    if not org.apply_role_arn:
        raise StepFailed("No write role is set for the organisation: volume changes cannot be applied.")
    assert region is not None
    from botocore.exceptions import BotoCoreError, ClientError

    prefix = "undo_" if undo else ""
    started_key = f"{prefix}modification_started_at"
    try:
        ec2 = effects.ec2(org, region)
        observed: dict[str, Any] = {}
        if started_key not in run.observed:
            params = _modify_params(changes)
            answer = ec2.modify_volume(VolumeId=step.target, **params)["VolumeModification"]
            observed[started_key] = (answer.get("StartTime") or dt.datetime.now(dt.UTC)).isoformat()
            if not undo:
                observed["before_all"] = {key: answer.get(ORIGINAL_FIELDS[key]) for key in changes}
            observed[f"{prefix}requested_all"] = dict(changes)
        current = _modification(ec2, step.target)
    except (ClientError, BotoCoreError) as error:
        raise StepFailed(f"AWS refused or failed to modify the volume {step.target}: {error}") from None
    state = current.get("ModificationState") if current else None
    observed[f"{prefix}modification_state"] = state
    if current is not None:
        observed[f"{prefix}read_back_all"] = {key: current.get(TARGET_FIELDS[key]) for key in changes}
    if state == "failed":
        raise StepFailed(f"AWS reports the modification of {step.target} failed: "
                         f"{current.get('StatusMessage') if current else ''}".rstrip(": "))
    return observed


# ModifyVolume: Iops is valid for gp3, io1 and io2 only, Throughput for gp3 only (AWS ModifyVolume API reference,
# https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_ModifyVolume.html): going back to gp2 sets the type.
TAKES_IOPS = ("gp3", "io1", "io2")
TAKES_THROUGHPUT = ("gp3",)


# ModifyVolume's Iops and Throughput are integers (same reference); a plan may carry a whole number as a float
# (250.0 MiB/s from a rule's arithmetic), which botocore refuses before anything is sent.
INTEGER_PARAMS = ("Iops", "Throughput")


def _modify_params(changes: dict[str, Any]) -> dict[str, Any]:
    """ModifyVolume's parameters for these changes, leaving out what the target type does not take."""
    params = {MODIFY_PARAMS[key]: value for key, value in changes.items() if value is not None}
    for name in INTEGER_PARAMS:
        value = params.get(name)
        if isinstance(value, float):
            if not value.is_integer():
                raise StepFailed(f"AWS takes whole numbers for {name}; the plan asks for {value}: nothing was sent.")
            params[name] = int(value)
    kind = params.get("VolumeType")
    if kind is not None and kind not in TAKES_IOPS:
        params.pop("Iops", None)
    if kind is not None and kind not in TAKES_THROUGHPUT:
        params.pop("Throughput", None)
    return params


def _volume_siblings(db: Session, plan: ApplyPlan, run: ApplyStepRun, statuses: tuple[str, ...],
                     *, confirmed: bool = False) -> list[ApplyStepRun]:
    """The plan's other steps on the same volume in `statuses` (locked): they go in the same modification."""
    target = _step(plan, run).target
    out = []
    for other in _steps(db, plan):
        step = _step(plan, other)
        if other.id == run.id or step.kind != "ebs_modify_volume" or step.target != target:
            continue
        if other.status not in statuses or (confirmed and other.undo_confirmed_at is None):
            continue
        locked = _lock_step(db, other)
        if locked is not None:
            out.append(locked)
    return out


def _carry_out(db: Session, plan: ApplyPlan, run: ApplyStepRun, effects: Effects, now: dt.datetime,
               watch: dt.timedelta) -> str:
    """Carry out a `running` step (the row locked); return "again" when it moved on, "wait" when not yet."""
    step = _step(plan, run)
    key, value = step.change.key, step.change.proposed
    if step.kind == "tikv_online_config":
        if "before" not in run.observed:
            try:
                before = effects.read_key(step.target, key)
            except StatusPortError as error:
                raise StepFailed(f"Could not read {key} from the TiKV node at {step.target}: {error}") from None
            if before is None:
                raise StepFailed(f"The TiKV node at {step.target} does not report {key}: nothing was set.")
            # recorded (committed) before anything is set, so a retry never takes the new value for the old
            run.observed = {**run.observed, "before": before}
            return "again"
        try:
            result = effects.set_key(step.target, key, value)
        except StatusPortError as error:
            raise StepFailed(str(error)) from None
        run.observed = {**run.observed, "requested": value, "read_back": result.read_back}
        if not result.verified:
            raise StepFailed(f"The TiKV node at {step.target} reports {key} = {setting_text(key, result.read_back)} "
                             f"after it was set to {setting_text(key, value)}.")
    else:
        siblings = _volume_siblings(db, plan, run, ("pending",))
        changes = {key: value} | {_step(plan, r).change.key: _step(plan, r).change.proposed for r in siblings}
        seen = {**run.observed, **_modify_volume(db, plan, run, changes, effects, undo=False)}
        seen["before"] = seen.get("before_all", {}).get(key)
        seen["read_back"] = seen.get("read_back_all", {}).get(key)
        run.observed = seen
        if seen.get("modification_state") not in MODIFICATION_IN_EFFECT:
            return "wait"
        started = dt.datetime.fromisoformat(seen["modification_started_at"])
        run.undo_not_before = started + EBS_MODIFY_COOLDOWN
        _record_volume(db, plan.org_id, step.target, seen.get("read_back_all", {}), now)
        for other in siblings:
            other_key = _step(plan, other).change.key
            other.status, other.started_at, other.finished_at = "verifying", run.started_at, now
            other.watch_until, other.undo_not_before = now + watch, run.undo_not_before
            other.observed = {"modification_started_at": seen["modification_started_at"],
                              "modification_state": seen["modification_state"],
                              "before": seen.get("before_all", {}).get(other_key),
                              "read_back": seen.get("read_back_all", {}).get(other_key),
                              "note": f"Modified together with step {run.position}: AWS allows one modification of "
                                      "a volume every six hours."}
            _audit(db, plan, "apply.step_applied", other, _step(plan, other), before=other.observed["before"],
                   after=other.observed["read_back"])
    run.status, run.finished_at, run.watch_until = "verifying", now, now + watch
    _audit(db, plan, "apply.step_applied", run, step, before=run.observed.get("before"),
           after=run.observed.get("read_back"))
    return "again"


# ---------------------------------------------------------------------------------------------- the guards


def _touched(db: Session, plan: ApplyPlan, step: PlanStep) -> tuple[list[str], list[str]]:
    """The volumes and the TiKV stores (store addresses) a step touches."""
    nodes = list(db.scalars(select(TikvNode).where(TikvNode.org_id == plan.org_id,
                                                   TikvNode.cluster_id == plan.cluster_id)))
    refs = {r for n in nodes for r in (n.data_volume_ref_id, n.raft_volume_ref_id) if r is not None}
    volume_ids = {v.id: v.volume_id for v in db.scalars(select(Volume).where(Volume.id.in_(list(refs))))} if refs \
        else {}

    def volumes_of(n: TikvNode) -> list[str]:
        return [volume_ids[r] for r in (n.data_volume_ref_id, n.raft_volume_ref_id) if r in volume_ids]

    if step.kind == "ebs_modify_volume":
        return [step.target], sorted(n.store_address for n in nodes if step.target in volumes_of(n))
    node = next((n for n in nodes if n.status_address == step.target), None)
    return (volumes_of(node), [node.store_address]) if node is not None else ([], [])


def _values(db: Session, org_id: uuid.UUID, kind: str, metric: str, entities: list[str], lo: dt.datetime,
            hi: dt.datetime) -> dict[str, dict[int, float]]:
    """Each entity's raw points of one metric in [lo, hi): entity -> {epoch second: value}."""
    out: dict[str, dict[int, float]] = {}
    for entity in entities:
        sids = ts.series_ids(db, org_id, kind, metric, [entity])
        points = ts.read_points_many(db, org_id, sids, lo, hi)
        merged: dict[int, float] = {}
        for t, v in points.values():
            merged.update({int(a): float(b) for a, b in zip(t.tolist(), v.tolist(), strict=True)})
        out[entity] = merged
    return out


def _guard_values(db: Session, org_id: uuid.UUID, guard: Guard, volumes: list[str], stores: list[str],
                  lo: dt.datetime, hi: dt.datetime) -> tuple[list[float], list[str]] | None:
    """The guard metric's values over [lo, hi) on what the step touched (None: Headroom cannot read it in a run)."""
    if guard.metric in LATENCY_PARTS:
        time_metric, ops_metric = LATENCY_PARTS[guard.metric]
        times = _values(db, org_id, "volume", time_metric, volumes, lo, hi)
        ops = _values(db, org_id, "volume", ops_metric, volumes, lo, hi)
        out: list[float] = []
        for v in volumes:
            stamps = sorted(set(times[v]) & set(ops[v]))
            out.extend(latency_ms(np.array([times[v][t] for t in stamps]), np.array([ops[v][t] for t in stamps]))
                       .tolist())
        return out, volumes
    spec = REGISTRY.get(guard.metric)
    if spec is None:
        return None
    kind, entities = ("volume", volumes) if spec.entity == "volume" else ("tikv_node", stores)
    scale = shown_scale(spec.unit, guard.unit)
    found = _values(db, org_id, kind, guard.metric, entities, lo, hi)
    return [v * scale for values in found.values() for v in values.values()], entities


@dataclass(frozen=True)
class GuardWindows:
    """One guard's values on what a step touched: before the step (None: Headroom cannot read it in a run), after
    it so far, and the same hours one week earlier."""

    guard: Guard
    entities: list[str]
    before: list[float] | None
    after: list[float]
    last_week: list[float]


def guard_windows(db: Session, plan: ApplyPlan, run: ApplyStepRun) -> list[GuardWindows]:
    """Read every guard of the plan on what the step touched: the window before the step started, the watch after
    it was applied (as far as its points have arrived), and the same hours one week earlier."""
    step = _step(plan, run)
    assert run.started_at is not None and run.finished_at is not None
    volumes, stores = _touched(db, plan, step)
    out = []
    for guard in plan.guards:
        length = dt.timedelta(minutes=guard.watch_minutes)
        before_lo, after_lo = run.started_at - length, run.finished_at
        before = _guard_values(db, plan.org_id, guard, volumes, stores, before_lo, run.started_at)
        if before is None or not before[1]:
            out.append(GuardWindows(guard, [], None if before is None else before[0], [], []))
            continue
        after = _guard_values(db, plan.org_id, guard, volumes, stores, after_lo, after_lo + length)
        week = _guard_values(db, plan.org_id, guard, volumes, stores, after_lo - WEEK, after_lo + length - WEEK)
        out.append(GuardWindows(guard, before[1], before[0], after[0] if after else [], week[0] if week else []))
    return out


def read_guards(db: Session, plan: ApplyPlan, run: ApplyStepRun,
                windows: list[GuardWindows] | None = None) -> list[GuardReading]:
    """Judge every guard of the plan on what the step touched (guard_windows, read now unless given)."""
    readings = []
    for w in guard_windows(db, plan, run) if windows is None else windows:
        guard = w.guard
        if w.before is None or not w.entities:
            why = ("Headroom reads it only in the advice run" if w.before is None
                   else "Headroom knows no volume or store of this step to read it on")
            readings.append(GuardReading(
                metric=guard.metric, label=guard.label, unit=guard.unit, entities=[], before=None, after=None,
                last_week=None, predicted=None, tripped=False, verdict=f"{guard.label}: not judged ({why})."))
            continue
        predicted = plan.predicted.after if (plan.predicted is not None and plan.predicted.unit == guard.unit
                                             and guard is plan.guards[0] and len(plan.guards) > 3) else None
        readings.append(judge(guard, w.entities, before=p99(w.before), after=p99(w.after),
                              last_week=p99(w.last_week), predicted=predicted))
    if all(not r.entities for r in readings):
        # not one guard could be read: a step is not judged blind (docs/thresholds/apply-guards.md#watch)
        readings.append(GuardReading(
            metric="", label="Guards", unit="", entities=[], before=None, after=None, last_week=None, predicted=None,
            tripped=True, verdict="No guard could be read for this step (no volume or store of it is known, or "
                                  "none has data); a step is not judged blind, so the run stops."))
    return readings


# ---------------------------------------------------------------------------------------------- rollback


def _alert_key(plan: ApplyPlan) -> str:
    return f"apply:{plan.id}:stopped"


def _alert(db: Session, plan: ApplyPlan, title: str, fix: str, now: dt.datetime) -> None:
    cluster = db.get(Cluster, plan.cluster_id)
    if cluster is None:
        return
    alerts_service.queue_apply_event(db, cluster, plan_id=plan.id, finding_id=plan.finding_id, title=title,
                                     fix=fix, key=_alert_key(plan), now=now)


def _resolve_alert(db: Session, plan: ApplyPlan, now: dt.datetime) -> None:
    """The plan needs nobody any more: end its stop alert where one went (nothing when none did)."""
    cluster = db.get(Cluster, plan.cluster_id)
    if cluster is not None:
        alerts_service.resolve_apply_event(db, cluster, key=_alert_key(plan), now=now)


def _set_key_back(db: Session, plan: ApplyPlan, run: ApplyStepRun, step: PlanStep, effects: Effects,
                  now: dt.datetime) -> str | None:
    """Set a TiKV step's setting back to the value it had before the step and read it back; return what failed
    (None: the node reports its previous value again)."""
    before = run.observed.get("before")
    key = step.change.key
    run.status = "undoing"
    try:
        result = effects.set_key(step.target, key, before)
    except StatusPortError as error:
        run.status = "failed"
        run.error = f"Could not set {key} back to {setting_text(key, before)}: {error}"
        _audit(db, plan, "apply.step_undo_failed", run, step, error=str(error))
        return f"{step.target}: {error}"
    run.observed = {**run.observed, "restored": result.read_back, "restored_at": now.isoformat()}
    if result.verified and same_value(key, before, result.read_back):
        run.status, run.watch_until = "undone", None
        _audit(db, plan, "apply.step_rolled_back", run, step, restored=result.read_back)
        return None
    run.status = "failed"
    run.error = f"Set back to {setting_text(key, before)}, the node reports {setting_text(key, result.read_back)}."
    _audit(db, plan, "apply.step_undo_failed", run, step, read_back=result.read_back)
    return f"{step.target} reports {setting_text(key, result.read_back)}"


def _roll_back(db: Session, plan: ApplyPlan, reason: str, effects: Effects, now: dt.datetime) -> None:
    """Undo what the run changed, newest first: TiKV keys at once (each read back); volumes are left for a
    confirmed undo after six hours (an alert says so). Steps not started are skipped."""
    volume_waits: list[tuple[PlanStep, ApplyStepRun]] = []
    failures: list[str] = []
    restored = 0
    runs = _steps(db, plan, lock=True)
    for run in runs:
        if run.status == "pending":
            run.status = "skipped"
            _audit(db, plan, "apply.step_skipped", run, _step(plan, run), reason=reason)
    for run in reversed(runs):
        step = _step(plan, run)
        changed = run.status in APPLIED or (run.status == "failed" and "read_back" in run.observed)
        if not changed:
            continue
        if step.kind == "ebs_modify_volume":
            if run.status == "verifying":
                run.status, run.watch_until = "done", None
            volume_waits.append((step, run))
            continue
        failure = _set_key_back(db, plan, run, step, effects, now)
        if failure is None:
            restored += 1
        else:
            failures.append(failure)
    plan.run_finished_at = now
    # What a person does next when a setting could not be set back: the plan's undo sets it back, one node at a
    # time, read back; it can be confirmed again until it succeeds (docs/apply.md "When a guard trips").
    settings_left = (f" Rolling back failed on {'; '.join(failures)}; set {'them' if len(failures) > 1 else 'it'} "
                     "back with Undo setting changes on the plan once the node answers." if failures else "")
    if volume_waits:
        earliest = max(r.undo_not_before or now for _, r in volume_waits)
        volumes = ", ".join(s.target for s, _ in volume_waits)
        plan.status = "failed"
        plan.outcome = (f"Stopped: {reason} The volume change on {volumes} cannot be undone before {_when(earliest)} "
                        f"(AWS allows one modification every six hours); confirm the undo then.{settings_left}")
        _alert(db, plan, f"Apply stopped: {plan.finding_title}",
               f"{reason} Volume {volumes}: undo from {_when(earliest)}, after you confirm it in Headroom."
               f"{settings_left}", now)
    elif failures:
        plan.status = "failed"
        plan.outcome = f"Stopped: {reason}{settings_left}"
        _alert(db, plan, f"Apply rollback failed: {plan.finding_title}", plan.outcome, now)
    elif restored:
        plan.status = "rolled_back"
        plan.outcome = f"Rolled back: {reason} Every changed node has its previous value again."
    else:
        plan.status = "failed"
        plan.outcome = f"Stopped: {reason} Nothing was changed."
    audit(db, plan.org_id, f"apply.run_{plan.status}", target_kind="apply_plan", target_id=plan.id,
          details={"reason": reason})


# --------------------------------------------------------------------------------------------- advancing


def _watch(ctx: JobContext, plan: ApplyPlan) -> dt.timedelta:
    if ctx.settings.apply_watch_seconds is not None:
        return dt.timedelta(seconds=ctx.settings.apply_watch_seconds)
    return dt.timedelta(minutes=max((g.watch_minutes for g in plan.guards), default=15))


def _advance_once(ctx: JobContext, db: Session, plan_id: uuid.UUID, effects: Effects,
                  now: dt.datetime) -> str:
    """Do at most one thing for the plan; return "again", "wait", "busy" or "done"."""
    plan = db.scalar(select(ApplyPlan).where(ApplyPlan.id == plan_id).execution_options(populate_existing=True))
    if plan is None:
        return "done"
    if plan.status != "running":
        return _undo_once(db, plan, effects, now)
    if plan.stop_requested_at is not None:
        _settle_stop(db, plan, now, plan.outcome if plan.outcome.startswith("Stopped") else
                     f"Stopped at {_when(plan.stop_requested_at)}.")
        return "done"
    runs = _steps(db, plan)
    active = next((r for r in runs if r.status in ("running", "verifying")), None) or \
        next((r for r in runs if r.status == "pending"), None)
    if active is None:
        plan.status, plan.run_finished_at = "succeeded", now
        plan.outcome = f"Done: {len(runs)} step{'s' if len(runs) != 1 else ''} applied and verified."
        audit(db, plan.org_id, "apply.run_succeeded", target_kind="apply_plan", target_id=plan.id, details={})
        return "done"
    run = _lock_step(db, active)
    if run is None:
        return "busy"
    step = _step(plan, run)
    if run.status == "pending":
        off, closed = _gates(db, plan, now)
        if off is not None:
            plan.stop_requested_at = now
            _settle_stop(db, plan, now, f"Stopped: {off.lower()} before step {run.position}.")
            return "done"
        if closed is not None:
            plan.outcome = f"Waiting: {closed}"
            return "wait"
        run.status, run.started_at, run.observed = "running", now, {}
        plan.outcome = f"Running step {run.position} of {len(runs)}."
        return "again"
    if run.status == "running":
        try:
            moved = _carry_out(db, plan, run, effects, now, _watch(ctx, plan))
        except StepFailed as failure:
            run.status, run.finished_at, run.error = "failed", now, str(failure)
            _audit(db, plan, "apply.step_failed", run, step, error=str(failure))
            _roll_back(db, plan, f"Step {run.position} ({step.change.key} on {step.target}) failed: {failure}",
                       effects, now)
            return "done"
        # the step finished its read-back: a stop asked meanwhile takes effect now
        stop = db.scalar(select(ApplyPlan.stop_requested_at).where(ApplyPlan.id == plan.id))
        if stop is not None and run.status == "verifying":
            run.status, run.watch_until = "done", None
            run.observed = {**run.observed, "note": "The run was stopped as this step finished: it is applied and "
                                                    "read back, not judged."}
        return moved
    # verifying: the watch, over at the later of its set period and every guard's first point after the step
    # (bounded by the grace: docs/thresholds/apply-guards.md#late-data)
    if run.watch_until is not None and now < run.watch_until:
        plan.outcome = f"Watching step {run.position} of {len(runs)} until {_when(run.watch_until)}."
        return "wait"
    windows = guard_windows(db, plan, run)
    awaiting = awaiting_data([(w.guard.label, w.before if w.entities else None, w.after) for w in windows])
    if run.watch_until is not None and watch_state(now, run.watch_until, awaiting) == "awaiting_data":
        plan.outcome = (f"Watching step {run.position} of {len(runs)}: waiting for the first data after the step "
                        f"of {', '.join(a.lower() for a in awaiting)} (until {_when(run.watch_until + WATCH_GRACE)} "
                        "at the latest).")
        return "wait"
    readings = read_guards(db, plan, run, windows)
    run.guard_readings = [r.model_dump(mode="json") for r in readings]
    tripped = [r for r in readings if r.tripped]
    if tripped:
        _audit(db, plan, "apply.guard_tripped", run, step, guards=[r.verdict for r in tripped])
        _roll_back(db, plan, f"After step {run.position} ({step.change.key} on {step.target}): "
                   + " ".join(r.verdict for r in tripped), effects, now)
        return "done"
    run.status, run.watch_until = "done", None
    _audit(db, plan, "apply.step_verified", run, step, guards=[r.verdict for r in readings])
    return "again"


def _undo_once(db: Session, plan: ApplyPlan, effects: Effects, now: dt.datetime) -> str:
    """Carry out a confirmed undo, one step per call: a TiKV setting set back and read back, or a volume's
    modification back to its old type, IOPS and throughput once AWS allows it."""
    for candidate in _steps(db, plan):
        if candidate.undo_confirmed_at is None or not (candidate.status in ("done", "undoing")
                                                       or _left_changed(plan, candidate)):
            continue
        run = _lock_step(db, candidate)
        if run is None:
            return "busy"
        step = _step(plan, run)
        if step.kind != "ebs_modify_volume":
            failure = _set_key_back(db, plan, run, step, effects, now)
            if failure is not None:
                # not tried again on its own: the person confirms the undo again (the stop alert stays active)
                run.undo_confirmed_at = None
                plan.outcome += f" Undo failed on {failure}."
            elif not any(r.undo_confirmed_at and (r.status in ("done", "undoing") or _left_changed(plan, r))
                         and _step(plan, r).kind != "ebs_modify_volume" for r in _steps(db, plan)):
                plan.outcome += f" Settings set back at {_when(now)}: each node reports its previous value again."
                if not _needs_person(db, plan):
                    _resolve_alert(db, plan, now)  # nothing left changed: the stop needs nobody any more
            return "again"
        if run.undo_not_before is not None and now < run.undo_not_before:
            return "wait"
        together = [run, *_volume_siblings(db, plan, run, ("done", "undoing"), confirmed=True)]
        changes = {_step(plan, r).undo.key: _step(plan, r).undo.proposed for r in together}
        for r in together:
            r.status = "undoing"
        try:
            observed = _modify_volume(db, plan, run, changes, effects, undo=True)
        except StepFailed as failure_:
            for r in together:
                r.status, r.error = "failed", f"Undo: {failure_}"
            _audit(db, plan, "apply.step_undo_failed", run, step, error=str(failure_))
            return "again"
        for r in together:
            r.observed = {**r.observed, **observed}
        if observed.get("undo_modification_state") not in MODIFICATION_IN_EFFECT:
            return "wait"
        _record_volume(db, plan.org_id, step.target, observed.get("undo_read_back_all", {}), now)
        for r in together:
            restored = observed.get("undo_read_back_all", {}).get(_step(plan, r).undo.key)
            r.status = "undone"
            r.observed = {**r.observed, "restored": restored, "restored_at": now.isoformat()}
            _audit(db, plan, "apply.step_rolled_back", r, _step(plan, r), restored=restored)
        if not any(r.status in ("done", "undoing") and r.undo_confirmed_at for r in _steps(db, plan)):
            plan.outcome += f" Volume changes undone at {_when(now)}."
            if not _needs_person(db, plan):
                _resolve_alert(db, plan, now)  # every change set back: the stop needs nobody any more
        return "again"
    return "done"


MAX_ACTIONS = 200  # one advance does at most this many things (a plan has a step per node: a few dozen)


def advance(ctx: JobContext, plan_id: uuid.UUID, *, clock: Callable[[], dt.datetime],
            effects: Effects | None = None) -> dict[str, Any]:
    """Advance one plan as far as it can go now (each action in its own unit of work)."""
    effects = effects or default_effects(ctx)
    last = "done"
    for _ in range(MAX_ACTIONS):
        with ctx.unit() as db:
            last = _advance_once(ctx, db, plan_id, effects, clock())
        if last != "again":
            break
    log.info("apply.advanced", plan=str(plan_id), state=last)
    return {"plan_id": str(plan_id), "state": last}


def advance_all(ctx: JobContext, *, clock: Callable[[], dt.datetime],
                effects: Effects | None = None) -> dict[str, Any]:
    """Advance every running plan and every confirmed undo (the schedule's minute tick)."""
    with ctx.unit() as db:
        ids = list(db.scalars(select(ApplyPlan.id).where(ApplyPlan.status == "running")))
        ids += list(db.scalars(select(ApplyStepRun.plan_id).where(
            ApplyStepRun.undo_confirmed_at.is_not(None),
            ApplyStepRun.status.in_(("done", "undoing", "failed"))).distinct()))
    for plan_id in dict.fromkeys(ids):
        advance(ctx, plan_id, clock=clock, effects=effects)
    return {"plans": len(set(ids))}
