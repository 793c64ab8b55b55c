"""The bash an exported AWS script runs around its changes: settings checked first, a fail-closed preflight, a
confirmation, a rolling restart of one TiKV at a time, and a report of what changed when it stops half way.

The procedure is docs/reference/rolling-restart.md's, from PingCAP's public docs:
- PD Control User Guide (https://docs.pingcap.com/tidb/stable/pd-control): `tiup ctl:v<CLUSTER_VERSION> pd -u
  http://<pd_ip>:<pd_port>`, `scheduler add evict-leader-scheduler <store_id>` ("Move all the Region leaders on
  store 1 out"), `scheduler remove evict-leader-scheduler-<store_id>`, `store <store_id>` (JSON: `store.state_name`
  Up / Disconnected / Down / Offline / Tombstone, `status.leader_count`).
- TiUP `tiup cluster restart/reload` (https://docs.pingcap.com/tidb/stable/tiup-component-cluster-reload): TiKV
  instances restart one at a time, each store's leaders migrated away first (`--transfer-timeout`, 600 s).
- AWS, Monitor the progress of Amazon EBS volume modifications: a volume never modified has no modification
  record (DescribeVolumesModifications answers InvalidVolumeModification.NotFound).
- After a size change, TiKV sees the new capacity only once the partition and the filesystem grow
  (docs/reference/filesystem-grow.md): the script waits until the modification is `optimizing` or `completed`, then
  runs the host step through `tiup cluster exec <cluster> -N <node> --sudo --command ...` (PingCAP, tiup cluster
  exec, https://docs.pingcap.com/tidb/stable/tiup-component-cluster-exec) or prints it to run by hand.
pd-ctl prints a failed request's message and may still exit 0 (it did before v7), so a store's state is read
from the JSON it prints and anything else is an error, never a state.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

EVICT_TIMEOUT_S = 600  # TiUP's --transfer-timeout default
UP_TIMEOUT_S = 900
LEADERS_BACK_TIMEOUT_S = 600
POLL_S = 5
# A size change is usable once the modification is optimizing, usually within minutes (AWS, Monitor the progress of
# Amazon EBS volume modifications; docs/reference/filesystem-grow.md#when-the-new-size-can-be-used).
MODIFY_TIMEOUT_S = 1800


@dataclass(frozen=True)
class Restart:
    """One instance to stop, change and start: its id, instance types and the TiKV stores it runs."""

    instance_id: str
    from_type: str
    to_type: str
    stores: tuple[tuple[int | None, str], ...]  # (store id if known, store address) per TiKV on it


@dataclass(frozen=True)
class FilesystemGrow:
    """The host step after a volume grows: the TiUP node to run it on (its store address, `tiup cluster exec -N`), and
    the filesystem type and mount point node_exporter reported for the data mount (None: not known)."""

    node: str | None
    fstype: str | None
    mount: str | None


@dataclass(frozen=True)
class VolumeCheck:
    """One volume the script modifies: its id, the instance it must be attached to, and how to undo it."""

    volume_id: str
    instance_id: str | None
    modify_flags: str
    undo_flags: str
    what: str
    target: str  # what describe-volumes shows once done: "VolumeType=gp3 Iops=4000" (the attributes changed)
    grow: FilesystemGrow | None = None  # set when the size grows: the filesystem must grow after it


def store_variable(instance_id: str) -> str:
    """The name of the variable holding the store ids on an instance (`STORES_ON_i_0abc`)."""
    return "STORES_ON_" + re.sub(r"[^A-Za-z0-9]", "_", instance_id)


def _q(value: str) -> str:
    return shlex.quote(value)


def header(
    *, region: str | None, tikv_version: str | None, pd_url: str | None, restarts: Sequence[Restart],
    undo_script: str, grows: bool = False, tiup_cluster: str | None = None, removes_volumes: bool = False,
) -> list[str]:
    """Usage, settings (what Headroom knows filled in) and argument parsing."""
    lines = [
        "# Usage: bash THIS_FILE [--yes] [--region REGION] [--profile PROFILE]"
        + (" [--pd PD_URL]" if restarts else "")
        + (" [--tiup-cluster NAME|'']" if grows else "")
        + (" [--skip-tikv-check]" if removes_volumes else ""),
        "#   Without --yes the script asks before it changes anything"
        + (" and again before each TiKV it restarts" if restarts else "")
        + "; with no answer",
        "#   on standard input it stops before changing anything.",
        "#   Every check runs before the first change; a run that stops half way prints what it changed and",
        "#   the command that undoes each change.",
        "",
        "# ---- settings: Headroom filled in what the snapshot knows; check them before running",
        f"REGION={_q(region or '')}   # the AWS region of the instances and volumes (--region)",
        "PROFILE=''   # an AWS CLI profile (--profile); empty: the CLI's default credentials",
    ]
    if restarts:
        version = tikv_version or ""
        if version and not version.startswith("v"):
            version = "v" + version
        lines += [
            f"TIUP_CTL_VERSION={_q(version)}   # pd-ctl runs as tiup ctl:<version> pd: the cluster's version",
            f"PD_URL={_q(pd_url or '')}   # a PD client URL, e.g. http://10.0.1.5:2379 (--pd)",
            "# The TiKV store id(s) on each instance (pd-ctl: store; TiDB Dashboard: Cluster Info > Store):",
        ]
        for restart in restarts:
            ids = " ".join(str(store_id) for store_id, _ in restart.stores if store_id is not None)
            known = all(store_id is not None for store_id, _ in restart.stores) and restart.stores
            addresses = ", ".join(address for _, address in restart.stores) or "its TiKV"
            lines.append(
                f"{store_variable(restart.instance_id)}={_q(ids if known else '')}   # {addresses}"
            )
        lines += [
            f"UNDO_SCRIPT={_q(undo_script)}   # the artefact that undoes this one (Headroom exports both)",
            f': "${{EVICT_TIMEOUT:={EVICT_TIMEOUT_S}}}"   # seconds for a store\'s leaders to move away',
            f': "${{UP_TIMEOUT:={UP_TIMEOUT_S}}}"   # seconds for PD to report a restarted store Up',
            f': "${{LEADERS_BACK_TIMEOUT:={LEADERS_BACK_TIMEOUT_S}}}"   # seconds for leaders to come back',
        ]
    if grows:
        lines += [
            f"TIUP_CLUSTER={_q(tiup_cluster or '')}   # grow each filesystem with tiup cluster exec on this cluster "
            "(--tiup-cluster); empty: the script prints the host step to run by hand",
            f': "${{MODIFY_TIMEOUT:={MODIFY_TIMEOUT_S}}}"   # seconds for a size change to reach optimizing',
        ]
    if restarts or grows:
        lines.append(f': "${{POLL_SECONDS:={POLL_S}}}"')
    if removes_volumes:
        lines += [
            "SKIP_TIKV_CHECK=0   # --skip-tikv-check: remove without reading TiKV's /config first",
            ': "${TIKV_STATUS_SCHEME:=http}"   # https when TiKV\'s status server uses TLS',
            ': "${TIKV_STATUS_CA:=}"   # the CA file curl checks TiKV\'s certificate with (https)',
        ]
    lines += [
        "",
        "YES=0",
        "while [[ $# -gt 0 ]]; do",
        '  case "$1" in',
        "    --yes) YES=1 ;;",
        '    --region) REGION="${2:?--region needs a value}"; shift ;;',
        '    --profile) PROFILE="${2:?--profile needs a value}"; shift ;;',
    ]
    if restarts:
        lines.append('    --pd) PD_URL="${2:?--pd needs a value}"; shift ;;')
    if grows:
        # `${2?}`, not `${2:?}`: an empty name is how to say "print the host step, do not run it through TiUP".
        lines.append('    --tiup-cluster) TIUP_CLUSTER="${2?--tiup-cluster needs a name (\'\': print the host step)}"; '
                     'shift ;;')
    if removes_volumes:
        lines.append("    --skip-tikv-check) SKIP_TIKV_CHECK=1 ;;")
    lines += [
        '    *) echo "unknown argument: $1 (see Usage at the top of the script)" >&2; exit 2 ;;',
        "  esac",
        "  shift",
        "done",
    ]
    return lines


_LIBRARY = r"""
# ---- helpers
CHANGED=()   # what this run changed, in order ("" once undone by the script itself)
UNDO=()      # the command that undoes each
say() { printf '%s\n' "$*"; }
die() { printf 'STOPPED: %s\n' "$*" >&2; exit 1; }
aws_cli() {
  if [[ -n "$PROFILE" ]]; then aws --region "$REGION" --profile "$PROFILE" "$@"; else aws --region "$REGION" "$@"; fi
}
AWS_LINE() {  # how an undo command calls the CLI, with the same region and profile
  printf 'aws --region %q' "$REGION"; [[ -z "$PROFILE" ]] || printf ' --profile %q' "$PROFILE"
}
# shellcheck disable=SC2034  # LAST_CHANGE: read by the steps that undo their own change, where there are
changed() { CHANGED+=("$1"); UNDO+=("$2"); LAST_CHANGE=$((${#CHANGED[@]} - 1)); }
undone() { CHANGED[$1]=""; }
report() {
  local status=$? i any=0
  trap - EXIT
  [[ $status -ne 0 ]] || exit 0
  for i in "${!CHANGED[@]}"; do [[ -z "${CHANGED[i]}" ]] || any=1; done
  if [[ $any -eq 0 ]]; then
    echo "Nothing was changed." >&2
  else
    echo "Changed before stopping:" >&2
    for i in "${!CHANGED[@]}"; do [[ -z "${CHANGED[i]}" ]] || echo "  - ${CHANGED[i]}" >&2; done
    echo "To undo, run in this order:" >&2
    for ((i = ${#UNDO[@]} - 1; i >= 0; i--)); do [[ -z "${CHANGED[i]}" ]] || echo "  ${UNDO[i]}" >&2; done
  fi
  exit "$status"
}
trap report EXIT
confirm() {
  local answer
  [[ $YES -eq 0 ]] || return 0
  printf '%s [y/N] ' "$1" >&2
  if ! read -r answer; then
    echo >&2
    die "no answer on standard input: run it in a terminal, or pass --yes"
  fi
  [[ "$answer" == [yY] || "$answer" == [yY][eE][sS] ]] || die "not confirmed"
}
"""

_VOLUME_LIBRARY = r"""
volume_facts() {  # prints "<state> <attached instance> <attachment state> <type> <iops> <throughput> <size>"
  aws_cli ec2 describe-volumes --volume-ids "$1" --query \
    'Volumes[0].[State, Attachments[0].InstanceId, Attachments[0].State, VolumeType, Iops, Throughput, Size]' \
    --output text
}
volume_modification_state() {  # prints the last modification's state, "none" if the volume was never modified
  local out
  if out=$(aws_cli ec2 describe-volumes-modifications --volume-ids "$1" \
      --query 'VolumesModifications[0].ModificationState' --output text 2>&1); then
    if [[ "$out" == None || -z "$out" ]]; then echo none; else echo "$out"; fi
  elif [[ "$out" == *InvalidVolumeModification.NotFound* ]]; then
    echo none
  else
    printf '%s\n' "$out" >&2
    return 1
  fi
}
check_volume() {  # volume, instance it must be attached to ("" if not known), target "Attr=value ..."
  local facts state attached_to attach_state type iops throughput size modification want same=1
  VOLUME_DONE=0
  facts=$(volume_facts "$1") || die "$1: cannot describe the volume in $REGION (the error above)"
  read -r state attached_to attach_state type iops throughput size <<<"$facts"
  [[ "$state" == in-use && "$attach_state" == attached ]] \
    || die "$1: the volume is $state ($attach_state), not in-use and attached"
  [[ -z "$2" || "$attached_to" == "$2" ]] || die "$1: attached to $attached_to, not to $2"
  for want in $3; do
    case "$want" in
      VolumeType=*) [[ "$type" == "${want#*=}" ]] || same=0 ;;
      Iops=*) [[ "$iops" == "${want#*=}" ]] || same=0 ;;
      Throughput=*) [[ "$throughput" == "${want#*=}" ]] || same=0 ;;
      Size=*) [[ "$size" == "${want#*=}" ]] || same=0 ;;
    esac
  done
  if [[ $same -eq 1 ]]; then say "$1 already has $3: skipped"; VOLUME_DONE=1; return 0; fi
  modification=$(volume_modification_state "$1") \
    || die "$1: cannot read its modifications in $REGION (the error above)"
  case "$modification" in
    none|completed|failed) ;;
    *) die "$1: its last modification is still $modification; run this script again once it is completed" ;;
  esac
  say "checked $1: in-use on $attached_to, last modification: $modification"
}
"""

# The host step after an EBS volume grows (docs/reference/filesystem-grow.md, from AWS "Extend the file system after
# resizing an EBS volume"): run as root on the instance with the volume id, and the filesystem type and mount point
# node_exporter reported ("" when unknown). It finds the volume's disk by its NVMe serial (Nitro: the volume id
# without its dash; `lsblk -o NAME,SERIAL`), the mounted filesystem on it with findmnt, grows the partition first
# when the filesystem is on one (growpart), then the filesystem (xfs_growfs on the mount point, resize2fs on the
# device); anything else (another filesystem type, a type other than node_exporter's, RAID, LVM, no serial) stops
# it with nothing changed.
HOST_GROW_SCRIPT = r"""#!/usr/bin/env bash
# Grow the filesystem on an EBS volume whose size was just increased (AWS, Extend the file system after resizing an
# EBS volume: https://docs.aws.amazon.com/ebs/latest/userguide/recognize-expanded-volume-linux.html).
# Usage, as root on the instance: bash -s -- VOLUME_ID EXPECTED_FSTYPE EXPECTED_MOUNT ("" if not known)
set -euo pipefail
fail() { printf 'NOT GROWN: %s\n' "$*" >&2; exit 1; }
volume=${1:?usage: VOLUME_ID EXPECTED_FSTYPE EXPECTED_MOUNT}
expected_fstype=${2:-}
expected_mount=${3:-}
serial=${volume/-/}   # on Nitro instances the NVMe serial is the volume id without its dash
disk=$(lsblk -dnpo NAME,SERIAL | awk -v s="$serial" '$2 == s { print $1 }')
[[ -n "$disk" ]] || fail "no disk has serial $serial (lsblk -o NAME,SERIAL): $volume is not attached here, or this is not a Nitro (NVMe) instance; grow it by hand"
[[ "$disk" != *$'\n'* ]] || fail "several disks have serial $serial: $disk"
source='' target='' fstype=''
while read -r name type; do
  case "$type" in
    disk|part) ;;
    *) fail "$name on $disk is a $type device (RAID, LVM or encryption): grow that layer by hand" ;;
  esac
  found=$(findmnt -rno TARGET,FSTYPE --source "$name" 2>/dev/null | head -n 1 || true)
  [[ -n "$found" ]] || continue
  [[ -z "$source" ]] || fail "more than one filesystem on $disk is mounted ($source, $name)"
  source=$name
  read -r target fstype <<<"$found"
