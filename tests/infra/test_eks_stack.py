"""The real program under mocks with Pulumi.eks-dev.yaml, and the eks config checks."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import yaml

from infra.clouds.aws.identity import IRSA_ANNOTATION
from infra.facts import kubernetes as kf
from infra.k8s.alerts import alert_rules
from infra.targets.eks import builders as eks_builders
from tdk.errors import ConfigError
from tests.infra.pulumi_harness import StackRun, run_stack

TODAY = "2026-11-24"  # the day the facts tables were checked; tests replay this calendar


@pytest.fixture(autouse=True)
def _today(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TDK_TODAY", TODAY)


@pytest.fixture(scope="module")
def eks() -> Iterator[StackRun]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TDK_TODAY", TODAY)
        yield run_stack("eks-dev")


def _roles(run: StackRun) -> dict[str, dict[str, Any]]:
    return {r.name: r.inputs for r in run.of_type("aws:iam/role:Role")}


def _policies(run: StackRun) -> dict[str, dict[str, Any]]:
    return {
        r.name: json.loads(r.inputs["policy"]) for r in run.of_type("aws:iam/rolePolicy:RolePolicy")
    }


def test_cluster_has_oidc_provider_and_api_access_entries(eks: StackRun) -> None:
    cluster = eks.one("aws:eks/cluster:Cluster").inputs
    assert cluster["version"] == "1.36"  # newest in standard support for 60+ days
    assert cluster["upgradePolicy"] == {"supportType": "STANDARD"}
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
    assert charts["nvidia-device-plugin"]["version"] == "0.20.0"
    assert charts["cluster-autoscaler"]["version"] == "9.59.0"
    assert charts["keda"]["version"] == "2.21.1"  # keda.sh: 2.21 supports 1.34-1.36
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


BUCKET = "arn:aws:s3:::my-tdk-releases/"
PLAN = BUCKET + "releases/v1/engines/abc/cc8.9-tensorrt-10.9/p1/model.plan"
#: the cache's earlier layout: read, never written (packager.tensorrt.engines.LEGACY_PREFIX)
LEGACY = BUCKET + "releases/v1/plans/abc/cc8.9-tensorrt-10.9/p1/model.plan"


def _permits(policy: dict[str, Any], action: str, resource: str = "*", **context: str) -> bool:
    """moto's IAM policy evaluator (the one its server enforces requests with)."""
    from moto.iam.access_control import IAMPolicy, PermissionResult

    answer = IAMPolicy(json.dumps(policy)).is_action_permitted(
        action, resource, incoming_condition_values=context or None
    )
    return answer == PermissionResult.PERMITTED


def test_only_the_engine_builder_writes_the_engine_cache(eks: StackRun) -> None:
    """Issue 47 item 5: a serving pod cannot plant an engine. Triton's role reads the engine
    cache and writes nothing; the build Job's own role (its own ServiceAccount) writes engines/
    only."""
    policies = _policies(eks)
    triton, builder = policies["tdk-eks-dev-release-read"], policies["tdk-eks-dev-engine-build"]
    for write in ("s3:PutObject", "s3:DeleteObject"):
        assert not _permits(triton, write, PLAN), write
    assert _permits(triton, "s3:GetObject", PLAN) and _permits(triton, "s3:GetObject", LEGACY)
    assert _permits(builder, "s3:PutObject", PLAN) and _permits(builder, "s3:GetObject", PLAN)
    for outside in ("releases/v1/repository/m/1/model.onnx", "releases/v1/manifest.json",
                    "releases/v10/engines/abc/model.plan", "other/engines/x",
                    LEGACY.removeprefix(BUCKET)):  # fmt: skip
        for action in ("s3:PutObject", "s3:GetObject", "s3:DeleteObject"):
            assert not _permits(builder, action, BUCKET + outside), (action, outside)
    [listing] = [s for s in builder["Statement"] if s["Action"] == "s3:ListBucket"]
    assert listing["Condition"] == {"StringLike": {"s3:prefix": ["releases/v1/engines/*"]}}
    # each role is assumed by its own ServiceAccount only (moto evaluates StringEquals)
    roles = _roles(eks)
    role = roles["tdk-eks-dev-engine-builder"]
    assert role["name"] == "tdk-eks-dev-plan-builder"
    trust = json.loads(role["assumeRolePolicy"])
    [sub] = [k for k in trust["Statement"][0]["Condition"]["StringEquals"] if k.endswith(":sub")]
    aud = sub.replace(":sub", ":aud")
    assume = "sts:AssumeRoleWithWebIdentity"
    build_sa = {sub: "system:serviceaccount:triton:tdk-eks-dev-build", aud: "sts.amazonaws.com"}
    triton_sa = {**build_sa, sub: "system:serviceaccount:triton:tdk-eks-dev"}
    assert _permits(trust, assume, **build_sa) and not _permits(trust, assume, **triton_sa)
    reader = json.loads(roles["tdk-eks-dev-release-reader"]["assumeRolePolicy"])
    assert _permits(reader, assume, **triton_sa) and not _permits(reader, assume, **build_sa)
    accounts = {
        r.inputs["metadata"]["name"]: r.inputs["metadata"]
        for r in eks.of_type("kubernetes:core/v1:ServiceAccount")
    }
    annotation = accounts["tdk-eks-dev-build"]["annotations"]
    assert list(annotation) == [IRSA_ANNOTATION]
    assert accounts["tdk-eks-dev"]["annotations"] != annotation


