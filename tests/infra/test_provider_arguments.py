"""Every resource each Kubernetes target's stack declares (the registry's) passes only argument
names the provider declares, nested dicts included (mocks echo unknown keys back, a real
provider rejects them)."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

import pulumi_gcp as gcp
import pytest

from tests.infra.pulumi_harness import run_stack
from tests.infra.test_sagemaker_schema import _params, _snake_keys, assert_matches
from tests.registry_lists import cloud_kubernetes_targets, dev_stack

#: type-token packages that are no cloud provider: components, Kubernetes objects
#: (kubernetes-validate checks those), Pulumi's own
NOT_PROVIDERS = ("tdk", "kubernetes", "pulumi")
#: overrides that switch on every optional resource of a stack (an alert email everywhere)
EVERYTHING: dict[str, Any] = {"alertEmail": "a@example.com"}
MORE: dict[str, dict[str, Any]] = {"gke-dev": {"gkeBillingAccount": "012345-6789AB-CDEF01"}}
#: resources with nested arguments each pinned stack must have had checked
NESTED = {
    "eks-dev": {"aws:eks/cluster:Cluster", "aws:eks/nodeGroup:NodeGroup",
                "aws:amp/scraper:Scraper", "aws:budgets/budget:Budget"},
    "gke-dev": {"gcp:container/cluster:Cluster", "gcp:container/nodePool:NodePool",
                "gcp:monitoring/alertPolicy:AlertPolicy", "gcp:billing/budget:Budget"},
}  # fmt: skip


def provider(package: str) -> ModuleType:
    """The Python SDK of a type token's package (``aws`` -> ``pulumi_aws``)."""
    return importlib.import_module("pulumi_" + package.replace("-", "_"))


@pytest.mark.parametrize("stack", [dev_stack(t) for t in cloud_kubernetes_targets()])
def test_every_cloud_resource_uses_real_argument_names(stack: str) -> None:
    run = run_stack(stack, overrides=EVERYTHING | MORE.get(stack, {}))
    checked: set[str] = set()
    for resource in run.resources:
        package, module_path, class_name = resource.type.split(":")
        if package.startswith(NOT_PROVIDERS):
            continue
        module = getattr(provider(package), module_path.split("/")[0])
        inputs = {k: v for k, v in _snake_keys(resource.inputs).items() if k != "__defaults"}
        assert_matches(module, _params(getattr(module, class_name)._internal_init), inputs)
        checked.add(resource.type)
    assert checked, f"{stack} declared no cloud resource"
    assert NESTED.get(stack, set()) <= checked


def test_the_walker_catches_a_misspelt_nested_node_pool_key() -> None:
    run = run_stack("gke-dev")
    pool = run.named("tdk-gke-dev-gpu")
    inputs = _snake_keys(pool.inputs)
    inputs["node_config"]["guest_accelerator"] = inputs["node_config"].pop("guest_accelerators")
    with pytest.raises(AssertionError, match="'guest_accelerator' is not one of"):
        assert_matches(gcp.container, _params(gcp.container.NodePool._internal_init), inputs)


def test_the_walker_reads_renamed_arguments_and_maps_of_args() -> None:
    """``for`` is declared ``for_`` (a Python keyword), and a map of names to Args objects is
    walked value by value."""

    class NotificationArgs:
        def __init__(self, threshold: int) -> None:
            del threshold

    def init(for_: str, notifications: Any) -> None:
        del for_, notifications

    init.__annotations__["notifications"] = "Mapping[str, Input[ForwardRef('NotificationArgs')]]"
    module = ModuleType("provider")
    module.NotificationArgs = NotificationArgs  # type: ignore[attr-defined]
    params = _params(init)
    assert_matches(module, params, {"for": "5m", "notifications": {"at-80": {"threshold": 80}}})
    with pytest.raises(AssertionError, match="'treshold' is not one of"):
        assert_matches(module, params, {"notifications": {"at-80": {"treshold": 80}}})
