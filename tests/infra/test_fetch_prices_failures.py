"""A price fetcher whose API answers an HTML page, a 403, an empty body, a non-finite or a
zero price says so in one line, exits 1 and writes nothing (issue 47 item 7: each was a
traceback, and GCP wrote 0.0000 prices). Each fetcher's own HTTP client (urllib, boto3) talks
to a real local server here; the Azure fetcher's case is in its target's tests."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from infra.clouds.aws import fetch_prices as aws
from infra.clouds.gcp import fetch_prices as gcp
from tests.infra.price_answers import COMMON, PriceServer, assert_refused, price_server

__all__ = ["price_server"]  # the fixture, used by name

ZERO_SKU = {
    "description": "G2 Instance Core running in Americas",  # the first price a table needs
    "category": {"usageType": "OnDemand"},
    "serviceRegions": ["us-central1"],
    "pricingInfo": [{"pricingExpression": {"usageUnit": "h", "tieredRates": [
        {"startUsageAmount": 0, "unitPrice": {"currencyCode": "USD", "units": "0", "nanos": 0}}
    ]}}],
}  # fmt: skip
AWS_INFINITE = json.dumps({"terms": {"OnDemand": {"o": {"priceDimensions": {"r": {
    "unit": "Hrs", "pricePerUnit": {"USD": "Infinity"}}}}}}})  # fmt: skip
#: fetcher -> answer -> (HTTP status, body); only GCP wrote 0.0000 prices
ANSWERS: dict[str, dict[str, tuple[int, bytes]]] = {
    "gcp": {
        **COMMON,
        "infinity": (200, b'{"skus": [{"description": "x", "units": Infinity}]}'),
        "zero": (200, json.dumps({"skus": [ZERO_SKU]}).encode()),
    },
    "aws": {**COMMON, "infinity": (200, json.dumps({"PriceList": [AWS_INFINITE]}).encode())},
}
CASES = [(fetcher, answer) for fetcher, by in ANSWERS.items() for answer in by]


def _aws_client(url: str) -> Callable[[], aws.GetProducts]:
    import boto3

    def make() -> aws.GetProducts:
        client = boto3.client("pricing", region_name="us-east-1", endpoint_url=url)
        method: aws.GetProducts = client.get_products
        return method

    return make


@pytest.mark.parametrize(("fetcher", "answer"), CASES, ids=[f"{f}-{a}" for f, a in CASES])
def test_a_bad_answer_is_one_line_and_nothing_is_written(
    fetcher: str,
    answer: str,
    price_server: PriceServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    price_server.answer = ANSWERS[fetcher][answer]
    out = tmp_path / "prices.json"
    if fetcher == "gcp":
        monkeypatch.setenv(gcp.KEY_ENV, "KEY")
        monkeypatch.setattr(gcp, "API", f"{price_server.url}/v1/skus")
        code = gcp.main(["--out", str(out)])
    else:
        for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
            monkeypatch.setenv(name, "testing")
        monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
        monkeypatch.setattr(aws, "_boto3_get_products", _aws_client(price_server.url))
        code = aws.main(["--out", str(out), "--regions", "us-east-1"])
    line = assert_refused(code, capsys.readouterr().err, tmp_path)
    if answer == "zero" or (answer == "infinity" and fetcher == "aws"):
        assert "is no hourly price" in line
