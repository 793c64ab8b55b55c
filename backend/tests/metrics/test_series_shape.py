"""One series shape on both APIs that chart points: a Metrics panel's lines and a finding's evidence series.

Read from the OpenAPI document the front end's client is generated from, so a field renamed on one API only (a
`value` next to a `values`) fails here, not in a chart.
"""

from __future__ import annotations

from typing import Any

import pytest
from headroom.api.app import build_context, create_app
from headroom.domain.model import EvidenceSeries, Series
from headroom.platform.settings import Settings

# What a point-carrying series is, on every API (the domain's Series).
SERIES_FIELDS = {"id", "label", "unit", "entity_kind", "entity_id", "entity_name", "statistic", "step_seconds",
                 "span_seconds", "t", "values"}


@pytest.fixture(scope="module")
def schemas() -> dict[str, Any]:
    app = create_app(build_context(Settings(), "postgresql+psycopg://schema-only@localhost/none"))
    doc: dict[str, Any] = app.openapi()
    return doc


def _response_schema(doc: dict[str, Any], path: str) -> dict[str, Any]:
    ref = doc["paths"][path]["get"]["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    return _resolve(doc, ref)


def _resolve(doc: dict[str, Any], ref: str) -> dict[str, Any]:
    schema: dict[str, Any] = doc["components"]["schemas"][ref.rsplit("/", 1)[1]]
    return schema


def _series_items(doc: dict[str, Any], owner: dict[str, Any]) -> str:
    ref: str = owner["properties"]["series"]["items"]["$ref"]
    return ref


def test_both_apis_chart_series_of_the_one_domain_shape(schemas: dict[str, Any]) -> None:
    metrics = _response_schema(schemas, "/api/v1/clusters/{cluster_id}/metrics")
    panel = _resolve(schemas, metrics["properties"]["panels"]["items"]["$ref"])
    evidence = _response_schema(schemas, "/api/v1/findings/{finding_id}/evidence/series")
    panel_ref, evidence_ref = _series_items(schemas, panel), _series_items(schemas, evidence)
    assert panel_ref.endswith("/Series") and evidence_ref.endswith("/EvidenceSeries")
    assert issubclass(EvidenceSeries, Series)

    series, evidence_series = _resolve(schemas, panel_ref), _resolve(schemas, evidence_ref)
    assert set(series["properties"]) == SERIES_FIELDS
    # every field of the series is on the evidence's series too: same name, same type, same meaning, both required
    for name, prop in series["properties"].items():
        assert evidence_series["properties"][name] == prop, name
    assert set(series["required"]) == SERIES_FIELDS
    assert set(evidence_series["required"]) >= SERIES_FIELDS
    # what the evidence adds says what was charted and against what: its reference lines and, for a volume's or an
    # instance's IOPS / MiB/s, the ceiling in force at each of its own points (no other time axis)
    assert set(evidence_series["properties"]) - SERIES_FIELDS == {"metric", "reference_lines", "found", "in_force"}


def test_the_points_are_epoch_seconds_and_nullable_values(schemas: dict[str, Any]) -> None:
    series = schemas["components"]["schemas"]["Series"]["properties"]
    assert series["t"]["items"] == {"type": "integer"}
    assert series["values"]["items"] == {"anyOf": [{"type": "number"}, {"type": "null"}]}  # null: a gap, never 0
    assert set(series["statistic"]["enum"]) == {"avg", "max", "min"}
    assert set(series["entity_kind"]["enum"]) == {"volume", "instance", "node"}


def test_no_other_response_carries_a_series_of_its_own(schemas: dict[str, Any]) -> None:
    # a look-alike (t plus value/values) anywhere else in the API is a second series shape
    for name, schema in schemas["components"]["schemas"].items():
        props = set(schema.get("properties", {}))
        if name in ("Series", "EvidenceSeries"):
            continue
        assert not ({"t"} <= props and props & {"value", "values"}), name
