"""Lists of targets for tests, read from the registry: a suite that covers a kind of target
covers every registered target of that kind, so a new one is never left out by a hand-written
list (issue 39 item 6)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from infra.k8s.entry import KubernetesEntry
from infra.targets import load_target, registry
from infra.targets.capabilities import DEPLOY

ROOT = Path(__file__).resolve().parent.parent


def kubernetes_targets() -> list[str]:
    """Targets that run Triton as a Kubernetes workload (Triton's own API at ``--url``)."""
    return [entry.name for entry in registry.entries() if isinstance(entry, KubernetesEntry)]


def cloud_kubernetes_targets() -> list[str]:
    """Kubernetes targets that deploy into a cloud (their entry names it: ``cloud``): they
    create the cluster, bind the pods to a cloud identity, declare the cloud's resources."""
    return [name for name in kubernetes_targets() if registry.get(name).cloud is not None]


def building_targets() -> list[str]:
    """Kubernetes targets whose stacks build TensorRT plans on their own GPUs (``tdk build
    --stack``: their build port is not refused)."""
    from infra.targets.capabilities import Refused

    return [t for t in kubernetes_targets() if not isinstance(load_target(t).build, Refused)]


def api_targets() -> list[str]:
    """Targets called through their own HTTP API (SageMaker runtime, the local front)."""
    return [e.name for e in registry.entries() if not isinstance(e, KubernetesEntry)]


def deployable_targets() -> list[str]:
    return registry.able(DEPLOY)


def dev_stack(target: str) -> str:
    """The committed stack of ``target`` (``Pulumi.<target>-dev.yaml``; each deployable target
    ships one, a test checks)."""
    return f"{target}-dev"


def read_dev(target: str, overrides: dict[str, Any] | None = None) -> Any:
    """``target``'s typed config from its committed stack with ``overrides``."""
    from infra.config import ConfigReader, merged_stack_config, read_stack_config

    deploy = load_target(target)
    reader = ConfigReader(merged_stack_config(ROOT, dev_stack(target), overrides or {}).get)
    common = read_stack_config(reader, target, deploy.release_schemes)
    return deploy.read_config(reader, common)


def managed_targets() -> list[str]:
    """Deployable targets that are not Kubernetes: the cloud runs the Triton container itself
    (SageMaker MME, inference components)."""
    return [name for name in deployable_targets() if name in api_targets()]


def cloud_targets(cloud: str) -> list[str]:
    """Deployable targets whose entry names ``cloud`` (``TargetEntry.cloud``): a suite about
    one cloud's resources (its budget, its log retention) covers every target on it."""
    return [
        name
        for name in deployable_targets()
        if (found := registry.get(name).cloud) is not None and found.name == cloud
    ]
