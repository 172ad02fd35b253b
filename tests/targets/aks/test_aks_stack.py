"""The real program under mocks with Pulumi.aks-dev.yaml, and the aks config checks."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from infra.clouds.azure import identity
from infra.k8s.alerts import workload_rules
from infra.targets import stacks
from tests.clouds.azure.mocks import SUBSCRIPTION as AZURE_SUBSCRIPTION
from tests.clouds.azure.mocks import TENANT as AZURE_TENANT
from tests.infra.pulumi_harness import StackRun, run_stack
from tests.targets.aks.abac import Request, allows
from tests.targets.aks.fake_az import BLOBS, PATH, PREFIX, READ

TODAY = "2026-11-27"
STACK = "aks-dev"


@pytest.fixture(autouse=True)
def _today(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TDK_TODAY", TODAY)


@pytest.fixture(scope="module")
def aks() -> Iterator[StackRun]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TDK_TODAY", TODAY)
        yield run_stack(STACK)


def _by_name(run: StackRun, type_token: str) -> dict[str, dict[str, Any]]:
    return {r.name: r.inputs for r in run.of_type(type_token)}


def test_cluster_has_workload_identity_managed_prometheus_and_a_closed_api(aks: StackRun) -> None:
    cluster = aks.one("azure-native:containerservice:ManagedCluster").inputs
    assert cluster["kubernetesVersion"] == "1.36"  # 1.37 is GA but no KEDA chart covers it
    assert cluster["oidcIssuerProfile"] == {"enabled": True}
    assert cluster["securityProfile"] == {"workloadIdentity": {"enabled": True}}
    assert cluster["azureMonitorProfile"] == {"metrics": {"enabled": True}}
    assert cluster["apiServerAccessProfile"] == {"authorizedIPRanges": ["203.0.113.0/24"]}
    (system,) = cluster["agentPoolProfiles"]
    assert (system["mode"], system["minCount"], system["maxCount"]) == ("System", 1, 3)
    assert "nodeTaints" not in system


def test_gpu_pool_is_tainted_labelled_scales_to_zero_and_gets_the_aks_driver(
    aks: StackRun,
) -> None:
    pool = aks.one("azure-native:containerservice:AgentPool").inputs
    assert pool["vmSize"] == "Standard_NC4as_T4_v3" and pool["mode"] == "User"
    assert (pool["minCount"], pool["maxCount"], pool["enableAutoScaling"]) == (0, 2, True)
    assert pool["nodeTaints"] == ["nvidia.com/gpu=present:NoSchedule"]
    assert pool["nodeLabels"]["triton-deploy-kit/pool"] == "gpu"
    assert pool["gpuProfile"] == {"driver": "Install"}
    assert len(pool["agentPoolName"]) <= 12 and pool["agentPoolName"].isalnum()
    plugin = _by_name(aks, "kubernetes:helm.sh/v3:Release")["tdk-aks-dev-nvidia-device-plugin"]
    assert plugin["values"]["nodeSelector"] == {"triton-deploy-kit/pool": "gpu"}


#: The pinned chart's default required node affinity, one dict per nodeSelectorTerm (each
#: matchExpression ``In ["true"]`` or ``In ["NVIDIA"]``): NVIDIA/k8s-device-plugin v0.20.0
#: deployments/helm/nvidia-device-plugin/values.yaml lines 64-85, read 2026-12-07.
DEVICE_PLUGIN_AFFINITY = (
    {"feature.node.kubernetes.io/pci-10de.present": "true"},
    {"feature.node.kubernetes.io/cpu-model.vendor_id": "NVIDIA"},
    {"nvidia.com/gpu.present": "true"},
)


def test_the_device_plugin_s_affinity_matches_the_gpu_nodes(aks: StackRun) -> None:
    """No NFD runs on the cluster, so only the pool's own labels can satisfy the chart's
    required affinity; without it no node advertises nvidia.com/gpu and Triton stays Pending."""
    labels = aks.one("azure-native:containerservice:AgentPool").inputs["nodeLabels"]
    plugin = _by_name(aks, "kubernetes:helm.sh/v3:Release")["tdk-aks-dev-nvidia-device-plugin"]
    assert plugin["version"] == "0.20.0" and "affinity" not in plugin["values"]
    assert "nfd" not in str(plugin["values"]).lower()
    assert any(term.items() <= labels.items() for term in DEVICE_PLUGIN_AFFINITY), labels


def test_each_service_account_is_federated_to_its_own_identity(aks: StackRun) -> None:
    found = aks.of_type("azure-native:managedidentity:FederatedIdentityCredential")
    creds = {c.inputs["resourceName"]: c.inputs for c in found}
    assert creds["tdk-aks-dev-triton"]["subject"] == "system:serviceaccount:triton:tdk-aks-dev"
    assert creds["tdk-aks-dev-keda"]["subject"] == "system:serviceaccount:keda:keda-operator"
    build = creds["tdk-aks-dev-build"]["subject"]
    assert build == "system:serviceaccount:triton:tdk-aks-dev-build"
    assert all(c["audiences"] == ["api://AzureADTokenExchange"] for c in creds.values())


def test_triton_reads_only_the_release_prefix_and_keda_only_the_workspace(aks: StackRun) -> None:
    roles = _by_name(aks, "azure-native:authorization:RoleAssignment")
    reader, writer = roles["tdk-aks-dev-triton-role"], roles["tdk-aks-dev-build-role"]
    keda = roles["tdk-aks-dev-keda-role"]
    container = (
        "/resourceGroups/my-tdk-storage-rg/providers/Microsoft.Storage/storageAccounts/"
        "mytdkreleases/blobServices/default/containers/my-tdk-releases"
    )
    assert reader["roleDefinitionId"].endswith(identity.STORAGE_BLOB_DATA_READER)
    assert reader["roleDefinitionId"].startswith(f"/subscriptions/{AZURE_SUBSCRIPTION}/")
    assert reader["scope"].endswith(container) and writer["scope"] == reader["scope"]
    assert reader["conditionVersion"] == "2.0"
    # reads and lists (the sync lists first) only under the release prefix
    assert allows(reader["condition"], Request(READ, "Blob.List", {PREFIX: "v1/repository/"}))
    assert not allows(reader["condition"], Request(READ, "Blob.List", {PREFIX: "v2/"}))
    assert allows(reader["condition"], Request(READ, None, {PATH: "v1/manifest.json"}))
    assert not allows(reader["condition"], Request(READ, None, {PATH: "v2/manifest.json"}))
    assert keda["roleDefinitionId"].endswith(identity.MONITORING_DATA_READER)
    assert keda["scope"] == "tdk-aks-dev-monitoring-workspace-id"
    assert len(roles) == 3


def test_only_the_engine_builder_writes_the_engine_cache(aks: StackRun) -> None:
    """Issue 47 item 5: a serving pod cannot plant an engine. Triton's identity holds only Storage
    Blob Data Reader (no write data action: it reads engines/ with the release); the build
    Job's own identity holds Contributor, conditioned to engines/."""
    roles = _by_name(aks, "azure-native:authorization:RoleAssignment")
    triton = [r for r in roles.values() if r["principalId"] == "tdk-aks-dev-triton-principal-id"]
    assert [r["roleDefinitionId"].rsplit("/", 1)[1] for r in triton] == [
        identity.STORAGE_BLOB_DATA_READER
    ]
    assert allows(triton[0]["condition"], Request(READ, None, {PATH: "v1/engines/e/plan.json"}))
    writer = roles["tdk-aks-dev-build-role"]
    assert writer["principalId"] == "tdk-aks-dev-build-principal-id"
    assert writer["roleDefinitionId"].endswith(identity.STORAGE_BLOB_DATA_CONTRIBUTOR)
    for action in ("write", "add/action", "delete", "move/action"):
        request = Request(f"{BLOBS}/{action}", None, {PATH: "v1/engines/e/model.plan"})
        assert allows(writer["condition"], request), action
        for outside in ("v1/manifest.json", "v1/repository/m/1/model.onnx", "v10/engines/e/x",
                        "v1/plans/e/model.plan"):  # fmt: skip
            request = Request(f"{BLOBS}/{action}", None, {PATH: outside})
            assert not allows(writer["condition"], request), (action, outside)
    assert allows(writer["condition"], Request(READ, "Blob.List", {PREFIX: "v1/engines/e/"}))
    assert not allows(writer["condition"], Request(READ, None, {PATH: "v1/manifest.json"}))
    sa = aks.named("tdk-aks-dev-triton-build-sa").inputs
    assert sa["metadata"]["name"] == "tdk-aks-dev-build"
    assert sa["metadata"]["annotations"] == {
        "azure.workload.identity/client-id": "tdk-aks-dev-build-client-id"
    }
    assert aks.outputs["buildClientId"] == "tdk-aks-dev-build-client-id"


