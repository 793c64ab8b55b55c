"""Headroom's Alertmanager payload against Alertmanager's own API v2 spec (postableAlerts, vendored next to this
file from prometheus/alertmanager api/v2/openapi.yaml) and the checks its API adds on a posted alert: label names
as Prometheus allows them (https://prometheus.io/docs/concepts/data_model/), a start time, and an end time not
before it (alert/alert.go, Alert.Validate: "start time must be before end time")."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import pytest
import yaml
from headroom.domain.notify import (
    ALERTMANAGER_FIRING_FOR,
    ALERTMANAGER_REPOST,
    ALERTMANAGER_TEST_FOR,
    AlertEvent,
    alertmanager_payload,
)

SPEC = yaml.safe_load((Path(__file__).parent / "alertmanager_postable_alerts.yaml").read_text())
LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")  # Prometheus data model: label names
AT = dt.datetime(2026, 11, 2, 18, 0, tzinfo=dt.UTC)
SENT = AT + dt.timedelta(minutes=3)


def _event(kind: str, **extra: Any) -> AlertEvent:
    return AlertEvent(key=f"f1:{kind}", kind=kind, at=AT, org="o", cluster="prod", cluster_id="c1",  # type: ignore[arg-type]
                      finding_id=None if kind == "test" else "f1", dedup_key="volume-iops-ceiling/c1/volume:vol-1",
                      rule="test" if kind == "test" else "volume-iops-ceiling", severity="critical", title="Volume at its IOPS ceiling",
                      entity="volume vol-1", fix="Raise the volume's IOPS.",
                      url="https://headroom.example.com/clusters/c1/findings/f1", **extra)


def _validator() -> jsonschema.Draft4Validator:
    schema = {"$ref": "#/definitions/postableAlerts", "definitions": SPEC["definitions"]}
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)


@pytest.mark.parametrize(("kind", "extra", "ends"), [
    ("opened", {"forecast": "the burst bucket empties in 4 h"}, SENT + ALERTMANAGER_FIRING_FOR),
    ("escalated", {}, SENT + ALERTMANAGER_FIRING_FOR),
    ("forecast", {"forecast": "the IOPS ceiling is reached in 12 days"}, SENT + ALERTMANAGER_FIRING_FOR),
    ("resolved", {}, AT),  # the resolution time, already past: Alertmanager ends the alert
    ("test", {}, SENT + ALERTMANAGER_TEST_FOR),
])
def test_the_payload_is_a_valid_postable_alerts_body(kind: str, extra: dict[str, Any], ends: dt.datetime) -> None:
    body = alertmanager_payload(_event(kind, **extra), SENT)
    _validator().validate(body)
    (alert,) = body
    assert all(LABEL_NAME.fullmatch(name) and value for name, value in alert["labels"].items())
    assert alert["labels"]["alertname"] == "Headroom_" + ("test" if kind == "test" else "volume-iops-ceiling")
    starts, end = dt.datetime.fromisoformat(alert["startsAt"]), dt.datetime.fromisoformat(alert["endsAt"])
    assert starts.tzinfo is not None and end.tzinfo is not None and starts <= end
    assert end == ends
    assert urlsplit(alert["generatorURL"]).scheme == "https"


def test_the_schema_check_can_fail() -> None:
    body = alertmanager_payload(_event("opened"), SENT)
    body[0]["annotations"]["count"] = 3  # a labelSet's values are strings
    with pytest.raises(jsonschema.ValidationError):
        _validator().validate(body)
    with pytest.raises(jsonschema.ValidationError):
        _validator().validate([{"annotations": {}}])  # labels are required


def test_an_open_alert_outlives_several_missed_reposts() -> None:
    """The window's reasoning (docs/thresholds/alertmanager.md): endsAt several re-post intervals ahead, more than
    Prometheus's 4 x its resend interval, and bounded (minutes, not the day it was)."""
    assert dt.timedelta(minutes=1) == ALERTMANAGER_REPOST
    assert ALERTMANAGER_FIRING_FOR >= 4 * ALERTMANAGER_REPOST
    assert dt.timedelta(minutes=15) >= ALERTMANAGER_FIRING_FOR
    assert ALERTMANAGER_TEST_FOR <= ALERTMANAGER_FIRING_FOR
