"""Pure builders of the aks target: the Blob release, the model sync as the pod's workload
identity, KEDA's pod identity, the PodMonitor, the alert rules and the ARM arguments."""

from __future__ import annotations

import shlex

import pytest

from infra.clouds.azure import identity
from infra.config import parse_release_url
from infra.k8s.alerts import AlertRule
from infra.targets.aks import arm
from infra.targets.aks import builders as b
from tdk.errors import ConfigError


def _blob(url: str = "az://tdkreleases/releases/v1") -> b.BlobRelease:
    return b.blob_release(parse_release_url("releaseUrl", url, ("az",)))


def test_the_release_url_is_the_az_store_form() -> None:
    blob = _blob("az://tdkreleases/releases/team/v1")
    assert (blob.account, blob.container, blob.prefix) == ("tdkreleases", "releases", "team/v1")
    assert blob.blob_url("repository") == (
        "https://tdkreleases.blob.core.windows.net/releases/team/v1/repository"
    )
    assert _blob("az://tdkreleases/releases").name("repository") == "repository"


def test_a_release_url_without_a_container_is_refused() -> None:
    with pytest.raises(ConfigError, match="names no container"):
        _blob("az://tdkreleases")


def test_the_sync_logs_in_with_the_federated_token_and_copies_only_the_repository() -> None:
    shell, flag, script = b.sync_command(_blob(), "/models")
    assert (shell, flag) == ("sh", "-c")
    assert script.startswith("set -eu; az login --service-principal")
    assert '--federated-token "$(cat "$AZURE_FEDERATED_TOKEN_FILE")"' in script
    words = shlex.split(script.split("; ", 2)[2].split(" && ")[1])
    assert words[:4] == ["az", "storage", "blob", "list"]
    assert words[words.index("--auth-mode") + 1] == "login"  # no account key, ever
    assert words[words.index("--prefix") + 1] == "v1/repository/"
    assert "download-batch" not in script  # it lists the container without a prefix
    assert "cp -a /models/.download/v1/repository/. /models/" in script


def test_keda_runs_as_its_workload_identity() -> None:
    values = b.keda_pod_identity("client-1", "tenant-1")
    assert values == {
        "azureWorkload": {"enabled": True, "clientId": "client-1", "tenantId": "tenant-1"}
    }
    assert identity.subject("keda", "keda-operator") == "system:serviceaccount:keda:keda-operator"


def test_the_pod_monitor_is_azure_monitor_s_and_labels_the_job_with_the_workload() -> None:
    monitor = b.pod_monitor("tdk-aks-dev", "triton", {"app.kubernetes.io/instance": "tdk-aks-dev"})
    assert monitor["apiVersion"] == "azmonitoring.coreos.com/v1"
    assert monitor["spec"]["jobLabel"] == "app.kubernetes.io/instance"
    assert monitor["spec"]["podMetricsEndpoints"][0]["port"] == "metrics"


def test_alert_rules_keep_their_promql_duration_and_severity() -> None:
    rules = [AlertRule("a", "x > 1", 600, "doc", "critical"), AlertRule("b", "y", 300, "d")]
    out = b.rule_group_rules(rules, "ag-id")
    assert [r["expression"] for r in out] == ["x > 1", "y"]
    assert [r["for_"] for r in out] == ["PT10M", "PT5M"]
    assert [r["severity"] for r in out] == [1, 3]
    assert out[0]["actions"] == [{"action_group_id": "ag-id"}]


def test_the_reader_role_is_narrowed_to_the_release_prefix() -> None:
    """The documented read-or-list form (what it allows: test_release_access.py)."""
    condition = arm.release_read_condition(_blob())
    assert condition == (
        "((!(ActionMatches{'Microsoft.Storage/storageAccounts/blobServices/containers/blobs/read'"
        "} AND NOT SubOperationMatches{'Blob.List'})) OR "
        "(@Resource[Microsoft.Storage/storageAccounts/blobServices/containers/blobs:path]"
        " StringStartsWith 'v1/')) AND "
        "((!(ActionMatches{'Microsoft.Storage/storageAccounts/blobServices/containers/blobs/read'"
        "} AND SubOperationMatches{'Blob.List'})) OR "
        "(@Request[Microsoft.Storage/storageAccounts/blobServices/containers/blobs:prefix]"
        " StringStartsWith 'v1/'))"
    )
    assert arm.release_read_condition(_blob("az://acct123/releases")) is None
    writes = arm.engine_write_condition(_blob())
    assert writes.count("ActionMatches") == 6 and "StringStartsWith 'v1/engines/'" in writes
    scope = arm.container_scope("sub", "rg", _blob())
    assert scope.endswith("/storageAccounts/tdkreleases/blobServices/default/containers/releases")


def test_the_action_group_short_name_fits_twelve_characters() -> None:
    assert len(arm.action_group("a-very-long-stack-name", None)["group_short_name"]) == 12


def test_azure_name_rules_are_data_with_their_limits() -> None:
    from infra.clouds.azure import names
    from infra.targets.aks.cloud_names import NODE_POOLS

    assert names.AKS_CLUSTER.accepts("a" * 63) and not names.AKS_CLUSTER.accepts("a" * 64)
    assert not names.AKS_CLUSTER.accepts("-starts-with-a-dash")
    assert all(names.AKS_LINUX_NODE_POOL.accepts(pool) for pool in NODE_POOLS)
    assert not names.AKS_LINUX_NODE_POOL.accepts("gpupool12345x")  # 13 characters
    assert not names.AKS_LINUX_NODE_POOL.accepts("GPU")
    assert not names.RESOURCE_GROUP.accepts("rg.") and names.RESOURCE_GROUP.accepts("a(b)_c.d-e")
    assert not names.CONSUMPTION_BUDGET.accepts("b" * 64)
    assert not names.MANAGED_IDENTITY.accepts("ab")


def test_the_pod_monitor_matches_azure_monitor_s_crd() -> None:
    import json
    from pathlib import Path

    import jsonschema

    path = Path(__file__).with_name("data") / "podmonitor_v1_subset.json"
    schema = json.loads(path.read_text())
    monitor = b.pod_monitor("w", "triton", {"app.kubernetes.io/instance": "w"})
    jsonschema.validate(monitor, schema)
    broken = {**monitor, "spec": {**monitor["spec"], "podMetricEndpoints": []}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)
