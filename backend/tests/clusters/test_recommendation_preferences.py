"""The lookback preference in the API: 14 days by default, 32 and 93 selectable per organisation and per cluster
(the cluster's own wins; null inherits), as AWS Compute Optimizer's look-back period (docs/reference/lookback.md).
Other values are a 422 naming the field in words; changes are audit-logged; viewers read, admins and owners
write; another organisation's cluster is a 404."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import join_with_role, sign_up

ORG = "/api/v1/org/recommendation-preferences"


def _cluster(owner: Any, name: str = "prod") -> str:
    response = owner.post("/api/v1/clusters", json={"name": name, "tikv_version": "v8.5.1"})
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def _prefs(cluster_id: str) -> str:
    return f"/api/v1/clusters/{cluster_id}/recommendation-preferences"


def test_default_is_14_days_and_a_cluster_inherits(client: Any) -> None:
    owner = sign_up(client)
    assert owner.get(ORG).json() == {"lookback_days": 14}
    cid = _cluster(owner)
    assert owner.get(_prefs(cid)).json() == {
        "lookback_days": None, "organization_lookback_days": 14, "effective_lookback_days": 14,
    }


@pytest.mark.parametrize("days", [14, 32, 93])
def test_the_three_choices_are_selectable(client: Any, days: int) -> None:
    owner = sign_up(client)
    response = owner.put(ORG, json={"lookback_days": days})
    assert response.status_code == 200, response.text
    assert owner.get(ORG).json()["lookback_days"] == days
    cid = _cluster(owner)
    assert owner.put(_prefs(cid), json={"lookback_days": days}).json()["effective_lookback_days"] == days


def test_the_cluster_overrides_the_org_and_null_inherits_again(client: Any) -> None:
    owner = sign_up(client)
    cid = _cluster(owner)
    assert owner.put(ORG, json={"lookback_days": 32}).status_code == 200
    assert owner.get(_prefs(cid)).json()["effective_lookback_days"] == 32  # inherited
    body = owner.put(_prefs(cid), json={"lookback_days": 93}).json()
    assert body == {"lookback_days": 93, "organization_lookback_days": 32, "effective_lookback_days": 93}
    assert owner.put(ORG, json={"lookback_days": 14}).status_code == 200
    assert owner.get(_prefs(cid)).json()["effective_lookback_days"] == 93  # the cluster's own still wins
    body = owner.put(_prefs(cid), json={"lookback_days": None}).json()
    assert body == {"lookback_days": None, "organization_lookback_days": 14, "effective_lookback_days": 14}


@pytest.mark.parametrize("value", [7, 30, 0, -14, "14 days", 14.5])
def test_other_values_are_a_422_naming_the_field_in_words(client: Any, value: Any) -> None:
    owner = sign_up(client)
    cid = _cluster(owner)
    for url in (ORG, _prefs(cid)):
        response = owner.put(url, json={"lookback_days": value})
        assert response.status_code == 422, response.text
        error = response.json()["error"]
        assert error["message"].startswith("Lookback (days)"), error
        assert "lookback_days" not in error["message"]
        assert any(d.get("field") == "lookback_days" for d in error["details"])
    assert owner.get(ORG).json()["lookback_days"] == 14
    assert owner.get(_prefs(cid)).json()["lookback_days"] is None


def test_org_level_lookback_cannot_be_null(client: Any) -> None:
    owner = sign_up(client)
    response = owner.put(ORG, json={"lookback_days": None})
    assert response.status_code == 422, response.text


def test_changes_are_audit_logged(client: Any) -> None:
    owner = sign_up(client)
    cid = _cluster(owner)
    owner.put(ORG, json={"lookback_days": 32})
    owner.put(_prefs(cid), json={"lookback_days": 93})
    entries = owner.get("/api/v1/org/audit-log").json()
    by_action = {e["action"]: e for e in entries}
    assert by_action["org.preferences_updated"]["details"] == {"lookback_days": 32, "previous_lookback_days": 14}
    cluster_entry = by_action["cluster.preferences_updated"]
    assert cluster_entry["target_id"] == cid
    assert cluster_entry["details"] == {"lookback_days": 93, "previous_lookback_days": None}


def test_viewers_read_but_cannot_change(client: Any, make_client: Any) -> None:
    owner = sign_up(client)
    cid = _cluster(owner)
    viewer = join_with_role(owner, make_client(), "viewer")
    assert viewer.get(ORG).status_code == 200
    assert viewer.get(_prefs(cid)).status_code == 200
    assert viewer.put(ORG, json={"lookback_days": 32}).status_code == 403
    assert viewer.put(_prefs(cid), json={"lookback_days": 32}).status_code == 403
    admin = join_with_role(owner, make_client(), "admin")
    assert admin.put(_prefs(cid), json={"lookback_days": 32}).status_code == 200


def test_another_orgs_cluster_is_a_404(client: Any, make_client: Any) -> None:
    owner = sign_up(client)
    cid = _cluster(owner)
    stranger = sign_up(make_client())
    assert stranger.get(_prefs(cid)).status_code == 404
    assert stranger.put(_prefs(cid), json={"lookback_days": 93}).status_code == 404
    assert owner.get(_prefs(cid)).json()["lookback_days"] is None
