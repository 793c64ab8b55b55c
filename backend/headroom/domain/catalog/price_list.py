"""Read EC2 on-demand instance prices out of AWS Price List API answers (pure: strings in, prices out).

`pricing:GetProducts` (service code AmazonEC2) answers with `PriceList`, a list of JSON documents given as
strings, one per product: `product.attributes` (instanceType, regionCode, operatingSystem, tenancy,
preInstalledSw, capacitystatus, ...) and `terms.OnDemand.<offer>.priceDimensions.<rate>.pricePerUnit.USD`
(AWS: Price List Query API, GetProducts; the same shape as the Price List bulk files). The filters below ask for
what the built-in table holds: Linux, shared tenancy, no pre-installed software, on-demand capacity in use.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

SERVICE_CODE = "AmazonEC2"
# The Price List Query API is served from a few regions (us-east-1 among them) and answers for every region.
PRICING_ENDPOINT_REGION = "us-east-1"
# Attribute values of the products the catalog's prices are (the built-in table's terms).
WANTED_ATTRIBUTES: dict[str, str] = {
    "operatingSystem": "Linux",
    "tenancy": "Shared",
    "preInstalledSw": "NA",
    "capacitystatus": "Used",
}


def get_products_filters(region: str) -> list[dict[str, str]]:
    """Return the GetProducts filters for on-demand Linux instance prices in one region."""
    wanted = {"regionCode": region, "productFamily": "Compute Instance", **WANTED_ATTRIBUTES}
    return [{"Type": "TERM_MATCH", "Field": field, "Value": value} for field, value in wanted.items()]


def _hourly_on_demand(terms: Any, currency: str) -> float | None:
    """Return the first positive hourly on-demand price in a product's terms, or None."""
    if not isinstance(terms, dict):
        return None
    for offer in (terms.get("OnDemand") or {}).values():
        for dimension in (offer.get("priceDimensions") or {}).values():
            unit = str(dimension.get("unit", "Hrs"))
            if unit.lower() not in ("hrs", "hours", "hour"):
                continue
            try:
                price = float((dimension.get("pricePerUnit") or {})[currency])
            except (KeyError, TypeError, ValueError):
                continue
            if price > 0:
                return price
    return None


def on_demand_prices(price_list: Iterable[str], *, region: str, currency: str = "USD") -> dict[str, float]:
    """Return {instance type: USD per hour} from GetProducts `PriceList` entries for `region`.

    Entries for another region, another operating system, tenancy, pre-installed software or capacity status,
    and entries without a positive hourly on-demand price, are skipped (a filter the server ignored does not
    put a Windows or dedicated price in the catalog). Malformed entries are skipped.
    """
    prices: dict[str, float] = {}
    for raw in price_list:
        try:
            item = json.loads(raw) if isinstance(raw, str) else raw
        except ValueError:
            continue
        if not isinstance(item, dict):
            continue
        attributes = (item.get("product") or {}).get("attributes") or {}
        name = attributes.get("instanceType")
        if not name or attributes.get("regionCode", region) != region:
            continue
        if any(attributes.get(k, v) != v for k, v in WANTED_ATTRIBUTES.items()):
            continue
        price = _hourly_on_demand(item.get("terms"), currency)
        if price is not None:
            prices[str(name)] = price
    return prices