done < <(lsblk -lnpo NAME,TYPE "$disk")
[[ -n "$source" ]] || fail "no filesystem on $disk ($volume) is mounted"
[[ -z "$expected_mount" || "$target" == "$expected_mount" ]] \
  || fail "$source is mounted at $target, not at $expected_mount as node_exporter reported"
[[ -z "$expected_fstype" || "$fstype" == "$expected_fstype" ]] \
  || fail "$source is $fstype here but node_exporter reported $expected_fstype: check the host before growing it"
case "$fstype" in
  xfs|ext4) ;;
  *) fail "$source ($target) is $fstype: only xfs (xfs_growfs) and ext4 (resize2fs) are grown by this step" ;;
esac
if [[ "$source" != "$disk" ]]; then
  part=${source#"$disk"}
  part=${part#p}   # /dev/nvme1n1p1 -> 1, /dev/xvdf1 -> 1
  [[ "$part" =~ ^[0-9]+$ ]] || fail "cannot tell the partition number of $source on $disk"
  command -v growpart >/dev/null || fail "growpart is not installed (cloud-guest-utils or cloud-utils-growpart)"
  if ! out=$(growpart "$disk" "$part" 2>&1); then
    [[ "$out" == NOCHANGE* ]] || fail "growpart $disk $part: $out"
  fi
  printf 'partition %s: %s\n' "$source" "${out:-grown}"
fi
case "$fstype" in
  xfs) xfs_growfs -d "$target" ;;
  ext4) resize2fs "$source" ;;
