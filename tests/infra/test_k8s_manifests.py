"""The pure Kubernetes builders: strict schema validation and the placement/scaling policies."""

from __future__ import annotations

import dataclasses

import kubernetes_validate
import pytest

from infra.k8s import manifests, promql
from infra.k8s.spec import (
    POOL_LABEL,
    PrometheusSource,
    Resources,
    Scaling,
    TritonServiceSpec,
    WorkloadIdentity,
)
from infra.targets import load_target
from infra.targets.eks import builders as eks_builders
from infra.targets.eks.builders import amp_source
from infra.targets.gke import builders as gke_builders
from tests.registry_lists import cloud_kubernetes_targets, kubernetes_targets, read_dev

K8S_VERSION = "1.33"  # pinned: GKE and EKS both serve 1.33 in their regular channels


def is_custom(manifest: dict[str, object]) -> bool:
    """A custom resource (KEDA's, a cloud's managed Prometheus objects): its API group is
    neither the core group nor a built-in one (no dot, or ``*.k8s.io``), so the Kubernetes
    schemas do not know it (tests/infra/test_crd_schemas.py validates those)."""
    version = str(manifest["apiVersion"])
    group = version.rpartition("/")[0]
    return "." in group and not group.endswith(".k8s.io")


#: the targets' own load-balancer annotations, as their configs pass them
LB = {"gke": gke_builders.LOAD_BALANCER_ANNOTATIONS, "eks": eks_builders.LOAD_BALANCER_ANNOTATIONS}


def gke_spec(exposure: str) -> TritonServiceSpec:
    return make_spec(exposure=exposure, service_annotations=LB["gke"].get(exposure, {}))


def eks_spec(exposure: str) -> TritonServiceSpec:
    return make_spec(exposure=exposure, service_annotations=LB["eks"].get(exposure, {}))


def make_spec(**changes: object) -> TritonServiceSpec:
    spec = TritonServiceSpec(
        name="triton",
        namespace="inference",
        kind="gpu",
        image="nvcr.io/nvidia/tritonserver:24.10-py3",
        model_repository="gs://bucket/releases/r1/repository",
        resources=Resources(cpu="4", memory="16Gi", cpu_limit="4", memory_limit="16Gi", gpus=1),
        scaling=Scaling(
            min_replicas=1,
            max_replicas=4,
            queue_ratio_target=0.5,
            polling_seconds=15,
            cooldown_seconds=300,
        ),
        prometheus=PrometheusSource(
            "https://monitoring.googleapis.com/v1/projects/p/location/global/prometheus", "gcp"
        ),
        exposure="cluster-ip",
        startup_budget_seconds=900,
        pod_monitoring=True,
        identity=gke_builders.workload_identity("t@p.iam.gserviceaccount.com"),
    )
    return dataclasses.replace(spec, **changes)  # type: ignore[arg-type]


@pytest.mark.parametrize("target", kubernetes_targets())
@pytest.mark.parametrize("kind", ["gpu", "cpu"])
@pytest.mark.parametrize("exposure", ["cluster-ip", "internal-lb", "external-lb"])
def test_core_manifests_pass_strict_validation(target: str, kind: str, exposure: str) -> None:
    """What each Kubernetes target renders from its committed stack (every registered one)."""
    config = read_dev(target, {"k8sWorkloadKind": kind, "k8sServiceExposure": exposure})
    rendered = load_target(target).render.manifests(config, lambda output: "${" + output + "}")
    core = [m for m in rendered if not is_custom(m)]
    assert [m["kind"] for m in core][:3] == ["Namespace", "ServiceAccount", "Deployment"]
    for manifest in core:
        assert kubernetes_validate.validate(manifest, K8S_VERSION, strict=True) == K8S_VERSION


def test_strict_validation_rejects_a_misspelt_field() -> None:
    broken = manifests.deployment(make_spec())
    broken["spec"]["template"]["spec"]["containers"][0]["startupprobe"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, K8S_VERSION, strict=True)


