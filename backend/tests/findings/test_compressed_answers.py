"""Compressed API answers through the real app, on the demo cluster: the Metrics tab's JSON in gzip and Brotli
(decoded by the real decoders: zlib and the brotli package), nothing compressed for a client that did not ask, and
the downloads (a JSON snapshot, a zip of configs) delivering their exact bytes."""

from __future__ import annotations

import datetime as dt
import gzip
import io
import json
import zipfile
from typing import Any

import brotli
import pytest
from advice_support import END, AdvisedDemo
from headroom.platform.compression import MINIMUM_SIZE
from helpers import Actor


@pytest.fixture()
def owner(advised_demo_6h: AdvisedDemo, make_client: Any, db: Any, clock: Any) -> tuple[Actor, str]:
    """The owner of the demo cluster with 6 hours of data, advised at END (built once for the directory)."""
    clock.now = END + dt.timedelta(minutes=5)
    advised = advised_demo_6h.in_test(db, make_client)
    return advised.owner, advised.cid


def _raw(actor: Actor, url: str, accept_encoding: str | None, **params: Any) -> tuple[Any, bytes]:
    """The answer's bytes as they travelled (httpx would decode them otherwise); None: no Accept-Encoding at all."""
    request = actor.client.build_request("GET", url, params=params)
    del request.headers["accept-encoding"]  # httpx's default names every coding it can decode
    if accept_encoding is not None:
        request.headers["accept-encoding"] = accept_encoding
    response = actor.client.send(request, stream=True)
    try:
        return response, b"".join(response.iter_raw())
    finally:
        response.close()


DECODE = {"gzip": gzip.decompress, "br": brotli.decompress}


@pytest.mark.parametrize(
    ("accept_encoding", "coding"),
    [
        ("gzip, deflate", "gzip"),
        ("gzip, deflate, br, zstd", "br"),  # what Chromium sends
        ("br", "br"),
        ("br;q=0, gzip", "gzip"),
        ("gzip;q=0", None),
        ("identity", None),
        (None, None),
    ],
)
def test_the_metrics_view_is_compressed_only_when_asked(owner: tuple[Actor, str], accept_encoding: str | None,
                                                        coding: str | None) -> None:
    actor, cid = owner
    url = f"/api/v1/clusters/{cid}/metrics"
    window = {"start": (END - dt.timedelta(hours=6)).isoformat(), "end": END.isoformat()}
    plain, plain_raw = _raw(actor, url, "identity", **window)
    assert plain.status_code == 200 and "content-encoding" not in plain.headers
    assert len(plain_raw) > 20_000  # a node's panels: worth compressing
    response, raw = _raw(actor, url, accept_encoding, **window)
    assert response.status_code == 200
    assert response.headers.get("content-encoding") == coding
    assert "Accept-Encoding" in response.headers["vary"]
    assert int(response.headers["content-length"]) == len(raw)
    # The security headers are on the compressed answer too (platform/security_headers.py).
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["cache-control"] == "no-store"
    body = DECODE[coding](raw) if coding else raw
    assert json.loads(body) == json.loads(plain_raw)
    if coding:
        assert len(raw) < len(plain_raw) / 4, (coding, len(raw), len(plain_raw))


def test_small_answers_are_sent_as_they_are(owner: tuple[Actor, str]) -> None:
    actor, _ = owner
    response, raw = _raw(actor, "/api/v1/auth/me", "gzip, br")
    assert response.status_code == 200 and len(raw) < MINIMUM_SIZE
    assert "content-encoding" not in response.headers
    assert json.loads(raw)["organization"]["name"] == actor.session["organization"]["name"] == "Advice Org"


def test_downloads_deliver_their_exact_bytes(owner: tuple[Actor, str]) -> None:
    actor, cid = owner
    window = {"start": (END - dt.timedelta(hours=1)).isoformat(), "end": END.isoformat()}
    url = f"/api/v1/clusters/{cid}/snapshot"
    plain, plain_raw = _raw(actor, url, None, **window)
    assert plain.status_code == 200 and "content-encoding" not in plain.headers
    for coding in ("gzip", "br"):
        response, raw = _raw(actor, url, coding, **window)
        assert response.headers["content-encoding"] == coding
        assert response.headers["content-disposition"] == plain.headers["content-disposition"]
        assert DECODE[coding](raw) == plain_raw

    # A zip is compressed already: sent as it is whatever the client accepts.
    made = actor.post(f"/api/v1/clusters/{cid}/patches", json={"finding_ids": "all_open", "base_config": "latest"})
    assert made.status_code == 201, made.text
    patch_url = f"/api/v1/clusters/{cid}/patches/{made.json()['id']}"
    plain_zip, plain_zip_raw = _raw(actor, patch_url, None, format="configs")
    assert plain_zip.status_code == 200 and plain_zip.headers["content-type"] == "application/zip"
    assert plain_zip_raw.startswith(b"PK")
    zipped, zipped_raw = _raw(actor, patch_url, "gzip, br", format="configs")
    assert "content-encoding" not in zipped.headers
    assert zipped.headers["content-disposition"].endswith('tikv-configs.zip"')
    assert int(zipped.headers["content-length"]) == len(zipped_raw)
    # The archive's entries carry the time they were written: the same files, the same bytes in each.
    assert _entries(zipped_raw) == _entries(plain_zip_raw) and _entries(zipped_raw)


def _entries(archive: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(archive)) as z:
        return {name: z.read(name) for name in z.namelist()}
