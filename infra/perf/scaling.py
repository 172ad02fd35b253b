"""The stack keys a plan sets: SageMaker's target-tracking value and instance bounds, or the
GPU node and KEDA replica bounds of GKE / EKS (key names as declared in ``Pulumi.yaml``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from infra.perf.plan import Option, PlanReport, invocations_per_instance
from infra.perf.stackfile import StackFile
from tdk.errors import ConfigError

NODE_KEYS = {
    "eks": ("eksGpuNodesMin", "eksGpuNodesMax"),
    "gke": ("gkeGpuNodesMin", "gkeGpuNodesMax"),
}
REGION_KEY = {"sagemaker": "aws:region", "eks": "aws:region", "gke": "gcp:region"}
#: not derived from a throughput measurement: KEDA scales on Triton's queue-to-compute ratio
UNCHANGED = {"eks": ("k8sQueueRatioTarget",), "gke": ("k8sQueueRatioTarget",), "sagemaker": ()}


def scaling_updates(target: str, report: PlanReport, option: Option) -> dict[str, int]:
    """The scaling keys for ``option`` sized to the report's trough and peak."""
    size = report.sizing(option)
    if target == "sagemaker":
        per_minute = invocations_per_instance(option.candidate.unit_rps, report.safety)
        return {
            "sagemakerInvocationsPerInstance": per_minute,
            "sagemakerMinInstances": size.trough_instances,
            "sagemakerMaxInstances": size.peak_instances,
        }
    low, high = NODE_KEYS[target]
    return {
        low: size.trough_instances,
        high: size.peak_instances,
        "k8sMinReplicas": size.trough_units,
        "k8sMaxReplicas": size.peak_units,
    }


def _declared_defaults(stack: StackFile) -> dict[str, Any]:
    import yaml

    project = stack.path.parent / "Pulumi.yaml"
    try:
        data = yaml.safe_load(project.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(
            f"cannot read {project} (the stack's declared defaults): {exc}",
            hint="keep Pulumi.<stack>.yaml next to the project's Pulumi.yaml",
        ) from exc
    return {
        key: spec.get("default")
        for key, spec in (data.get("config") or {}).items()
        if isinstance(spec, dict)
    }


def stack_value(stack: StackFile, key: str) -> Any:
    """The stack's value for ``key``, else the default ``Pulumi.yaml`` declares."""
    value = stack.get(key)
    return value if value is not None else _declared_defaults(stack).get(key)


def stack_unit(stack: StackFile) -> tuple[str, str, str, int]:
    """(target, region, instance spec, GPUs per node) the stack deploys."""
    target = str(stack.get("target"))
    if target not in REGION_KEY:
        raise ConfigError(
            f"{stack.path}: target {target!r} has no scaling keys to plan",
            hint="tdk plan --write-stack takes a sagemaker, gke or eks stack",
        )
    region = str(stack_value(stack, REGION_KEY[target]) or "")
    if target == "sagemaker":
        return target, region, str(stack_value(stack, "sagemakerInstanceType")), 1
    if target == "eks":
        return target, region, str(stack_value(stack, "eksGpuInstanceType")), 1
    machine = stack_value(stack, "gkeMachineType")
    gpu = stack_value(stack, "gkeGpuType")
    return target, region, f"{machine}+{gpu}", int(stack_value(stack, "gkeGpusPerNode") or 1)


def stack_path_ok(path: Path) -> None:
    if not (path.name.startswith("Pulumi.") and path.suffix in (".yaml", ".yml")):
        raise ConfigError(
            f"--write-stack {path}: expected a Pulumi.<stack>.yaml file",
            hint="e.g. --write-stack Pulumi.sagemaker-dev.yaml",
        )
