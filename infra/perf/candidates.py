"""The options ``tdk plan`` compares, priced from the table: one per instance type (SageMaker,
EKS) or GPU node shape (GKE), plus the baseline the user runs today."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from infra.perf.plan import Candidate
from infra.perf.prices import PriceTable
from tdk.errors import UsageError

TARGETS = ("sagemaker", "eks", "gke")
DEFAULTS = {
    "sagemaker": ("ml.g4dn.xlarge", "ml.g5.xlarge"),
    "eks": ("g4dn.xlarge", "g5.xlarge", "g6.xlarge"),
    "gke": ("g2-standard-8+nvidia-l4", "n1-standard-4+nvidia-tesla-t4"),
}
DEFAULT_REGION = {"sagemaker": "us-east-1", "eks": "us-east-1", "gke": "us-central1"}


def _number(text: str, what: str, hint: str) -> Decimal:
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise UsageError(f"{what}: {text!r} is not a number", hint=hint) from None
    if not value.is_finite() or value <= 0:
        raise UsageError(f"{what}: {text!r} must be > 0", hint=hint)
    return value


def candidate(
    target: str,
    spec: str,
    region: str,
    prices: PriceTable,
    measured_rps: Decimal,
    measured_on: str | None,
    gpus_per_node: int = 1,
) -> Candidate:
    """``TYPE`` or ``TYPE:RPS`` (RPS: what one unit of that type sustains, if measured)."""
    name, _, rate = spec.partition(":")
    hint = "e.g. --instance-type ml.g5.xlarge or --instance-type ml.g5.xlarge:420"
    unit_rps = _number(rate, f"--instance-type {spec}", hint) if rate else measured_rps
    measured = bool(rate) or name == measured_on
    if target == "sagemaker":
        price = prices.lookup("sagemaker", region, name)
        return Candidate(name, unit_rps, 1, price.usd_per_hour, measured)
    if target == "eks":
        price = prices.lookup("ec2", region, name)
        return Candidate(name, unit_rps, max(1, price.gpus), price.usd_per_hour, measured)
    machine, plus, gpu = name.partition("+")
    if not plus:
        raise UsageError(
            f"--instance-type {name!r}: a GKE GPU node is MACHINE+GPU",
            hint="e.g. --instance-type g2-standard-8+nvidia-l4",
        )
    node = prices.lookup("gce_machine", region, machine).usd_per_hour
    node += gpus_per_node * prices.lookup("gce_gpu", region, gpu).usd_per_hour
    return Candidate(name, unit_rps, gpus_per_node, node, measured or gpu == measured_on)


def baseline(spec: str, region: str, prices: PriceTable) -> Candidate:
    """``TYPE:RPSrps[:USD_PER_HOUR]``, e.g. ``inf2.xlarge:2756rps:0.76`` (price from the table
    when omitted: ``ml.*`` from SageMaker's section, anything else from EC2's)."""
    parts = spec.split(":")
    hint = 'e.g. --baseline "inf2.xlarge:2756rps:0.76" (type, rps per instance, $/h)'
    if len(parts) not in (2, 3) or not parts[0] or not parts[1].endswith("rps"):
        raise UsageError(f"--baseline {spec!r}: expected TYPE:RPSrps[:USD_PER_HOUR]", hint=hint)
    name = parts[0]
    rps = _number(parts[1].removesuffix("rps"), f"--baseline {spec}", hint)
    if len(parts) == 3:
        price = _number(parts[2], f"--baseline {spec}", hint)
    else:
        section = "sagemaker" if name.startswith("ml.") else "ec2"
        price = prices.lookup(section, region, name).usd_per_hour
    return Candidate(f"{name} (baseline)", rps, 1, price, measured=True, baseline=True)