def test_keda_may_only_query_the_workspace(eks: StackRun) -> None:
    (statement,) = _policies(eks)["tdk-eks-dev-keda-amp-query"]["Statement"]
    assert all(
        action.startswith("aps:") and "Remote" not in action for action in statement["Action"]
    )
    assert statement["Resource"].endswith("workspace/tdk-eks-dev-monitoring-amp")


def test_keda_starts_once_it_may_query_the_workspace(eks: StackRun) -> None:
    """Its first scaling query would be refused (403) before the query policy exists."""
    [policy] = [r for r in eks.of_type("aws:iam/rolePolicy:RolePolicy")
                if r.name == "tdk-eks-dev-keda-amp-query"]  # fmt: skip
    [keda] = [r for r in eks.of_type("kubernetes:helm.sh/v3:Release")
              if r.inputs.get("chart") == "keda"]  # fmt: skip
    assert policy.options.urn in keda.options.dependencies


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
    assert "--model-repository=/models" in triton["args"]
    assert {"name": "AWS_REGION", "value": "us-east-1"} in triton["env"]
    assert triton["resources"]["limits"]["nvidia.com/gpu"] == 1
    sa = eks.named("tdk-eks-dev-triton-sa").inputs
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
    # every rule the shared alert_rules() returns is deployed, with its exact PromQL
    deployed = {rule["alert"]: rule["expr"] for rule in rules["groups"][0]["rules"]}
    expected = alert_rules("triton", "tdk-eks-dev", 500, 2.0, 2.0)
    assert deployed == {rule.name: rule.query for rule in expected}
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
        ({"eksGpuInstanceType": "m5.large"}, "supported families: g4dn.<size>, g5.<size>"),
        ({"eksGpuNodesMin": 4, "eksGpuNodesMax": 2}, "eksGpuNodesMin (4) is greater than"),
        ({"releaseUrl": "gs://bucket/releases/v1"}, "scheme must be one of s3://"),
        ({"k8sGpusPerPod": 2}, "exceeds the 1 GPU(s) of g5.xlarge"),
        # one hardware table: p5.4xlarge has 1 H100 (eks/builders.py used to say 8)
        ({"eksGpuInstanceType": "p5.4xlarge", "k8sGpusPerPod": 2}, "exceeds the 1 GPU(s)"),
        ({"eksGpuInstanceType": "g5.3xlarge"}, "g5 has no size '3xlarge'"),
        ({"eksAvailabilityZones": "us-west-2a,us-west-2b"}, "2 or 3 zones of us-east-1"),
        ({"eksKubernetesVersion": "1.20"}, "valid choices: 1.31"),
        ({"eksKubernetesVersion": "1.33"}, "extended support"),
        ({"eksKubernetesVersion": "1.33"}, "about $365 more a month"),
        ({"eksKubernetesVersion": "1.36", "k8sKedaChartVersion": "2.16.1"}, "does not support"),
        ({"eksSupportType": "SOMETIMES"}, "valid choices: STANDARD"),
        ({"k8sQueueRatioTarget": "fast"}, "must be a number"),
    ],
)
def test_bad_config_fails_before_any_resource(
    stack_runner: Callable[..., StackRun], overrides: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        stack_runner("eks-dev", overrides=overrides)
    assert message in str(caught.value)


@pytest.mark.parametrize(("instance", "gpus"), [("p5.48xlarge", 8), ("p6-b200.48xlarge", 8),
                                               ("g7e.24xlarge", 4)])  # fmt: skip
def test_the_hardware_tables_gpu_count_bounds_gpus_per_pod(instance: str, gpus: int) -> None:
    run = run_stack("eks-dev", overrides={"eksGpuInstanceType": instance, "k8sGpusPerPod": gpus})
    pod = run.one("kubernetes:apps/v1:Deployment").inputs["spec"]["template"]["spec"]
    assert pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == gpus


def test_multi_gpu_instances_allow_more_gpus_per_pod() -> None:
    run = run_stack("eks-dev", overrides={"eksGpuInstanceType": "g5.12xlarge", "k8sGpusPerPod": 4})
    pod = run.one("kubernetes:apps/v1:Deployment").inputs["spec"]["template"]["spec"]
    assert pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == 4


@pytest.mark.parametrize("system_max", [1, 2, 3])
def test_system_group_desired_size_stays_within_its_bounds(system_max: int) -> None:
    """CreateNodegroup rejects desired outside min..max (desired 2 with max 1 used to fail)."""
    run = run_stack("eks-dev", overrides={"eksSystemNodesMax": system_max})
    scaling = run.named("tdk-eks-dev-system").inputs["scalingConfig"]
    assert scaling["minSize"] <= scaling["desiredSize"] <= scaling["maxSize"] == system_max


def test_pulumi_up_never_resets_the_autoscaled_desired_sizes(eks: StackRun) -> None:
    for group in eks.of_type("aws:eks/nodeGroup:NodeGroup"):
        assert "scalingConfig.desiredSize" in group.options.ignore_changes, group.name


@pytest.mark.parametrize(
    ("instance", "accelerator"),
    [("g4dn.xlarge", "nvidia-tesla-t4"), ("g5.xlarge", "nvidia-a10g"), ("g6.xlarge", "nvidia-l4")],
)
def test_gpu_nodes_carry_the_cluster_autoscaler_gpu_label(instance: str, accelerator: str) -> None:
    run = run_stack("eks-dev", overrides={"eksGpuInstanceType": instance})
    labels = run.named("tdk-eks-dev-gpu").inputs["labels"]
    assert labels["k8s.amazonaws.com/accelerator"] == accelerator


def test_every_gpu_family_has_an_accelerator_label() -> None:
    assert set(eks_builders.ACCELERATOR_OF_FAMILY) == set(eks_builders.GPU_FAMILIES)


@pytest.mark.parametrize("version", ["1.31", "1.32", "1.33", "1.34", "1.35", "1.36"])
def test_addons_follow_the_kubernetes_minor(version: str) -> None:
    """Autoscaler image minor = cluster minor; KEDA's compatibility range holds the minor."""
    run = run_stack(
        "eks-dev",
        overrides={"eksKubernetesVersion": version, "eksSupportType": "EXTENDED"},
    )
    charts = {r.inputs["chart"]: r.inputs for r in run.of_type("kubernetes:helm.sh/v3:Release")}
    tag = charts["cluster-autoscaler"]["values"]["image"]["tag"]
    assert tag.startswith(f"v{version}."), tag
    keda = kf.keda_pin(charts["keda"]["version"])
    assert keda is not None and keda.supports(kf.minor(version))
    assert run.one("aws:eks/cluster:Cluster").inputs["upgradePolicy"]["supportType"] == "EXTENDED"


def test_default_version_moves_with_the_calendar(monkeypatch: pytest.MonkeyPatch) -> None:
    """On 2026-06-01 1.36 is not released yet: the default is 1.35 (standard until 2027-03)."""
    monkeypatch.setenv("TDK_TODAY", "2026-06-01")
    run = run_stack("eks-dev")
    assert run.one("aws:eks/cluster:Cluster").inputs["version"] == "1.35"
    monkeypatch.setenv("TDK_TODAY", "2027-06-15")  # 1.36 ends standard support 2027-08-02
    with pytest.raises(ConfigError, match="stays in standard support"):
        run_stack("eks-dev")


def test_a_version_past_extended_support_is_not_offered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TDK_TODAY", "2026-11-27")  # 1.31 extended support ended 2026-11-26
    with pytest.raises(ConfigError, match="not supported"):
        run_stack(
            "eks-dev", overrides={"eksKubernetesVersion": "1.31", "eksSupportType": "EXTENDED"}
        )


def test_triton_deployment_waits_for_a_gpu_node_from_zero_and_the_startup_budget() -> None:
    """pulumi-kubernetes fails a Deployment not Ready after 10 minutes unless customTimeouts
    say otherwise; a pool at zero needs a node first (15 min budget), then the pod's budget."""
    run = run_stack("eks-dev", overrides={"k8sStartupBudgetSeconds": 1800})
    options = run.one("kubernetes:apps/v1:Deployment").options
    assert options.create_timeout == options.update_timeout == f"{900 + 1800}s"


def test_amp_scraper_follows_the_documented_managed_collector_setup(eks: StackRun) -> None:
    """AMP creates the scraper's access entry itself (a second one is a 409 on create); the
    scraper's ENIs sit in the cluster's private subnets with the cluster security group, which
    reaches Triton's metrics port on the nodes; the stack grants only the RBAC."""
    assert not eks.of_type("aws:eks/accessEntry:AccessEntry")
    source = eks.one("aws:amp/scraper:Scraper").inputs["source"]["eks"]
    assert source["securityGroupIds"] == ["sg-eks-cluster"]
    assert len(source["subnetIds"]) >= 2
    cluster = eks.one("aws:eks/cluster:Cluster").inputs["vpcConfig"]
    assert cluster["endpointPrivateAccess"] is True  # AMP requires private endpoint access
    binding = eks.one("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding").inputs
    assert binding["subjects"][0]["name"] == "aps-collector-user"


def test_release_is_copied_into_the_pod_by_the_aws_cli_not_read_by_triton(eks: StackRun) -> None:
    """Triton 24.09's S3 client calls HeadBucket (needs s3:ListBucket without a prefix, which
    the release-scoped role lacks) and Triton does not document IRSA; the AWS CLI init
    container syncs <release>/repository as the pod's IRSA role, Triton loads local files."""
    pod = eks.one("kubernetes:apps/v1:Deployment").inputs["spec"]["template"]["spec"]
    (sync,) = pod["initContainers"]
    assert sync["image"].startswith("public.ecr.aws/aws-cli/aws-cli:")
    assert sync["command"][:5] == [
        "aws", "s3", "sync", "s3://my-tdk-releases/releases/v1/repository", "/models"
    ]  # fmt: skip
    assert {"name": "models", "mountPath": "/models"} in sync["volumeMounts"]
    triton = pod["containers"][0]
    assert {"name": "models", "mountPath": "/models", "readOnly": True} in triton["volumeMounts"]
    assert {"name": "models", "emptyDir": {}} in pod["volumes"]
    # the role lets `aws s3 sync` list under the prefix and read the objects, nothing else
    policy = _policies(eks)["tdk-eks-dev-release-read"]["Statement"]
    listing = next(s for s in policy if s["Action"] == "s3:ListBucket")
    assert listing["Condition"]["StringLike"]["s3:prefix"] == ["releases/v1/*", "releases/v1"]


def test_renamed_engine_builder_keeps_its_deployed_resources(eks: StackRun) -> None:
    """Issue 50 item 3: EngineBuilder was tdk:aws:PlanBuilder named <name>-plans before
    2026-12-07, its role and policy <name>-plan-builder and <name>-plan-build; each carries an
    alias to its former type and name, so a stack deployed before keeps its role and policy."""
    component = eks.named("tdk-eks-dev-engines")
    assert component.type == "tdk:aws:EngineBuilder"
    assert ("tdk:aws:PlanBuilder", "tdk-eks-dev-plans") in component.options.aliases
    role = eks.named("tdk-eks-dev-engine-builder")
    assert ("", "tdk-eks-dev-plan-builder") in role.options.aliases
    assert role.inputs["name"] == "tdk-eks-dev-plan-builder"  # physical: a rename replaces it
    policy = eks.named("tdk-eks-dev-engine-build")
    assert ("", "tdk-eks-dev-plan-build") in policy.options.aliases
