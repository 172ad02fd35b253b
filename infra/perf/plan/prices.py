"""A dated table of on-demand prices (bundled ``prices.json``, or the user's ``--prices FILE``).

Every top-level key but the table's own facts (``METADATA``) is a section, region -> name ->
price, that a target's entry prices its units from (which section is the target's: nothing
here names one). Every entry has its source; prices are Decimal strings so no float rounding
enters a bill.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from infra.planning.pricing import Price, PriceTable
from infra.planning.report import MAX_PRICE
from tdk import bounded
from tdk.errors import UsageError
from tdk.numbers import check_number, decimal_of

BUNDLED = Path(__file__).with_name("prices.json")
#: what the table says about itself; every other top-level key is a section
METADATA = ("date", "currency", "basis", "note")


def _price(item: Any, where: str) -> Price:
    try:
        value = decimal_of(item["usd_per_hour"], f"{where}.usd_per_hour", 0, MAX_PRICE)
        gpus = int(check_number(item.get("gpus", 1), f"{where}.gpus", 0, 1024, integer=True))
        source = str(item["source"])
    except (KeyError, TypeError, AttributeError) as exc:
        raise UsageError(
            f"{where}: expected usd_per_hour (number), source (text), optional gpus",
            hint="see infra/perf/plan/prices.json for the layout",
        ) from exc
    return Price(value, gpus, source)


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise UsageError(
            f"{where}: expected an object, found {type(value).__name__}",
            hint="see infra/perf/plan/prices.json for the layout",
        )
    return value


def load_prices(path: Path | None = None) -> PriceTable:
    """The bundled table, or ``path`` (same layout) when given."""
    origin = path or BUNDLED
    try:
        data = bounded.load_json(origin, "check --prices (a JSON price table)")
    except bounded.DocumentError as exc:
        raise UsageError(exc.message, hint=exc.hint) from None
    if not isinstance(data, dict) or "date" not in data:
        raise UsageError(f"{origin}: no 'date' (when the prices were read)", hint="add one")
    sections: dict[str, dict[str, dict[str, Price]]] = {}
    for section in (key for key in data if key not in METADATA):
        regions = _mapping(data.get(section, {}), f"{origin}: {section}")
        for region, entries in regions.items():
            _mapping(entries, f"{origin}: {section}.{region}")
        sections[section] = {
            region: {
                name: _price(item, f"{origin}: {section}.{region}.{name}")
                for name, item in entries.items()
            }
            for region, entries in regions.items()
        }
    return PriceTable(str(data["date"]), str(origin), sections)
