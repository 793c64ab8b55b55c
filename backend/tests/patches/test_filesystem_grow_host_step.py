"""The host step an AWS script runs after a volume grows (docs/reference/filesystem-grow.md), taken out of a rendered
script and run with bash: the real resize2fs grows a real ext4 filesystem in an image file (resize2fs works on an
unmounted image the same way it works on a block device); lsblk and findmnt are stand-ins that describe that file as
the instance would (a Nitro NVMe disk whose serial is the volume id without its dash, and the mount findmnt reports),
growpart and xfs_growfs are stand-ins that record their arguments (xfs_growfs needs a mounted filesystem and growpart
a partitioned block device, neither of which a test can make without root devices).

Every refusal is checked to leave the filesystem as it was: another filesystem type, a type other than the one
node_exporter reported, another mount point, no disk with the volume's serial, RAID or LVM between the disk and the
filesystem."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from headroom.domain.model import Change, EntityRef
from headroom.domain.tikvconf.change import Patch, PatchTarget
from headroom.domain.tikvconf.render import artefact

VOLUME = "vol-0a1b2c3d4e5f60001"
INSTANCE = "i-0a1b2c3d4e5f60001"


def _script(fstype: str | None = "ext4", mount: str | None = "/data1") -> str:
    node = PatchTarget(status_address="10.0.1.5:20180", address="10.0.1.5:20160", instance_id=INSTANCE,
                       data_mount=mount, data_fstype=fstype)
    entity = EntityRef(kind="volume", id=VOLUME, volume_id=VOLUME, instance_id=INSTANCE)
    change = Change(target="aws", key="volume.size", current=500, proposed=800, entity=entity, reason="low space")
    return artefact(Patch(cluster="prod-east", region="eu-north-1", nodes=(node,), changes=(change,)), "aws").body


def host_step(script: str) -> str:
    """The host step as the AWS script carries it (the body of its host_grow_script heredoc)."""
    found = re.search(r"<<'HEADROOM_HOST_STEP'\n(.*?)\nHEADROOM_HOST_STEP\n", script, re.S)
    assert found, "the script has no host step"
    return found.group(1) + "\n"


def _tool(bin_dir: Path, name: str, body: str) -> None:
    path = bin_dir / name
    path.write_text("#!/usr/bin/env bash\n" + body)
    path.chmod(0o755)


def stand_ins(bin_dir: Path, *, disk: str, serial: str, mounted: dict[str, str], children: dict[str, str]) -> Path:
    """lsblk and findmnt describing `disk` (serial `serial`), its `children` (name -> TYPE) and what is mounted
    (device -> "TARGET FSTYPE"); growpart and xfs_growfs record their arguments in calls.log."""
    bin_dir.mkdir(exist_ok=True)
    log = bin_dir / "calls.log"
    listing = "\n".join([f"{disk} disk", *(f"{name} {kind}" for name, kind in children.items())])
    _tool(bin_dir, "lsblk", f"""
case "$*" in
  "-dnpo NAME,SERIAL") printf '%s\\n' "/dev/nvme0n1 vol0ffffffffffffffff" "{disk} {serial}" ;;
  "-lnpo NAME,TYPE {disk}") printf '%s\\n' {" ".join(repr(line) for line in listing.splitlines())} ;;
  *) echo "lsblk stand-in: unexpected $*" >&2; exit 2 ;;
esac
""")
    cases = "\n".join(f'  "-rno TARGET,FSTYPE --source {device}") echo {answer!r} ;;' for device, answer in mounted.items())
    _tool(bin_dir, "findmnt", f"""
case "$*" in
{cases}
  "-rno TARGET,FSTYPE --source "*) exit 1 ;;
  *) echo "findmnt stand-in: unexpected $*" >&2; exit 2 ;;