esac
printf 'GROWN: %s (%s) at %s\n' "$source" "$fstype" "$target"
"""

_GROW_LIBRARY = r"""
GROW_BY_HAND=()   # host steps to run by hand, printed at the end
host_grow_script() {  # the host step: docs/reference/filesystem-grow.md
  cat <<'HEADROOM_HOST_STEP'
@HOST_GROW_SCRIPT@HEADROOM_HOST_STEP
}
host_command() {  # volume, fstype, mount[, shell]: one line that runs the host step (as root: sudo bash)
  printf 'echo %s | base64 -d | %s -s -- %q %q %q' "$(host_grow_script | base64 | tr -d '\n')" "${4:-sudo bash}" \
    "$1" "$2" "$3"
}
wait_for_size() {  # volume: until its modification is optimizing or completed (the new size can be used)
  local deadline=$((SECONDS + MODIFY_TIMEOUT)) state
  while true; do
    state=$(volume_modification_state "$1") || die "$1: cannot read its modification in $REGION (the error above)"
    case "$state" in
      optimizing|completed) say "$1: modification $state, the new size can be used"; return 0 ;;
      none) say "$1: no modification on record, its size is the one it has"; return 0 ;;   # it had the size already
      failed) die "$1: the modification failed (aws ec2 describe-volumes-modifications --volume-ids $1)" ;;
    esac
    [[ $SECONDS -lt $deadline ]] \
      || die "$1: the modification is still $state after ${MODIFY_TIMEOUT}s, its filesystem not grown yet: run this script again once it is optimizing (it skips what is done and grows the filesystem)"
    sleep "$POLL_SECONDS"
  done
}
grow_filesystem() {  # volume, TiUP node ("" if not known), fstype and mount node_exporter reported ("" if not known)
  local command
  wait_for_size "$1"
  command=$(host_command "$1" "$3" "$4")
  if [[ -n "$TIUP_CLUSTER" && -n "$2" ]]; then
    confirm "Grow the filesystem of $1 on $2 now (tiup cluster exec $TIUP_CLUSTER -N $2 --sudo)?"
    tiup cluster exec "$TIUP_CLUSTER" -N "$2" --sudo --command "$(host_command "$1" "$3" "$4" bash)" \
      || die "$1: the filesystem on $2 was not grown (the output above); the volume is larger already, so run on $2: $command"
    say "$1: filesystem grown on $2"
  else
    GROW_BY_HAND+=("$1 on ${2:-its instance}: $command")
    say "$1: its filesystem must grow on the host (the command is printed at the end)"
  fi
}
grow_report() {
  local line
  [[ ${#GROW_BY_HAND[@]} -gt 0 ]] || return 0
  say "TiKV sees the larger volumes only once their filesystems grow: run each line on its instance (it runs the"
  say "host_grow_script function of this script as root)"
  for line in "${GROW_BY_HAND[@]}"; do say "  $line"; done
}
"""


_RESTART_LIBRARY = r"""
pd() { tiup "ctl:$TIUP_CTL_VERSION" pd -u "$PD_URL" "$@"; }
json_string() { grep -o "\"$2\": *\"[^\"]*\"" <<<"$1" | head -n 1 | sed 's/^[^:]*: *"\(.*\)"$/\1/' || true; }
json_number() { grep -o "\"$2\": *[0-9][0-9]*" <<<"$1" | head -n 1 | sed 's/^[^:]*: *//' || true; }
store_info() {  # sets STORE_STATE, STORE_LEADERS, STORE_ADDRESS from `pd-ctl store <id>`, or PD_ERROR
  local out
  PD_ERROR=""
  if ! out=$(pd store "$1" 2>&1); then PD_ERROR="pd-ctl failed: $out"; return 1; fi
  STORE_STATE=$(json_string "$out" state_name)
  if [[ -z "$STORE_STATE" ]]; then PD_ERROR="PD did not describe store $1: $out"; return 1; fi
  STORE_LEADERS=$(json_number "$out" leader_count)
  STORE_LEADERS=${STORE_LEADERS:-0}   # older PDs omit a zero count
  STORE_ADDRESS=$(json_string "$out" address)
}
cluster_healthy() {  # every store PD knows is Up (Tombstone: removed for good)
  local out states
  if ! out=$(pd store 2>&1); then PD_ERROR="pd-ctl failed: $out"; return 1; fi
  states=$(grep -o '"state_name": *"[^"]*"' <<<"$out" || true)
  if [[ -z "$states" ]]; then PD_ERROR="PD did not list its stores: $out"; return 1; fi
  PD_ERROR=$(grep -v '"Up"\|"Tombstone"' <<<"$states" || true)
  [[ -z "$PD_ERROR" ]]
}
wait_for() {  # timeout in seconds, a command; true once the command is
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    [[ $SECONDS -lt $deadline ]] || return 1
    sleep "$POLL_SECONDS"
  done
}
store_up() { store_info "$1" && [[ "$STORE_STATE" == Up ]]; }
leaders_gone() { store_info "$1" && [[ "$STORE_LEADERS" -eq 0 ]]; }
leaders_back() { store_info "$1" && [[ "$STORE_LEADERS" -ge "$2" ]]; }
check_store() {  # store id, the addresses its instance runs TiKV at ("" if not known)
  [[ "$1" =~ ^[0-9]+$ ]] || die "store id '$1' is not a number"
  store_info "$1" || die "store $1: $PD_ERROR"
  [[ "$STORE_STATE" == Up ]] || die "store $1 is $STORE_STATE, not Up"
  [[ -z "$2" || " $2 " == *" $STORE_ADDRESS "* ]] || die "store $1 is $STORE_ADDRESS in PD, not on this instance ($2)"
  say "checked store $1 ($STORE_ADDRESS): Up, $STORE_LEADERS leaders"
}
pd_do() {  # a pd-ctl command that must answer Success! (pd-ctl may print an error and still exit 0)
  local out
  out=$(pd "$@" 2>&1) || true
  [[ "$out" == *Success* ]] || { PD_ERROR="pd-ctl $*: $out"; return 1; }
}
check_instance() {  # instance, the type it must have now, the type it gets; sets INSTANCE_DONE=1 if it has it
  local described state type
  INSTANCE_DONE=0
  described=$(aws_cli ec2 describe-instances --instance-ids "$1" \
    --query 'Reservations[0].Instances[0].[State.Name, InstanceType]' --output text) \
    || die "$1: cannot describe the instance in $REGION (the error above)"
  read -r state type <<<"$described"
  if [[ "$type" == "$3" ]]; then say "$1 is already $3: skipped"; INSTANCE_DONE=1; return 0; fi
  [[ "$type" == "$2" ]] || die "$1 is $type, not $2 as when this script was made"
  [[ "$state" == running ]] || die "$1 is $state, not running"
  # Instance store volumes lose their data when the instance stops (AWS, Amazon EC2 instance store).
  local local_disks
  local_disks=$(aws_cli ec2 describe-instance-types --instance-types "$type" \
    --query 'InstanceTypes[0].InstanceStorageSupported' --output text) \
    || die "$1: cannot describe the instance type $type (the error above)"
  [[ "$local_disks" != True ]] \
    || die "$1 ($type) has instance store volumes, whose data is lost when it stops: change it by hand if TiKV keeps nothing there"
  say "checked $1: running, $type"
}
evict_undo() { echo "tiup ctl:$TIUP_CTL_VERSION pd -u $PD_URL scheduler remove evict-leader-scheduler-$1"; }
restart_instance() {  # instance, from type, to type, store ids (space-separated)
  local instance=$1 from=$2 to=$3 store stopped want i
  local -a stores evicted=() undo_index=() before=()
  read -r -a stores <<<"$4"
  confirm "Stop $instance, change it from $from to $to and start it (TiKV stores: $4)?"
  wait_for "$UP_TIMEOUT" cluster_healthy \
    || die "the cluster is not healthy (${PD_ERROR}): $instance not touched"
  for store in "${stores[@]}"; do
    store_info "$store" || die "store $store: $PD_ERROR"
    before+=("$STORE_LEADERS")
    say "store $store: moving its $STORE_LEADERS leaders away"
    pd_do scheduler add evict-leader-scheduler "$store" || die "$PD_ERROR"
    changed "evict-leader-scheduler added for store $store" "$(evict_undo "$store")"
    evicted+=("$store")
    undo_index+=("$LAST_CHANGE")
    if ! wait_for "$EVICT_TIMEOUT" leaders_gone "$store"; then
      local left=$STORE_LEADERS
      for i in "${!evicted[@]}"; do
        pd_do scheduler remove "evict-leader-scheduler-${evicted[i]}" && undone "${undo_index[i]}"
      done
      die "store $store still has $left leaders after ${EVICT_TIMEOUT}s${PD_ERROR:+ ($PD_ERROR)}: $instance not touched"
    fi
    say "store $store: no leaders left"
  done
  aws_cli ec2 stop-instances --instance-ids "$instance" >/dev/null
  changed "$instance stopped" "$(AWS_LINE) ec2 start-instances --instance-ids $instance"
  stopped=$LAST_CHANGE
  aws_cli ec2 wait instance-stopped --instance-ids "$instance"
  aws_cli ec2 modify-instance-attribute --instance-id "$instance" --instance-type "{\"Value\": \"$to\"}"
  changed "$instance instance type $from -> $to" \
    "bash $UNDO_SCRIPT --region $REGION${PROFILE:+ --profile $PROFILE} --pd $PD_URL   # changes $instance back to $from the same way, one store at a time; it skips what has its old values"
  aws_cli ec2 start-instances --instance-ids "$instance" >/dev/null
  undone "$stopped"
  aws_cli ec2 wait instance-running --instance-ids "$instance"
  say "$instance: running as $to"
  for store in "${stores[@]}"; do
    wait_for "$UP_TIMEOUT" store_up "$store" \
      || die "store $store is not Up ${UP_TIMEOUT}s after $instance started (PD: ${STORE_STATE:-?}${PD_ERROR:+; $PD_ERROR}); the other instances are not touched"
    say "store $store: Up"
  done
  for i in "${!stores[@]}"; do
    store=${stores[i]}
    pd_do scheduler remove "evict-leader-scheduler-$store" || die "$PD_ERROR"
    undone "${undo_index[i]}"
    # PD's balance-leader scheduler brings leaders back gradually: wait for half of what the store had.
    want=$(( before[i] / 2 ))
    [[ $want -gt 0 || ${before[i]} -eq 0 ]] || want=1
    wait_for "$LEADERS_BACK_TIMEOUT" leaders_back "$store" "$want" \
      || die "store $store has ${STORE_LEADERS:-?} leaders ${LEADERS_BACK_TIMEOUT}s after its scheduler was removed, fewer than $want; the other instances are not touched"
    say "store $store: $STORE_LEADERS leaders"
  done
}
"""


def library(*, volumes: bool, restarts: bool, grows: bool = False) -> list[str]:
    """The helper functions the script's steps call."""
    grow = _GROW_LIBRARY.replace("@HOST_GROW_SCRIPT@", HOST_GROW_SCRIPT) if grows else ""
    text = _LIBRARY + (_VOLUME_LIBRARY if volumes else "") + grow + (_RESTART_LIBRARY if restarts else "")
    return text.strip("\n").splitlines()


def settings_check(restarts: Sequence[Restart], grows: bool = False) -> list[str]:
    """Stop before anything when a setting the script needs is empty or a tool is missing."""
    lines = [
        "",
        "# ---- every setting and every tool before anything else",
        "missing=()",
        '[[ -n "$REGION" ]] || missing+=("REGION (or --region)")',
    ]
    if restarts:
        lines += [
            '[[ -n "$TIUP_CTL_VERSION" ]] || missing+=(TIUP_CTL_VERSION)',
            '[[ -n "$PD_URL" ]] || missing+=("PD_URL (or --pd)")',
        ]
        for restart in restarts:
            var = store_variable(restart.instance_id)
            lines.append(f'[[ "${var}" =~ ^[0-9]+( [0-9]+)*$ ]] || missing+=("{var} (store ids, space-separated)")')
    lines += [
        'if [[ ${#missing[@]} -gt 0 ]]; then',
        '  printf \'set at the top of this script: %s\\n\' "${missing[@]}" >&2',
        "  die \"settings missing\"",
        "fi",
        'command -v aws >/dev/null || die "the AWS CLI (aws) is not on PATH"',
    ]
    if restarts:
        lines.append('command -v tiup >/dev/null || die "tiup is not on PATH (pd-ctl runs as tiup ctl:<version> pd)"')
    if grows:
        lines.append('[[ -z "$TIUP_CLUSTER" ]] || command -v tiup >/dev/null '
                     '|| die "tiup is not on PATH (the filesystems grow with tiup cluster exec; or set TIUP_CLUSTER=\'\')"')
        lines.append('command -v base64 >/dev/null || die "base64 is not on PATH (it carries the host step)"')
    return lines


def _volume_done(volume_id: str) -> str:
    return "DONE_" + re.sub(r"[^A-Za-z0-9]", "_", volume_id)


def volume_preflight(checks: Sequence[VolumeCheck]) -> list[str]:
    """Check every volume before any changes: it exists in the region, is in-use on its instance, not mid-change;
    a volume that already has every new value is skipped."""
    lines = ["", "# ---- every volume before any changes (all or none)"]
    for check in checks:
        lines.append(f"check_volume {check.volume_id} {_q(check.instance_id or '')} {_q(check.target)}")
        lines.append(f"{_volume_done(check.volume_id)}=$VOLUME_DONE")
    return lines


def restart_preflight(restarts: Sequence[Restart]) -> list[str]:
    """Check every instance and store before any changes; an instance that already has its new type is skipped."""
    lines = ["", "# ---- every instance and every TiKV store before any changes"]
    for restart in restarts:
        var = store_variable(restart.instance_id)
        addresses = " ".join(address for _, address in restart.stores)
        lines += [
            f"check_instance {restart.instance_id} {_q(restart.from_type)} {_q(restart.to_type)}",
            f"{_done_variable(restart)}=$INSTANCE_DONE",
            f"for store in ${var}; do",
            f'  check_store "$store" {_q(addresses)}',
            "done",
        ]
    return lines


def _done_variable(restart: Restart) -> str:
    return "DONE_" + store_variable(restart.instance_id).removeprefix("STORES_ON_")


def restart_steps(restart: Restart) -> list[str]:
    """Restart one instance with its stores' leaders moved away first (skipped if it already has the type)."""
    var = store_variable(restart.instance_id)
    return [
        f'if [[ "${_done_variable(restart)}" -eq 0 ]]; then',
        f'  restart_instance {restart.instance_id} {_q(restart.from_type)} {_q(restart.to_type)} "${var}"',
        "fi",
    ]


def volume_step(check: VolumeCheck) -> list[str]:
    """Modify one volume (unless it already has the new values) and record how to undo it."""
    undo = (
        f'"$(AWS_LINE) ec2 modify-volume --volume-id {check.volume_id} {check.undo_flags}'
        '   # once this modification has completed"'
        if check.undo_flags
        else _q("# nothing to run: an EBS volume cannot be made smaller")
    )
    lines = [
        f'if [[ "${_volume_done(check.volume_id)}" -eq 0 ]]; then',
        f"  aws_cli ec2 modify-volume --volume-id {check.volume_id} {check.modify_flags} "
        "--query 'VolumeModification.[VolumeId,ModificationState]' --output text",
        f"  changed {_q(check.volume_id + ': ' + check.what)} {undo}",
        "fi",
    ]
    if check.grow is not None:
        # Also when the volume had its size already (a rerun): growing a grown filesystem changes nothing.
        grow = check.grow
        lines.append(
            f"grow_filesystem {check.volume_id} {_q(grow.node or '')} {_q(grow.fstype or '')} {_q(grow.mount or '')}"
        )
    return lines


# ---------------------------------------------------------------------------------------------------- new volumes
# A new EBS volume (the raft-dedicated-volume finding's `volume.create`), made idempotent by its tags
# (docs/reference/new-volumes.md):
# - AWS, Tag your Amazon EC2 resources (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/Using_Tags.html):
#   create-volume --tag-specifications tags the volume as it is made; describe-volumes --filters
#   Name=tag:<key>,Values=<value> finds it again.
# - AWS, Device names for volumes on Amazon EC2 instances
#   (https://docs.aws.amazon.com/ebs/latest/userguide/device_naming.html): for EBS volumes on Linux, /dev/sd[f-p]
#   are recommended; a name in use is refused (attach-volume), and the kernel may show another name (NVMe:
#   /dev/nvme<N>n1, whose serial is the volume id, https://docs.aws.amazon.com/ebs/latest/userguide/nvme-ebs-volumes.html).
DEVICE_LETTERS = "fghijklmnop"
FINDING_TAG = "headroom:finding"
NODE_TAG = "headroom:node"


@dataclass(frozen=True)
class NewVolume:
    """One volume the script creates and attaches (or finds by its tags and leaves as it is)."""

    name: str  # e.g. tikv-1-raft: the Name tag and the suffix of the script's variables
    key: str  # the finding's key (or the cluster and name): tag headroom:finding
    node: str  # the TiKV node it is for: tag headroom:node
    instance_id: str
    availability_zone: str  # "" = the instance's own
    create_flags: str  # --volume-type ... --size ... [--iops] [--throughput]
    tags: tuple[tuple[str, str], ...]
    raft_key: str  # raft-engine.dir or raftstore.raftdb-path
    mount: str  # "" = unknown: the user must set it
    raft_dir: str  # where the Raft log goes on the new volume ("" = unknown)
    raft_dir_now: str  # where it is now ("" = unknown)
    status_address: str  # the TiKV's status address ("" = unknown), for the rollback's check
    finding: str = ""  # the finding in words (its title) for the script's comment; "" = not given


def volume_variable(volume: NewVolume) -> str:
    """The suffix of a new volume's variables (`TIKV_1_RAFT`)."""
    return re.sub(r"[^A-Za-z0-9]", "_", volume.name).upper()


def _json(value: object) -> str:
    import json

    return json.dumps(value, separators=(",", ":"))


def _filters(volume: NewVolume) -> str:
    """describe-volumes filters (JSON: a value may hold commas): its two tags, not being deleted."""
    return _json([
        {"Name": f"tag:{FINDING_TAG}", "Values": [volume.key]},
        {"Name": f"tag:{NODE_TAG}", "Values": [volume.node]},
        {"Name": "status", "Values": ["creating", "available", "in-use"]},
    ])


_NEW_VOLUME_LIBRARY = r"""
record() {  # a line in the state file: time, what, volume, instance, device, name, key
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$@" >>"$STATE_FILE" \
    || say "WARNING: could not write $STATE_FILE"
}
free_device() {  # instance: the first of /dev/sdf../dev/sdp that no block device mapping or attachment uses
  local used name letter taken=" "
  used=$(aws_cli ec2 describe-instances --instance-ids "$1" \
    --query 'Reservations[0].Instances[0].BlockDeviceMappings[].DeviceName' --output text) || return 1
  used+=" "$(aws_cli ec2 describe-volumes --filters "Name=attachment.instance-id,Values=$1" \
    --query 'Volumes[].Attachments[].Device' --output text) || return 1
  for name in $used; do
    name=${name#/dev/}; name=${name#xvd}; name=${name#sd}
    taken+="${name%%[0-9]*} "
  done
  for letter in f g h i j k l m n o p; do
    [[ "$taken" == *" $letter "* ]] || { echo "/dev/sd$letter"; return 0; }
  done
  echo "none"
}
find_tagged() {  # filters JSON: sets FOUND_ID FOUND_STATE FOUND_ON FOUND_DEVICE ("" when none); 1 if several
  local out
  FOUND_ID=""; FOUND_STATE=""; FOUND_ON=""; FOUND_DEVICE=""
  out=$(aws_cli ec2 describe-volumes --filters "$1" \
    --query 'Volumes[].[VolumeId, State, Attachments[0].InstanceId, Attachments[0].Device]' --output text) \
    || return 2
  [[ -n "$out" ]] || return 0
  [[ $(wc -l <<<"$out") -eq 1 ]] || { FOUND_ID=$(awk '{print $1}' <<<"$out" | tr '\n' ' '); return 1; }
  read -r FOUND_ID FOUND_STATE FOUND_ON FOUND_DEVICE <<<"$out"
  [[ "$FOUND_ON" != None ]] || FOUND_ON=""
  [[ "$FOUND_DEVICE" != None ]] || FOUND_DEVICE=""
}
"""

_CREATE_LIBRARY = r"""
check_new_volume() {  # name, instance, availability zone ("" = the instance's), filters: sets NEW_ID NEW_AZ NEW_DONE
  local described state az device
  NEW_ID=""; NEW_DONE=0
  described=$(aws_cli ec2 describe-instances --instance-ids "$2" \
    --query 'Reservations[0].Instances[0].[State.Name, Placement.AvailabilityZone]' --output text) \
    || die "$1: cannot describe the instance $2 in $REGION (the error above)"
  read -r state az <<<"$described"
  case "$state" in running|stopped) ;; *) die "$1: the instance $2 is $state" ;; esac
  [[ -z "$3" || "$3" == "$az" ]] || die "$1: the instance $2 is in $az, not in $3 as when this script was made"
  NEW_AZ=$az
  find_tagged "$4" || case $? in
    1) die "$1: several volumes carry its tags ($FOUND_ID): keep one, delete the others, and run this again" ;;
    *) die "$1: cannot look for its volume in $REGION (the error above)" ;;
  esac
  if [[ -n "$FOUND_ID" ]]; then
    NEW_ID=$FOUND_ID
    if [[ -n "$FOUND_ON" && "$FOUND_ON" != "$2" ]]; then
      die "$1: its volume $FOUND_ID is attached to $FOUND_ON, not to $2"
    fi
    if [[ "$FOUND_ON" == "$2" ]]; then
      say "$1: $FOUND_ID is already attached to $2 as $FOUND_DEVICE: nothing to do"
      record found "$FOUND_ID" "$2" "$FOUND_DEVICE" "$1" "$5"
      NEW_DONE=1
      return 0
    fi
    say "$1: found $FOUND_ID ($FOUND_STATE), made by an earlier run: it is attached, not created again"
  fi
  device=$(free_device "$2") || die "$1: cannot read the block device mappings of $2 (the error above)"
  [[ "$device" != none ]] || die "$1: $2 has no free device name among /dev/sdf-/dev/sdp"
  say "checked $1: $2 is $state in $az; first free device name $device"
}
attach_new_volume() {  # name, volume, instance, key: attach on a free device name, wait until in-use
  local device
  aws_cli ec2 wait volume-available --volume-ids "$2"
  device=$(free_device "$3") || die "$1: cannot read the block device mappings of $3 (the error above)"
  [[ "$device" != none ]] || die "$1: $3 has no free device name among /dev/sdf-/dev/sdp"
  aws_cli ec2 attach-volume --volume-id "$2" --instance-id "$3" --device "$device" \
    --query '[VolumeId, InstanceId, Device, State]' --output text
  changed "$1: $2 attached to $3 as $device" \
    "$(AWS_LINE) ec2 detach-volume --volume-id $2 --instance-id $3 --device $device && $(AWS_LINE) ec2 wait volume-available --volume-ids $2"
  aws_cli ec2 wait volume-in-use --volume-ids "$2"
  record attached "$2" "$3" "$device" "$1" "$4"
  NEW_DEVICE=$device
}
"""

_REMOVE_LIBRARY = r"""
check_old_volume() {  # name, instance, filters, key: sets OLD_ID OLD_ON OLD_DEVICE ("" when there is none)
  OLD_ID=""; OLD_ON=""; OLD_DEVICE=""
  find_tagged "$3" || case $? in
    1) die "$1: several volumes carry its tags ($FOUND_ID): remove them by hand" ;;
    *) die "$1: cannot look for its volume in $REGION (the error above)" ;;
  esac
  if [[ -z "$FOUND_ID" ]]; then say "$1: no volume carries its tags: nothing to remove"; return 0; fi
  [[ -z "$FOUND_ON" || "$FOUND_ON" == "$2" ]] || die "$1: its volume $FOUND_ID is attached to $FOUND_ON, not to $2"
  OLD_ID=$FOUND_ID; OLD_ON=$FOUND_ON; OLD_DEVICE=$FOUND_DEVICE
  say "checked $1: $FOUND_ID ($FOUND_STATE${FOUND_ON:+, attached to $FOUND_ON as $FOUND_DEVICE})"
}
check_raft_moved_back() {  # name, status address, key, mount: refuse while TiKV's live config uses the mount
  local out dir url
  if [[ -z "$2" ]]; then
    say "$1: TiKV's status address is unknown: check by hand that $3 is no longer under $4 before you confirm"
    return 0
  fi
  url="$TIKV_STATUS_SCHEME://$2/config"
  if ! out=$(curl -fsS --max-time 10 ${TIKV_STATUS_CA:+--cacert "$TIKV_STATUS_CA"} "$url" 2>&1); then
    [[ $SKIP_TIKV_CHECK -eq 1 ]] || die "$1: cannot read TiKV's config at $url ($out): pass --skip-tikv-check once you have checked that TiKV no longer uses $4"
    say "$1: TiKV's config not read (--skip-tikv-check)"
    return 0
  fi
  dir=$(tr -d '\n' <<<"$out" | grep -o "\"${3#*.}\": *\"[^\"]*\"" | head -n 1 | sed 's/^[^:]*: *"\(.*\)"$/\1/' || true)
  case "$dir/" in
    "$4"/*) die "$1: TiKV at $2 still has $3 = $dir, on the new volume: roll its config back and restart it first" ;;
  esac
  say "$1: TiKV at $2 has $3 = ${dir:-<empty>}, not on $4"
}
remove_volume() {  # name, volume, instance ("" if not attached), device, key
  if [[ -n "$3" ]]; then
    # --instance-id and --device: detach it only from where the tags found it
    aws_cli ec2 detach-volume --volume-id "$2" --instance-id "$3" --device "$4" --query '[VolumeId, State]' --output text
    changed "$1: $2 detached from $3 ($4)" "$(AWS_LINE) ec2 attach-volume --volume-id $2 --instance-id $3 --device $4"
    aws_cli ec2 wait volume-available --volume-ids "$2"
    record detached "$2" "$3" "$4" "$1" "$5"
  fi
  aws_cli ec2 delete-volume --volume-id "$2"
  [[ -z "$3" ]] || undone "$LAST_CHANGE"
  record deleted "$2" "$3" "" "$1" "$5"
  say "$1: $2 deleted"
}
"""


def new_volume_library(*, rollback: bool) -> list[str]:
    """The helper functions that create, find, attach and remove tagged volumes."""
    text = _NEW_VOLUME_LIBRARY + (_REMOVE_LIBRARY if rollback else _CREATE_LIBRARY)
    return text.strip("\n").splitlines()


def new_volume_settings(volumes: Sequence[NewVolume], *, state_file: str, rollback: bool) -> list[str]:
    """Where the state file is and, per volume, its mount point and Raft directories (empty: set them)."""
    lines = [
        "",
        "# ---- new volumes: each is tagged with its finding's key and node, and found by them on every run",
        f': "${{STATE_FILE:=$(dirname "$0")/{state_file}}}"   # every volume made, attached or removed, a line each',
    ]
    for volume in volumes:
        var = volume_variable(volume)
        lines += [
            f"# {volume.name}: {volume.node} on {volume.instance_id}"
            + (f"; finding: {volume.finding}" if volume.finding else ""),
            f"MOUNT_{var}={_q(volume.mount)}   # where the host mounts it"
            + ("" if volume.mount else " (the node's storage.data-dir is unknown: SET IT)"),
            f"RAFT_DIR_{var}={_q(volume.raft_dir)}   # {volume.raft_key} on the new volume (this patch's tikv.toml)",
        ]
        if not rollback:
            lines.append(
                f"RAFT_DIR_NOW_{var}={_q(volume.raft_dir_now)}   # where the Raft log is now"
                + (" (from the node's config)" if volume.raft_dir_now else " (unknown: SET IT)")
            )
    return lines


def new_volume_settings_check(volumes: Sequence[NewVolume], *, rollback: bool) -> list[str]:
    """Stop before anything when a mount point or Raft directory is not set or does not fit."""
    lines: list[str] = ["missing=()"]
    for volume in volumes:
        var = volume_variable(volume)
        lines += [
            f'[[ "$MOUNT_{var}" == /?* ]] || missing+=("MOUNT_{var} (an absolute mount point)")',
            f'[[ "$RAFT_DIR_{var}" == "$MOUNT_{var}"/?* ]] '
            f'|| missing+=("RAFT_DIR_{var} (a directory under MOUNT_{var}, as {volume.raft_key} in the tikv.toml change)")',
        ]
        if not rollback:
            lines.append(f'[[ "$RAFT_DIR_NOW_{var}" == /?* ]] || missing+=("RAFT_DIR_NOW_{var} (where the Raft log is now)")')
    lines += [
        'if [[ ${#missing[@]} -gt 0 ]]; then',
        '  printf \'set at the top of this script: %s\\n\' "${missing[@]}" >&2',
        "  die \"settings missing\"",
        "fi",
    ]
    if rollback and any(v.status_address for v in volumes):
        lines.append('command -v curl >/dev/null || die "curl is not on PATH (the script reads TiKV\'s /config)"')
    return lines


def new_volume_preflight(volumes: Sequence[NewVolume]) -> list[str]:
    """Check every new volume's instance before any changes; find a volume an earlier run made by its tags."""
    lines = ["", "# ---- every new volume's instance before any changes; a volume with its tags is not made again"]
    for volume in volumes:
        var = volume_variable(volume)
        lines += [
            f"check_new_volume {_q(volume.name)} {_q(volume.instance_id)} {_q(volume.availability_zone)} "
            f"{_q(_filters(volume))} {_q(volume.key)}",
            f'NEW_ID_{var}=$NEW_ID; NEW_AZ_{var}=$NEW_AZ; NEW_DONE_{var}=$NEW_DONE',
        ]
    return lines


def new_volume_plan(volumes: Sequence[NewVolume], *, rollback: bool) -> list[str]:
    """The plan's lines for the new volumes, from what the preflight found."""
    lines: list[str] = []
    for volume in volumes:
        var = volume_variable(volume)
        if rollback:
            lines.append(f'[[ -z "$OLD_ID_{var}" ]] || say "  - {volume.name}: '
                         f'${{OLD_ON_{var}:+detach $OLD_ID_{var} from $OLD_ON_{var}, }}delete $OLD_ID_{var} '
                         f'(first unmount $MOUNT_{var} on the host and take it out of /etc/fstab: AWS warns that '
                         'detaching a mounted volume may lose data)"')
        else:
            lines += [
                f'if [[ "$NEW_DONE_{var}" -eq 0 && -z "$NEW_ID_{var}" ]]; then',
                f'  say {_q("  - " + volume.name + ": create " + volume.create_flags + " in ")}"$NEW_AZ_{var}"'
                f'{_q(", attach it to " + volume.instance_id)}',
                f'elif [[ "$NEW_DONE_{var}" -eq 0 ]]; then',
                f'  say "  - {volume.name}: attach $NEW_ID_{var} to {volume.instance_id}"',
                "fi",
            ]
    return lines


def new_volume_step(volume: NewVolume, *, reason_lines: Sequence[str]) -> list[str]:
    """Create the volume (unless its tags find one), attach it on a free device name, print and record its id and
    the host steps."""
    var = volume_variable(volume)
    tags = _json([{"ResourceType": "volume", "Tags": [{"Key": k, "Value": v} for k, v in volume.tags]}])
    name = _q(volume.name)
    key = _q(volume.key)
    return [
        *reason_lines,
        f'if [[ "$NEW_DONE_{var}" -eq 0 ]]; then',
        f'  if [[ -z "$NEW_ID_{var}" ]]; then',
        f'    NEW_ID_{var}=$(aws_cli ec2 create-volume --availability-zone "$NEW_AZ_{var}" {volume.create_flags} '
        f"--tag-specifications {_q(tags)} --query VolumeId --output text)",
        f'    changed "{volume.name}: $NEW_ID_{var} created" "$(AWS_LINE) ec2 delete-volume --volume-id $NEW_ID_{var}"',
        f'    record created "$NEW_ID_{var}" {_q(volume.instance_id)} "" {name} {key}',
        f'    say "{volume.name}: created $NEW_ID_{var} in $NEW_AZ_{var}"',
        "  fi",
        f'  attach_new_volume {name} "$NEW_ID_{var}" {_q(volume.instance_id)} {key}',
        f'  say "{volume.name}: $NEW_ID_{var} attached to {volume.instance_id} as $NEW_DEVICE"',
        "fi",
        f'say "{volume.name}: next, on the host of {volume.node} ({volume.instance_id}):"',
        f'say "  1. find the disk: lsblk -o NAME,SERIAL,SIZE (on Nitro instances it is an NVMe device whose serial is '
        f'${{NEW_ID_{var}/-/}}; otherwise the device name given above, or its /dev/xvd form)"',
        f'say "  2. only if blkid <disk> prints nothing (no file system yet): mkfs.ext4 <disk>. '
        f'Then mkdir -p $MOUNT_{var}; add to /etc/fstab: UUID=<blkid of the disk> '
        f'$MOUNT_{var} ext4 defaults,nodelalloc,noatime,nofail 0 2; mount $MOUNT_{var}"',
        f'say "  3. stop {volume.node}; copy $RAFT_DIR_NOW_{var} to $RAFT_DIR_{var} (cp -a, owned by the tikv user); '
        f'set {volume.raft_key} = $RAFT_DIR_{var} (this patch\'s tikv.toml change); start {volume.node}"',
    ]


def remove_preflight(volumes: Sequence[NewVolume]) -> list[str]:
    """Find every volume by its tags and check that TiKV no longer uses it, before any is removed."""
    lines = ["", "# ---- every volume by its tags, and TiKV's Raft directory, before any is removed"]
    for volume in volumes:
        var = volume_variable(volume)
        lines += [
            f"check_old_volume {_q(volume.name)} {_q(volume.instance_id)} {_q(_filters(volume))} {_q(volume.key)}",
            f"OLD_ID_{var}=$OLD_ID; OLD_ON_{var}=$OLD_ON; OLD_DEVICE_{var}=$OLD_DEVICE",
            f'if [[ -n "$OLD_ID_{var}" ]]; then',
            f'  check_raft_moved_back {_q(volume.name)} {_q(volume.status_address)} {_q(volume.raft_key)} '
            f'"$MOUNT_{var}"',
            "fi",
        ]
    return lines


def remove_step(volume: NewVolume) -> list[str]:
    """Detach (waiting until available) and delete one tagged volume."""
    var = volume_variable(volume)
    return [
        f'if [[ -n "$OLD_ID_{var}" ]]; then',
        f'  remove_volume {_q(volume.name)} "$OLD_ID_{var}" "$OLD_ON_{var}" "$OLD_DEVICE_{var}" {_q(volume.key)}',
        "fi",
    ]
