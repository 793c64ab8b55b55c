"""docker-compose.yml is the production path; no Docker engine runs here, so its structure is checked."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from headroom.cli import app as cli_app

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    return data


def test_services(compose: dict[str, Any]) -> None:
    assert set(compose["services"]) == {"postgres", "redis", "migrate", "api", "worker", "worker-advice", "beat",
                                        "frontend"}


def test_stateful_services_have_volumes_and_healthchecks(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert any(v.endswith(":/var/lib/postgresql/data") for v in services["postgres"]["volumes"])
    for name in ("postgres", "redis", "api"):
        assert "test" in services[name]["healthcheck"], name
    assert set(compose["volumes"]) >= {"pgdata"}


def test_start_order_uses_conditions(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert services["migrate"]["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    for name in ("api", "worker", "worker-advice", "beat"):
        deps = services[name]["depends_on"]
        assert deps["migrate"] == {"condition": "service_completed_successfully"}, name
        assert deps["redis"] == {"condition": "service_healthy"}, name
    assert services["frontend"]["depends_on"] == {"api": {"condition": "service_healthy"}}
    assert services["migrate"]["restart"] == "no"


def test_exactly_one_beat(compose: dict[str, Any]) -> None:
    beats = [n for n, s in compose["services"].items() if "beat" in s.get("command", [])]
    assert beats == ["beat"]
    assert compose["services"]["beat"]["deploy"]["replicas"] == 1


def test_commands_exist(compose: dict[str, Any]) -> None:
    cli_commands = {c.name for c in cli_app.registered_commands}
    for name, service in compose["services"].items():
        command = service.get("command")
        if not command or command[0] != "headroom":
            continue
        assert command[1] in cli_commands, f"{name}: `headroom {command[1]}` does not exist"
    import importlib

    from headroom.platform.jobs.registry import QUEUES

    consumed: list[str] = []
    for name in ("worker", "worker-advice", "beat"):
        command = compose["services"][name]["command"]
        assert command[:3] == ["celery", "-A", "headroom_worker.celery_app"]
        assert importlib.util.find_spec("headroom_worker.celery_app") is not None
        if "worker" in command:
            consumed += command[command.index("-Q") + 1].split(",")
    # every queue has exactly one worker service, and neither the advice rounds nor the rollups (maintenance)
    # share one with the per-minute ingest (docs/scaling.md: both held it back in the load test)
    assert sorted(consumed) == sorted(QUEUES)
    ingest = compose["services"]["worker"]["command"]
    assert ingest[ingest.index("-Q") + 1].split(",") == ["ingest", "alerts"]


def test_build_files_exist(compose: dict[str, Any]) -> None:
    for service in compose["services"].values():
        build = service.get("build")
        if build:
            assert (ROOT / build["context"] / build["dockerfile"]).is_file()


def test_no_hard_coded_secrets_and_every_variable_documented() -> None:
    text = (ROOT / "docker-compose.yml").read_text()
    example = (ROOT / ".env.example").read_text()
    documented = set(re.findall(r"^([A-Z][A-Z0-9_]+)=", example, re.M))
    used = set(re.findall(r"\$\{([A-Z][A-Z0-9_]+)", text))
    assert used <= documented, f"undocumented: {sorted(used - documented)}"
    for secret in ("POSTGRES_PASSWORD", "HEADROOM_SECRET_KEY"):
        assert re.search(r"\$\{" + secret + r":\?", text), f"{secret} must be required with ${{{secret}:?...}}"
    assert not re.search(r"(PASSWORD|SECRET_KEY):\s*[\"']?[A-Za-z0-9]", text)


def test_env_example_lists_every_setting() -> None:
    from headroom.platform.settings import Settings

    example = (ROOT / ".env.example").read_text()
    documented = set(re.findall(r"^([A-Z][A-Z0-9_]+)=", example, re.M))
    aliases = {field.alias for field in Settings.model_fields.values() if field.alias}
    assert aliases <= documented, f"missing from .env.example: {sorted(aliases - documented)}"


def test_the_api_trusts_exactly_the_compose_network_as_its_proxy(compose: dict[str, Any]) -> None:
    from headroom.platform.settings import Settings

    subnets = [c["subnet"] for c in compose["networks"]["default"]["ipam"]["config"]]
    assert len(subnets) == 1
    for name in ("api", "migrate", "worker", "worker-advice", "beat"):
        assert compose["services"][name]["environment"]["HEADROOM_TRUSTED_PROXIES"] == subnets[0], name
    default = re.fullmatch(r"\$\{HEADROOM_COMPOSE_SUBNET:-([^}]+)\}", subnets[0])
    assert default is not None, subnets[0]
    assert Settings(HEADROOM_TRUSTED_PROXIES=default.group(1)).trusted_proxy_list == [default.group(1)]
    # Every service stays on that one network (a service on another could not reach the API as a proxy).
    assert all("networks" not in service for service in compose["services"].values())


def test_nginx_forwards_the_client_address() -> None:
    conf = (ROOT / "frontend" / "nginx.conf").read_text()
    api = conf[conf.index("location /api/"):]
    api = api[: api.index("}")]
    assert re.search(r"proxy_set_header\s+X-Forwarded-For\s+\$proxy_add_x_forwarded_for;", api)
    assert re.search(r"proxy_set_header\s+X-Real-IP\s+\$remote_addr;", api)


def test_the_rounds_yield_the_cores_to_the_api_and_the_ingest(compose: dict[str, Any]) -> None:
    # docs/scaling.md, "CPU weights": with the cores full, the 15-minute rounds wait, not the dashboard or the
    # minute's ingest. Docker's default weight is 1024.
    shares = {name: int(service.get("cpu_shares", 1024)) for name, service in compose["services"].items()}
    assert shares["worker-advice"] < min(shares[name] for name in ("api", "worker", "postgres", "redis"))
    assert shares["api"] == shares["worker"] == shares["postgres"] == 1024
