"""Regenerate ``prices.json`` from the Azure Retail Prices API (run it where there is network):

    python -m infra.clouds.azure.fetch_prices --out infra/clouds/azure/prices.json \
        --regions eastus,eastus2,westus3

The API (https://learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices,
read 2026-11-27) is unauthenticated: ``GET https://prices.azure.com/api/retail/prices`` with an
OData ``$filter`` answers ``{"BillingCurrency", "Items": [...], "NextPageLink", "Count"}``; each
item has ``armRegionName``, ``armSkuName``, ``retailPrice``, ``unitOfMeasure`` ("1 Hour"),
``type`` ("Consumption", "Reservation", "DevTestConsumption"), ``productName`` (a Windows meter
ends in " Windows"), ``skuName`` (spot and low-priority meters say so) and
``isPrimaryMeterRegion``. The table keeps the Linux pay-as-you-go meter of each size the
kit's catalog lists; a size with no such meter in a region is left out of that region.
"""

from __future__ import annotations

import argparse
import datetime as dt
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

from infra.clouds.azure import catalog
from infra.clouds.azure.prices import SECTION, TABLE
from infra.planning.fetching import fetched_price, run_fetch
from infra.planning.pricing import write_table
from tdk import bounded

API = "https://prices.azure.com/api/retail/prices"
API_VERSION = "2023-01-01-preview"
#: pages a fetch may follow (the API answers at most 1,000 items a page)
MAX_PAGES = 50
TIMEOUT_SECONDS = 30
SOURCE = f"Azure Retail Prices API ({API}, api-version {API_VERSION})"

Fetch = Callable[[str], bytes]


def query_url(region: str, sizes: Iterable[str]) -> str:
    """The first page's URL: Linux and Windows consumption meters of ``sizes`` in ``region``."""
    skus = " or ".join(f"armSkuName eq '{s}'" for s in sorted(sizes))
    where = (
        f"serviceName eq 'Virtual Machines' and priceType eq 'Consumption' "
        f"and armRegionName eq '{region}' and ({skus})"
    )
    return f"{API}?{urllib.parse.urlencode({'api-version': API_VERSION, '$filter': where})}"


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=TIMEOUT_SECONDS) as response:
        body: bytes = response.read(bounded.MAX_BYTES + 1)
        return body


def pages(url: str, fetch: Fetch = _get) -> Iterator[dict[str, Any]]:
    """Every page of an answer, following ``NextPageLink`` (at most ``MAX_PAGES``)."""
    for _ in range(MAX_PAGES):
        page = bounded.parse_json(fetch(url), url, "an Azure Retail Prices API page")
        if not isinstance(page, dict) or not isinstance(page.get("Items"), list):
            raise ValueError(f"{url}: not a Retail Prices page (no Items list)")
        yield page
        link = page.get("NextPageLink")
        if not link:
            return
        url = str(link)
    raise ValueError(f"more than {MAX_PAGES} pages from {API}: narrow the query")


def linux_on_demand(item: dict[str, Any]) -> bool:
    """Whether ``item`` is the Linux pay-as-you-go hourly meter of a VM size."""
    sku = str(item.get("skuName", ""))
    return (
        item.get("type") == "Consumption"
        and item.get("unitOfMeasure") == "1 Hour"
        and item.get("currencyCode", "USD") == "USD"
        and not str(item.get("productName", "")).endswith(" Windows")
        and "Spot" not in sku
        and "Low Priority" not in sku
    )


def rows(items: Iterable[dict[str, Any]], today: dt.date) -> dict[str, dict[str, Any]]:
    """The table rows of one region's items: per catalog size, its Linux hourly price (the
    lowest tier when the API lists several), GPUs and source."""
    found: dict[str, dict[str, Any]] = {}
    for item in items:
        size = catalog.size(str(item.get("armSkuName", "")))
        if size is None or not linux_on_demand(item) or item.get("tierMinimumUnits", 0):
            continue
        price = fetched_price(item["retailPrice"], f"{size.name} meter {item.get('meterId')}")
        row = {"usd_per_hour": str(price), "gpus": size.gpus, "accelerator": size.gpu.kind,
               "source": f"{SOURCE}, meter {item.get('meterId', '?')}, read {today}"}  # fmt: skip
        old = found.get(size.name)
        if old is None or price < Decimal(old["usd_per_hour"]):
            found[size.name] = row
    return dict(sorted(found.items()))


def build(regions: Iterable[str], today: dt.date, fetch: Fetch = _get) -> dict[str, Any]:
    """The whole document ``prices.json`` holds, read from the API now."""
    section = {}
    for region in regions:
        url = query_url(region, catalog.SIZES)
        items = [item for page in pages(url, fetch) for item in page["Items"]]
        section[region] = rows(items, today)
    return {
        "date": today.isoformat(),
        "currency": "USD",
        "basis": "Linux pay-as-you-go (Consumption) retail price per hour, no discounts, no spot",
        "fetched_by": "python -m infra.clouds.azure.fetch_prices",
        SECTION: section,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=TABLE)
    parser.add_argument("--regions", default="eastus,eastus2,westus3")
    args = parser.parse_args(argv)
    regions = [r.strip() for r in args.regions.split(",") if r.strip()]

    def fetch() -> str:
        document = build(regions, dt.date.today(), _get)
        write_table(args.out, document)
        return f"wrote {args.out}: {sum(len(r) for r in document[SECTION].values())} prices"

    return run_fetch(fetch)


if __name__ == "__main__":
    raise SystemExit(main())