def test_gpu_pod_requests_one_gpu_on_the_gpu_pool_with_probes() -> None:
    spec = make_spec()
    pod = manifests.deployment(spec)["spec"]["template"]["spec"]
    triton = pod["containers"][0]
    assert triton["resources"]["limits"]["nvidia.com/gpu"] == 1
    assert triton["resources"]["requests"]["nvidia.com/gpu"] == 1
    assert pod["nodeSelector"] == {POOL_LABEL: "gpu"}
    assert pod["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    ]
    assert triton["readinessProbe"]["httpGet"]["path"] == "/v2/health/ready"
    startup = triton["startupProbe"]
    assert startup["failureThreshold"] * startup["periodSeconds"] >= 900
    assert "--model-repository=gs://bucket/releases/r1/repository" in triton["args"]
    assert "--strict-readiness=true" in triton["args"]


def test_cpu_pod_prefers_gpu_nodes_and_tolerates_their_taint_without_requiring_them() -> None:
    pod = manifests.deployment(make_spec(kind="cpu"))["spec"]["template"]["spec"]
    triton = pod["containers"][0]
    assert "nvidia.com/gpu" not in triton["resources"]["limits"]
    assert "nodeSelector" not in pod
    node_affinity = pod["affinity"]["nodeAffinity"]
    assert "requiredDuringSchedulingIgnoredDuringExecution" not in node_affinity
    (preferred,) = node_affinity["preferredDuringSchedulingIgnoredDuringExecution"]
    assert preferred["preference"]["matchExpressions"][0]["key"] == POOL_LABEL
    assert pod["tolerations"][0]["key"] == "nvidia.com/gpu"


def test_rollout_replaces_pods_one_by_one_and_pdb_allows_one_down() -> None:
    spec = make_spec()
    assert "replicas" not in manifests.deployment(spec)["spec"]  # owned by KEDA's HPA
    strategy = manifests.deployment(spec)["spec"]["strategy"]["rollingUpdate"]
    assert strategy == {"maxSurge": 1, "maxUnavailable": 0}
    assert manifests.pod_disruption_budget(spec)["spec"]["maxUnavailable"] == 1


def test_service_is_cluster_internal_by_default_and_internal_lb_is_annotated() -> None:
    assert manifests.service(make_spec())["spec"]["type"] == "ClusterIP"
    eks = manifests.service(eks_spec(exposure="internal-lb"))
    assert eks["spec"]["type"] == "LoadBalancer"
    assert eks["metadata"]["annotations"]["service.beta.kubernetes.io/aws-load-balancer-internal"]
    gke = manifests.service(gke_spec(exposure="internal-lb"))
    assert gke["metadata"]["annotations"] == {"networking.gke.io/load-balancer-type": "Internal"}


@pytest.mark.parametrize("target", kubernetes_targets())
def test_every_target_annotates_its_internal_load_balancer(target: str) -> None:
    """An internal load balancer is a cloud's annotation on the Service (each target gives its
    own); cluster-ip needs none."""
    services = {}
    for exposure in ("cluster-ip", "internal-lb"):
        config = read_dev(target, {"k8sServiceExposure": exposure})
        rendered = load_target(target).render.manifests(config, lambda output: "${" + output + "}")
        (services[exposure],) = [m for m in rendered if m["kind"] == "Service"]
    assert services["cluster-ip"]["spec"]["type"] == "ClusterIP"
    assert not services["cluster-ip"]["metadata"].get("annotations")
    assert services["internal-lb"]["spec"]["type"] == "LoadBalancer"
    assert services["internal-lb"]["metadata"]["annotations"]


@pytest.mark.parametrize("target", cloud_kubernetes_targets())
def test_every_target_binds_its_pods_through_its_workload_identity(target: str) -> None:
    """Each target states its pods' cloud identity as one ``WorkloadIdentity``: the
    ServiceAccount carries its annotations, the Deployment's pods its labels; the build Job's
    identity is another one, on a ServiceAccount of its own (issue 47 item 5)."""
    config = read_dev(target)
    deploy = load_target(target)
    spec = deploy.workload_spec(config, lambda output: "${" + output + "}")
    identity, builder = spec.identity, spec.builder
    assert identity.service_account, f"{target} binds no cloud identity"
    assert builder.service_account, f"{target} binds its build Job to no cloud identity"
    assert dict(builder.service_account) != dict(identity.service_account)
    rendered = deploy.render.manifests(config, lambda output: "${" + output + "}")
    accounts = {m["metadata"]["name"]: m for m in rendered if m["kind"] == "ServiceAccount"}
    assert set(accounts) == {spec.name, spec.build_service_account}
    assert accounts[spec.name]["metadata"]["annotations"] == dict(identity.service_account)
    build = accounts[spec.build_service_account]["metadata"]["annotations"]
    assert build == dict(builder.service_account)
    (deployment,) = [m for m in rendered if m["kind"] == "Deployment"]
    assert (
        deployment["spec"]["template"]["metadata"]["labels"].items() >= identity.pod_labels.items()
    )
    assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == spec.name
    assert deployment["spec"]["template"]["spec"]["automountServiceAccountToken"] is True
    assert spec.store_access is None  # the identity reads the release, not a Secret


@pytest.mark.parametrize(
    "target", [t for t in kubernetes_targets() if t not in cloud_kubernetes_targets()]
)
def test_a_target_without_a_cloud_reads_the_release_with_a_secret(target: str) -> None:
    """A target with no cloud has no identity to bind: its ServiceAccounts carry nothing and
    the release is read with the Secret the stack names (``infra.k8s.store_access``)."""
    spec = load_target(target).workload_spec(read_dev(target), lambda output: output)
    assert not spec.identity.service_account and not spec.builder.service_account
    assert spec.store_access is not None and spec.store_access.secret
    (deployment,) = [
        m
        for m in load_target(target).render.manifests(read_dev(target), lambda output: output)
        if m["kind"] == "Deployment"
    ]
    assert deployment["spec"]["template"]["spec"]["automountServiceAccountToken"] is False


# What the query means is proven on a real Prometheus scraping a real Triton
# (tests/prom/test_live.py); here only that the ScaledObject carries it.
EXPECTED_QUERY = promql.queue_compute_ratio("inference", "triton")


def test_scaled_object_scales_on_the_exact_queue_to_compute_ratio() -> None:
    scaled = manifests.scaled_object(make_spec())
    assert scaled["apiVersion"] == "keda.sh/v1alpha1"
    body = scaled["spec"]
    assert body["scaleTargetRef"]["name"] == "triton"
    assert (body["minReplicaCount"], body["maxReplicaCount"]) == (1, 4)
    behavior = body["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]
    assert behavior["scaleDown"]["stabilizationWindowSeconds"] == 300
    (trigger,) = body["triggers"]
    assert trigger["type"] == "prometheus"
    assert trigger["metricType"] == "Value"
    assert trigger["metadata"]["query"] == EXPECTED_QUERY
    assert trigger["metadata"]["threshold"] == "0.5"
    assert "awsRegion" not in trigger["metadata"]
    assert trigger["authenticationRef"] == {"name": "triton"}
    # KEDA requires every metadata value to be a string
    assert all(isinstance(v, str) for v in trigger["metadata"].values())


def test_eks_scaled_object_signs_requests_for_amp() -> None:
    spec = make_spec(
        prometheus=amp_source("https://aps", "us-east-1"),
        pod_monitoring=False,  # what the eks target sets (the AMP scraper needs no object)
    )
    (trigger,) = manifests.scaled_object(spec)["spec"]["triggers"]
    assert trigger["metadata"]["awsRegion"] == "us-east-1"
    auth = manifests.trigger_authentication(spec)
    assert auth["spec"] == {"podIdentity": {"provider": "aws"}}
    kinds = [m["kind"] for m in manifests.workload_manifests(spec)]
    assert "PodMonitoring" not in kinds


def test_pod_monitoring_scrapes_the_metrics_port_of_the_workload() -> None:
    spec = make_spec()
    monitor = manifests.pod_monitoring(spec)
    assert monitor["spec"]["selector"]["matchLabels"] == spec.selector
    assert monitor["spec"]["endpoints"][0]["port"] == "metrics"
    ports = manifests.container(spec)["ports"]
    assert {"name": "metrics", "containerPort": 8002, "protocol": "TCP"} in ports


def test_figures_cover_the_dashboard() -> None:
    figures = promql.figures("inference", "triton")
    assert set(figures) >= {"Requests / s", "p99 latency (ms)", "Queue / compute ratio"}
    assert set(figures) == set(promql.UNITS)


def test_a_workload_identity_annotates_the_account_and_labels_every_pod_not_the_selector() -> None:
    from infra.k8s.build_job import (
        BuildJobSpec,
        StoreCopy,
        build_job,
        build_service_account,
    )

    identity = WorkloadIdentity({"identity.example/client": "c-1"}, {"identity.example/use": "1"})
    builder = WorkloadIdentity({"identity.example/client": "b-1"}, {"identity.example/use": "1"})
    spec = make_spec(identity=identity, builder=builder)
    account = manifests.service_account(spec)
    assert account["metadata"]["annotations"] == {"identity.example/client": "c-1"}
    deployment = manifests.deployment(spec)
    assert deployment["spec"]["template"]["metadata"]["labels"]["identity.example/use"] == "1"
    assert "identity.example/use" not in deployment["spec"]["selector"]["matchLabels"]
    assert "identity.example/use" not in deployment["metadata"]["labels"]
    copy = StoreCopy("cli", ["fetch"], ["upload"])
    job = build_job(BuildJobSpec("build-1", spec, "nvcr.io/nvidia/tensorrt:25.01-py3", copy, 60))
    assert job["spec"]["template"]["metadata"]["labels"]["identity.example/use"] == "1"
    # the Job runs as the build's own ServiceAccount, bound to the builder identity
    assert job["spec"]["template"]["spec"]["serviceAccountName"] == spec.build_service_account
    build_account = build_service_account(spec)
    assert build_account["metadata"]["name"] == spec.build_service_account != spec.name
    assert build_account["metadata"]["annotations"] == {"identity.example/client": "b-1"}
    assert (
        "identity.example/use"
        not in manifests.deployment(make_spec())["spec"]["template"]["metadata"]["labels"]
    )
