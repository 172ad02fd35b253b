"""Every resource the EKS and GKE stacks declare passes only argument names the provider
declares, nested dicts included (mocks echo unknown keys back, a real provider rejects them)."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pulumi_aws as aws
import pulumi_gcp as gcp
import pytest

from tests.infra.pulumi_harness import run_stack
from tests.infra.test_sagemaker_schema import _params, _snake_keys, assert_matches

PROVIDERS: dict[str, ModuleType] = {"aws": aws, "gcp": gcp}
#: overrides that switch on every optional resource of the stack
EVERYTHING: dict[str, dict[str, Any]] = {
    "eks-dev": {"alertEmail": "a@example.com"},
    "gke-dev": {"alertEmail": "a@example.com", "gkeBillingAccount": "012345-6789AB-CDEF01"},
}


@pytest.mark.parametrize("stack", ["eks-dev", "gke-dev"])
def test_every_cloud_resource_uses_real_argument_names(stack: str) -> None:
    run = run_stack(stack, overrides=EVERYTHING[stack])
    checked: set[str] = set()
    for resource in run.resources:
        provider, module_path, class_name = resource.type.split(":")
        if provider not in PROVIDERS:
            continue  # components, Kubernetes objects (kubernetes-validate checks those)
        module = getattr(PROVIDERS[provider], module_path.split("/")[0])
        inputs = {k: v for k, v in _snake_keys(resource.inputs).items() if k != "__defaults"}
        assert_matches(module, _params(getattr(module, class_name)._internal_init), inputs)
        checked.add(resource.type)
    nested = {
        "eks-dev": {"aws:eks/cluster:Cluster", "aws:eks/nodeGroup:NodeGroup",
                    "aws:amp/scraper:Scraper", "aws:budgets/budget:Budget"},
        "gke-dev": {"gcp:container/cluster:Cluster", "gcp:container/nodePool:NodePool",
                    "gcp:monitoring/alertPolicy:AlertPolicy", "gcp:billing/budget:Budget"},
    }[stack]  # fmt: skip
    assert nested <= checked


def test_the_walker_catches_a_misspelt_nested_node_pool_key() -> None:
    run = run_stack("gke-dev")
    pool = run.named("tdk-gke-dev-gpu")
    inputs = _snake_keys(pool.inputs)
    inputs["node_config"]["guest_accelerator"] = inputs["node_config"].pop("guest_accelerators")
    with pytest.raises(AssertionError, match="'guest_accelerator' is not one of"):
        assert_matches(gcp.container, _params(gcp.container.NodePool._internal_init), inputs)
