"""The import contracts in pyproject.toml (run by `lint-imports` in scripts/test.sh): kept by the code as it is,
and broken by one new import of each kind they forbid, so a contract that let such an import through would fail
here. The graph is built once from the installed package; each case adds its import to a copy."""

from __future__ import annotations

import copy
from pathlib import Path

import grimp
import pytest
from importlinter.application.use_cases import read_user_options
from importlinter.configuration import configure
from importlinter.contracts.acyclic_siblings import AcyclicSiblingsContract
from importlinter.contracts.forbidden import ForbiddenContract
from importlinter.contracts.independence import IndependenceContract
from importlinter.contracts.layers import LayersContract
from importlinter.domain.contract import Contract

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
CONTRACT_TYPES: dict[str, type[Contract]] = {
    "forbidden": ForbiddenContract,
    "layers": LayersContract,
    "independence": IndependenceContract,
    "acyclic_siblings": AcyclicSiblingsContract,
}


@pytest.fixture(scope="module")
def contracts() -> dict[str, Contract]:
    configure()  # what the lint-imports command does first: register the readers of the config file
    options = read_user_options(str(PYPROJECT))
    return {
        c["id"]: CONTRACT_TYPES[c["type"]](
            name=c["name"], session_options=options.session_options, contract_options=c
        )
        for c in options.contracts_options
    }


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("headroom", include_external_packages=True, cache_dir=None)


def _kept(contract: Contract, graph: grimp.ImportGraph, *extra: tuple[str, str]) -> bool:
    g = copy.deepcopy(graph)
    for importer, imported in extra:
        g.add_import(importer=importer, imported=imported, line_number=1, line_contents="import x")
    return contract.check(g, verbose=False).kept


def test_every_contract_is_kept_today(contracts: dict[str, Contract], graph: grimp.ImportGraph) -> None:
    assert set(contracts) == {
        "domain-pure",
        "layers",
        "features-through-services",
        "routers-jobs-no-store",
        "findings-tables-private",
        "acyclic",
    }
    assert {cid: _kept(c, graph) for cid, c in contracts.items()} == dict.fromkeys(contracts, True)


@pytest.mark.parametrize(
    ("contract_id", "importer", "imported"),
    [
        ("domain-pure", "headroom.domain.advisor.engine", "sqlalchemy"),
        ("domain-pure", "headroom.domain.physics.burst", "headroom.platform.settings"),
        ("domain-pure", "headroom.domain.snapshot.schema", "headroom.findings.service"),
        ("domain-pure", "headroom.domain.tikvconf.keys", "os"),
        ("layers", "headroom.platform.orm", "headroom.findings.service"),
        ("layers", "headroom.platform.db", "headroom.clusters.models"),
        ("layers", "headroom.findings.service", "headroom.api.app"),
        ("features-through-services", "headroom.findings.service", "headroom.patches.router"),
        ("features-through-services", "headroom.fleet.service", "headroom.findings.evidence_series"),
        ("features-through-services", "headroom.patches.service", "headroom.findings.schemas"),
        ("features-through-services", "headroom.sources.aws.ingest", "headroom.sources.prometheus.collector"),
        ("routers-jobs-no-store", "headroom.clusters.router", "headroom.clusters.models"),
        ("routers-jobs-no-store", "headroom.timeseries.jobs", "headroom.timeseries.models"),
        ("routers-jobs-no-store", "headroom.metrics.router", "headroom.platform.orm"),
        ("routers-jobs-no-store", "headroom.sources.prometheus.router", "headroom.sources.prometheus.models"),
        # Only the findings feature reads its tables: the digest, alerts, fleet, change ledger, patches and the API
        # call findings.service's typed reads instead.
        ("findings-tables-private", "headroom.digest.service", "headroom.findings.models"),
        ("findings-tables-private", "headroom.fleet.service", "headroom.findings.models"),
        ("findings-tables-private", "headroom.changes.service", "headroom.findings.models"),
        ("findings-tables-private", "headroom.patches.service", "headroom.findings.models"),
        ("findings-tables-private", "headroom.alerts.service", "headroom.findings.stored"),
        ("findings-tables-private", "headroom.api.app", "headroom.findings.models"),
        ("acyclic", "headroom.domain.catalog.volume_types", "headroom.domain.advisor.engine"),
        ("acyclic", "headroom.accounts.service", "headroom.findings.service"),
        ("acyclic", "headroom.accounts.models", "headroom.clusters.models"),
        # The four exceptions the contracts once allowed: each import, put back, breaks its contract again.
        ("routers-jobs-no-store", "headroom.findings.router", "headroom.findings.models"),
        ("acyclic", "headroom.sources.service", "headroom.sources.prometheus.promql"),
        ("acyclic", "headroom.api.deps", "headroom.accounts.service"),
        ("acyclic", "headroom.findings.service", "headroom.patches.models"),
    ],
)
def test_a_new_violation_breaks_its_contract(
    contracts: dict[str, Contract], graph: grimp.ImportGraph, contract_id: str, importer: str, imported: str
) -> None:
    assert importer in graph.modules  # a real module, so the case tests the contract, not a typo
    assert not _kept(contracts[contract_id], graph, (importer, imported))


def test_a_service_may_use_another_features_service(
    contracts: dict[str, Contract], graph: grimp.ImportGraph
) -> None:
    assert _kept(
        contracts["features-through-services"], graph, ("headroom.patches.service", "headroom.digest.service")
    )


def test_the_findings_feature_reads_its_own_tables(contracts: dict[str, Contract], graph: grimp.ImportGraph) -> None:
    contract = contracts["findings-tables-private"]
    assert _kept(contract, graph, ("headroom.findings.evidence_series", "headroom.findings.models"))
    # reaching the tables through the service (which imports them) is what the other features do
    assert _kept(contract, graph, ("headroom.digest.service", "headroom.findings.service"))


def test_every_package_but_findings_is_kept_off_the_findings_tables() -> None:
    import pkgutil
    import tomllib

    import headroom

    contract = next(c for c in tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]["contracts"]
                    if c["id"] == "findings-tables-private")
    top_level = {f"headroom.{m.name}" for m in pkgutil.iter_modules(headroom.__path__)}
    assert set(contract["source_modules"]) == top_level - {"headroom.findings"}
