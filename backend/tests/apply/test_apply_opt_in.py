"""Apply is opt-in (docs/apply.md): off by default for an organisation and for each cluster; allowed on a cluster
only while both are on (a cluster narrows, never widens); only an owner turns either on or off (admins and
viewers get a 403 and nothing changes); every change is audit-logged with the value it replaced."""

from __future__ import annotations

from typing import Any

from helpers import join_with_role, sign_up

ORG = "/api/v1/org/apply-settings"


def _cluster(owner: Any, name: str = "prod") -> str:
    response = owner.post("/api/v1/clusters", json={"name": name, "tikv_version": "v8.5.1"})
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def _settings(cluster_id: str) -> str:
    return f"/api/v1/clusters/{cluster_id}/apply-settings"


def test_off_by_default_and_says_what_it_would_allow(client: Any) -> None:
    owner = sign_up(client)
    body = owner.get(ORG).json()
    assert (body["enabled"], body["role_arn"], body["volume_tag_key"], body["volume_tag_value"]) == (
        False, None, None, None)
    assert any("gp2 to gp3" in a for a in body["allows"])
    assert any("restart" in n for n in body["never"])
    cid = _cluster(owner)
    assert {k: v for k, v in owner.get(_settings(cid)).json().items() if k != "allows"} == {
        "enabled": False, "organization_enabled": False, "effective_enabled": False}


def test_a_cluster_narrows_its_organisation_never_widens_it(client: Any) -> None:
    owner = sign_up(client)
    cid = _cluster(owner)
    # the cluster on, the organisation off: not allowed
    assert owner.put(_settings(cid), json={"enabled": True}).json()["effective_enabled"] is False
    # both on: allowed
    assert owner.put(ORG, json={"enabled": True}).status_code == 200
    assert owner.get(_settings(cid)).json() | {"allows": None} == {
        "enabled": True, "organization_enabled": True, "effective_enabled": True, "allows": None}
    # another cluster of the same organisation stays off until turned on itself
    other = _cluster(owner, "staging")
    assert owner.get(_settings(other)).json()["effective_enabled"] is False
    # the organisation off again: no cluster is allowed, whatever its own switch
    assert owner.put(ORG, json={"enabled": False}).status_code == 200
    body = owner.get(_settings(cid)).json()
    assert (body["enabled"], body["effective_enabled"]) == (True, False)


def test_only_an_owner_turns_it_on_or_off(client: Any, make_client: Any) -> None:
    owner = sign_up(client)
    cid = _cluster(owner)
    admin = join_with_role(owner, make_client(), "admin")
    viewer = join_with_role(owner, make_client(), "viewer")
    for actor in (admin, viewer):
        response = actor.put(ORG, json={"enabled": True})
        assert response.status_code == 403, response.text
        assert "owner" in response.json()["error"]["message"]
        assert actor.put(_settings(cid), json={"enabled": True}).status_code == 403
        assert actor.get(ORG).json()["enabled"] is False  # everyone reads it
    assert owner.get(_settings(cid)).json()["enabled"] is False


def test_the_write_role_and_tag_are_checked_and_named_in_words(client: Any) -> None:
    owner = sign_up(client)
    bad = owner.put(ORG, json={"enabled": True, "role_arn": "arn:aws:iam::12:role/x"})
    assert bad.status_code == 422
    assert bad.json()["error"]["message"].startswith("Write role ARN"), bad.json()
    bad = owner.put(ORG, json={"enabled": True, "volume_tag_key": "aws:reserved"})
    assert bad.status_code == 422 and bad.json()["error"]["message"].startswith("Volume tag key")
    bad = owner.put(ORG, json={"enabled": True, "volume_tag_value": "yes"})
    assert bad.status_code == 422 and "Volume tag" in bad.json()["error"]["message"]
    good = owner.put(ORG, json={"enabled": True, "role_arn": "arn:aws:iam::123456789012:role/HeadroomApply",
                                "volume_tag_key": "headroom-apply", "volume_tag_value": "yes"})
    assert good.status_code == 200, good.text
    assert (good.json()["role_arn"], good.json()["volume_tag_key"], good.json()["volume_tag_value"]) == (
        "arn:aws:iam::123456789012:role/HeadroomApply", "headroom-apply", "yes")
    assert owner.get(ORG).json()["enabled"] is True


def test_changes_are_audit_logged(client: Any) -> None:
    owner = sign_up(client)
    cid = _cluster(owner)
    owner.put(ORG, json={"enabled": True})
    owner.put(_settings(cid), json={"enabled": True})
    owner.put(_settings(cid), json={"enabled": False})
    log = owner.get("/api/v1/org/audit-log").json()
    org_entries = [e for e in log if e["action"] == "apply.org_settings_updated"]
    assert len(org_entries) == 1
    assert org_entries[0]["details"]["before"]["enabled"] is False
    assert org_entries[0]["details"]["after"]["enabled"] is True
    cluster_entries = [e for e in log if e["action"] == "apply.cluster_settings_updated"]
    assert [(e["details"]["enabled"], e["details"]["previous_enabled"]) for e in cluster_entries] == [
        (False, True), (True, False)]  # newest first
    assert all(e["target_id"] == cid for e in cluster_entries)


def test_another_organisations_cluster_is_a_404(client: Any, make_client: Any) -> None:
    owner = sign_up(client)
    cid = _cluster(owner)
    stranger = sign_up(make_client())
    assert stranger.get(_settings(cid)).status_code == 404
    assert stranger.put(_settings(cid), json={"enabled": True}).status_code == 404
    assert owner.get(_settings(cid)).json()["enabled"] is False
