"""The onprem target's config checks (each bad value named with its fix, before anything is
declared), its refusals in the contract's one shape (plan, build), and what `tdk validate`,
`tdk render k8s`, `tdk plan` and `tdk doctor` answer for it through the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.targets import registry
from infra.targets.base import build_port
from infra.targets.capabilities import PLAN, Refused
from infra.targets.onprem import doctor
from infra.targets.onprem.target import NO_BUILD, TARGET
from tdk.errors import ConfigError, UsageError
from tests.registry_lists import read_dev

ROOT = Path(__file__).resolve().parents[3]
runner = CliRunner()


@pytest.fixture(autouse=True)
def _today(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TDK_TODAY", "2026-12-07")


@pytest.mark.parametrize(
    ("overrides", "message", "hint"),
    [
        ({"releaseUrl": "file:///srv/releases/v1"}, "this machine's disk", "--release s3://"),
        ({"releaseUrl": ""}, "releaseUrl is empty", "tdk package --release s3://"),
        ({"releaseUrl": "az://acct"}, "names its account and container", "az://<account>/"),
        ({"releaseUrl": "az://acct/c/v1", "onpremReleaseSecret": ""}, "account's key", "Secret"),
        ({"onpremReleaseSecret": "Bad_Name"}, "not a Kubernetes Secret name", "tdk-release"),
        ({"onpremS3EndpointUrl": "minio:9000"}, "not an http(s)://host", "http://minio"),
        ({"onpremS3EndpointUrl": "http://m:9000/bucket"}, "only scheme, host", "http://m:9000"),
        ({"onpremKubernetesVersion": ""}, "onpremKubernetesVersion is empty", "kubectl version"),
        ({"onpremKubernetesVersion": "1.27"}, "no KEDA release", "upgrade the cluster"),
        ({"onpremGpu": "K80"}, "not a GPU kind tdk knows", "nvidia.com/gpu.product"),
        ({"k8sGpusPerPod": 2}, "exceeds the 1 GPU(s) of a node", "onpremGpusPerNode"),
        ({"k8sModelMode": "mme"}, "no registry to build the front", "docker/front.Dockerfile"),
        ({"onpremPrometheusUrl": ""}, "KEDA scales Triton on PromQL", "prometheus-operated"),
        ({"onpremPrometheusLabels": "release"}, "not a name=value pair", "release=monitoring"),
        (
            {"k8sServiceExposure": "internal-lb", "onpremInternalLbAnnotations": ""},
            "its own annotation",
            "cluster-ip",
        ),
        (
            {"k8sModelMode": "mme", "k8sFrontImage": "f:1", "onpremKubernetesVersion": "1.29"},
            "installs Envoy Gateway",
            "k8sModelMode",
        ),
    ],
)
def test_a_bad_value_names_its_key_and_the_fix(
    overrides: dict[str, Any], message: str, hint: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        read_dev("onprem", overrides)
    assert message in raised.value.message and hint in f"{raised.value.message} {raised.value.hint}"


def test_the_committed_stack_reads_into_its_typed_config() -> None:
    config = read_dev("onprem")
    assert (config.gpu.kind, config.gpus_per_node, config.keda_version) == ("L4", 1, "2.20.2")
    assert config.s3_endpoint is not None and config.s3_endpoint.triton_prefix == (
        "minio.minio.svc:9000"
    )
    https = read_dev("onprem", {"onpremS3EndpointUrl": "https://s3.lab.example"})
    assert https.s3_endpoint.triton_prefix == "https://s3.lab.example:443"
    offer = TARGET.offer(config)
    assert offer.gpu is not None and offer.gpu.kind == "L4" and offer.loading is not None
    assert not offer.loading.on_demand and offer.loading.mode.endswith("k8sModelMode all")


def test_plan_and_build_are_refused_in_the_one_shape() -> None:
    entry = registry.get("onprem")
    assert isinstance(entry.plan, Refused) and entry.refused(PLAN) == entry.plan
    with pytest.raises(UsageError) as planned:
        registry.plan_port(entry)
    assert "already bought" in planned.value.message and "gke" in planned.value.hint
    assert isinstance(TARGET.build, Refused) and TARGET.build.reason == NO_BUILD
    with pytest.raises(UsageError, match="cannot build TensorRT engines on its own compute"):
        build_port(TARGET, "onprem")


def _tdk(*args: str) -> Any:
    return runner.invoke(app, list(args))


def test_validate_a_stack_and_flags_through_the_one_feasibility_path(sample_repo: Path) -> None:
    done = _tdk("validate", str(sample_repo), "--stack", "onprem-dev", "--project-dir", str(ROOT))
    assert done.exit_code == 0, done.output
    flags = _tdk("validate", str(sample_repo), "--target", "onprem", "--gpu", "A10G")
    assert flags.exit_code == 0, flags.output
    bad = _tdk("validate", str(sample_repo), "--target", "onprem", "--gpu", "K80")
    assert bad.exit_code == 1 and "TDK910 --gpu: 'K80', not a GPU kind" in bad.output
    wrong = _tdk("validate", str(sample_repo), "--target", "onprem", "--instance-type", "x")
    assert wrong.exit_code == 2 and "--target onprem takes --gpu, --image" in wrong.output


def test_render_writes_the_manifests_with_no_placeholder_output(tmp_path: Path) -> None:
    done = _tdk(
        "render", "k8s", "--stack", "onprem-dev", "--project-dir", str(ROOT),
        "--out", str(tmp_path / "out"), "--json",
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    assert report["placeholders"] == []  # every output is the stack's own: nothing to fill
    assert "still holds placeholder values" in done.stderr  # the example bucket
    kinds = [path.name.split("-")[1] for path in sorted((tmp_path / "out").glob("*.yaml"))]
    assert kinds[:3] == ["namespace", "serviceaccount", "deployment"]
    assert {"podmonitor", "prometheusrule", "configmap"} <= set(kinds)


def test_doctor_reports_keda_and_the_image_and_needs_no_cloud() -> None:
    done = _tdk("doctor", "--project-dir", str(ROOT), "--stack", "onprem-dev", "--json")
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    facts = {f["fact"]: f for f in report["stacks"]["onprem-dev"]}
    assert facts["keda chart"]["value"] == "2.20.2"
    assert facts["keda chart"]["status"] == "unverified" and "1.33" in facts["keda chart"]["note"]
    assert "Triton image" in facts
    assert "onprem-dev" not in json.dumps(report.get("clouds", []))


def _answer(major: str, minor: str) -> str:
    return json.dumps({"clientVersion": {}, "serverVersion": {"major": major, "minor": minor}})


def test_online_drift_compares_the_stated_version_with_the_cluster() -> None:
    config = read_dev("onprem", {"onpremKubeconfig": "/k/lab.yaml"})
    asked: list[list[str]] = []

    def kubectl(argv: list[str]) -> str:
        asked.append(argv)
        return _answer("1", "33+")  # a managed cluster's minor carries a +

    assert doctor.version_drift(config, kubectl) == []
    assert asked[0][:4] == ["kubectl", "version", "-o", "json"]
    assert asked[0][-4:] == ["--kubeconfig", "/k/lab.yaml", "--context", "my-cluster"]
    (drift,) = doctor.version_drift(config, lambda argv: _answer("1", "31"))
    assert "says 1.33 but the cluster runs 1.31" in drift
    (odd,) = doctor.version_drift(config, lambda argv: "{}")
    assert "no serverVersion" in odd


def test_the_locator_reads_the_stack_s_prometheus_unless_told() -> None:
    from infra.targets import stacks
    from infra.targets.deployment import locator
    from infra.targets.onprem.client import OnpremClient

    settings = stacks.load_stack(ROOT, "onprem-dev")
    client = locator("onprem", {}, settings, {}).client()
    assert isinstance(client, OnpremClient) and client.target == "onprem"
    assert "prometheus-operated.monitoring.svc:9090" in json.dumps(client.where())
    forwarded = locator("onprem", {"prometheus_url": "http://127.0.0.1:9090"}, settings, {})
    assert "127.0.0.1:9090" in json.dumps(forwarded.client().where())
