"""Dashboard users for the load test (bench/load_test.py): each logs in as one organisation's user and browses
its cluster as the React dashboard does, page by page, with the API calls each page makes (recorded from the
browser by e2e/tests/budgets.spec.ts: overview 8, findings 3, metrics 4, config 5, patches 3, a finding 3,
clusters list 3).

A page's calls are made one after another here (the browser makes them in parallel), so a page takes longer
here than in a browser; what is measured is each request's latency. Between pages a user reads for 2-6 s.

Environment: HEADROOM_LOAD_ACCOUNTS, a JSON file of [{"email", "password", "cluster_id"}, ...];
HEADROOM_LOAD_HOSTS, the API processes' base URLs, comma-separated (default: locust's --host).
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import os
import random
from pathlib import Path
from typing import Any

from locust import HttpUser, between, events, task

ACCOUNTS: list[dict[str, str]] = json.loads(Path(os.environ["HEADROOM_LOAD_ACCOUNTS"]).read_text())
# Several API processes: users are spread over them (as a load balancer would), each keeping its process.
HOSTS = [h for h in os.environ.get("HEADROOM_LOAD_HOSTS", "").split(",") if h]
_next_account = itertools.count()


@events.init.add_listener
def _record_requests(environment: Any, **_: Any) -> None:
    """Write every request (start time, name, milliseconds, failed) next to locust's CSV files, so the harness can
    compute the latency of the dashboard's requests once every user has logged in (logins hash a password: their
    burst at the start of a step is not what a user waits for on a page)."""
    prefix = getattr(environment.parsed_options, "csv_prefix", None)
    if not prefix:
        return
    out = Path(f"{prefix}_requests.tsv").open("w")  # noqa: SIM115 - open for the whole run, closed at exit

    def record(name: str, response_time: float, exception: Any, start_time: float = 0.0, **_: Any) -> None:
        out.write(f"{start_time:.3f}\t{name}\t{response_time:.1f}\t{int(exception is not None)}\n")

    environment.events.request.add_listener(record)
    environment.events.quitting.add_listener(lambda **_: out.close())


def _window(hours: int) -> dict[str, str]:
    """The metrics tab's window, as the page asks it: ends now, rounded to the minute, ISO with a Z."""
    end = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
    fmt = "%Y-%m-%dT%H:%M:%S.000Z"
    return {"start": (end - dt.timedelta(hours=hours)).strftime(fmt), "end": end.strftime(fmt)}


class DashboardUser(HttpUser):
    wait_time = between(2, 6)

    def on_start(self) -> None:
        index = next(_next_account)
        account = ACCOUNTS[index % len(ACCOUNTS)]
        if HOSTS:
            self.client.base_url = HOSTS[index % len(HOSTS)]
        self.cluster = account["cluster_id"]
        self.base = f"/api/v1/clusters/{self.cluster}"
        with self.client.post("/api/v1/auth/login", json={"email": account["email"], "password": account["password"]},
                              name="POST /auth/login", catch_response=True) as response:
            if response.status_code != 200:
                response.failure(f"login {response.status_code}: {response.text[:200]}")
        nodes = self.client.get(f"{self.base}/nodes", name="GET /clusters/{id}/nodes").json()
        self.nodes = [n["id"] for n in (nodes.get("items", nodes) if isinstance(nodes, dict) else nodes)]
        self.findings: list[str] = []

    def _get(self, path: str, name: str, **params: Any) -> Any:
        response = self.client.get(path, params=params or None, name=name)
        return response.json() if response.status_code == 200 else None

    def _page(self) -> None:
        """What every cluster page fetches first."""
        self._get("/api/v1/auth/me", "GET /auth/me")
        self._get(self.base, "GET /clusters/{id}")

    @task(4)
    def overview(self) -> None:
        self._page()
        self._get("/api/v1/sources/aws", "GET /sources/aws")
        self._get("/api/v1/sources/prometheus", "GET /sources/prometheus")
        found = self.client.get(f"{self.base}/findings?status=open&status=acknowledged&sort=impact",
                                name="GET /clusters/{id}/findings").json()
        self.findings = [f["id"] for f in found.get("items", [])]
        self._get(f"{self.base}/projections", "GET /clusters/{id}/projections", bands="false")
        self._get(f"{self.base}/changes", "GET /clusters/{id}/changes")
        self._get(f"{self.base}/nodes", "GET /clusters/{id}/nodes")

    @task(3)
    def metrics_6h(self) -> None:
        self._page()
        window = _window(6)
        self._get(f"{self.base}/metrics/overview", "GET /clusters/{id}/metrics/overview", **window)
        self._get(f"{self.base}/metrics", "GET /clusters/{id}/metrics (6 h)", projections="false", points="112",
                  **window)

    @task(1)
    def metrics_7d(self) -> None:
        self._page()
        window = _window(24 * 7)
        self._get(f"{self.base}/metrics/overview", "GET /clusters/{id}/metrics/overview", **window)
        self._get(f"{self.base}/metrics", "GET /clusters/{id}/metrics (7 d)", projections="false", points="112",
                  **window)

    @task(2)
    def findings_page(self) -> None:
        self._page()
        self._get(f"{self.base}/findings", "GET /clusters/{id}/findings")

    @task(2)
    def finding(self) -> None:
        if not self.findings:
            return
        finding = random.choice(self.findings)
        self._get("/api/v1/auth/me", "GET /auth/me")
        self._get(f"/api/v1/findings/{finding}", "GET /findings/{id}")
        self._get(f"/api/v1/findings/{finding}/evidence/series", "GET /findings/{id}/evidence/series")

    @task(1)
    def config(self) -> None:
        self._page()
        self._get(f"{self.base}/findings?status=open&status=acknowledged", "GET /clusters/{id}/findings")
        self._get(f"{self.base}/nodes", "GET /clusters/{id}/nodes")
        if self.nodes:
            self._get(f"{self.base}/nodes/{self.nodes[0]}/config", "GET /clusters/{id}/nodes/{id}/config")

    @task(1)
    def patches(self) -> None:
        self._page()
        self._get(f"{self.base}/patches", "GET /clusters/{id}/patches")

    @task(2)
    def clusters_list(self) -> None:
        self._get("/api/v1/auth/me", "GET /auth/me")
        self._get("/api/v1/clusters", "GET /clusters")
        self._get("/api/v1/fleet", "GET /fleet")
