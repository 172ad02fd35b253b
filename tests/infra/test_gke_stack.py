"""The real program under mocks with Pulumi.gke-dev.yaml, and the gke config checks."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tdk.errors import ConfigError
from tests.infra.pulumi_harness import StackRun, run_stack

EXPECTED_RATIO = (
    '((sum(rate(nv_inference_queue_duration_us{namespace="triton",job="tdk-gke-dev"}[2m])))'
    ' / clamp_min(sum(rate(nv_inference_compute_infer_duration_us{namespace="triton",'
    'job="tdk-gke-dev"}[2m])), 1)) or vector(0)'
)


@pytest.fixture(scope="module")
def gke() -> StackRun:

    return run_stack("gke-dev")


def test_cluster_is_private_with_workload_identity_and_managed_prometheus(gke: StackRun) -> None:
    cluster = gke.one("gcp:container/cluster:Cluster").inputs
    assert cluster["workloadIdentityConfig"] == {"workloadPool": "my-gcp-project.svc.id.goog"}
    assert cluster["privateClusterConfig"]["enablePrivateNodes"] is True
    assert cluster["removeDefaultNodePool"] is True
    assert cluster["monitoringConfig"]["managedPrometheus"] == {"enabled": True}
    assert gke.one("gcp:compute/routerNat:RouterNat")  # private nodes pull images through NAT


def test_gpu_pool_has_accelerator_driver_autoscaling_to_zero_and_taint(gke: StackRun) -> None:
    pools = {r.name: r.inputs for r in gke.of_type("gcp:container/nodePool:NodePool")}
    gpu = pools["tdk-gke-dev-gpu"]
    (accelerator,) = gpu["nodeConfig"]["guestAccelerators"]
    assert accelerator["type"] == "nvidia-l4"
    assert accelerator["gpuDriverInstallationConfig"] == {"gpuDriverVersion": "LATEST"}
    assert gpu["nodeConfig"]["machineType"] == "g2-standard-8"
    assert gpu["autoscaling"]["totalMinNodeCount"] == 0
    assert gpu["initialNodeCount"] == 0
    assert gpu["autoscaling"]["totalMaxNodeCount"] == 2
    assert gpu["nodeConfig"]["taints"] == [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}
    ]
    assert gpu["nodeConfig"]["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}
    assert "taints" not in pools["tdk-gke-dev-system"]["nodeConfig"]


def test_spot_is_configurable() -> None:

    run = run_stack("gke-dev", overrides={"gkeSpot": True})
    pools = {r.name: r.inputs for r in run.of_type("gcp:container/nodePool:NodePool")}
    assert pools["tdk-gke-dev-gpu"]["nodeConfig"]["spot"] is True


def test_triton_identity_reads_only_the_release_prefix_without_keys(gke: StackRun) -> None:
    assert not [r for r in gke.resources if r.type.endswith("serviceAccount/key:Key")]
    (read,) = gke.of_type("gcp:storage/bucketIAMMember:BucketIAMMember")
    assert read.inputs["bucket"] == "my-tdk-releases"
    assert read.inputs["role"] == "roles/storage.objectViewer"
    expression = read.inputs["condition"]["expression"]
    assert 'startsWith("projects/_/buckets/my-tdk-releases/objects/releases/v1/")' in expression
    assert read.inputs["member"] == (
        "serviceAccount:tdk-gke-dev-triton@my-gcp-project.iam.gserviceaccount.com"
    )
    bindings = {r.name: r.inputs for r in gke.of_type("gcp:serviceaccount/iAMMember:IAMMember")}
    wi = bindings["tdk-gke-dev-release-wi"]
    assert wi["role"] == "roles/iam.workloadIdentityUser"
    assert wi["member"] == "serviceAccount:my-gcp-project.svc.id.goog[triton/tdk-gke-dev]"
    project_roles = {r.inputs["role"] for r in gke.of_type("gcp:projects/iAMMember:IAMMember")}
    assert not project_roles & {"roles/owner", "roles/editor", "roles/storage.admin"}
    sa = gke.one("kubernetes:core/v1:ServiceAccount").inputs
    email = "tdk-gke-dev-triton@my-gcp-project.iam.gserviceaccount.com"
    assert sa["metadata"]["annotations"] == {"iam.gke.io/gcp-service-account": email}


def test_deployment_has_gpu_limit_toleration_probes(gke: StackRun) -> None:
    deployment = gke.one("kubernetes:apps/v1:Deployment").inputs
    pod = deployment["spec"]["template"]["spec"]
    triton = pod["containers"][0]
    assert triton["resources"]["limits"]["nvidia.com/gpu"] == 1
    assert pod["tolerations"][0]["key"] == "nvidia.com/gpu"
    assert triton["readinessProbe"]["httpGet"]["path"] == "/v2/health/ready"
    assert "--model-repository=gs://my-tdk-releases/releases/v1/repository" in triton["args"]
    assert gke.one("kubernetes:core/v1:Service").inputs["spec"]["type"] == "ClusterIP"
    assert gke.one("kubernetes:policy/v1:PodDisruptionBudget")


def test_keda_is_pinned_and_scales_on_the_exact_ratio(gke: StackRun) -> None:
    keda = gke.one("kubernetes:helm.sh/v3:Release").inputs
    assert keda["chart"] == "keda" and keda["version"] == "2.16.1"
    identity = keda["values"]["podIdentity"]["gcp"]["gcpIAMServiceAccount"]
    assert identity == "tdk-gke-dev-keda@my-gcp-project.iam.gserviceaccount.com"
    scaled = gke.one("kubernetes:keda.sh/v1alpha1:ScaledObject").inputs["spec"]
    (trigger,) = scaled["triggers"]
    assert trigger["metadata"]["query"] == EXPECTED_RATIO
    assert trigger["metadata"]["serverAddress"].endswith(
        "/projects/my-gcp-project/location/global/prometheus"
    )
    assert (scaled["minReplicaCount"], scaled["maxReplicaCount"]) == (1, 2)


def test_monitoring_dashboard_and_alert_policies(gke: StackRun) -> None:
    assert gke.one("kubernetes:monitoring.googleapis.com/v1:PodMonitoring")
    dashboard = json.loads(gke.one("gcp:monitoring/dashboard:Dashboard").inputs["dashboardJson"])
    titles = [tile["widget"]["title"] for tile in dashboard["mosaicLayout"]["tiles"]]
    assert titles == [
        "Requests / s",
        "p99 latency (ms)",
        "Queue / compute ratio",
        "Error ratio",
        "GPU utilization",
        "Replicas",
    ]
    policies = {
        r.inputs["displayName"]: r.inputs
        for r in gke.of_type("gcp:monitoring/alertPolicy:AlertPolicy")
    }
    assert set(policies) == {"triton-error-rate", "triton-latency-slo", "triton-queue-ratio"}
    latency = policies["triton-latency-slo"]["conditions"][0]["conditionPrometheusQueryLanguage"]
    assert latency["query"].endswith("> 500")


def test_outputs_name_the_cluster_and_the_invoke_command(gke: StackRun) -> None:
    assert gke.outputs["namespace"] == "triton"
    assert "tdk invoke --target k8s" in gke.outputs["invokeCommand"]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"gkeGpuType": "nvidia-tesla-k80"}, "retired by Google Cloud"),
        ({"gkeGpuType": "nvidia-b300"}, "valid choices: nvidia-tesla-t4, nvidia-l4"),
        ({"gkeMachineType": "n1-standard-8"}, "attaches only to g2-* machine types"),
        ({"gkeGpuNodesMin": 3, "gkeGpuNodesMax": 2}, "gkeGpuNodesMin (3) is greater than"),
        ({"k8sMinReplicas": 5, "k8sMaxReplicas": 2}, "k8sMinReplicas (5) is greater than"),
        ({"releaseUrl": "s3://bucket/releases/v1"}, "scheme must be one of gs://"),
        ({"releaseUrl": ""}, "serves an existing release"),
        ({"k8sWorkloadKind": "tpu"}, "valid choices: gpu, cpu"),
        ({"k8sGpusPerPod": 2}, "exceeds triton-deploy-kit:gkeGpusPerNode"),
        ({"k8sNamespace": "Triton_NS"}, "k8sNamespace is 'Triton_NS'"),
    ],
)
def test_bad_config_fails_before_any_resource(
    stack_runner: Callable[..., StackRun], overrides: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        stack_runner("gke-dev", overrides=overrides)
    assert message in str(caught.value)


def test_cpu_workload_rides_on_gpu_nodes_spare_cpus() -> None:
    run = run_stack("gke-dev", overrides={"k8sWorkloadKind": "cpu"})
    pod = run.one("kubernetes:apps/v1:Deployment").inputs["spec"]["template"]["spec"]
    assert "nvidia.com/gpu" not in pod["containers"][0]["resources"]["limits"]
    assert "nodeSelector" not in pod
    preferred = pod["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert preferred[0]["preference"]["matchExpressions"][0]["values"] == ["gpu"]
    assert pod["tolerations"][0]["key"] == "nvidia.com/gpu"
    assert "--allow-gpu-metrics=false" in pod["containers"][0]["args"]
