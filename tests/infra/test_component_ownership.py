"""Components own what they create: every Kubernetes target's committed stack (the registry's),
under mocks, declares every child of a component before that component's ``register_outputs``
(after it, Pulumi considers the component complete), and every cloud or Kubernetes resource
under the component that owns it, never directly under the stack. ``TOP_LEVEL`` and ``MOVED``
pin the shape of two targets' stacks (each target's own behaviour)."""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import pulumi
import pytest

from tests.infra.pulumi_harness import StackRun, run_stack
from tests.registry_lists import dev_stack, kubernetes_targets

TODAY = "2026-11-24"  # the day the facts tables were checked (the eks config reads it)
_INIT = inspect.signature(pulumi.Resource.__init__)


@dataclass(frozen=True)
class Construction:
    """One resource object the program built: its type, name, parent and whether the parent
    had already registered its outputs."""

    type: str
    name: str
    component: bool
    parent: pulumi.Resource | None
    parent_sealed: bool


@dataclass
class Ownership:
    stack: str
    run: StackRun
    built: list[Construction] = field(default_factory=list)
    #: component (type, name) -> how many times it called register_outputs
    registered: dict[tuple[str, str], int] = field(default_factory=dict)


def _type_of(resource: pulumi.Resource | None) -> str | None:
    return None if resource is None else getattr(resource, "_tdk_type", None)


@cache
def _record(stack: str) -> Ownership:
    built: list[Construction] = []
    sealed: set[int] = set()
    registered: dict[tuple[str, str], int] = {}
    init = pulumi.Resource.__init__
    register = pulumi.ComponentResource.register_outputs

    def recording_init(self: pulumi.Resource, *args: Any, **kwargs: Any) -> None:
        bound = _INIT.bind(self, *args, **kwargs)
        type_token, name = bound.arguments["t"], bound.arguments["name"]
        opts = bound.arguments.get("opts")
        parent = opts.parent if opts is not None else None
        self._tdk_type = type_token  # type: ignore[attr-defined]
        self._tdk_name = name  # type: ignore[attr-defined]
        built.append(
            Construction(
                type_token,
                name,
                not bound.arguments["custom"],
                parent,
                parent is not None and id(parent) in sealed,
            )
        )
        init(self, *args, **kwargs)

    def recording_register(self: pulumi.ComponentResource, outputs: Any) -> None:
        key = (getattr(self, "_tdk_type", "?"), getattr(self, "_tdk_name", "?"))
        registered[key] = registered.get(key, 0) + 1
        sealed.add(id(self))
        register(self, outputs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TDK_TODAY", TODAY)
        patch.setattr(pulumi.Resource, "__init__", recording_init)
        patch.setattr(pulumi.ComponentResource, "register_outputs", recording_register)
        run = run_stack(stack)
    return Ownership(stack, run, built, registered)


@pytest.fixture(params=[dev_stack(t) for t in kubernetes_targets()])
def owned(request: pytest.FixtureRequest) -> Ownership:
    return _record(request.param)


def _ours(ownership: Ownership) -> list[Construction]:
    """What the program declared (the stack's own root resource is Pulumi's)."""
    return [c for c in ownership.built if c.type != "pulumi:pulumi:Stack"]


def test_no_child_is_declared_after_its_component_registered_outputs(owned: Ownership) -> None:
    late = [
        f"{c.type} {c.name} under {_type_of(c.parent)} {getattr(c.parent, '_tdk_name', '')}"
        for c in _ours(owned)
        if c.parent_sealed
    ]
    assert not late, "declared after their parent's register_outputs:\n" + "\n".join(late)


def test_every_component_registers_its_outputs_once(owned: Ownership) -> None:
    components = {(c.type, c.name) for c in _ours(owned) if c.component}
    assert components, "the program declared no component"
    assert {key: owned.registered.get(key, 0) for key in components} == dict.fromkeys(components, 1)


def test_every_resource_has_a_component_parent(owned: Ownership) -> None:
    """Cloud and Kubernetes resources (providers included) sit under a component; only
    components sit directly under the stack."""
    orphans = [
        f"{c.type} {c.name}"
        for c in _ours(owned)
        if not c.component and not (_type_of(c.parent) or "").startswith("tdk:")
    ]
    assert not orphans, "resources outside any component:\n" + "\n".join(orphans)


TOP_LEVEL = {
    "gke-dev": {
        "tdk:gcp:ProjectServices",
        "tdk:gcp:GpuCluster",
        "tdk:k8s:ClusterAddons",
        "tdk:gcp:ReleaseReader",
        "tdk:gcp:EngineBuilder",
        "tdk:k8s:TritonService",
        "tdk:gcp:Monitoring",
    },
    "eks-dev": {
        "tdk:aws:GpuCluster",
        "tdk:aws:EksMonitoring",
        "tdk:k8s:ClusterAddons",
        "tdk:aws:ReleaseReader",
        "tdk:aws:EngineBuilder",
        "tdk:k8s:TritonService",
    },
}


@pytest.mark.parametrize("stack", TOP_LEVEL)
def test_the_stack_is_made_of_its_components(stack: str) -> None:
    top = {c.type for c in _ours(_record(stack)) if c.parent is None}
    assert top == TOP_LEVEL[stack]


HELM = "kubernetes:helm.sh/v3:Release"


def test_both_clouds_install_the_add_ons_through_the_shared_component(owned: Ownership) -> None:
    releases = [c for c in _ours(owned) if c.type == HELM]
    assert releases
    assert {_type_of(c.parent) for c in releases} == {"tdk:k8s:ClusterAddons"}
    workload = [c for c in _ours(owned) if c.type.startswith("kubernetes:") and c.type != HELM]
    triton = [c for c in workload if "-triton-" in c.name]
    assert triton and {_type_of(c.parent) for c in triton} == {"tdk:k8s:TritonService"}


#: what moved out of GpuCluster into its own component: each aliases its old parent, so a
#: stack deployed before the move updates in place instead of replacing it
MOVED = {
    "gke-dev": {(HELM, "tdk-gke-dev-keda")},
    "eks-dev": {
        (HELM, "tdk-eks-dev-keda"),
        (HELM, "tdk-eks-dev-nvidia-device-plugin"),
        (HELM, "tdk-eks-dev-cluster-autoscaler"),
        ("aws:iam/role:Role", "tdk-eks-dev-keda"),
        ("aws:iam/rolePolicy:RolePolicy", "tdk-eks-dev-keda-amp-query"),
        ("aws:iam/role:Role", "tdk-eks-dev-monitoring-cw-agent"),
        ("aws:iam/role:Role", "tdk-eks-dev-release-reader"),
        ("aws:iam/rolePolicy:RolePolicy", "tdk-eks-dev-release-read"),
    },
}


@pytest.mark.parametrize("stack", MOVED)
def test_moved_resources_alias_their_old_parent(stack: str) -> None:
    owned = _record(stack)
    cloud = stack.split("-")[0]
    old_parent = (
        f"urn:pulumi:{stack}::triton-deploy-kit::pulumi:pulumi:Stack"
        f"$tdk:{'gcp' if cloud == 'gke' else 'aws'}:GpuCluster::tdk-{stack}"
    )
    aliased = {
        (r.type, r.name) for r in owned.run.resources if old_parent in r.options.alias_parents
    }
    assert aliased == MOVED[stack]
