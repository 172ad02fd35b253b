"""``k8sModelMode: mme`` on every registered Kubernetes target: the pod (explicit-mode Triton
beside the front), Envoy Gateway's routing objects, the Pulumi program under mocks, and the
manifests through strict validation and the vendored CRD schemas."""

from __future__ import annotations

import json
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest

from infra.k8s import gateway
from infra.k8s.config import GIB
from infra.planning.routing import HASH_BALANCE_FACTOR
from infra.targets import load_target
from tdk.errors import ConfigError
from tests.infra.pulumi_harness import run_stack
from tests.infra.test_k8s_manifests import K8S_VERSION, is_custom
from tests.registry_lists import dev_stack, kubernetes_targets, read_dev

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = Path(__file__).with_name("crd_schemas")
FRONT_IMAGE = "registry.example.com/tdk-front:1"
MME = {"k8sModelMode": "mme", "k8sFrontImage": FRONT_IMAGE}
#: the custom kinds an mme workload adds, and their vendored schemas
GATEWAY_SCHEMAS = {
    "GatewayClass": "gateway.networking.k8s.io_gatewayclass_v1.json",
    "Gateway": "gateway.networking.k8s.io_gateway_v1.json",
    "HTTPRoute": "gateway.networking.k8s.io_httproute_v1.json",
    "EnvoyProxy": "gateway.envoyproxy.io_envoyproxy_v1alpha1.json",
    "BackendTrafficPolicy": "gateway.envoyproxy.io_backendtrafficpolicy_v1alpha1.json",
    "EnvoyPatchPolicy": "gateway.envoyproxy.io_envoypatchpolicy_v1alpha1.json",
}


