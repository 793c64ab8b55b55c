"""A real Prometheus for this package's tests, holding two simulated clusters' history.

* cluster "healthy" labelled like TiUP: job="tikv", instance="<host>:<status port>", node_exporter as
  job="node_exporter", instance="<host>:9100";
* cluster "basic" in namespace "tidb" labelled as TidbMonitor's relabelling does (pingcap/tidb-operator
  pkg/monitor/monitor/util.go `scrapeJob`): job="tidb-basic-tikv", instance="<pod>", component="tikv",
  cluster="basic", kubernetes_namespace="tidb", tidb_cluster="tidb-basic"; node_exporter on the pod hosts.

The history (simulator output turned into TiKV's raw series by exporter.py) is loaded with
`promtool tsdb create-blocks-from openmetrics`; the live TiKV endpoints (ExporterServer, one per node on its own
127.0.0.x address so hosts differ) are scraped, so the targets API shows them with their scrape URLs, and
serve `/config`. Everything runs on free 127.0.0.1 ports and is stopped at the end of the session.
"""

from __future__ import annotations

import datetime as dt
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from exporter import ExporterServer, NodeLabels, openmetrics_history, tikv_config_json
from headroom.domain.snapshot.scenario import load_scenario
from headroom.domain.snapshot.schema import Snapshot
from headroom.domain.snapshot.simulate import simulate

REPO = Path(__file__).resolve().parents[4]
HISTORY_HOURS = 6


@dataclass
class SimCluster:
    name: str
    flavour: str
    selector: str
    snapshot: Snapshot
    servers: dict[str, ExporterServer]  # node id -> live endpoint
    labels: dict[str, NodeLabels]
    store_addresses: dict[str, str]  # node id -> the address its /config advertises

    def store_address(self, node_id: str) -> str:
        return self.store_addresses[node_id]


@dataclass
class PromEnv:
    url: str
    end: dt.datetime  # the last simulated minute ("now" of the tests)
    tiup: SimCluster
    operator: SimCluster


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cluster(
    scenario: str, name: str, flavour: str, start: dt.datetime, ip_base: int, seed: int
) -> SimCluster:
    # The data as it is delivered by default (the scenario's monitoring: 5-minute EC2 periods, CloudWatch's missing
    # datapoints and failed Prometheus scrapes): a missed scrape is a minute without samples in the history, and
    # the tests compare every stored point with what Prometheus answers for it (exporter.prometheus_answers).
    snapshot = simulate(
        load_scenario(REPO / "examples" / "scenarios" / scenario),
        hours=HISTORY_HOURS,
        start=start,
        seed=seed,
    )
    servers: dict[str, ExporterServer] = {}
    labels: dict[str, NodeLabels] = {}
    stores: dict[str, str] = {}
    for i, node in enumerate(snapshot.nodes):
        host = f"127.0.0.{ip_base + i}"
        server = ExporterServer(host, {})
        # TiUP advertises host:20160; the Operator advertises the pod's stable DNS name in the peer service
        stores[node.id] = (
            node.address if flavour == "tiup" else f"{name}-tikv-{i}.{name}-tikv-peer.tidb.svc:20160"
        )
        server.config = tikv_config_json(node.config, stores[node.id], server.address)
        servers[node.id] = server
        if flavour == "tiup":
            labels[node.id] = NodeLabels(
                {"job": "tikv", "instance": server.address},
                {"job": "node_exporter", "instance": f"{host}:9100"},
            )
        else:
            pod = f"{name}-tikv-{i}"
            labels[node.id] = NodeLabels(
                {
                    "job": f"tidb-{name}-tikv",
                    "instance": pod,
                    "component": "tikv",
                    "cluster": name,
                    "kubernetes_namespace": "tidb",
                    "tidb_cluster": f"tidb-{name}",
                },
                {"job": "node-exporter", "instance": f"{host}:9100"},
            )
    selector = "" if flavour == "tiup" else f'tidb_cluster="tidb-{name}"'
    return SimCluster(name, flavour, selector, snapshot, servers, labels, stores)


def _scrape_config(tiup: SimCluster, operator: SimCluster) -> str:
    lines = [
        "global:",
        "  scrape_interval: 5s",
        "scrape_configs:",
        "  - job_name: tikv",
        "    static_configs:",
        "      - targets: [" + ", ".join(f"'{s.address}'" for s in tiup.servers.values()) + "]",
        f"  - job_name: tidb-{operator.name}-tikv",
        "    static_configs:",
    ]
    for node_id, server in operator.servers.items():
        pod = operator.labels[node_id].tikv["instance"]
        lines += [
            f"      - targets: ['{server.address}']",
            f"        labels: {{component: tikv, cluster: {operator.name}, kubernetes_namespace: tidb, "
            f"tidb_cluster: tidb-{operator.name}, __tmp_pod: {pod}}}",
        ]
    lines += ["    relabel_configs:", "      - source_labels: [__tmp_pod]", "        target_label: instance"]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="session")
def prom_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PromEnv]:
    if not (shutil.which("prometheus") and shutil.which("promtool")):
        pytest.fail("prometheus and promtool are needed (Debian package `prometheus`)", pytrace=False)
    work = tmp_path_factory.mktemp("prom")
    now = dt.datetime.now(dt.UTC).replace(minute=0, second=0, microsecond=0)
    start = now - dt.timedelta(hours=HISTORY_HOURS + 2)
    tiup = _cluster("healthy.yaml", "healthy", "tiup", start, 11, seed=1)
    operator = _cluster("thread-pool-saturation.yaml", "basic", "operator", start, 21, seed=2)
    history = work / "history.om"
    with history.open("w") as out:
        out.writelines(_merged_history(tiup, operator))
    data = work / "data"
    subprocess.run(
        ["promtool", "tsdb", "create-blocks-from", "openmetrics", str(history), str(data)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    (work / "prometheus.yml").write_text(_scrape_config(tiup, operator))
    port = _free_port()
    log = (work / "prometheus.log").open("w")
    process = subprocess.Popen(
        [
            "prometheus",
            f"--config.file={work / 'prometheus.yml'}",
            f"--storage.tsdb.path={data}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--storage.tsdb.retention.time=10y",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait(lambda: httpx.get(f"{url}/-/ready", timeout=1).status_code == 200, "prometheus ready")
        _wait(lambda: _all_scraped(url, 6), "targets scraped")
        end = tiup.snapshot.window.end - dt.timedelta(seconds=tiup.snapshot.window.step_seconds)
        yield PromEnv(url, end, tiup, operator)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()
        for cluster in (tiup, operator):
            for server in cluster.servers.values():
                server.close()


def _merged_history(*clusters: SimCluster) -> Iterator[str]:
    # OpenMetrics wants each metric family once: render every cluster, then regroup lines by family.
    families: dict[str, list[str]] = {}
    for cluster in clusters:
        current = ""
        for line in openmetrics_history(cluster.snapshot, cluster.labels.__getitem__):
            if line.startswith("# TYPE "):
                current = line.split()[2]
                families.setdefault(current, [])
            elif line.startswith("# EOF"):
                continue
            else:
                families[current].append(line)
    for name in sorted(families):
        yield f"# TYPE {name} unknown\n"
        yield from families[name]
    yield "# EOF\n"


def _all_scraped(url: str, count: int) -> bool:
    targets = httpx.get(f"{url}/api/v1/targets", timeout=2).json()["data"]["activeTargets"]
    return len(targets) >= count and all(t["health"] == "up" for t in targets)


def _wait(check: Any, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise TimeoutError(f"timed out waiting for {what}")
