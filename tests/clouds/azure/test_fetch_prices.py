"""The Azure Retail Prices fetcher parses the API's documented response format.

The two pages under ``data/`` are built by hand from the response format the API's page
documents (learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices,
read 2026-11-27: ``Items``, ``NextPageLink``, ``Count``, each item's ``armSkuName``,
``retailPrice``, ``type``, ``productName``...), not recorded from the live API (no network
here); they hold the cases the fetcher must tell apart: a Linux pay-as-you-go meter, its
Windows and Spot siblings, a reservation, a size outside the catalog, and a second page.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from infra.clouds.azure import fetch_prices, prices
from tests.infra.price_answers import COMMON, PriceServer, assert_refused, price_server

__all__ = ["price_server"]  # the fixture, used by name

DATA = Path(__file__).with_name("data")
TODAY = dt.date(2026, 11, 27)


def _pages() -> dict[str, bytes]:
    first = (DATA / "retail_prices_page1.json").read_bytes()
    second = (DATA / "retail_prices_page2.json").read_bytes()
    return {"first": first, "next": second}


def _fetch(asked: list[str]) -> fetch_prices.Fetch:
    pages = _pages()

    def fetch(url: str) -> bytes:
        asked.append(url)
        return pages["next"] if "$skip=1000" in url else pages["first"]

    return fetch


def test_query_asks_for_consumption_meters_of_the_catalog_sizes_in_one_region() -> None:
    url = fetch_prices.query_url("eastus", ["Standard_NC4as_T4_v3", "Standard_NC24ads_A100_v4"])
    query = parse_qs(urlsplit(url).query)
    assert query["api-version"] == [fetch_prices.API_VERSION]
    where = query["$filter"][0]
    assert "armRegionName eq 'eastus'" in where and "priceType eq 'Consumption'" in where
    wanted = "armSkuName eq 'Standard_NC24ads_A100_v4' or armSkuName eq 'Standard_NC4as_T4_v3'"
    assert wanted in where


def test_build_follows_pages_and_keeps_only_linux_pay_as_you_go() -> None:
    asked: list[str] = []
    document = fetch_prices.build(["eastus"], TODAY, _fetch(asked))
    assert len(asked) == 2 and "$skip=1000" in asked[1]
    rows = document[prices.SECTION]["eastus"]
    assert set(rows) == {"Standard_NC4as_T4_v3", "Standard_NC24ads_A100_v4"}
    assert rows["Standard_NC4as_T4_v3"]["usd_per_hour"] == "0.526"  # not Windows, not Spot
    assert rows["Standard_NC24ads_A100_v4"]["usd_per_hour"] == "3.673"  # not the reservation
    assert rows["Standard_NC24ads_A100_v4"]["gpus"] == 1
    assert "00000000-0000-0000-0000-000000000004" in rows["Standard_NC24ads_A100_v4"]["source"]


def test_what_the_fetcher_writes_loads_as_the_committed_table_does(tmp_path: Path) -> None:
    document = fetch_prices.build(["eastus"], TODAY, _fetch([]))
    path = tmp_path / "prices.json"
    path.write_text(json.dumps(document))
    table = prices.load(path)
    assert table.lookup(prices.SECTION, "eastus", "Standard_NC4as_T4_v3").gpus == 1


def test_a_page_that_is_not_a_prices_page_is_an_error_not_an_empty_table() -> None:
    with pytest.raises(ValueError, match="no Items list"):
        list(fetch_prices.pages("https://x", lambda url: b'{"error": "throttled"}'))


def test_endless_next_links_stop() -> None:
    page = json.dumps({"Items": [], "NextPageLink": "https://x/again"}).encode()
    with pytest.raises(ValueError, match="more than"):
        list(fetch_prices.pages("https://x", lambda url: page))


def test_main_writes_the_table_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fetch_prices, "_get", _fetch([]))
    out = tmp_path / "prices.json"
    assert fetch_prices.main(["--out", str(out), "--regions", "eastus"]) == 0
    assert prices.load(out).sections[prices.SECTION]["eastus"]
    assert not out.with_suffix(".tmp").exists()


def test_windows_spot_low_priority_and_reserved_meters_are_not_linux_on_demand() -> None:
    items = json.loads((DATA / "retail_prices_page1.json").read_text())["Items"]
    items += json.loads((DATA / "retail_prices_page2.json").read_text())["Items"]
    kept = [i["meterId"][-1] for i in items if fetch_prices.linux_on_demand(i)]
    assert kept == ["1", "4", "6"]  # Linux NC4as, Linux NC24ads, Linux D2s (not in the catalog)
    low = {**items[0], "skuName": "NC4as T4 v3 Low Priority"}
    assert not fetch_prices.linux_on_demand(low)


AZURE_ANSWERS = {
    **COMMON,
    "infinity": (200, b'{"Items": [{"armSkuName": "Standard_NC4as_T4_v3", "retailPrice": '
                      b"Infinity}]}"),
    "zero": (200, json.dumps({"Items": [{"armSkuName": "Standard_NC4as_T4_v3", "retailPrice": 0,
                                         "type": "Consumption", "unitOfMeasure": "1 Hour"}]}
                             ).encode()),
}  # fmt: skip


@pytest.mark.parametrize("answer", sorted(AZURE_ANSWERS))
def test_a_bad_answer_is_one_line_and_nothing_is_written(
    answer: str,
    price_server: PriceServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An HTML page, a 403, an empty or non-finite answer was a traceback (issue 47 item 7)."""
    price_server.answer = AZURE_ANSWERS[answer]
    monkeypatch.setattr(fetch_prices, "API", f"{price_server.url}/api/retail/prices")
    code = fetch_prices.main(["--out", str(tmp_path / "prices.json"), "--regions", "eastus"])
    line = assert_refused(code, capsys.readouterr().err, tmp_path)
    assert answer != "zero" or "price '0' is no hourly price" in line