def test_keda_chart_runs_its_operator_as_the_keda_identity(aks: StackRun) -> None:
    keda = _by_name(aks, "kubernetes:helm.sh/v3:Release")["tdk-aks-dev-keda"]
    assert keda["chart"] == "keda" and keda["version"] == "2.21.1"  # the table's, for 1.36
    assert keda["values"]["podIdentity"] == {
        "azureWorkload": {
            "enabled": True, "clientId": "tdk-aks-dev-keda-client-id", "tenantId": AZURE_TENANT
        }
    }  # fmt: skip


def test_triton_pods_sync_the_release_with_their_workload_identity(aks: StackRun) -> None:
    sa = aks.named("tdk-aks-dev-triton-sa").inputs
    assert sa["metadata"]["annotations"] == {
        "azure.workload.identity/client-id": "tdk-aks-dev-triton-client-id"
    }
    template = aks.one("kubernetes:apps/v1:Deployment").inputs["spec"]["template"]
    assert template["metadata"]["labels"]["azure.workload.identity/use"] == "true"
    (sync,) = template["spec"]["initContainers"]
    assert sync["image"] == "mcr.microsoft.com/azure-cli:2.91.0"
    assert "--federated-token" in sync["command"][2]
    assert "--prefix v1/repository/" in sync["command"][2]
    args = template["spec"]["containers"][0]["args"]
    assert "--model-repository=/models" in args


