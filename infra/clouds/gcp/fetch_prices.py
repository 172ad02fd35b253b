"""Regenerate ``prices.json`` from the Cloud Billing Catalog API (run it with an API key):

    GOOGLE_API_KEY=... python -m infra.clouds.gcp.fetch_prices \
        --out infra/clouds/gcp/prices.json --regions us-central1

The API (https://cloud.google.com/billing/v1/how-tos/catalog-api, read 2026-11-27) lists a
service's public SKUs: ``GET /v1/services/<id>/skus?key=KEY`` answers ``skus`` (each with a
``description``, ``category.usageType``, ``serviceRegions`` and ``pricingInfo[].
pricingExpression``: ``usageUnit`` and ``tieredRates[].unitPrice`` as ``units`` + ``nanos``)
and ``nextPageToken``. Compute Engine is service ``6F81-5844-456A``. A machine type costs its
vCPUs times its family's "Instance Core" SKU plus its memory (GiB) times the "Instance Ram"
SKU; a GPU costs its "Nvidia <name> GPU" SKU (on-demand SKUs only; spot, preemptible and
commitment SKUs have other descriptions or usage types). The types priced are those the table
lists now; a SKU that matches nothing, or several prices, is an error, never a guess.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

from infra.clouds.gcp.prices import GPU, MACHINE, TABLE
from infra.planning.fetching import fetched_price, run_fetch
from infra.planning.pricing import write_table
from tdk import bounded

SERVICE = "6F81-5844-456A"  # Compute Engine in the Cloud Billing catalog
API = f"https://cloudbilling.googleapis.com/v1/services/{SERVICE}/skus"
KEY_ENV = "GOOGLE_API_KEY"
PAGE_SIZE = 1000
#: pages a fetch may follow (Compute Engine lists tens of thousands of SKUs)
MAX_PAGES = 100
TIMEOUT_SECONDS = 30
SOURCE = "Cloud Billing Catalog API (services/{service}/skus, on-demand), read {today}"
#: machine family -> the start of its SKUs' descriptions (N1's say "Predefined")
FAMILY_SKU = {"g2": "G2 Instance", "n1": "N1 Predefined Instance"}
#: vCPUs and GiB of memory per vCPU of a ``<family>-standard-<vCPUs>`` machine type
#: (cloud.google.com/compute/docs/accelerator-optimized-machines#g2-vms: 4 GB per vCPU;
#: .../general-purpose-machines#n1_machines: 3.75 GB per vCPU; read 2026-11-27)
MEMORY_PER_VCPU = {"g2": Decimal(4), "n1": Decimal("3.75")}
#: GKE accelerator type -> the GPU's name in its SKU's description
GPU_SKU = {
    "nvidia-l4": "L4",
    "nvidia-tesla-t4": "Tesla T4",
    "nvidia-tesla-v100": "Tesla V100",
    "nvidia-tesla-a100": "Tesla A100",
    "nvidia-a100-80gb": "A100 80GB",
    "nvidia-h100-80gb": "H100 80GB",
}

Fetch = Callable[[str], bytes]


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=TIMEOUT_SECONDS) as response:
        body: bytes = response.read(bounded.MAX_BYTES + 1)
        return body


def skus(key: str, fetch: Fetch = _get) -> Iterator[dict[str, Any]]:
    """Every Compute Engine SKU, following ``nextPageToken`` (at most ``MAX_PAGES`` pages)."""
    token = ""
    for _ in range(MAX_PAGES):
        query = {"key": key, "pageSize": str(PAGE_SIZE), **({"pageToken": token} if token else {})}
        page = bounded.parse_json(fetch(f"{API}?{urllib.parse.urlencode(query)}"), API, "a page")
        if not isinstance(page, dict) or not isinstance(page.get("skus", []), list):
            raise ValueError(f"{API}: not a SKU list page (no skus list)")
        yield from (s for s in page.get("skus", []) if isinstance(s, dict))
        token = str(page.get("nextPageToken") or "")
        if not token:
            return
    raise ValueError(f"more than {MAX_PAGES} pages from {API}")


def unit_price(sku: dict[str, Any], unit: str) -> Decimal:
    """The SKU's current first-tier price per ``unit`` ("h", "GiBy.h")."""
    expression = sku["pricingInfo"][0]["pricingExpression"]
    if expression["usageUnit"] != unit:
        raise ValueError(f"SKU {sku.get('description')!r} is priced per {expression['usageUnit']}")
    first = min(expression["tieredRates"], key=lambda r: float(r.get("startUsageAmount", 0)))
    price = first["unitPrice"]
    if price.get("currencyCode", "USD") != "USD":
        raise ValueError(f"SKU {sku.get('description')!r} is priced in {price['currencyCode']}")
    value = Decimal(str(price.get("units") or 0)) + Decimal(int(price.get("nanos") or 0)) / 10**9
    return fetched_price(value, f"SKU {sku.get('description')!r}")


