"""Regenerate ``prices.json`` from the AWS Price List Query API (run it with AWS credentials):

    python -m infra.clouds.aws.fetch_prices --out infra/clouds/aws/prices.json \
        --regions us-east-1,us-west-2

The API (https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/
API_pricing_GetProducts.html, read 2026-11-27; boto3 ``pricing`` client, endpoint us-east-1)
answers ``GetProducts(ServiceCode, Filters)`` with ``PriceList``: JSON documents, each a
``product`` (``attributes``) and its ``terms``; ``terms.OnDemand.<offer>.priceDimensions.<rate>``
holds ``unit`` ("Hrs") and ``pricePerUnit.USD``. Section ``sagemaker``: service
``AmazonSageMaker``, ``instanceName`` = the type, ``component`` "Hosting" (real-time inference).
Section ``ec2``: service ``AmazonEC2``, ``instanceType``, Linux, shared tenancy, no
pre-installed software, capacity status "Used" (what an on-demand EKS node pays). The types
priced are those the table lists now (``--types`` adds more); a type whose filters match no
product, or several prices, is an error, never a guess.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
from collections.abc import Callable, Iterable
from decimal import Decimal
from pathlib import Path
from typing import Any

from infra.clouds.aws.prices import EC2, SAGEMAKER, TABLE
from infra.clouds.aws.sagemaker.instances import PREFIX as SAGEMAKER_PREFIX
from infra.planning.fetching import fetched_price, run_fetch
from infra.planning.pricing import write_table
from tdk import bounded

#: section -> (the Price List service, the attribute naming the type, the fixed filters)
SERVICES: dict[str, tuple[str, str, dict[str, str]]] = {
    SAGEMAKER: ("AmazonSageMaker", "instanceName", {"component": "Hosting"}),
    EC2: (
        "AmazonEC2",
        "instanceType",
        {"operatingSystem": "Linux", "tenancy": "Shared", "preInstalledSw": "NA",
         "capacitystatus": "Used"},
    ),
}  # fmt: skip
#: the pages one query may follow (each is at most 100 products)
MAX_PAGES = 20
SOURCE = "AWS Price List Query API (pricing:GetProducts, {service}, on-demand), read {today}"

#: ``GetProducts`` as boto3 has it: keyword arguments -> the answer
GetProducts = Callable[..., dict[str, Any]]


def filters(region: str, attribute: str, name: str, fixed: dict[str, str]) -> list[dict[str, str]]:
    """The exact-match filters of one type in one region."""
    wanted = {"regionCode": region, attribute: name, **fixed}
    return [{"Type": "TERM_MATCH", "Field": k, "Value": v} for k, v in wanted.items()]


def hourly_usd(item: dict[str, Any]) -> list[Decimal]:
    """The on-demand hourly USD prices of one ``PriceList`` document (one, normally)."""
    offers = item.get("terms", {}).get("OnDemand", {})
    return [
        fetched_price(dim["pricePerUnit"]["USD"], "a PriceList on-demand term")
        for offer in offers.values()
        for dim in offer.get("priceDimensions", {}).values()
        if dim.get("unit") == "Hrs" and "USD" in dim.get("pricePerUnit", {})
    ]


def _document(document: Any) -> dict[str, Any]:
    """One ``PriceList`` entry (a JSON string, as boto3 gives it), parsed bounded and finite."""
    parsed = (
        bounded.parse_json(document, "a PriceList document", "")
        if isinstance(document, str)
        else document
    )
    if not isinstance(parsed, dict):
        raise ValueError(f"a PriceList entry is {type(parsed).__name__}, not a product")
    return parsed


def price(get: GetProducts, section: str, region: str, name: str) -> Decimal:
    """The one on-demand hourly price of ``name`` in ``region``; ValueError otherwise."""
    service, attribute, fixed = SERVICES[section]
    found: list[Decimal] = []
    token = None
    for _ in range(MAX_PAGES):
        extra: dict[str, str] = {"NextToken": token} if token else {}
        answer = get(ServiceCode=service, Filters=filters(region, attribute, name, fixed), **extra)
        for document in answer.get("PriceList", []):
            found += hourly_usd(_document(document))
        token = answer.get("NextToken")
        if not token:
            break
    distinct = sorted(set(found))
    if len(distinct) != 1:
        what = "no on-demand price" if not distinct else f"{len(distinct)} prices {distinct}"
        raise ValueError(f"{service} {name} in {region}: {what}; check the filters {fixed}")
    return distinct[0]


def build(
    current: dict[str, Any],
    regions: Iterable[str],
    today: dt.date,
    get: GetProducts,
    more: Iterable[str] = (),
) -> dict[str, Any]:
    """``current`` (the committed document) with every price read again for ``regions``."""
    document = {**current, "date": today.isoformat()}
    extra = list(more)
    for section in SERVICES:
        rows = {n: r for region in current[section].values() for n, r in region.items()}
        names = sorted(
            {*rows, *(t for t in extra if t.startswith(SAGEMAKER_PREFIX) == (section == SAGEMAKER))}
        )
        service = SERVICES[section][0]
        document[section] = {
            region: {
                name: {
                    **rows.get(name, {}),
                    "usd_per_hour": str(price(get, section, region, name)),
                    "source": SOURCE.format(service=service, today=today),
                }
                for name in names
            }
            for region in regions
        }
    return document


def _boto3_get_products() -> GetProducts:
    import boto3

    method: GetProducts = boto3.client("pricing", region_name="us-east-1").get_products
    return method


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=TABLE)
    parser.add_argument("--regions", default="us-east-1,us-west-2")
    parser.add_argument("--types", default="", help="more types to price (comma-separated)")
    args = parser.parse_args(argv)
    current = json.loads(TABLE.read_text(encoding="utf-8"))
    regions = [r.strip() for r in args.regions.split(",") if r.strip()]
    more = [t.strip() for t in args.types.split(",") if t.strip()]

    def fetch() -> str:
        write_table(args.out, build(current, regions, dt.date.today(), _boto3_get_products(), more))
        return f"wrote {args.out}"

    from botocore.exceptions import BotoCoreError, ClientError

    return run_fetch(fetch, (BotoCoreError, ClientError))


if __name__ == "__main__":
    raise SystemExit(main())
