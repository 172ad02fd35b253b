"""The real program under mocks with Pulumi.eks-dev.yaml, and the eks config checks."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from infra.targets.eks import builders as eks_builders
from tdk.errors import ConfigError
from tests.infra.pulumi_harness import StackRun, run_stack


@pytest.fixture(scope="module")
def eks() -> StackRun:
    return run_stack("eks-dev")


def _roles(run: StackRun) -> dict[str, dict[str, Any]]:
    return {r.name: r.inputs for r in run.of_type("aws:iam/role:Role")}


def _policies(run: StackRun) -> dict[str, dict[str, Any]]:
    return {
        r.name: json.loads(r.inputs["policy"]) for r in run.of_type("aws:iam/rolePolicy:RolePolicy")
    }


def test_cluster_has_oidc_provider_and_api_access_entries(eks: StackRun) -> None:
    cluster = eks.one("aws:eks/cluster:Cluster").inputs
    assert cluster["version"] == "1.33"
    assert cluster["accessConfig"]["authenticationMode"] == "API"
    assert cluster["vpcConfig"]["endpointPrivateAccess"] is True
    oidc = eks.one("aws:iam/openIdConnectProvider:OpenIdConnectProvider").inputs
    assert oidc["clientIdLists"] == ["sts.amazonaws.com"]


def test_gpu_node_group_uses_nvidia_ami_bounds_and_taint(eks: StackRun) -> None:
    groups = {r.name: r.inputs for r in eks.of_type("aws:eks/nodeGroup:NodeGroup")}
    gpu = groups["tdk-eks-dev-gpu"]
    assert gpu["amiType"] == "AL2023_x86_64_NVIDIA"
    assert gpu["instanceTypes"] == ["g5.xlarge"]
    assert gpu["scalingConfig"]["minSize"] == 0 and gpu["scalingConfig"]["maxSize"] == 2
    assert gpu["taints"] == [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}]
    assert gpu["labels"]["triton-deploy-kit/pool"] == "gpu"
    assert gpu["capacityType"] == "ON_DEMAND"
    assert "taints" not in groups["tdk-eks-dev-system"]


def test_device_plugin_autoscaler_and_keda_are_pinned_helm_charts(eks: StackRun) -> None:
    charts = {r.inputs["chart"]: r.inputs for r in eks.of_type("kubernetes:helm.sh/v3:Release")}
    assert charts["nvidia-device-plugin"]["version"] == eks_builders.DEVICE_PLUGIN_VERSION
    assert charts["cluster-autoscaler"]["version"] == eks_builders.AUTOSCALER_VERSION
    assert charts["keda"]["version"] == "2.16.1"
    plugin = charts["nvidia-device-plugin"]["values"]
    assert plugin["tolerations"][0]["key"] == "nvidia.com/gpu"
    assert charts["keda"]["values"]["podIdentity"]["aws"]["irsa"]["enabled"] is True


def test_triton_role_is_irsa_only_and_reads_only_the_release_prefix(eks: StackRun) -> None:
    assert not eks.of_type("aws:iam/accessKey:AccessKey")
    role = _roles(eks)["tdk-eks-dev-release-reader"]
    assert role["name"] == "tdk-eks-dev-triton-release-reader"
    (trust,) = json.loads(role["assumeRolePolicy"])["Statement"]
    assert trust["Action"] == "sts:AssumeRoleWithWebIdentity"
    conditions = trust["Condition"]["StringEquals"]
    subjects = [v for k, v in conditions.items() if k.endswith(":sub")]
    assert subjects == ["system:serviceaccount:triton:tdk-eks-dev"]
    statements = _policies(eks)["tdk-eks-dev-release-read"]["Statement"]
    get = next(s for s in statements if s["Action"] == "s3:GetObject")
    assert get["Resource"] == "arn:aws:s3:::my-tdk-releases/releases/v1/*"
    listing = next(s for s in statements if s["Action"] == "s3:ListBucket")
    assert listing["Condition"]["StringLike"]["s3:prefix"][0] == "releases/v1/*"
    for statement in statements:
        assert statement["Resource"] != "*" and "s3:*" not in str(statement["Action"])


def test_keda_may_only_query_the_workspace(eks: StackRun) -> None:
    (statement,) = _policies(eks)["tdk-eks-dev-keda-amp-query"]["Statement"]
    assert all(
        action.startswith("aps:") and "Remote" not in action for action in statement["Action"]
    )
    assert statement["Resource"].endswith("workspace/tdk-eks-dev-monitoring-amp")


def test_workload_scales_on_amp_with_sigv4_and_serves_the_release(eks: StackRun) -> None:
    scaled = eks.one("kubernetes:keda.sh/v1alpha1:ScaledObject").inputs["spec"]
    (trigger,) = scaled["triggers"]
    assert trigger["metadata"]["awsRegion"] == "us-east-1"
    assert trigger["metadata"]["serverAddress"].startswith(
        "https://aps-workspaces.us-east-1.amazonaws.com/workspaces/"
    )
    assert "nv_inference_queue_duration_us" in trigger["metadata"]["query"]
    auth = eks.one("kubernetes:keda.sh/v1alpha1:TriggerAuthentication").inputs
    assert auth["spec"] == {"podIdentity": {"provider": "aws"}}
    pod = eks.one("kubernetes:apps/v1:Deployment").inputs["spec"]["template"]["spec"]
    triton = pod["containers"][0]
    assert "--model-repository=s3://my-tdk-releases/releases/v1/repository" in triton["args"]
    assert {"name": "AWS_REGION", "value": "us-east-1"} in triton["env"]
    assert triton["resources"]["limits"]["nvidia.com/gpu"] == 1
    sa = eks.one("kubernetes:core/v1:ServiceAccount").inputs
    assert "eks.amazonaws.com/role-arn" in sa["metadata"]["annotations"]
    assert not eks.of_type("kubernetes:monitoring.googleapis.com/v1:PodMonitoring")


def test_monitoring_amp_scraper_rules_cloudwatch_dashboard_and_alarms(eks: StackRun) -> None:
    scraper = eks.one("aws:amp/scraper:Scraper").inputs
    scrape = yaml.safe_load(scraper["scrapeConfiguration"])
    relabels = scrape["scrape_configs"][0]["relabel_configs"]
    assert {
        "source_labels": ["__meta_kubernetes_namespace"],
        "target_label": "namespace",
    } in relabels
    rules = yaml.safe_load(eks.one("aws:amp/ruleGroupNamespace:RuleGroupNamespace").inputs["data"])
    names = {rule["alert"] for rule in rules["groups"][0]["rules"]}
    assert names == {"triton-error-rate", "triton-latency-slo", "triton-queue-ratio"}
    assert eks.one("aws:eks/accessEntry:AccessEntry").inputs["userName"] == "aps-collector-user"
    addon = eks.one("aws:eks/addon:Addon").inputs
    assert addon["addonName"] == "amazon-cloudwatch-observability"
    body = json.loads(eks.one("aws:cloudwatch/dashboard:Dashboard").inputs["dashboardBody"])
    titles = [w["properties"].get("title") for w in body["widgets"]]
    assert "GPU utilization (%)" in titles and "Triton pods running (replicas)" in titles
    alarms = {
        r.inputs["name"]: r.inputs for r in eks.of_type("aws:cloudwatch/metricAlarm:MetricAlarm")
    }
    assert alarms["tdk-eks-dev-triton-pods-below-minimum"]["threshold"] == 1
    assert all(alarm["alarmActions"] for alarm in alarms.values())


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"eksGpuInstanceType": "inf2.xlarge"}, "Inferentia2: no CUDA"),
        ({"eksGpuInstanceType": "g5g.xlarge"}, "Graviton"),
        ({"eksGpuInstanceType": "m5.large"}, "valid choices: g4dn.*, g5.*, g6.*"),
        ({"eksGpuNodesMin": 4, "eksGpuNodesMax": 2}, "eksGpuNodesMin (4) is greater than"),
        ({"releaseUrl": "gs://bucket/releases/v1"}, "scheme must be one of s3://"),
        ({"k8sGpusPerPod": 2}, "exceeds the 1 GPU(s) of g5.xlarge"),
        ({"eksAvailabilityZones": "us-west-2a,us-west-2b"}, "2 or 3 zones of us-east-1"),
        ({"eksKubernetesVersion": "1.20"}, "valid choices: 1.31"),
        ({"k8sQueueRatioTarget": "fast"}, "must be a number"),
    ],
)
def test_bad_config_fails_before_any_resource(
    stack_runner: Callable[..., StackRun], overrides: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        stack_runner("eks-dev", overrides=overrides)
    assert message in str(caught.value)


def test_multi_gpu_instances_allow_more_gpus_per_pod() -> None:
    run = run_stack("eks-dev", overrides={"eksGpuInstanceType": "g5.12xlarge", "k8sGpusPerPod": 4})
    pod = run.one("kubernetes:apps/v1:Deployment").inputs["spec"]["template"]["spec"]
    assert pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == 4
