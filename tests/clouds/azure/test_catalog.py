"""The aks catalog (Azure GPU VM sizes) and its price table agree, and refuse what they must."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from infra.clouds.azure import catalog, prices
from tdk.errors import UsageError


@pytest.mark.parametrize(
    ("name", "gpu", "gpus", "memory", "compute"),
    [
        ("Standard_NC4as_T4_v3", "T4", 1, 16, (7, 5)),
        ("Standard_NC64as_T4_v3", "T4", 4, 16, (7, 5)),
        ("Standard_NV36ads_A10_v5", "A10", 1, 24, (8, 6)),
        ("Standard_NV72ads_A10_v5", "A10", 2, 24, (8, 6)),
        ("Standard_NC96ads_A100_v4", "A100-80GB", 4, 80, (8, 0)),
        ("Standard_NC40ads_H100_v5", "H100-NVL", 1, 94, (9, 0)),
        ("Standard_NC80adis_H100_v5", "H100-NVL", 2, 94, (9, 0)),
        ("Standard_ND96isr_H100_v5", "H100", 8, 80, (9, 0)),
    ],
)
def test_sizes_carry_their_gpus(
    name: str, gpu: str, gpus: int, memory: int, compute: tuple[int, int]
) -> None:
    row = catalog.SIZES[name]
    assert (row.gpu.kind, row.gpus, row.gpu.memory_gib, row.gpu.compute) == (
        gpu, gpus, memory, compute
    )  # fmt: skip


def test_the_five_series_the_issue_names_are_all_there() -> None:
    series = {s.series for s in catalog.SIZES.values()}
    assert series == {"NCasT4_v3", "NVadsA10_v5", "NC_A100_v4", "NCads_H100_v5", "ND_H100_v5"}


def test_fractional_a10_sizes_are_refused_not_counted_as_whole_gpus() -> None:
    for name in ("Standard_NV6ads_A10_v5", "Standard_NV12ads_A10_v5", "Standard_NV18ads_A10_v5"):
        assert catalog.size(name) is None
        assert "share of one NVIDIA A10" in catalog.REFUSED[name]


def test_size_lookup_is_case_insensitive_and_canonical() -> None:
    found = catalog.size("standard_nc4as_t4_v3")
    assert found is not None and found.name == "Standard_NC4as_T4_v3"
    assert catalog.size("Standard_D4s_v5") is None


def test_committed_price_table_is_dated_sourced_and_covers_the_catalog() -> None:
    table = prices.load()
    assert table.date == "2026-11-27"
    eastus = table.sections[prices.SECTION]["eastus"]
    assert set(eastus) == set(catalog.SIZES)
    for region in table.sections[prices.SECTION].values():
        for name, price in region.items():
            assert price.gpus == catalog.SIZES[name].gpus, name
            assert "Retail Prices API" in price.source
            assert Decimal("0.1") < price.usd_per_hour < Decimal(200)
    assert eastus["Standard_NC4as_T4_v3"].usd_per_hour == Decimal("0.526")


def test_a_bigger_size_of_a_series_never_costs_less() -> None:
    eastus = prices.load().sections[prices.SECTION]["eastus"]
    by_series: dict[str, list[tuple[int, Decimal]]] = {}
    for name, price in eastus.items():
        size = catalog.SIZES[name]
        by_series.setdefault(size.series, []).append((size.vcpus, price.usd_per_hour))
    for series, rows in by_series.items():
        costs = [cost for _, cost in sorted(rows)]
        assert costs == sorted(costs), series


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"azure_vm": {}}, "no 'date'"),
        ({"date": "2026-11-27"}, "no 'azure_vm' section"),
        ({"date": "x", "azure_vm": {"eastus": []}}, "expected an object of VM sizes"),
        ({"date": "x", "azure_vm": {"eastus": {"Standard_NC4as_T4_v3": {"gpus": 1}}}},
         "expected usd_per_hour"),
        ({"date": "x", "azure_vm": {"eastus": {"Standard_NC4as_T4_v3": {
            "usd_per_hour": "-1", "source": "s"}}}}, "usd_per_hour"),
    ],
)  # fmt: skip
def test_a_broken_price_table_names_the_entry_and_the_fix(
    tmp_path: Path, document: dict[str, object], message: str
) -> None:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps(document))
    with pytest.raises(UsageError) as caught:
        prices.load(path)
    assert message in caught.value.message
    assert caught.value.hint


def _plan(*extra: str) -> dict[str, Any]:
    from typer.testing import CliRunner

    from cli.main import app

    root = Path(__file__).resolve().parents[3]
    args = [
        "plan", str(root / "docs/examples/g4dn.json"), "--target", "aks", "--peak-rps", "600",
        "--latency-budget-ms", "50", "--instance-type", "Standard_NC4as_T4_v3", "--json",
    ]  # fmt: skip
    done = CliRunner().invoke(app, [*args, *extra])
    assert done.exit_code == 0, done.output
    plan: dict[str, Any] = json.loads(done.stdout)
    return plan


def test_plan_prices_an_aks_node_from_the_azure_table(tmp_path: Path) -> None:
    (option,) = _plan()["options"]
    assert (option["name"], option["usd_per_hour_each"]) == ("Standard_NC4as_T4_v3", "0.526")
    override = {"date": "2026-12-01", "azure_vm": {"eastus": {"Standard_NC4as_T4_v3": {
        "usd_per_hour": "0.9", "gpus": 1, "source": "my contract"}}}}  # fmt: skip
    path = tmp_path / "prices.json"
    path.write_text(json.dumps(override))
    (option,) = _plan("--prices", str(path))["options"]
    assert option["usd_per_hour_each"] == "0.9"
