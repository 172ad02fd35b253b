"""A dated table of on-demand prices (``infra.perf.plan.prices`` loads it), and the ``Quote`` a
target prices from it: what the planner and the targets' entries share."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from tdk.errors import UsageError


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
