"""A dated table of on-demand prices (bundled ``prices.json``, or the user's ``--prices FILE``).

Sections: ``sagemaker`` (ml.* instances), ``ec2`` (EKS GPU nodes and Inferentia), ``gce_machine``
and ``gce_gpu`` (a GKE GPU node costs its machine type plus its attached GPUs). Every entry has
its source; prices are Decimal strings so no float rounding enters a bill.
"""

from __future__ import annotations

import json
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from infra.planning.pricing import Price, PriceTable
from tdk.errors import UsageError

BUNDLED = Path(__file__).with_name("prices.json")
SECTIONS = ("sagemaker", "ec2", "gce_machine", "gce_gpu")


def _price(item: Any, where: str) -> Price:
    try:
        value = Decimal(str(item["usd_per_hour"]))
        gpus = int(item.get("gpus", 1))
        source = str(item["source"])
    except (KeyError, TypeError, ValueError, InvalidOperation) as exc:
        raise UsageError(
            f"{where}: expected usd_per_hour (number), source (text), optional gpus",
            hint="see infra/perf/prices.json for the layout",
        ) from exc
    if not value.is_finite() or value < 0 or gpus < 0:
        raise UsageError(f"{where}: price and gpus must be >= 0", hint="fix the entry")
    return Price(value, gpus, source)


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise UsageError(
            f"{where}: expected an object, found {type(value).__name__}",
            hint="see infra/perf/prices.json for the layout",
        )
    return value


def load_prices(path: Path | None = None) -> PriceTable:
    """The bundled table, or ``path`` (same layout) when given."""
    origin = path or BUNDLED
    try:
        data = json.loads(origin.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read {origin}: {exc.strerror}", hint="check --prices") from exc
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"--prices {origin} is not UTF-8 JSON ({exc.reason})", hint="save it as UTF-8"
        ) from None
    except ValueError as exc:
        raise UsageError(f"{origin} is not JSON: {exc}", hint="check --prices") from exc
    if not isinstance(data, dict) or "date" not in data:
        raise UsageError(f"{origin}: no 'date' (when the prices were read)", hint="add one")
    sections: dict[str, dict[str, dict[str, Price]]] = {}
    for section in SECTIONS:
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
