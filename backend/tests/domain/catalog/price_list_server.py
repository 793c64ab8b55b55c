"""A local stand-in for the AWS Price List Query API (moto has no `pricing` service), for tests only.

It answers as the API documents: HTTP POST, AWS JSON 1.1 protocol (`X-Amz-Target:
AWSPriceListService.GetProducts`, `Content-Type: application/x-amz-json-1.1`), a `PriceList` of product
documents given as JSON strings, `NextToken` pagination bounded by `MaxResults`, TERM_MATCH filters on the
product's attributes, and errors as `{"__type": ..., "message": ...}` with status 400. The real boto3 client is
pointed at it with `endpoint_url`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def product(
    instance_type: str,
    usd_per_hour: str,
    *,
    region: str = "us-east-1",
    operating_system: str = "Linux",
    tenancy: str = "Shared",
    pre_installed_sw: str = "NA",
    capacity_status: str = "Used",
) -> dict[str, Any]:
    """Return one product document in the Price List's shape (product + terms.OnDemand)."""
    sku = "-".join(("SKU", instance_type, region, operating_system, tenancy, pre_installed_sw, capacity_status))
    return {
        "product": {
            "productFamily": "Compute Instance",
            "sku": sku,
            "attributes": {
                "servicecode": "AmazonEC2",
                "instanceType": instance_type,
                "regionCode": region,
                "operatingSystem": operating_system,
                "tenancy": tenancy,
                "preInstalledSw": pre_installed_sw,
                "capacitystatus": capacity_status,
                "productFamily": "Compute Instance",
            },
        },
        "serviceCode": "AmazonEC2",
        "terms": {
            "OnDemand": {
                f"{sku}.JRTCKXETXF": {
                    "offerTermCode": "JRTCKXETXF",
                    "sku": sku,
                    "priceDimensions": {
                        f"{sku}.JRTCKXETXF.6YS6EN2CT7": {
                            "unit": "Hrs",
                            "description": f"${usd_per_hour} per On Demand Linux {instance_type} Instance Hour",
                            "pricePerUnit": {"USD": usd_per_hour},
                        }
                    },
                }
            }
        },
        "version": "20260119000000",
        "publicationDate": "2026-01-19T00:00:00Z",
    }


@dataclass
class PriceListServer:
    """What the server serves and what it was asked."""

    products: list[dict[str, Any]]
    deny: bool = False
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    url: str = ""

    def answer(self, target: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self.requests.append((target, body))
        if self.deny:
            return 400, {
                "__type": "AccessDeniedException",
                "message": "User is not authorized to perform: pricing:GetProducts",
            }
        if target != "AWSPriceListService.GetProducts":
            return 400, {"__type": "InvalidParameterException", "message": f"unknown target {target}"}
        matching = [
            p
            for p in self.products
            if p["serviceCode"] == body.get("ServiceCode")
            and all(
                (p["product"]["attributes"].get(f["Field"]) or p["product"].get(f["Field"])) == f["Value"]
                for f in body.get("Filters", [])
                if f.get("Type") == "TERM_MATCH"
            )
        ]
        start = int(body.get("NextToken") or 0)
        size = int(body.get("MaxResults") or 100)
        page = matching[start : start + size]
        out: dict[str, Any] = {"FormatVersion": "aws_v1", "PriceList": [json.dumps(p) for p in page]}
        if start + size < len(matching):
            out["NextToken"] = str(start + size)
        return 200, out


@contextmanager
def serve(state: PriceListServer) -> Iterator[PriceListServer]:
    """Run the server on a free loopback port for the duration of the block."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            status, payload = state.answer(self.headers.get("X-Amz-Target", ""), body)
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/x-amz-json-1.1")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *_args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
