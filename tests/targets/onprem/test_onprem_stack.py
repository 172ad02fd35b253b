"""The real Pulumi program under mocks with Pulumi.onprem-dev.yaml (and per store and model
mode): a provider from the stack's kubeconfig and context, KEDA and Envoy Gateway charts, the
workload reading its release with the stack's Secret, its PodMonitor, alert rules and
dashboard; nothing of any cloud."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.infra.pulumi_harness import StackRun, run_stack

STACK = "onprem-dev"
FRONT = "registry.lab.example/tdk-front:1"
#: the resource packages a stack without a cloud may declare
NO_CLOUD = ("tdk:", "kubernetes:", "pulumi:providers:kubernetes")


@pytest.fixture(autouse=True)
def _today(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TDK_TODAY", "2026-12-07")


@pytest.fixture(scope="module")
def onprem() -> Iterator[StackRun]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TDK_TODAY", "2026-12-07")
        yield run_stack(STACK)


def _named(run: StackRun, type_token: str) -> dict[str, dict[str, Any]]:
    return {r.name: r.inputs for r in run.of_type(type_token)}


def _pod(run: StackRun) -> dict[str, Any]:
    spec: dict[str, Any] = run.one("kubernetes:apps/v1:Deployment").inputs["spec"]
    return spec["template"]["spec"]


def _env(container: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {item["name"]: item for item in container["env"]}


def test_the_cluster_is_the_kubeconfig_s_context_and_nothing_of_a_cloud(onprem: StackRun) -> None:
    provider = onprem.one("pulumi:providers:kubernetes").inputs
    assert provider["context"] == "my-cluster" and provider["clusterIdentifier"] == "my-cluster"
    assert "kubeconfig" not in provider  # $KUBECONFIG or ~/.kube/config, as kubectl
    assert all(r.type.startswith(NO_CLOUD) for r in onprem.resources), onprem.types()
    assert onprem.outputs["context"] == "my-cluster"
    assert "tdk invoke --target onprem" in onprem.outputs["invokeCommand"]


def test_a_kubeconfig_path_and_no_context_reach_the_provider() -> None:
    run = run_stack(STACK, {"onpremKubeconfig": "/home/me/.kube/lab.yaml", "onpremContext": ""})
    provider = run.one("pulumi:providers:kubernetes").inputs
    assert provider["kubeconfig"] == "/home/me/.kube/lab.yaml"
    assert "context" not in provider and provider["clusterIdentifier"] == "current-context"


def test_keda_for_the_stated_version_and_no_gateway_in_all_mode(onprem: StackRun) -> None:
    releases = _named(onprem, "kubernetes:helm.sh/v3:Release")
    assert set(releases) == {"tdk-onprem-dev-keda"}
    keda = releases["tdk-onprem-dev-keda"]
    assert keda["version"] == "2.20.2"  # the newest KEDA tested with 1.33 (infra/facts)
    assert keda["values"]["podIdentity"] == {}  # the cluster's Prometheus asks no identity
    auth = onprem.one("kubernetes:keda.sh/v1alpha1:TriggerAuthentication").inputs
    assert auth["spec"] == {"podIdentity": {"provider": "none"}}
    scaler = onprem.one("kubernetes:keda.sh/v1alpha1:ScaledObject").inputs
    (trigger,) = scaler["spec"]["triggers"]
    assert trigger["metadata"]["serverAddress"] == "http://prometheus-operated.monitoring.svc:9090"


def test_triton_reads_the_minio_release_with_the_secret(onprem: StackRun) -> None:
    (triton,) = _pod(onprem)["containers"]
    repository = "--model-repository=s3://minio.minio.svc:9000/my-tdk-releases/v1/repository"
    assert repository in triton["args"]
    env = _env(triton)
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        assert env[key]["valueFrom"]["secretKeyRef"] == {"name": "tdk-release", "key": key}
    assert env["AWS_SESSION_TOKEN"]["valueFrom"]["secretKeyRef"]["optional"] is True
    assert env["AWS_DEFAULT_REGION"]["value"] == "us-east-1"
    accounts = _named(onprem, "kubernetes:core/v1:ServiceAccount")
    assert all(not a["metadata"].get("annotations") for a in accounts.values())


def test_the_pods_are_scraped_alerted_on_and_charted(onprem: StackRun) -> None:
    monitor = onprem.one("kubernetes:monitoring.coreos.com/v1:PodMonitor").inputs
    assert monitor["metadata"]["labels"] == {"release": "kube-prometheus-stack"}
    assert monitor["spec"]["jobLabel"] == "app.kubernetes.io/instance"
    assert [e["port"] for e in monitor["spec"]["podMetricsEndpoints"]] == ["metrics"]
    rule = onprem.one("kubernetes:monitoring.coreos.com/v1:PrometheusRule").inputs
    (group,) = rule["spec"]["groups"]
    assert rule["metadata"]["labels"] == {"release": "kube-prometheus-stack"}
    assert all('job="tdk-onprem-dev"' in r["expr"] for r in group["rules"] if "job=" in r["expr"])
    board = onprem.one("kubernetes:core/v1:ConfigMap").inputs
    assert board["metadata"]["labels"] == {"grafana_dashboard": "1"}
    panels = json.loads(board["data"]["tdk-onprem-dev.json"])["panels"]
    assert panels and all(p["targets"][0]["expr"] for p in panels)
    # the dashboard waits for the namespace the workload's component creates
    namespace = onprem.named("tdk-onprem-dev-triton-ns").options.urn
    assert namespace in onprem.one("kubernetes:core/v1:ConfigMap").options.dependencies


def test_without_prometheus_operator_or_grafana_only_the_workload() -> None:
    run = run_stack(STACK, {"onpremPrometheusOperator": "false", "onpremGrafanaDashboard": "false"})
    assert not [r for r in run.resources if "monitoring.coreos.com" in r.type]
    assert not run.of_type("kubernetes:core/v1:ConfigMap")


def test_mme_mode_runs_the_given_front_behind_envoy_gateway() -> None:
    run = run_stack(STACK, {"k8sModelMode": "mme", "k8sFrontImage": FRONT})
    releases = _named(run, "kubernetes:helm.sh/v3:Release")
    assert "tdk-onprem-dev-envoy-gateway" in releases
    triton, front = _pod(run)["containers"]
    assert front["image"] == FRONT and "--model-control-mode=explicit" in triton["args"]
    assert front["args"][front["args"].index("--release") + 1] == "s3://my-tdk-releases/v1"
    env = _env(front)
    assert env["TDK_S3_ENDPOINT_URL"]["value"] == "http://minio.minio.svc:9000"
    assert env["AWS_ACCESS_KEY_ID"]["valueFrom"]["secretKeyRef"]["name"] == "tdk-release"
    monitor = run.one("kubernetes:monitoring.coreos.com/v1:PodMonitor").inputs
    assert [e["port"] for e in monitor["spec"]["podMetricsEndpoints"]] == ["metrics", "front"]
    assert not run.of_type("docker-build:index:Image")  # no registry: nothing is built


def test_a_gcs_release_is_read_with_the_secret_s_key_file() -> None:
    run = run_stack(STACK, {"releaseUrl": "gs://my-tdk-releases/v1"})
    pod = _pod(run)
    (triton,) = pod["containers"]
    assert "--model-repository=gs://my-tdk-releases/v1/repository" in triton["args"]
    path = _env(triton)["GOOGLE_APPLICATION_CREDENTIALS"]["value"]
    assert path == "/var/run/tdk/release/key.json"
    (mount,) = [m for m in triton["volumeMounts"] if m["mountPath"] == "/var/run/tdk/release"]
    (volume,) = [v for v in pod["volumes"] if v["name"] == mount["name"]]
    assert volume["secret"]["secretName"] == "tdk-release" and mount["readOnly"] is True


def test_an_azure_release_gets_triton_s_key_and_the_front_s_connection_string() -> None:
    release = {"releaseUrl": "az://mytdkreleases/my-tdk-releases/v1"}
    run = run_stack(STACK, {**release, "k8sModelMode": "mme", "k8sFrontImage": FRONT})
    triton, front = _pod(run)["containers"]
    assert _env(triton)["AZURE_STORAGE_ACCOUNT"]["value"] == "mytdkreleases"
    env = _env(front)
    names = [item["name"] for item in front["env"]]
    assert names.index("AZURE_STORAGE_KEY") < names.index("AZURE_STORAGE_CONNECTION_STRING")
    connection = env["AZURE_STORAGE_CONNECTION_STRING"]["value"]
    assert "AccountName=mytdkreleases;AccountKey=$(AZURE_STORAGE_KEY);" in connection
    plain = run_stack(STACK, release)
    (triton,) = _pod(plain)["containers"]
    assert "--model-repository=as://mytdkreleases/my-tdk-releases/v1/repository" in triton["args"]


def test_a_bad_stack_fails_before_any_resource_is_declared() -> None:
    run = run_stack(STACK, {"releaseUrl": "file:///srv/releases/v1"}, expect_error=True)
    assert run.resources == [] and "releaseUrl" in str(run.error)
