"""The real program under mocks with Pulumi.gke-dev.yaml, and the gke config checks."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from infra.clouds.gcp import versions as gke_versions
from infra.facts import kubernetes as kf
from infra.k8s import promql
from infra.k8s.alerts import alert_rules
from tdk.errors import ConfigError
from tests.infra.gcs_conditions import condition_allows
from tests.infra.pulumi_harness import StackRun, run_stack

# The query's meaning is proven against a real Prometheus scraping a real Triton
# (tests/prom/test_live.py); here only that the stack deploys that query.
EXPECTED_RATIO = promql.queue_compute_ratio("triton", "tdk-gke-dev")


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


def test_gpu_pool_has_accelerator_driver_autoscaling_to_zero(gke: StackRun) -> None:
    pools = {r.name: r.inputs for r in gke.of_type("gcp:container/nodePool:NodePool")}
    gpu = pools["tdk-gke-dev-gpu"]
    (accelerator,) = gpu["nodeConfig"]["guestAccelerators"]
    assert accelerator["type"] == "nvidia-l4"
    assert accelerator["gpuDriverInstallationConfig"] == {"gpuDriverVersion": "LATEST"}
    assert gpu["nodeConfig"]["machineType"] == "g2-standard-8"
    assert gpu["autoscaling"]["totalMinNodeCount"] == 0
    assert gpu["initialNodeCount"] == 0
    assert gpu["autoscaling"]["totalMaxNodeCount"] == 2
    assert gpu["nodeConfig"]["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}


def test_gpu_taint_is_left_to_gke_and_tolerated_by_triton(gke: StackRun) -> None:
    """GKE taints GPU nodes nvidia.com/gpu=present:NoSchedule itself once a non-GPU pool
    exists; a second declaration of that key fails the pool. Pods keep the toleration."""
    pools = {r.name: r for r in gke.of_type("gcp:container/nodePool:NodePool")}
    gpu, system = pools["tdk-gke-dev-gpu"], pools["tdk-gke-dev-system"]
    assert not gpu.inputs["nodeConfig"].get("taints")
    assert not system.inputs["nodeConfig"].get("taints")
    assert system.options.urn in gpu.options.dependencies
    pod = gke.one("kubernetes:apps/v1:Deployment").inputs["spec"]["template"]["spec"]
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in pod[
        "tolerations"
    ]


def test_spot_is_configurable() -> None:

    run = run_stack("gke-dev", overrides={"gkeSpot": True})
    pools = {r.name: r.inputs for r in run.of_type("gcp:container/nodePool:NodePool")}
    assert pools["tdk-gke-dev-gpu"]["nodeConfig"]["spot"] is True


TRITON = "serviceAccount:tdk-gke-dev-triton@my-gcp-project.iam.gserviceaccount.com"
BUILDER = "serviceAccount:tdk-gke-dev-build@my-gcp-project.iam.gserviceaccount.com"
OBJECTS = "projects/_/buckets/my-tdk-releases/objects/"


def _granted(gke: StackRun, member: str) -> list[dict[str, Any]]:
    members = gke.of_type("gcp:storage/bucketIAMMember:BucketIAMMember")
    return [m.inputs for m in members if m.inputs["member"] == member]


def _may(grants: list[dict[str, Any]], permission: str, resource: str) -> bool:
    """Whether one of ``grants`` (bucket IAM members) gives ``permission`` on ``resource``."""
    return any(
        permission in ROLE_PERMISSIONS[g["role"]]
        and ("condition" not in g or condition_allows(g["condition"]["expression"], resource))
        for g in grants
    )


def test_triton_identity_reads_only_the_release_prefix_without_keys(gke: StackRun) -> None:
    assert not [r for r in gke.resources if r.type.endswith("serviceAccount/key:Key")]
    members = {r.name: r for r in gke.of_type("gcp:storage/bucketIAMMember:BucketIAMMember")}
    assert set(members) == {
        "tdk-gke-dev-release-release-read",
        "tdk-gke-dev-release-bucket-metadata",
        "tdk-gke-dev-engines-engine-cache-write",
        "tdk-gke-dev-engines-bucket-metadata",
    }
    read = members["tdk-gke-dev-release-release-read"]
    assert read.inputs["bucket"] == "my-tdk-releases"
    assert read.inputs["role"] == "roles/storage.objectViewer"
    expression = read.inputs["condition"]["expression"]
    assert 'startsWith("projects/_/buckets/my-tdk-releases/objects/releases/v1/")' in expression
    assert read.inputs["member"] == TRITON
    metadata = members["tdk-gke-dev-release-bucket-metadata"].inputs
    assert metadata["member"] == read.inputs["member"]
    bindings = {r.name: r.inputs for r in gke.of_type("gcp:serviceaccount/iAMMember:IAMMember")}
    wi = bindings["tdk-gke-dev-release-wi"]
    assert wi["role"] == "roles/iam.workloadIdentityUser"
    assert wi["member"] == "serviceAccount:my-gcp-project.svc.id.goog[triton/tdk-gke-dev]"
    project_roles = {r.inputs["role"] for r in gke.of_type("gcp:projects/iAMMember:IAMMember")}
    assert not project_roles & {"roles/owner", "roles/editor", "roles/storage.admin"}
    accounts = {r.inputs["metadata"]["name"]: r.inputs for r in gke.of_type(SERVICE_ACCOUNT)}
    email = "tdk-gke-dev-triton@my-gcp-project.iam.gserviceaccount.com"
    annotations = accounts["tdk-gke-dev"]["metadata"]["annotations"]
    assert annotations == {"iam.gke.io/gcp-service-account": email}


SERVICE_ACCOUNT = "kubernetes:core/v1:ServiceAccount"
PLAN = OBJECTS + "releases/v1/engines/abc/cc8.9-tensorrt-10.9/p1/model.plan"
#: the cache's earlier layout: read, never written (packager.tensorrt.engines.LEGACY_PREFIX)
LEGACY = OBJECTS + "releases/v1/plans/abc/cc8.9-tensorrt-10.9/p1/model.plan"


def test_only_the_engine_builder_writes_the_engine_cache(gke: StackRun) -> None:
    """Issue 47 item 5: a serving pod cannot plant an engine. Triton's identity reads the engine
    cache but may create or delete no object anywhere; the build Job's own identity writes
    engines/ and
    nothing else of the release or the bucket."""
    triton, builder = _granted(gke, TRITON), _granted(gke, BUILDER)
    for permission in ("storage.objects.create", "storage.objects.delete"):
        assert not [g for g in triton if permission in ROLE_PERMISSIONS[g["role"]]], permission
        assert _may(builder, permission, PLAN), permission
        for outside in ("releases/v1/repository/m/1/model.onnx", "releases/v1/manifest.json",
                        "releases/v10/engines/abc/model.plan", "other/engines/x",
                        LEGACY.removeprefix(OBJECTS)):  # fmt: skip
            assert not _may(builder, permission, OBJECTS + outside), (permission, outside)
    # the packager and pods still read engines, in both layouts
    assert _may(triton, "storage.objects.get", PLAN) and _may(triton, "storage.objects.get", LEGACY)
    assert _may(builder, "storage.objects.get", PLAN)  # the Job fetches its input/
    assert not _may(builder, "storage.objects.get", OBJECTS + "releases/v1/manifest.json")
    bindings = {r.name: r.inputs for r in gke.of_type("gcp:serviceaccount/iAMMember:IAMMember")}
    wi = bindings["tdk-gke-dev-engines-wi"]
    assert wi["role"] == "roles/iam.workloadIdentityUser"
    assert wi["member"] == "serviceAccount:my-gcp-project.svc.id.goog[triton/tdk-gke-dev-build]"
    accounts = {r.inputs["metadata"]["name"]: r.inputs for r in gke.of_type(SERVICE_ACCOUNT)}
    build = accounts["tdk-gke-dev-build"]
    email = "tdk-gke-dev-build@my-gcp-project.iam.gserviceaccount.com"
    assert build["metadata"]["annotations"] == {"iam.gke.io/gcp-service-account": email}
    assert build["metadata"]["namespace"] == "triton"
    assert gke.outputs["buildServiceAccount"] == email


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
    assert keda["chart"] == "keda" and keda["version"] == "2.21.1"
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
    # every rule the shared alert_rules() returns is deployed, with its exact PromQL
    expected = alert_rules("triton", "tdk-gke-dev", 500, 2.0, 2.0)
    assert {p: c["conditions"][0]["conditionPrometheusQueryLanguage"]["query"]
            for p, c in policies.items()} == {r.name: r.query for r in expected}  # fmt: skip
    assert {"triton-error-rate", "triton-latency-slo", "triton-queue-ratio"} <= set(policies)
    assert "triton-metrics-absent" in policies
    latency = policies["triton-latency-slo"]["conditions"][0]["conditionPrometheusQueryLanguage"]
    assert latency["query"].endswith("> 500")


def test_outputs_name_the_cluster_and_the_invoke_command(gke: StackRun) -> None:
    assert gke.outputs["namespace"] == "triton"
    assert "tdk invoke --target gke --url" in gke.outputs["invokeCommand"]


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


def _waits_for(run: StackRun, resource: Any) -> set[str]:
    """URNs ``resource`` waits for, directly or through what it waits for."""
    by_urn = {r.options.urn: r for r in run.resources}
    seen: set[str] = set()
    todo = list(resource.options.dependencies)
    while todo:
        urn = todo.pop()
        if urn not in seen:
            seen.add(urn)
            if urn in by_urn:
                todo.extend(by_urn[urn].options.dependencies)
    return seen


def test_every_google_api_the_stack_uses_is_enabled_first(gke: StackRun) -> None:
    services = gke.of_type("gcp:projects/service:Service")
    enabled = {s.inputs["service"] for s in services}
    assert enabled >= {
        "container.googleapis.com", "compute.googleapis.com", "iam.googleapis.com",
        "monitoring.googleapis.com", "cloudresourcemanager.googleapis.com",
        "iamcredentials.googleapis.com",
    }  # fmt: skip
    assert all(s.inputs["disableOnDestroy"] is False for s in services)
    service_urns = {s.options.urn for s in services}
    for resource in gke.resources:
        if resource.type.startswith("gcp:") and resource.type != "gcp:projects/service:Service":
            missing = service_urns - _waits_for(gke, resource)
            assert not missing, f"{resource.name} does not wait for {sorted(missing)}"


def _keda_chart(run: StackRun) -> str:
    (keda,) = [
        r for r in run.of_type("kubernetes:helm.sh/v3:Release") if r.inputs["chart"] == "keda"
    ]
    return str(keda.inputs["version"])


def test_the_extended_release_channel_is_accepted() -> None:
    run = run_stack("gke-dev", overrides={"gkeReleaseChannel": "EXTENDED"})
    cluster = run.one("gcp:container/cluster:Cluster").inputs
    assert cluster["releaseChannel"]["channel"] == "EXTENDED"
    assert _keda_chart(run) == gke_versions.keda_for_channel("EXTENDED").version


def test_keda_follows_the_channels_newest_minor(monkeypatch: pytest.MonkeyPatch) -> None:
    """A channel whose newest minor is 1.33 gets the newest chart tested with 1.33."""
    monkeypatch.setitem(gke_versions.GKE_CHANNELS, "STABLE", (31, 33))
    run = run_stack("gke-dev", overrides={"gkeReleaseChannel": "STABLE"})
    assert _keda_chart(run) == "2.20.2" != kf.KEDA_RELEASES[0].version


def test_doctor_warns_when_a_channel_passes_the_charts_tested_range() -> None:
    from infra.targets.gke import doctor

    rapid = doctor.channel_finding("RAPID")  # offers 1.37; KEDA 2.21.1 is tested up to 1.36
    assert rapid.status == "aged" and "1.37" in rapid.note
    # KEDA's own table says its next minor is untested ("v2.22 | TBD", keda.sh, 2026-11-27)
    assert "v2.22: TBD" in rapid.note and "keda.sh/docs/2.22" in rapid.note
    regular = doctor.channel_finding("REGULAR")
    assert regular.status == "unverified"  # the kit's tables only (issue 37)


#: The Cloud Storage permissions of the roles the kit grants on a release bucket
#: (cloud.google.com/iam/docs/roles-permissions/storage, read 2026-12-07; the permissions
#: Triton's reader and the build Job use, not every one of each role).
ROLE_PERMISSIONS = {
    "roles/storage.objectViewer": {"storage.objects.get", "storage.objects.list"},
    "roles/storage.legacyBucketReader": {"storage.buckets.get", "storage.objects.list"},
    "roles/storage.objectUser": {
        "storage.objects.get", "storage.objects.list", "storage.objects.create",
        "storage.objects.delete", "storage.objects.update",
    },
}  # fmt: skip
#: What Triton's GCS reader calls on a gs:// model repository and the permission each needs
#: (triton-inference-server/core src/filesystem/implementations/gcs.h, r26.05 and r26.08, read
#: 2026-12-07): IsDirectory asks GetBucketMetadata first, then ListObjects; files are read.
TRITON_GCS_CALLS = {
    "GetBucketMetadata": "storage.buckets.get",
    "ListObjects": "storage.objects.list",
    "GetObjectMetadata": "storage.objects.get",
    "ReadObject": "storage.objects.get",
}


def test_triton_s_identity_holds_every_permission_its_gcs_reader_calls(gke: StackRun) -> None:
    """Without storage.buckets.get every model directory test fails and Triton serves nothing;
    object content stays readable only under an IAM condition (the release prefix)."""
    members = gke.of_type("gcp:storage/bucketIAMMember:BucketIAMMember")
    triton = "serviceAccount:tdk-gke-dev-triton@my-gcp-project.iam.gserviceaccount.com"
    granted = [m.inputs for m in members if m.inputs["member"] == triton]
    held = set().union(*(ROLE_PERMISSIONS[g["role"]] for g in granted))
    assert {c: p for c, p in TRITON_GCS_CALLS.items() if p not in held} == {}
    unconditioned = [g for g in granted if "condition" not in g]
    assert all("storage.objects.get" not in ROLE_PERMISSIONS[g["role"]] for g in unconditioned)


def test_renamed_engine_builder_keeps_its_deployed_resources(gke: StackRun) -> None:
    """Issue 50 item 3: the component was tdk:gcp:PlanBuilder named <name>-plans before
    2026-12-07; each renamed resource names its former type and name as an alias, so a stack
    deployed before updates in place instead of replacing its service account and grants."""
    component = gke.named("tdk-gke-dev-engines")
    assert component.type == "tdk:gcp:EngineBuilder"
    assert ("tdk:gcp:PlanBuilder", "tdk-gke-dev-plans") in component.options.aliases
    former = {  # the names the code declared before the rename
        "tdk-gke-dev-engines-gsa": "tdk-gke-dev-plans-gsa",
        "tdk-gke-dev-engines-engine-cache-write": "tdk-gke-dev-plans-plan-cache-write",
        "tdk-gke-dev-engines-bucket-metadata": "tdk-gke-dev-plans-bucket-metadata",
        "tdk-gke-dev-engines-wi": "tdk-gke-dev-plans-wi",
    }
    for name, was in former.items():
        assert ("", was) in gke.named(name).options.aliases, name
    children = {r.name for r in gke.resources if r.name.startswith("tdk-gke-dev-engines-")}
    assert children == set(former)  # a new child would have no former name to keep
    # physical names stay as deployed: a new account id or condition title replaces the resource
    account = gke.named("tdk-gke-dev-engines-gsa").inputs
    assert account["accountId"] == "tdk-gke-dev-build"
    condition = gke.named("tdk-gke-dev-engines-engine-cache-write").inputs["condition"]
    assert condition["title"] == "plan-cache-only"