def find(all_skus: list[dict[str, Any]], region: str, pattern: str, unit: str) -> Decimal:
    """The one on-demand price in ``region`` of the SKUs whose description matches."""
    wanted = re.compile(pattern)
    prices = {
        unit_price(s, unit)
        for s in all_skus
        if wanted.match(str(s.get("description", "")))
        and s.get("category", {}).get("usageType") == "OnDemand"
        and region in s.get("serviceRegions", [])
    }
    if len(prices) != 1:
        what = "no on-demand SKU" if not prices else f"{len(prices)} prices {sorted(prices)}"
        raise ValueError(f"{pattern!r} in {region}: {what}")
    return prices.pop()


def machine_price(all_skus: list[dict[str, Any]], region: str, machine: str) -> Decimal:
    """A ``<family>-standard-<vCPUs>`` machine type's vCPUs and memory per hour."""
    family, kind, vcpus = machine.split("-")
    if kind != "standard" or family not in FAMILY_SKU or not vcpus.isdigit():
        raise ValueError(f"{machine}: tdk prices {', '.join(FAMILY_SKU)} standard machines")
    start = re.escape(FAMILY_SKU[family])
    core = find(all_skus, region, rf"{start} Core running in ", "h")
    ram = find(all_skus, region, rf"{start} Ram running in ", "GiBy.h")
    return Decimal(vcpus) * core + Decimal(vcpus) * MEMORY_PER_VCPU[family] * ram


def gpu_price(all_skus: list[dict[str, Any]], region: str, gpu: str) -> Decimal:
    if gpu not in GPU_SKU:
        raise ValueError(f"{gpu}: tdk knows the SKU names of {', '.join(GPU_SKU)}")
    return find(all_skus, region, rf"Nvidia {re.escape(GPU_SKU[gpu])} GPU running in ", "h")


def _rounded(price: Decimal, where: str) -> str:
    """``price`` to 4 places, as the table keeps it; refused when that rounds it to 0."""
    return str(fetched_price(price.quantize(Decimal("0.0001")), where))


def build(
    current: dict[str, Any], regions: Iterable[str], today: dt.date, all_skus: list[dict[str, Any]]
) -> dict[str, Any]:
    """``current`` (the committed document) with every price read again for ``regions``."""
    document = {**current, "date": today.isoformat()}
    source = SOURCE.format(service=SERVICE, today=today)
    for section, price in ((MACHINE, machine_price), (GPU, gpu_price)):
        rows = {n: r for region in current[section].values() for n, r in region.items()}
        document[section] = {
            region: {
                name: {
                    **rows[name],
                    "usd_per_hour": _rounded(price(all_skus, region, name), f"{name} in {region}"),
                    "source": source,
                }
                for name in sorted(rows)
            }
            for region in regions
        }
    return document


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=TABLE)
    parser.add_argument("--regions", default="us-central1")
    args = parser.parse_args(argv)
    key = os.environ.get(KEY_ENV, "")
    if not key:
        parser.error(f"set {KEY_ENV} to an API key of a project with the Cloud Billing API on")
    current = json.loads(TABLE.read_text(encoding="utf-8"))
    regions = [r.strip() for r in args.regions.split(",") if r.strip()]

    def fetch() -> str:
        write_table(args.out, build(current, regions, dt.date.today(), list(skus(key))))
        return f"wrote {args.out}"

    return run_fetch(fetch)


if __name__ == "__main__":
    raise SystemExit(main())
