"""A dated table of on-demand prices, its one reader, and the ``Quote`` a target prices from
it: what the planner and the targets' entries share.

A table is a JSON document: ``date`` (when the prices were read) and the table's own facts
(``METADATA``), and sections, each region -> name -> ``usd_per_hour`` (a Decimal string, so no
float rounding enters a bill), optional ``gpus`` and ``source``. Each target's catalog commits
its own (``TargetEntry.prices``); ``tdk plan --prices FILE`` reads the user's in the same layout.
Nothing here names a section: which one is a target's, the target says.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from infra.planning.report import MAX_PRICE
from tdk import bounded
from tdk.errors import UsageError
from tdk.numbers import check_number, decimal_of

#: what a table says about itself; every other top-level key is a section
METADATA = ("date", "currency", "basis", "note", "fetched_by", "regenerate")
LAYOUT = (
    'the layout: {"date": "YYYY-MM-DD", SECTION: {REGION: {NAME: {"usd_per_hour": "1.23", '
    '"gpus": 1, "source": "where it was read"}}}}'
)


@dataclass(frozen=True)
class Price:
    usd_per_hour: Decimal
    gpus: int
    source: str


@dataclass(frozen=True)
class PriceTable:
    date: str
    origin: str
    sections: dict[str, dict[str, dict[str, Price]]]  # section -> region -> name -> Price

    def lookup(self, section: str, region: str, name: str) -> Price:
        regions = self.sections.get(section, {})
        table = regions.get(region)
        if table is None:
            raise UsageError(
                f"{self.origin}: no {section} prices for region {region!r} "
                f"(it has {', '.join(sorted(regions)) or 'none'})",
                hint="pass --region one of those, or --prices FILE with your region",
            )
        price = table.get(name)
        if price is None:
            raise UsageError(
                f"{self.origin}: no {section} price for {name!r} in {region} "
                f"(it has {', '.join(sorted(table))})",
                hint="give the price inline (--baseline TYPE:RPS:USD_PER_HOUR) or --prices FILE",
            )
        return price

    def find(self, region: str, name: str) -> Price:
        """The price of ``name`` in ``region`` from whichever section lists it (a ``--baseline``
        names a unit of any cloud: an instance type, a machine type), never guessed from the
        name's shape; a UsageError when no section, or more than one, lists it."""
        found = [s for s, regions in self.sections.items() if name in regions.get(region, {})]
        if len(found) == 1:
            return self.sections[found[0]][region][name]
        listed = sorted(n for regions in self.sections.values() for n in regions.get(region, {}))
        why = f"in {', '.join(found)} alike" if found else f"(it has {', '.join(listed) or 'none'})"
        raise UsageError(
            f"{self.origin}: no single price for {name!r} in {region} {why}",
            hint="give the price inline (--baseline TYPE:RPS:USD_PER_HOUR) or --prices FILE",
        )


@dataclass(frozen=True)
class Quote:
    """What ``tdk plan`` asks a target to price: one candidate unit (an instance type, or a
    node shape), what one unit sustains, whether that was measured, where, from which table."""

    spec: str
    unit_rps: Decimal
    measured: bool
    region: str
    prices: PriceTable
    gpus_per_node: int = 1


def _price(item: Any, where: str) -> Price:
    try:
        value = decimal_of(item["usd_per_hour"], f"{where}.usd_per_hour", 0, MAX_PRICE)
        gpus = int(check_number(item.get("gpus", 1), f"{where}.gpus", 0, 1024, integer=True))
        source = str(item["source"])
    except (KeyError, TypeError, AttributeError) as exc:
        raise UsageError(
            f"{where}: expected usd_per_hour (number), source (text), optional gpus", hint=LAYOUT
        ) from exc
    return Price(value, gpus, source)


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise UsageError(f"{where}: expected an object, found {type(value).__name__}", hint=LAYOUT)
    return value


def parse_table(data: Any, origin: str) -> PriceTable:
    """A price document as a ``PriceTable``; a UsageError naming the entry that is wrong."""
    if not isinstance(data, dict) or "date" not in data:
        raise UsageError(f"{origin}: no 'date' (when the prices were read)", hint="add one")
    sections: dict[str, dict[str, dict[str, Price]]] = {}
    for section in (key for key in data if key not in METADATA):
        regions = _mapping(data.get(section, {}), f"{origin}: {section}")
        sections[section] = {
            region: {
                name: _price(item, f"{origin}: {section}.{region}.{name}")
                for name, item in _mapping(entries, f"{origin}: {section}.{region}").items()
            }
            for region, entries in regions.items()
        }
    return PriceTable(str(data["date"]), str(origin), sections)


def write_table(path: Path, document: dict[str, Any]) -> None:
    """``document`` (a fetcher's answer) as the price file at ``path``: checked as a table
    first, then written whole (a temporary file beside it, renamed over it) or not at all;
    two fetchers at once each write their own temporary file."""
    parse_table(document, str(path))
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(json.dumps(document, indent=2) + "\n")
        os.chmod(tmp, 0o644)  # a committed file, as git checks it out
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def load_table(path: Path, hint: str) -> PriceTable:
    """The price table in the file ``path`` (read bounded); ``hint`` says how to fix a file
    that cannot be read."""
    try:
        data = bounded.load_json(path, hint)
    except bounded.DocumentError as exc:
        raise UsageError(exc.message, hint=exc.hint) from None
    return parse_table(data, str(path))


def merge(tables: Iterable[PriceTable]) -> PriceTable:
    """One table of every section of ``tables`` (a ``--baseline`` may name any cloud's unit):
    dated by the oldest, from all their origins. A section two tables give is a clash."""
    sections: dict[str, dict[str, dict[str, Price]]] = {}
    origins: dict[str, None] = {}
    dates = []
    for table in tables:
        if table.origin in origins:
            continue  # two targets of one cloud share its table
        clash = sorted(set(sections) & set(table.sections))
        if clash:
            raise ValueError(f"{table.origin}: section {clash[0]!r} is in another table too")
        sections.update(table.sections)
        origins[table.origin] = None
        dates.append(table.date)
    return PriceTable(min(dates, default=""), ", ".join(origins), sections)
