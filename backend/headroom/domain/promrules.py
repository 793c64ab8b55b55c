"""Prometheus alerting rules for one cluster (pure): Headroom's thresholds with this cluster's own limits, for a
team whose alerts go through Prometheus and Alertmanager (docs/alerts.md).

    alert_rules(snapshot, *, dashboard_url=None) -> RuleFile      .groups (the rule file), .notes, .to_yaml()

Per TiKV node of the snapshot (selectors as TiUP's Prometheus labels them: TiKV by its status address as
`instance`, node_exporter by `instance=~"<host>:<port>"`):
- the data volume's counted IOPS at >= 90 % of its sustained IOPS for 30 minutes, and its MiB/s at >= 90 % of its
  sustained throughput: the AT_CEILING_FRACTION and the sustained minutes of the ceiling rules (docs/thresholds/
  sustained.md). IOPS are counted as the advisor counts them (`counted_iops_promql`, the same formula as
  `headroom.domain.physics.io.counted_ops`): each I/O in chunks of 256 KiB (SSD) or 1,024 KiB (st1/sc1), assuming
  every read (and every write) in the rate window has the window's average size (AWS "Amazon EBS I/O
  characteristics", docs/reference/ebs-io-accounting.md). The ceilings are the volumes' sustained or provisioned
  ones from `headroom.domain.physics.ceilings.volume_ceilings`, the advisor's. node_exporter's disk is the one holding TiKV's data directory: the rule joins the filesystem
  mounted at the data mount (node_filesystem_size_bytes{mountpoint=...}) to its device, so no device name is
  guessed (an EBS volume's AWS name, /dev/sdf, is not the name Nitro gives it, /dev/nvme1n1);
- the store's space: above PD's high-space ratio (0.7) warning, low-space ratio (0.8) critical, for 10 minutes
  (PingCAP: PD Configuration File), from what TiKV reports PD (tikv_store_size_bytes capacity / available);
- each thread pool's CPU against its *configured* size (the node's config, else the version's default) at the
  band's top that the thread-pool rule uses (headroom.domain.advisor.rules.thread_pools), instead of TiKV's fixed
  1.6-core raftstore alert (docs/reference/tikv-metrics.md#alert-rules), for 30 minutes.
Thread selectors and node_exporter names are the registry's (headroom.domain.snapshot.registry): one truth.
What Prometheus cannot see (gp2 BurstBalance, the instance's EBS limits: CloudWatch only) is listed in `notes`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from headroom.domain import references as refs
from headroom.domain.advisor.rules._common import AT_CEILING_FRACTION, SUSTAINED_MIN_RUN_MINUTES
from headroom.domain.advisor.rules.thread_pools import pools_for
from headroom.domain.catalog import VolumeLimits, volume_limits
from headroom.domain.forecast.capacity import PD_HIGH_SPACE_RATIO, PD_LOW_SPACE_RATIO
from headroom.domain.physics.ceilings import sustained, volume_ceilings
from headroom.domain.snapshot import metric_ids as mid
from headroom.domain.snapshot.registry import PrometheusSource, metric_spec
from headroom.domain.snapshot.schema import Node, Snapshot, config_get
from headroom.domain.tikvconf.defaults import HostFacts, effective_value
from headroom.domain.tikvconf.parse import flatten

SPACE_FOR = "10m"
CEILING_FOR = f"{int(SUSTAINED_MIN_RUN_MINUTES)}m"
RATE = "5m"  # rate window of the rules: longer than the 1-minute charts so one slow scrape does not flap them
# How the rule file's PromQL approximates the advisor's per-I/O count, said in the file itself.
COUNTING_NOTE = (
    "Counted IOPS: reads and writes each as ops x ceil(average I/O size / chunk), the chunk 256 KiB on SSD and "
    "1,024 KiB on st1/sc1 (AWS: Amazon EBS I/O characteristics), as Headroom's advisor counts them. PromQL sees "
    f"node_exporter's block-device counters over a {RATE} rate window, so the average size is the window's (the "
    "advisor's is CloudWatch's 1-minute period) and I/Os the kernel merged count as one, as EBS also merges them."
)


def counted_iops_promql(ops: str, nbytes: str, chunk_kib: int) -> str:
    """PromQL for ops/s counted in `chunk_kib` units: ops x ceil(bytes / ops / chunk), at least one chunk per I/O
    (physics.io.counted_ops over the rate window's averages; no I/O counts 0)."""
    chunk = chunk_kib * 1024
    return f"({ops}) * clamp_min(ceil(({nbytes}) / clamp_min({ops}, 1e-9) / {chunk}), 1)"


def _query(metric: str) -> str:
    source = metric_spec(metric).source
    assert isinstance(source, PrometheusSource)
    return source.query


def _host(address: str) -> str:
    return address.rsplit(":", 1)[0] if ":" in address else address


def _literal(text: str) -> str:
    """A regular expression matching `text` exactly, written as a PromQL string (its backslashes doubled)."""
    return re.escape(text).replace("\\", "\\\\")


def _node_exporter(query: str, host: str) -> str:
    """A registry node_exporter query for one host, whatever port its exporter listens on, at the rules' rate."""
    return (query.replace('instance="$instance"', f'instance=~"{_literal(host)}:[0-9]+"')
            .replace(',device="$device"', "").replace("[1m]", f"[{RATE}]"))


def _tikv(query: str, instance: str) -> str:
    return query.replace('instance="$instance"', f'instance="{instance}"').replace("[1m]", f"[{RATE}]")


def _data_mount(snapshot: Snapshot, node: Node) -> str | None:
    """The mount point holding the node's data dir, from the filesystems node_exporter reported for it."""
    mounts = {s.labels["mountpoint"] for s in snapshot.series
              if s.entity.kind == "node" and s.entity.id == node.id and s.metric == mid.NODE_FS_SIZE_BYTES
              and "mountpoint" in s.labels}
    data_dir = config_get(node.config, "storage.data-dir")
    if isinstance(data_dir, str) and data_dir.startswith("/"):
        holding = [m for m in mounts if data_dir.rstrip("/") == m or data_dir.startswith(m.rstrip("/") + "/")]
        if holding:
            return max(holding, key=len)
    return next(iter(mounts)) if len(mounts) == 1 else None


def _on_device(expr: str, host: str, mount: str) -> str:
    """Keep only the disk that holds `mount` (its filesystem's device, /dev/ stripped as diskstats names it)."""
    fs = (f'label_replace(max by (instance, device) (node_filesystem_size_bytes{{instance=~"{_literal(host)}:[0-9]+",'
          f'mountpoint="{mount}"}}), "device", "$1", "device", "/dev/(.+)")')
    return f"({expr}) * on (instance, device) group_left () (0 * {fs} + 1)"


@dataclass
class RuleFile:
    """A Prometheus rule file: groups of alerting rules, and what it could not express."""

    cluster: str
    groups: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_yaml(self) -> str:
        header = "".join(f"# {line}\n" for line in [
            f"Headroom's alerting rules for TiKV cluster {self.cluster}: its own limits in Prometheus rules.",
            "Check: promtool check rules <this file>. Load: add it to rule_files in prometheus.yml and reload.",
            "Labels follow TiUP's Prometheus (instance = TiKV status address; node_exporter on each host).",
            *self.notes,
        ])
        return header + yaml.safe_dump({"groups": self.groups}, sort_keys=False, allow_unicode=True, width=1000)


def _rule(name: str, expr: str, for_: str, severity: str, node: Node, cluster: str, summary: str,
          description: str, source: str) -> dict[str, Any]:
    return {
        "alert": name,
        "expr": expr,
        "for": for_,
        "labels": {"severity": severity, "cluster": cluster, "tikv_node": node.id, "source": "headroom"},
        "annotations": {"summary": summary, "description": description, "limit_source": source},
    }


def _volume_rules(snapshot: Snapshot, node: Node, cluster: str, notes: list[str]) -> list[dict[str, Any]]:
    if not node.data_volume_ids:
        return []
    mount = _data_mount(snapshot, node)
    host = _host(node.status_address or node.address)
    if mount is None:
        notes.append(f"{node.id}: no node_exporter filesystem holds storage.data-dir yet: its volume rules are left out")
        return []
    vols = [v for v in snapshot.volumes if v.id in node.data_volume_ids]
    lims = [volume_limits(v.type, v.size_gib, v.iops, v.throughput_mibps) for v in vols]
    iops, mibps = sustained_ceilings(lims)
    chunk_kib = max(lim.io_chunk_kib for lim in lims)
    label = ", ".join(f"{v.id} {v.type} {v.size_gib:g} GiB" for v in vols)
    reads, writes = (_node_exporter(_query(m), host) for m in (mid.NODE_DISK_READS, mid.NODE_DISK_WRITES))
    read_bytes, written_bytes = (_node_exporter(_query(m), host)
                                 for m in (mid.NODE_DISK_READ_BYTES, mid.NODE_DISK_WRITTEN_BYTES))
    counted = _on_device(f"{counted_iops_promql(reads, read_bytes, chunk_kib)} + "
                         f"{counted_iops_promql(writes, written_bytes, chunk_kib)}", host, mount)
    mib = _on_device(f"({read_bytes} + {written_bytes}) / 1048576", host, mount)
    source = (refs.EBS_VOLUME_TYPES.cite("sustained limits") + "; "
              + refs.EBS_IO_CHARACTERISTICS.cite(f"{chunk_kib} KiB units"))
    return [
        _rule("HeadroomDataVolumeIopsAtCeiling", f"{counted} >= {AT_CEILING_FRACTION} * {iops:g}", CEILING_FOR,
              "warning", node, cluster,
              f"{node.id}: data volume IOPS at >= {AT_CEILING_FRACTION:.0%} of its {iops:,.0f} IOPS ceiling",
              f"Counted IOPS ({chunk_kib} KiB units) of the disk under {mount} ({label}) are {{{{ $value | humanize }}}}, "
              f"at >= {AT_CEILING_FRACTION:.0%} of {iops:,.0f} for {CEILING_FOR}: reads and raft writes queue behind "
              "the volume. Headroom's finding has the fix.", source),
        _rule("HeadroomDataVolumeThroughputAtCeiling", f"{mib} >= {AT_CEILING_FRACTION} * {mibps:g}", CEILING_FOR,
              "warning", node, cluster,
              f"{node.id}: data volume throughput at >= {AT_CEILING_FRACTION:.0%} of its {mibps:,.0f} MiB/s ceiling",
              f"MiB/s of the disk under {mount} ({label}) are {{{{ $value | humanize }}}}, at >= "
              f"{AT_CEILING_FRACTION:.0%} of {mibps:,.0f} for {CEILING_FOR}: compaction and scans are capped.", source),
    ]


def sustained_ceilings(lims: list[VolumeLimits]) -> tuple[float, float]:
    """The sustained (or provisioned) IOPS and MiB/s of a node's data volumes, a RAID 0 array adding its stripes:
    the ceilings physics.ceilings.volume_ceilings gives the advisor and the charts, without the burst ones
    (Prometheus cannot see a gp2 bucket's credits, so its alert holds the volume to what it sustains)."""
    iops = mibps = 0.0
    for lim in lims:
        ceilings = volume_ceilings(lim, "data")
        iops += sustained(ceilings["iops"]).value
        mibps += sustained(ceilings["throughput"]).value
    return iops, mibps


def _space_rules(node: Node, cluster: str) -> list[dict[str, Any]]:
    instance = node.status_address or node.address
    available = f'tikv_store_size_bytes{{instance="{instance}",type="available"}}'
    capacity = f'tikv_store_size_bytes{{instance="{instance}",type="capacity"}}'
    used = f"1 - ({available} / ignoring (type) {capacity})"
    source = refs.PD_CONFIG.cite("schedule.high-space-ratio 0.7, schedule.low-space-ratio 0.8 (defaults)")
    return [
        _rule("HeadroomStoreLowSpace", f"{used} >= {PD_LOW_SPACE_RATIO}", SPACE_FOR, "critical", node, cluster,
              f"{node.id}: store above PD's low-space line ({PD_LOW_SPACE_RATIO:.0%} of capacity used)",
              "{{ $value | humanizePercentage }} of the capacity TiKV reports is used: PD places no new regions on "
              "the store. Grow the data volume online and its filesystem, or add stores.", source),
        _rule("HeadroomStoreHighSpace", f"{used} >= {PD_HIGH_SPACE_RATIO}", SPACE_FOR, "warning", node, cluster,
              f"{node.id}: store above PD's high-space line ({PD_HIGH_SPACE_RATIO:.0%} of capacity used)",
              "{{ $value | humanizePercentage }} of the capacity TiKV reports is used: PD balances this store by the "
              "space left.", source),
    ]


def _pool_rules(node: Node, cluster: str) -> list[dict[str, Any]]:
    flat = flatten(node.config)
    host = HostFacts(cpus=node.vcpus, memory_bytes=int(node.memory_gib * 1024**3))

    def size(key: str) -> int | None:
        value = effective_value(key, flat, node.tikv_version, host).value
        return int(value) if isinstance(value, int | float) and not isinstance(value, bool) and value > 0 else None

    io_pool = size("raftstore.store-io-pool-size")
    out = []
    instance = node.status_address or node.address
    for pool in pools_for(io_pool if io_pool is not None else None):
        threads = size(pool.key)
        if threads is None:
            continue
        expr = f"{_tikv(_query(pool.cpu_metric), instance)} >= {pool.upper} * {threads}"
        out.append(_rule(
            "HeadroomThreadPoolBusy", expr, CEILING_FOR, "warning", node, cluster,
            f"{node.id}: {pool.label} pool above {pool.upper:.0%} of its {threads} threads",
            f"The {pool.label} pool uses {{{{ $value | humanize }}}} cores of its {threads} threads "
            f"({pool.key} = {threads}) for {CEILING_FOR}: requests wait for a thread.", pool.source))
        out[-1]["labels"]["pool"] = pool.name
    return out


def alert_rules(snapshot: Snapshot) -> RuleFile:
    """The cluster's rule file (see the module)."""
    cluster = snapshot.cluster.name
    out = RuleFile(cluster=cluster, notes=[COUNTING_NOTE])
    rules: list[dict[str, Any]] = []
    for node in snapshot.nodes:
        rules += _volume_rules(snapshot, node, cluster, out.notes)
        rules += _space_rules(node, cluster)
        rules += _pool_rules(node, cluster)
    if any(v.type in ("gp2", "st1", "sc1") for v in snapshot.volumes):
        out.notes.append("gp2/st1/sc1 burst balances and the instances' EBS limits come from CloudWatch, which "
                         "Prometheus does not scrape: Headroom itself alerts on them.")
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", cluster).strip("-") or "cluster"
    out.groups.append({"name": f"headroom-{safe}", "rules": rules})
    return out
