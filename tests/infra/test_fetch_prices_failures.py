"""A price fetcher whose API answers an HTML page, a 403, an empty body, a non-finite or a
zero price says so in one line, exits 1 and writes nothing (issue 47 item 7: each was a
traceback, and GCP wrote 0.0000 prices). Each fetcher's own HTTP client (urllib, boto3) talks
to a real local server here."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from infra.clouds.aws import fetch_prices as aws
from infra.clouds.gcp import fetch_prices as gcp
from infra.targets.aks import fetch_prices as aks

HTML = b"<!DOCTYPE html><html><body>Sign in to continue</body></html>"
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
#: answer -> fetcher -> (HTTP status, body); only GCP wrote 0.0000 prices
ANSWERS: dict[str, dict[str, tuple[int, bytes]]] = {
    "html": {f: (200, HTML) for f in ("gcp", "aks", "aws")},
    "403": {f: (403, b"Forbidden") for f in ("gcp", "aks", "aws")},
    "empty": {f: (200, b"") for f in ("gcp", "aks", "aws")},
    "infinity": {
        "gcp": (200, b'{"skus": [{"description": "x", "units": Infinity}]}'),
        "aks": (
            200,
            b'{"Items": [{"armSkuName": "Standard_NC4as_T4_v3", "retailPrice": Infinity}]}',
        ),
        "aws": (200, json.dumps({"PriceList": [AWS_INFINITE]}).encode()),
    },
    "zero": {"gcp": (200, json.dumps({"skus": [ZERO_SKU]}).encode())},
}


class _Server:
    def __init__(self) -> None:
        self.answer = (200, b"")
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def _reply(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                status, body = owner.answer
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _reply

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"


@pytest.fixture(scope="module")
def server() -> Iterator[_Server]:
    running = _Server()
    thread = threading.Thread(target=running.httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield running
    finally:
        running.httpd.shutdown()
        running.httpd.server_close()
        thread.join()


def _aws_client(url: str) -> Callable[[], aws.GetProducts]:
    import boto3

    def make() -> aws.GetProducts:
        client = boto3.client("pricing", region_name="us-east-1", endpoint_url=url)
        method: aws.GetProducts = client.get_products
        return method

    return make


CASES = [(answer, f) for answer, by in ANSWERS.items() for f in by]


@pytest.mark.parametrize(("answer", "fetcher"), CASES, ids=[f"{f}-{a}" for a, f in CASES])
def test_a_bad_answer_is_one_line_and_nothing_is_written(
    answer: str,
    fetcher: str,
    server: _Server,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server.answer = ANSWERS[answer][fetcher]
    out = tmp_path / "prices.json"
    if fetcher == "gcp":
        monkeypatch.setenv(gcp.KEY_ENV, "KEY")
        monkeypatch.setattr(gcp, "API", f"{server.url}/v1/skus")
        code = gcp.main(["--out", str(out)])
    elif fetcher == "aks":
        monkeypatch.setattr(aks, "API", f"{server.url}/api/retail/prices")
        code = aks.main(["--out", str(out), "--regions", "eastus"])
    else:
        for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
            monkeypatch.setenv(name, "testing")
        monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
        monkeypatch.setattr(aws, "_boto3_get_products", _aws_client(server.url))
        code = aws.main(["--out", str(out), "--regions", "us-east-1"])
    printed = capsys.readouterr()
    assert code == 1, printed
    lines = printed.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), printed.err
    assert lines[0].endswith("; nothing written") and "Traceback" not in printed.err
    assert not out.exists() and list(tmp_path.iterdir()) == []
    if answer == "zero":
        assert "price '0' is no hourly price" in lines[0]