esac
""")
    _tool(bin_dir, "growpart", f'echo "growpart $*" >> {log}\n'
                               'if [[ -n "${GROWPART_NOCHANGE:-}" ]]; then echo "NOCHANGE: partition $2 could only be grown by 0"; exit 1; fi\n'
                               'echo "CHANGED: partition=$2 start=2048 old: size=1000 end=1001 new: size=2000 end=2001"\n')
    _tool(bin_dir, "xfs_growfs", f'echo "xfs_growfs $*" >> {log}\necho "data blocks changed"\n')
    return log


def run_host_step(script: str, bin_dir: Path, *args: str, env: dict[str, str] | None = None
                  ) -> subprocess.CompletedProcess[str]:
    resize2fs = shutil.which("resize2fs") or "/usr/sbin/resize2fs"
    path = os.pathsep.join([str(bin_dir), str(Path(resize2fs).parent), os.environ.get("PATH", "")])
    return subprocess.run(["bash", "-s", "--", *args], input=host_step(script), capture_output=True, text=True,
                          timeout=120, check=False, env={**os.environ, "PATH": path, **(env or {})})


def ext4_image(path: Path, mib: int) -> Path:
    mkfs = shutil.which("mkfs.ext4") or "/usr/sbin/mkfs.ext4"
    if not Path(mkfs).exists():
        pytest.fail("mkfs.ext4 is not installed (e2fsprogs)", pytrace=False)
    subprocess.run(["truncate", "-s", f"{mib}M", str(path)], check=True)
    subprocess.run([mkfs, "-q", "-F", str(path)], check=True, capture_output=True)
    return path


def block_count(image: Path) -> int:
    dumpe2fs = shutil.which("dumpe2fs") or "/usr/sbin/dumpe2fs"
    out = subprocess.run([dumpe2fs, "-h", str(image)], capture_output=True, text=True, check=True).stdout
    match = re.search(r"^Block count:\s+(\d+)$", out, re.M)
    assert match, out
    return int(match.group(1))


def test_ext4_on_the_whole_disk_grows_with_resize2fs(tmp_path: Path) -> None:
    image = ext4_image(tmp_path / "nvme1n1", 64)
    before = block_count(image)
    subprocess.run(["truncate", "-s", "128M", str(image)], check=True)  # what modify-volume --size does to the disk
    log = stand_ins(tmp_path / "bin", disk=str(image), serial=VOLUME.replace("-", ""),
                    mounted={str(image): "/data1 ext4"}, children={})
    run = run_host_step(_script(), tmp_path / "bin", VOLUME, "ext4", "/data1")
    assert run.returncode == 0, run.stderr
    assert block_count(image) == 2 * before
    assert f"GROWN: {image} (ext4) at /data1" in run.stdout
    assert not log.exists()  # no partition: growpart is not run
    # run again (a rerun of the AWS script): nothing left to grow, still success
    again = run_host_step(_script(), tmp_path / "bin", VOLUME, "ext4", "/data1")
    assert again.returncode == 0, again.stderr
    assert block_count(image) == 2 * before


@pytest.mark.parametrize("nochange", [False, True])
def test_ext4_on_a_partition_grows_the_partition_first(nochange: bool, tmp_path: Path) -> None:
    disk = tmp_path / "nvme1n1"
    disk.write_text("")
    partition = ext4_image(tmp_path / "nvme1n1p1", 64)
    before = block_count(partition)
    subprocess.run(["truncate", "-s", "96M", str(partition)], check=True)  # what growpart does to the partition
    log = stand_ins(tmp_path / "bin", disk=str(disk), serial=VOLUME.replace("-", ""),
                    mounted={str(partition): "/data1 ext4"}, children={str(partition): "part"})
    run = run_host_step(_script(), tmp_path / "bin", VOLUME, "ext4", "/data1",
                        env={"GROWPART_NOCHANGE": "1"} if nochange else None)
    assert run.returncode == 0, run.stderr
    assert log.read_text() == f"growpart {disk} 1\n"
    assert block_count(partition) == before * 3 // 2


def test_xfs_grows_with_xfs_growfs_on_its_mount_point(tmp_path: Path) -> None:
    disk = tmp_path / "nvme1n1"
    disk.write_text("")
    log = stand_ins(tmp_path / "bin", disk=str(disk), serial=VOLUME.replace("-", ""),
                    mounted={str(disk): "/data1 xfs"}, children={})
    run = run_host_step(_script("xfs"), tmp_path / "bin", VOLUME, "xfs", "/data1")
    assert run.returncode == 0, run.stderr
    assert log.read_text() == "xfs_growfs -d /data1\n"


@pytest.mark.parametrize(
    ("case", "found", "expected", "children", "serial", "message"),
    [
        ("another filesystem", "/data1 btrfs", ("btrfs", "/data1"), {}, None,
         "is btrfs: only xfs (xfs_growfs) and ext4 (resize2fs) are grown"),
        ("not what node_exporter saw", "/data1 ext4", ("xfs", "/data1"), {}, None,
         "is ext4 here but node_exporter reported xfs"),
        ("another mount", "/data2 ext4", ("ext4", "/data1"), {}, None,
         "is mounted at /data2, not at /data1 as node_exporter reported"),
        ("no such serial", "/data1 ext4", ("ext4", "/data1"), {}, "vol0000000000000000",
         "no disk has serial vol0a1b2c3d4e5f60001"),
        ("raid between", "/data1 ext4", ("ext4", "/data1"), {"/dev/md0": "raid0"}, None,
         "is a raid0 device (RAID, LVM or encryption)"),
    ],
)
def test_the_host_step_refuses_and_leaves_the_filesystem_as_it_was(
    case: str, found: str, expected: tuple[str, str], children: dict[str, str], serial: str | None, message: str,
    tmp_path: Path,
) -> None:
    image = ext4_image(tmp_path / "nvme1n1", 64)
    before = block_count(image)
    subprocess.run(["truncate", "-s", "128M", str(image)], check=True)
    log = stand_ins(tmp_path / "bin", disk=str(image), serial=serial or VOLUME.replace("-", ""),
                    mounted={str(image): found}, children=children)
    run = run_host_step(_script(*expected), tmp_path / "bin", VOLUME, *expected)
    assert run.returncode == 1, case
    assert "NOT GROWN: " in run.stderr and message in run.stderr, run.stderr
    assert block_count(image) == before
    assert not log.exists()


def test_the_host_step_passes_shellcheck(tmp_path: Path) -> None:
    path = tmp_path / "grow.sh"
    path.write_text(host_step(_script()))
    assert subprocess.run(["bash", "-n", str(path)], check=False).returncode == 0
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed")
    lint = subprocess.run(["shellcheck", "--severity=warning", str(path)], capture_output=True, text=True,
                          check=False)
    assert lint.returncode == 0, lint.stdout
