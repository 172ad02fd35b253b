"""``tdk plan --components``: SageMaker inference components vs MME vs a baseline (Inferentia)
for the same models and the same measured load (exact Decimal arithmetic, pure).

A copy of a model reserves whole GPUs (NumberOfAcceleratorDevicesRequired >= 1, botocore's
InferenceComponentComputeResourceRequirements, checked 2026-11-24), cores and host memory
(``infra.targets.sagemaker_ic.sizing``); an MME shares one GPU among every model whose working
set fits its memory and keeps at least one instance. So: components cost a GPU per hot copy
and nothing while every model is idle (scale to zero); MME costs one instance whatever the
number of models, and thrashes (loads per request) once the hot set outgrows GPU memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from infra.clouds.aws.prices import SAGEMAKER
from infra.clouds.aws.sagemaker.instances import MME_DECOUPLED
from infra.planning.pricing import PriceTable
from infra.planning.report import MILLION, SECONDS_PER_HOUR, Candidate, ceil_div, units_for
from infra.targets.sagemaker_ic.sizing import (
    GPU_EXPANSION,
    USABLE_FRACTION,
    IcInstance,
    ic_instance,
    requirements,
)
from tdk.errors import TdkError, UsageError


@dataclass(frozen=True)
class ModelSize:
    """One model copy of the release and its archive size."""

    name: str
    size_bytes: int
    decoupled: bool = False  # the manifest left it out of mme/ (it streams)


@dataclass(frozen=True)
class Load:
    """The measured load: peak rps over the ``hot`` busiest models (the rest idle)."""

    peak_rps: Decimal
    hot: int
    unit_rps: Decimal
    safety: Decimal


@dataclass(frozen=True)
class Row:
    option: str
    instances_peak: int
    instances_idle: int
    usd_per_hour_peak: Decimal
    usd_per_hour_idle: Decimal
    note: str
    gpus_reserved: int | None = None
    refused: bool = False  # the option cannot serve these models: no instances, no price

    def usd_per_million(self, peak_rps: Decimal) -> Decimal:
        if peak_rps == 0:
            return Decimal(0)
        return self.usd_per_hour_peak / (peak_rps * SECONDS_PER_HOUR) * MILLION

    def as_dict(self, peak_rps: Decimal) -> dict[str, object]:
        if self.refused:  # never a price of $0 for what cannot run
            return {"option": self.option, "instances_peak": None, "instances_idle": None,
                    "gpus_reserved": None, "usd_per_hour_peak": None, "usd_per_hour_idle": None,
                    "usd_per_million": None, "note": self.note, "refused": True}  # fmt: skip
        return {
            "option": self.option,
            "instances_peak": self.instances_peak,
            "instances_idle": self.instances_idle,
            "gpus_reserved": self.gpus_reserved,
            "usd_per_hour_peak": str(self.usd_per_hour_peak.quantize(Decimal("0.01"))),
            "usd_per_hour_idle": str(self.usd_per_hour_idle.quantize(Decimal("0.01"))),
            "usd_per_million": str(self.usd_per_million(peak_rps).quantize(Decimal("0.0001"))),
            "note": self.note,
            "refused": False,
        }


def _hot_rps(load: Load, models: list[ModelSize]) -> Decimal:
    if not models or not 1 <= load.hot <= len(models):
        raise UsageError(
            f"--hot-models {load.hot}: expected 1..{len(models)} (the release's models)",
            hint="how many models take the traffic at the peak",
        )
    return load.peak_rps / load.hot


def components_row(
    instance: IcInstance, models: list[ModelSize], load: Load, price: Decimal
) -> Row:
    """Copies per hot model at the peak, packed by GPUs, cores and memory; idle: zero."""
    per_model = _hot_rps(load, models)
    gpus = cores = memory = Decimal(0)
    copies = 0
    for model in models[: load.hot]:
        need = requirements(model.name, model.size_bytes, instance)
        n = units_for(per_model, load.unit_rps, load.safety)
        copies += n
        gpus += n * need.accelerators
        cores += n * Decimal(str(need.cpu_cores))
        memory += n * need.memory_mb
    instances = max(
        ceil_div(gpus, Decimal(instance.gpus)),
        ceil_div(cores, Decimal(instance.vcpus)),
        ceil_div(memory, Decimal(instance.usable_memory_mb)),
        1,
    )
    note = (
        f"{copies} copies of {load.hot} hot models, whole GPUs each; "
        f"{len(models) - load.hot} idle models scaled to zero (first request fails while a "
        "copy starts)"
    )
    return Row(f"{instance.instance_type} inference components", instances, 0,
               instances * price, Decimal(0), note, int(gpus))  # fmt: skip


def mme_row(
    instance: IcInstance, models: list[ModelSize], load: Load, price: Decimal, streamed: bool
) -> Row:
    """One shared GPU per instance: instances for the total rps, never fewer than one; refused
    for a streamed load or decoupled models (``MME_DECOUPLED``)."""
    _hot_rps(load, models)
    name = f"{instance.instance_type} MME"
    decoupled = [m.name for m in models[: load.hot] if m.decoupled]
    if streamed or decoupled:
        what = ", ".join(decoupled) or "the measured model (a bench generate measurement)"
        note = f"refused: {what} stream(s) (decoupled); {MME_DECOUPLED}"
        return Row(name, 0, 0, Decimal(0), Decimal(0), note, refused=True)
    if instance.gpus != 1:
        return Row(name, 0, 0, Decimal(0), Decimal(0), "MME runs Triton on single-GPU types only",
                   refused=True)  # fmt: skip
    instances = units_for(load.peak_rps, load.unit_rps, load.safety)
    usable = Decimal(instance.gpu_memory_mb) * Decimal(str(USABLE_FRACTION))
    hot = sorted(models[: load.hot], key=lambda m: m.size_bytes, reverse=True)
    working = sum(Decimal(m.size_bytes) * Decimal(str(GPU_EXPANSION)) for m in hot) / 2**20
    note = f"all {len(models)} models share each GPU; at least 1 instance while idle"
    if working > usable:
        note += (
            f"; the {load.hot} hot models need {working:.0f} MB of GPU memory, more than "
            f"{usable:.0f} MB: MME would load and unload per request"
        )
    return Row(name, instances, 1, instances * price, price, note, instances)


def baseline_row(candidate: Candidate, load: Load) -> Row:
    """The user's Inferentia (or other) baseline: units per instance at the same safety."""
    units = units_for(load.peak_rps, candidate.unit_rps, load.safety)
    instances = ceil_div(Decimal(units), Decimal(candidate.units_per_instance))
    note = "what runs today (at least 1 instance while idle)"
    price = candidate.usd_per_hour
    return Row(candidate.name, instances, 1, instances * price, price, note)


def compare(
    models: list[ModelSize],
    load: Load,
    instance_types: list[str],
    region: str,
    prices: PriceTable,
    baseline: Candidate | None = None,
    streamed: bool = False,
) -> list[Row]:
    """Components and MME on each instance type, then the baseline; ``streamed``: the load is
    a decoupled model's generation (a token measurement), which MME cannot serve."""
    rows: list[Row] = []
    for instance_type in instance_types:
        try:
            instance = ic_instance("--instance-type", instance_type)
        except TdkError as exc:
            raise UsageError(exc.message, hint="use an ml.<gpu family>.<size> type") from None
        price = prices.lookup(SAGEMAKER, region, instance_type).usd_per_hour
        rows.append(components_row(instance, models, load, price))
        rows.append(mme_row(instance, models, load, price, streamed))
    if baseline is not None:
        rows.append(baseline_row(baseline, load))
    return rows
