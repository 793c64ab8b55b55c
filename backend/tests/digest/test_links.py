"""Every link in a rendered weekly email (text and HTML parts) opens a page of the front-end router
(frontend/route-paths.json, kept equal to frontend/src/router.tsx by frontend/src/route-paths.test.ts) or an API
route of the app, on HEADROOM_PUBLIC_URL with its port; a finding's link opens that finding's own page."""

from __future__ import annotations

import json
import re
import uuid
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from digest_seed import DIGEST_AT, advisor_finding, record
from headroom.digest import service
from helpers import sign_up

PUBLIC_URL = "http://headroom.internal:8443/"
BASE = PUBLIC_URL.rstrip("/")
ROUTE_PATHS = Path(__file__).resolve().parents[3] / "frontend" / "route-paths.json"


class _Hrefs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.hrefs += [v for k, v in attrs if k in ("href", "src") and v]


def _links(text: str, html: str) -> tuple[list[str], list[str]]:
    parser = _Hrefs()
    parser.feed(html)
    return re.findall(r"https?://\S+", text), parser.hrefs


def _pattern(template: str, param: str) -> re.Pattern[str]:
    return re.compile(
        "^" + re.sub(param, "[^/]+", re.escape(template).replace(r"\{", "{").replace(r"\}", "}")) + "$"
    )


def _resolver(app: Any) -> Any:
    pages = [_pattern(p, r":\w+") for p in json.loads(ROUTE_PATHS.read_text())["paths"]]
    api = [_pattern(p, r"\{\w+\}") for p in app.openapi()["paths"]]

    def resolves(url: str) -> bool:
        path = urlsplit(url).path
        return any(p.match(path) for p in pages + api)

    return resolves


@pytest.fixture()
def digest_parts(client: Any, sessions: Any, smtp_settings: Any) -> dict[str, Any]:
    owner = sign_up(client, org="Links Org")
    cluster = owner.post("/api/v1/clusters", json={"name": "links", "tikv_version": "v8.5.1"}).json()
    record(sessions, cluster["id"], [advisor_finding("links", "vol-0link", "critical", "vol-0link drains")])
    settings = smtp_settings.model_copy(update={"public_url": PUBLIC_URL})
    with sessions() as db:
        from headroom.findings.models import FindingRecord
        from sqlalchemy import select

        finding_id = db.scalars(
            select(FindingRecord.id).where(FindingRecord.cluster_id == uuid.UUID(cluster["id"]))
        ).one()
        data = service.gather(db, uuid.UUID(owner.org_id), now=DIGEST_AT, public_url=settings.public_url)
    mine = service.personal_digest(
        data, uuid.UUID(owner.org_id), uuid.UUID(owner.session["user"]["id"]), None, settings
    )
    empty = service.personal_digest(
        data, uuid.UUID(owner.org_id), uuid.UUID(owner.session["user"]["id"]), (), settings
    )
    return {
        "digest": mine.digest,
        "all_clear": empty.digest,
        "one_click": mine.one_click_url,
        "cluster_id": cluster["id"],
        "finding_id": str(finding_id),
    }


def test_every_link_resolves_to_a_page_or_an_api_route(app: Any, digest_parts: dict[str, Any]) -> None:
    resolves = _resolver(app)
    for digest in (digest_parts["digest"], digest_parts["all_clear"]):
        text_links, html_links = _links(digest.text, digest.html)
        assert text_links and html_links
        for url in text_links + html_links + [digest_parts["one_click"]]:
            assert url.startswith(BASE + "/"), (
                f"{url} is not on HEADROOM_PUBLIC_URL {PUBLIC_URL} (its port kept)"
            )
            assert resolves(url), f"{url} opens no page of frontend/src/router.tsx and no API route"
        assert ":8000" not in digest.text + digest.html


def test_a_findings_link_opens_that_finding(digest_parts: dict[str, Any]) -> None:
    page = f"{BASE}/clusters/{digest_parts['cluster_id']}/findings/{digest_parts['finding_id']}"
    text_links, html_links = _links(digest_parts["digest"].text, digest_parts["digest"].html)
    assert page in text_links and page in html_links
    assert not any("?finding=" in u for u in text_links + html_links)


def test_the_unsubscribe_links_carry_one_token(digest_parts: dict[str, Any]) -> None:
    text_links, _ = _links(digest_parts["digest"].text, digest_parts["digest"].html)
    (page,) = [u for u in text_links if urlsplit(u).path == "/unsubscribe"]
    assert urlsplit(digest_parts["one_click"]).path == "/api/v1/digest/unsubscribe"
    assert (
        parse_qs(urlsplit(page).query)["token"]
        == parse_qs(urlsplit(digest_parts["one_click"]).query)["token"]
    )


def test_a_link_outside_the_router_is_caught(app: Any) -> None:
    # the resolver can fail: the old ?finding= link resolved to the overview, a path that is not a finding page
    resolves = _resolver(app)
    assert not resolves(f"{BASE}/clusters/c1/finding/f1")
    assert not resolves(f"{BASE}/accept-invitations")
    assert resolves(f"{BASE}/clusters/c1/findings/f1")