def test_keda_scales_on_the_workspace_with_workload_identity(aks: StackRun) -> None:
    auth = aks.one("kubernetes:keda.sh/v1alpha1:TriggerAuthentication").inputs
    assert auth["spec"] == {"podIdentity": {"provider": "azure-workload"}}
    scaler = aks.one("kubernetes:keda.sh/v1alpha1:ScaledObject").inputs
    trigger = scaler["spec"]["triggers"][0]["metadata"]
    assert trigger["serverAddress"].endswith(".prometheus.monitor.azure.com")


def test_managed_prometheus_scrapes_triton_into_the_workspace(aks: StackRun) -> None:
    monitor = aks.one("kubernetes:azmonitoring.coreos.com/v1:PodMonitor").inputs
    assert monitor["spec"]["selector"]["matchLabels"]["app.kubernetes.io/instance"] == (
        "tdk-aks-dev"
    )
    rule = aks.one("azure-native:monitor:DataCollectionRule").inputs
    assert rule["dataSources"]["prometheusForwarder"][0]["streams"] == [
        "Microsoft-PrometheusMetrics"
    ]
    assert rule["destinations"]["monitoringAccounts"][0]["accountResourceId"] == (
        "tdk-aks-dev-monitoring-workspace-id"
    )
    link = aks.one("azure-native:monitor:DataCollectionRuleAssociation").inputs
    assert link["resourceUri"] == "tdk-aks-dev-aks-id"


def test_alert_rules_are_the_shared_ones_mailed_to_alert_email(aks: StackRun) -> None:
    group = aks.one("azure-native:alertsmanagement:PrometheusRuleGroup").inputs
    config = stacks.load_stack(".", STACK).config
    shared = workload_rules(config.workload.namespace, config.common.name, config.workload.alerts)
    assert [r["alert"] for r in group["rules"]] == [r.name for r in shared]
    assert [r["expression"] for r in group["rules"]] == [r.query for r in shared]
    assert all(r["actions"] == [{"actionGroupId": "tdk-aks-dev-monitoring-actions-id"}]
               for r in group["rules"])  # fmt: skip
    actions = aks.one("azure-native:monitor:ActionGroup").inputs
    assert [r["emailAddress"] for r in actions["emailReceivers"]] == ["ops@example.com"]


def test_budget_on_the_resource_group_mails_alert_email(aks: StackRun) -> None:
    budget = aks.one("azure-native:consumption:Budget").inputs
    assert (budget["amount"], budget["timeGrain"], budget["category"]) == (1000, "Monthly", "Cost")
    assert budget["scope"] == "tdk-aks-dev-rg-id"
    assert {n["threshold"] for n in budget["notifications"].values()} == {80, 100}
    assert all(n["contactEmails"] == ["ops@example.com"] for n in budget["notifications"].values())


def test_outputs_say_how_to_reach_the_workload(aks: StackRun) -> None:
    out = aks.outputs
    assert out["tritonClientId"] == "tdk-aks-dev-triton-client-id"
    assert out["prometheusQueryUrl"].endswith(".prometheus.monitor.azure.com")
    assert out["getCredentials"].startswith("az aks get-credentials --resource-group")
    assert out["invokeCommand"].count("--target aks") == 1


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"aksGpuVmSize": "Standard_NV6ads_A10_v5"}, "1/6 share of one NVIDIA A10"),
        ({"aksGpuVmSize": "Standard_NV12as_v4"}, "no CUDA"),
        ({"aksGpuVmSize": "Standard_D4s_v5"}, "not a GPU VM size"),
        ({"releaseUrl": "s3://bucket/releases/v1"}, "az://"),
        ({"aksReleaseResourceGroup": ""}, "aksReleaseResourceGroup is empty"),
        ({"aksKubernetesVersion": "1.33"}, "aksKubernetesVersion"),
        ({"aksGpuNodesMin": 3}, "aksGpuNodesMin"),
        ({"k8sGpusPerPod": 2}, "exceeds the 1 GPU(s) of Standard_NC4as_T4_v3"),
        ({"azure-native:location": "East US"}, "not an Azure region name"),
        ({"aksApiAuthorizedIpRanges": ""}, "aksApiAuthorizedIpRanges is empty"),
    ],
)
def test_bad_config_is_refused_before_anything_is_declared(
    overrides: dict[str, Any], message: str
) -> None:
    run = run_stack(STACK, overrides, expect_error=True)
    assert message in str(run.error)
    assert not run.of_type("azure-native:containerservice:ManagedCluster")