@cache
def _schema(file: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((SCHEMAS / file).read_text())
    return schema


def _rendered(target: str, overrides: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    config = read_dev(target, {**MME, **(overrides or {})})
    return load_target(target).render.manifests(config, lambda output: "${" + output + "}")


def _one(manifests: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    (found,) = [m for m in manifests if m["kind"] == kind]
    return found


def _pod(manifests: list[dict[str, Any]]) -> dict[str, Any]:
    pod: dict[str, Any] = _one(manifests, "Deployment")["spec"]["template"]["spec"]
    return pod


@pytest.mark.parametrize("target", kubernetes_targets())
def test_mme_pod_is_explicit_triton_beside_the_front(target: str) -> None:
    rendered = _rendered(target)
    pod = _pod(rendered)
    triton, front = pod["containers"]
    assert "--model-control-mode=explicit" in triton["args"]
    assert "--model-repository=/models" in triton["args"]
    assert "initContainers" not in pod  # no copy of the release before Triton starts
    release = read_dev(target).common.release.url
    args = front["args"]
    assert [front["command"][0], *args[:2]] == ["tdk", "front", "serve"]
    assert args[args.index("--release") + 1] == release
    assert args[args.index("--triton-url") + 1] == "http://127.0.0.1:8000"
    # loads go to the Triton container's gRPC port (infra.triton_runtime.grpc_control)
    grpc_port = next(p["containerPort"] for p in triton["ports"] if p["name"] == "grpc")
    assert f"--grpc-port={grpc_port}" in triton["args"]
    assert args[args.index("--triton-grpc") + 1] == f"127.0.0.1:{grpc_port}"
    assert args[args.index("--model-dir") + 1] == "/models"
    assert args[args.index("--cache-dir") + 1] == "/cache"
    assert args[args.index("--cache-bytes") + 1] == str(50 * GIB)  # Pulumi.yaml's default
    assert int(args[args.index("--memory-budget-bytes") + 1]) > 0
    assert args[args.index("--listen") + 1] == "0.0.0.0:8080"
    assert front["image"] == FRONT_IMAGE
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert front[probe]["httpGet"] == {"path": "/ping", "port": "front"}
    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["mountPath"]: m["name"] for m in front["volumeMounts"]}
    assert volumes[mounts["/models"]]["emptyDir"] == {}
    assert volumes[mounts["/cache"]]["emptyDir"] == {"sizeLimit": str(50 * GIB)}
    assert {m["mountPath"]: m["name"] for m in triton["volumeMounts"]}["/models"] == "models"
    # the front runs as the pod's ServiceAccount: the target's workload identity
    # (the plan builder's ServiceAccount, ``<name>-build``, is rendered beside it)
    deployment = _one(rendered, "Deployment")["metadata"]["name"]
    accounts = {m["metadata"]["name"] for m in rendered if m["kind"] == "ServiceAccount"}
    assert pod["serviceAccountName"] == deployment in accounts


@pytest.mark.parametrize("target", kubernetes_targets())
def test_all_mode_is_unchanged(target: str) -> None:
    config = read_dev(target)
    rendered = load_target(target).render.manifests(config, lambda output: output)
    pod = _pod(rendered)
    assert [c["name"] for c in pod["containers"]] == ["triton"]
    assert "--model-control-mode=none" in pod["containers"][0]["args"]
    assert not [m for m in rendered if m["apiVersion"].startswith("gateway.")]


@pytest.mark.parametrize("target", kubernetes_targets())
def test_mme_manifests_validate_strictly_and_against_the_crds(target: str) -> None:
    rendered = _rendered(target, {"k8sServiceExposure": "internal-lb"})
    for manifest in rendered:
        if manifest["kind"] in GATEWAY_SCHEMAS:
            jsonschema.validate(manifest, _schema(GATEWAY_SCHEMAS[manifest["kind"]]))
        elif not is_custom(manifest):
            assert kubernetes_validate.validate(manifest, K8S_VERSION, strict=True)
    assert {m["kind"] for m in rendered} >= set(GATEWAY_SCHEMAS)


def test_a_gateway_object_with_a_typo_fails_its_schema() -> None:
    policy = _one(_rendered(kubernetes_targets()[0]), "BackendTrafficPolicy")
    policy["spec"]["loadBalancer"]["consistentHash"]["header"] = {"name": "x"}  # type Headers
    policy["spec"]["loadBalancer"]["consistentHash"]["hedaers"] = []
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(policy, _schema(GATEWAY_SCHEMAS["BackendTrafficPolicy"]))


@pytest.mark.parametrize("target", kubernetes_targets())
def test_routing_hashes_on_the_target_model_with_a_bounded_load(target: str) -> None:
    rendered = _rendered(target)
    service = _one(rendered, "Service")
    assert service["spec"]["type"] == "ClusterIP"
    assert [p["targetPort"] for p in service["spec"]["ports"]] == ["front"]
    route = _one(rendered, "HTTPRoute")
    (rule,) = route["spec"]["rules"]
    assert rule["backendRefs"] == [{"name": service["metadata"]["name"], "port": 8080}]
    policy = _one(rendered, "BackendTrafficPolicy")["spec"]
    assert policy["targetRefs"][0]["name"] == route["metadata"]["name"]
    assert policy["loadBalancer"] == {
        "type": "ConsistentHash",
        "consistentHash": {
            "type": "Headers",
            "headers": [{"name": "X-Amzn-SageMaker-Target-Model"}],
        },
    }
    (patch,) = _one(rendered, "EnvoyPatchPolicy")["spec"]["jsonPatches"]
    namespace = route["metadata"]["namespace"]
    assert patch["name"] == f"httproute/{namespace}/{route['metadata']['name']}/rule/0"
    assert patch["operation"]["value"] == {"hash_balance_factor": HASH_BALANCE_FACTOR}
    assert patch["operation"]["path"].endswith("/typed_config/consistent_hashing_lb_config")


@pytest.mark.parametrize("target", kubernetes_targets())
def test_gateway_exposure_is_in_cluster_by_default_and_internal_with_the_targets_annotations(
    target: str,
) -> None:
    default = _one(_rendered(target), "EnvoyProxy")["spec"]["provider"]["kubernetes"]
    assert default["envoyService"] == {"type": "ClusterIP"}
    internal = _one(_rendered(target, {"k8sServiceExposure": "internal-lb"}), "EnvoyProxy")
    service = internal["spec"]["provider"]["kubernetes"]["envoyService"]
    assert service["type"] == "LoadBalancer"
    config = read_dev(target, {**MME, "k8sServiceExposure": "internal-lb"})
    spec = load_target(target).workload_spec(config, lambda output: output)
    assert service["annotations"] == dict(spec.service_annotations) != {}


@pytest.mark.parametrize("target", kubernetes_targets())
def test_mme_pods_are_scraped_on_the_front_port_too(target: str) -> None:
    config = read_dev(target, MME)
    spec = load_target(target).workload_spec(config, lambda output: output)
    assert spec.metrics_ports == ("metrics", "front")
    assert read_dev(target).workload.mme is None


def test_mme_without_a_front_image_builds_it() -> None:
    """The stack builds and pushes the front (tests/infra/test_front_image.py)."""
    mme = read_dev(kubernetes_targets()[0], {"k8sModelMode": "mme"}).workload.mme
    assert mme is not None and mme.front_image is None


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(ConfigError, match="k8sModelMode"):
        read_dev(kubernetes_targets()[0], {"k8sModelMode": "lru"})


def test_mme_refuses_a_weight_cache_claim_on_the_same_mount() -> None:
    with pytest.raises(ConfigError, match="k8sWeightCacheClaim"):
        read_dev(kubernetes_targets()[0], {**MME, "k8sWeightCacheClaim": "weights"})


@pytest.mark.parametrize("target", kubernetes_targets())
def test_budget_is_derived_from_the_pod_unless_set(target: str) -> None:
    config = read_dev(target, MME)
    gpu = load_target(target).offer(config).gpu
    assert gpu is not None
    assert config.workload.mme.memory_budget_bytes == int(gpu.memory_gib * GIB * 0.9)
    cpu = read_dev(target, {**MME, "k8sWorkloadKind": "cpu", "k8sMemory": "12Gi"})
    assert cpu.workload.mme.memory_budget_bytes == int(12 * GIB * 0.9)
    pinned = read_dev(target, {**MME, "k8sMmeMemoryBudgetGiB": 7})
    assert pinned.workload.mme.memory_budget_bytes == 7 * GIB


def test_a_cpu_pod_with_a_bad_memory_quantity_is_named() -> None:
    overrides = {**MME, "k8sWorkloadKind": "cpu", "k8sMemory": "12 gigs"}
    with pytest.raises(ConfigError, match="k8sMemory"):
        read_dev(kubernetes_targets()[0], overrides)


# -- the Pulumi program under mocks ---------------------------------------------------------
@cache
def _run(target: str) -> Any:
    return run_stack(dev_stack(target), overrides=MME)


@pytest.fixture(autouse=True)
def _today(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TDK_TODAY", "2026-12-07")


@pytest.mark.parametrize("target", kubernetes_targets())
def test_program_installs_envoy_gateway_and_declares_the_routing(target: str) -> None:
    run = _run(target)
    charts = {r.inputs["chart"]: r for r in run.of_type("kubernetes:helm.sh/v3:Release")}
    eg = charts["oci://docker.io/envoyproxy/gateway-helm"]
    assert eg.inputs["version"] == gateway.GATEWAY_CHART_VERSION
    values = eg.inputs["values"]["config"]["envoyGateway"]
    assert values["extensionApis"] == {"enableEnvoyPatchPolicy": True}
    declared = {r.type.rsplit(":", 1)[1]: r for r in run.resources if r.type.startswith("kub")}
    for kind, file in GATEWAY_SCHEMAS.items():
        resource = declared[kind]
        jsonschema.validate(resource.inputs, _schema(file))
        # the CRDs exist only once the chart is installed
        assert eg.options.urn in resource.options.dependencies
    pod = declared["Deployment"].inputs["spec"]["template"]["spec"]
    assert [c["name"] for c in pod["containers"]] == ["triton", "front"]


@pytest.mark.parametrize("target", kubernetes_targets())
def test_program_in_all_mode_installs_no_gateway(target: str) -> None:
    run = run_stack(dev_stack(target))
    charts = {r.inputs["chart"] for r in run.of_type("kubernetes:helm.sh/v3:Release")}
    assert not any("gateway" in chart for chart in charts)


# -- tdk render k8s with the key set (a test-only project beside the committed one) ---------
@pytest.mark.parametrize("target", kubernetes_targets())
def test_render_cli_writes_an_mme_workload_that_validates(tmp_path: Path, target: str) -> None:
    from typer.testing import CliRunner

    from cli.main import app

    project = tmp_path / "project"
    project.mkdir()
    (project / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    stack = dev_stack(target)
    keys = "".join(f"  triton-deploy-kit:{k}: {v}\n" for k, v in MME.items())
    stack_file = (ROOT / f"Pulumi.{stack}.yaml").read_text()
    (project / f"Pulumi.{stack}.yaml").write_text(stack_file + keys)
    out = tmp_path / "out"
    args = ["render", "k8s", "--stack", stack, "--project-dir", str(project), "--out", str(out)]
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    files = json.loads(result.stdout)["files"]
    assert {f["kind"] for f in files} >= set(GATEWAY_SCHEMAS)
    tool = Path(sys.executable).with_name("kubernetes-validate")
    checked = subprocess.run(
        [str(tool), "--strict", "-k", K8S_VERSION, "--no-warn", *(f["path"] for f in files)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


# -- scaling, alerts and dashboards ---------------------------------------------------------
#: the series behind SageMaker's six multi-model metrics, as the front exports them
SIX_METRICS = (
    "tdk_model_cache_hit_sum",
    "tdk_loaded_model_count",
    "tdk_model_loading_wait_time_microseconds",
    "tdk_model_downloading_time_microseconds",
    "tdk_model_loading_time_microseconds",
    "tdk_model_unloading_time_microseconds",
)
#: what each cloud's dashboard is: a CloudWatch or Cloud Monitoring Dashboard, an Azure workbook
#: a cloud's dashboard, or a Grafana dashboard in a ConfigMap its sidecar loads
DASHBOARD_TYPES = ("Dashboard", "Workbook", "ConfigMap")


@pytest.mark.parametrize("target", kubernetes_targets())
def test_keda_scales_an_mme_workload_on_pending_requests_and_evictions(target: str) -> None:
    rendered = _rendered(target)
    scaled = _one(rendered, "ScaledObject")
    jsonschema.validate(scaled, _schema("keda.sh_scaledobject_v1alpha1.json"))
    triggers = {t["name"]: t["metadata"]["query"] for t in scaled["spec"]["triggers"]}
    assert set(triggers) == {"front-pending", "model-evictions"}
    assert "tdk_pending_requests" in triggers["front-pending"]
    assert "rate(tdk_model_evictions_total" in triggers["model-evictions"]
    assert all(t["metricType"] == "AverageValue" for t in scaled["spec"]["triggers"])


@pytest.mark.parametrize("target", kubernetes_targets())
def test_every_cloud_deploys_the_multi_model_alerts(target: str) -> None:
    from infra.k8s.alerts import workload_rules

    config = read_dev(target, MME)
    rules = workload_rules("ns", "job", config.workload.alerts)
    names = [rule.name for rule in rules]
    assert names[:3] == ["front-eviction-thrash", "front-cold-load-p99", "front-load-failures"]
    plain = workload_rules("ns", "job", read_dev(target).workload.alerts)
    assert not [rule for rule in plain if rule.name.startswith("front-")]
    cold = next(rule for rule in rules if rule.name == "front-cold-load-p99")
    assert "> 60000" in cold.query  # k8sMmeColdLoadSeconds' default, in ms
    # the program deploys them to the cloud's alerting (policies, rule groups)
    declared = " ".join(json.dumps(r.inputs) for r in _run(target).resources)
    assert all(name in declared for name in names[:3])


@pytest.mark.parametrize("target", kubernetes_targets())
def test_dashboards_chart_the_six_multi_model_metrics(target: str) -> None:
    dashboards = [r for r in _run(target).resources if r.type.endswith(DASHBOARD_TYPES)]
    assert dashboards, f"the {target} target builds no dashboard"
    body = " ".join(json.dumps(r.inputs) for r in dashboards)
    assert all(series in body for series in SIX_METRICS)
    plain = " ".join(json.dumps(r.inputs) for r in run_stack(dev_stack(target)).resources
                     if r.type.endswith(DASHBOARD_TYPES))  # fmt: skip
    assert not any(series in plain for series in SIX_METRICS)


@pytest.mark.parametrize("target", kubernetes_targets())
def test_stack_outputs_reach_the_front_in_mme_mode(target: str) -> None:
    """The pasteable port-forward and invoke commands name the port the Service serves (the
    front's 8080, Triton's 8000 is not on it in mme mode) and wait on the front's /ping."""
    import shlex

    outputs = _run(target).outputs
    assert outputs["portForward"].endswith(" 8080:8080")
    forward, rest = outputs["invokeCommand"].split(" >/dev/null & ", 1)
    assert forward == outputs["portForward"]
    assert "curl -sf http://127.0.0.1:8080/ping" in rest
    argv = shlex.split(rest.split("; done; ", 1)[1])
    assert argv[argv.index("--url") + 1] == "http://127.0.0.1:8080"
    service = _one(_rendered(target), "Service")
    assert [p["port"] for p in service["spec"]["ports"]] == [8080]


@pytest.mark.parametrize("target", kubernetes_targets())
def test_every_target_says_which_minors_its_cluster_runs(target: str) -> None:
    deploy = load_target(target)
    minors = deploy.cluster_minors(read_dev(target))
    assert minors.low <= minors.high and minors.setting
    assert gateway.GATEWAY_KUBERNETES_MINORS[0] <= minors.low  # the committed stacks fit


def test_mme_is_refused_on_a_cluster_beyond_envoy_gateways_kubernetes_range() -> None:
    """GKE's RAPID channel upgrades clusters to 1.37; Envoy Gateway v1.9 supports 1.33-1.36."""
    from infra.clouds.gcp.versions import GKE_CHANNELS

    assert GKE_CHANNELS["RAPID"][1] > gateway.GATEWAY_KUBERNETES_MINORS[1]
    with pytest.raises(ConfigError, match="gkeReleaseChannel RAPID") as refused:
        read_dev("gke", {**MME, "gkeReleaseChannel": "RAPID"})
    assert "Envoy Gateway v1.9.3" in refused.value.message
    assert "k8sModelMode" in (refused.value.hint or "")
    assert read_dev("gke", {"gkeReleaseChannel": "RAPID"}).workload.mme is None  # all: as before
