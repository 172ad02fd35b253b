"""``tdk render k8s``: the committed stack files rendered to YAML that strict validation accepts."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from cli.main import app
from infra.k8s import promql
from tests.registry_lists import dev_stack, kubernetes_targets

ROOT = Path(__file__).resolve().parents[2]
K8S_VERSION = "1.33"  # the pinned Kubernetes version every manifest is validated against
runner = CliRunner()


def _render(tmp_path: Path, stack: str, *extra: str) -> dict:
    out = tmp_path / stack
    result = runner.invoke(
        app,
        [
            "render",
            "k8s",
            "--stack",
            stack,
            "--out",
            str(out),
            "--project-dir",
            str(ROOT),
            "--json",
            *extra,
        ],
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _validate_cli(paths: list[str]) -> subprocess.CompletedProcess[str]:
    tool = Path(sys.executable).with_name("kubernetes-validate")
    return subprocess.run(
        [str(tool), "--strict", "-k", K8S_VERSION, "--no-warn", *paths],
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.parametrize("stack", [dev_stack(t) for t in kubernetes_targets()])
def test_rendered_manifests_pass_kubernetes_validate_strict(tmp_path: Path, stack: str) -> None:
    listing = _render(tmp_path, stack)
    paths = [f["path"] for f in listing["files"]]
    assert all(Path(p).is_file() for p in paths)
    result = _validate_cli(paths)
    assert result.returncode == 0, result.stdout + result.stderr
    core = [
        f
        for f in listing["files"]
        if "." not in f["kind"]
        and f["kind"]
        in {"Namespace", "ServiceAccount", "Deployment", "Service", "PodDisruptionBudget"}
    ]
    assert result.stdout.count("passed") >= len(core) == 6  # Triton's ServiceAccount, the build's


def test_validation_catches_a_broken_rendered_file(tmp_path: Path) -> None:
    listing = _render(tmp_path, "gke-dev")
    deployment = next(f["path"] for f in listing["files"] if f["kind"] == "Deployment")
    doc = yaml.safe_load(Path(deployment).read_text())
    doc["spec"]["replica"] = 2
    Path(deployment).write_text(yaml.safe_dump(doc))
    assert _validate_cli([deployment]).returncode != 0


def test_gke_render_lists_files_in_apply_order_without_placeholders(tmp_path: Path) -> None:
    listing = _render(tmp_path, "gke-dev")
    kinds = [f["kind"] for f in listing["files"]]
    assert kinds == [
        "Namespace",
        "ServiceAccount",
        "Deployment",
        "Service",
        "PodDisruptionBudget",
        "TriggerAuthentication",
        "ScaledObject",
        "PodMonitoring",
        "ServiceAccount",  # tdk build's Job runs as it (the only writer of the engine cache)
    ]
    assert listing["target"] == "gke" and listing["placeholders"] == []
    scaled = yaml.safe_load(Path(listing["files"][6]["path"]).read_text())
    query = scaled["spec"]["triggers"][0]["metadata"]["query"]
    assert query == promql.queue_compute_ratio("triton", "tdk-gke-dev")


def test_render_is_the_same_workload_pulumi_applies(tmp_path: Path) -> None:
    from tests.infra.pulumi_harness import run_stack

    listing = _render(tmp_path, "gke-dev")
    rendered = yaml.safe_load(Path(listing["files"][2]["path"]).read_text())
    declared = run_stack("gke-dev").one("kubernetes:apps/v1:Deployment").inputs
    assert json.loads(json.dumps(declared["spec"])) == json.loads(
        json.dumps(rendered["spec"]), parse_int=float
    )


def test_eks_placeholders_filled_from_stack_outputs(tmp_path: Path) -> None:
    listing = _render(tmp_path, "eks-dev")
    assert sorted(listing["placeholders"]) == ["ampWorkspaceId", "buildRoleArn", "tritonRoleArn"]
    outputs = tmp_path / "outputs.json"
    arn = "arn:aws:iam::123456789012:role/tdk-eks-dev-triton-release-reader"
    build = "arn:aws:iam::123456789012:role/tdk-eks-dev-plan-builder"
    outputs.write_text(
        json.dumps({"tritonRoleArn": arn, "buildRoleArn": build, "ampWorkspaceId": "ws-1234"})
    )
    filled = _render(tmp_path, "eks-dev", "--outputs", str(outputs))
    assert filled["placeholders"] == []
    sa = yaml.safe_load(Path(filled["files"][1]["path"]).read_text())
    assert sa["metadata"]["annotations"] == {"eks.amazonaws.com/role-arn": arn}
    [builder] = [
        yaml.safe_load(Path(f["path"]).read_text())
        for f in filled["files"][2:]
        if f["kind"] == "ServiceAccount"
    ]
    assert builder["metadata"]["name"] == "tdk-eks-dev-build"
    assert builder["metadata"]["annotations"] == {"eks.amazonaws.com/role-arn": build}
    scaled = yaml.safe_load(Path(filled["files"][6]["path"]).read_text())
    address = scaled["spec"]["triggers"][0]["metadata"]["serverAddress"]
    assert address == "https://aps-workspaces.us-east-1.amazonaws.com/workspaces/ws-1234"


def test_non_kubernetes_stack_is_refused_with_a_hint(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        [
            "render",
            "k8s",
            "--stack",
            "sagemaker-dev",
            "--out",
            str(tmp_path),
            "--project-dir",
            str(ROOT),
        ],
    )
    assert result.exit_code == 2
    assert "sagemaker target has no Kubernetes manifests" in result.output
    assert "SageMaker runs the Triton container itself" in result.output
    assert "target that runs Triton on Kubernetes" in result.output


@pytest.mark.parametrize("target", kubernetes_targets())
def test_render_warns_about_the_committed_stack_s_placeholders(tmp_path: Path, target: str) -> None:
    """Every committed stack ships example names (``my-tdk-releases``, ...) that reach its
    manifests, whole or split (a target may write the release URL as an account and a
    container): render says so, whichever way the target writes them."""
    stack = dev_stack(target)
    args = ["render", "k8s", "--stack", stack, "--out", str(tmp_path / "out")]
    result = runner.invoke(app, [*args, "--project-dir", str(ROOT)])
    assert result.exit_code == 0, result.output
    assert f"Pulumi.{stack}.yaml still holds placeholder values" in result.output
    assert "they are in the manifests" in result.output
    assert "releaseUrl" in result.output  # the release's example bucket or container


def test_invalid_stack_config_fails_like_pulumi_up(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "Pulumi.yaml", project / "Pulumi.yaml")
    stack = yaml.safe_load((ROOT / "Pulumi.gke-dev.yaml").read_text())
    stack["config"]["triton-deploy-kit:gkeGpuType"] = "nvidia-tesla-k80"
    (project / "Pulumi.bad.yaml").write_text(yaml.safe_dump(stack))
    result = runner.invoke(
        app,
        [
            "render",
            "k8s",
            "--stack",
            "bad",
            "--out",
            str(tmp_path / "o"),
            "--project-dir",
            str(project),
        ],
    )
    assert result.exit_code == 1
    assert "retired by Google Cloud" in result.output
    assert not (tmp_path / "o").exists()


def test_missing_stack_file_names_it(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        ["render", "k8s", "--stack", "nope", "--out", str(tmp_path), "--project-dir", str(ROOT)],
    )
    assert result.exit_code == 2
    assert "Pulumi.nope.yaml does not exist" in result.output


def test_rerender_keeps_files_it_did_not_write(tmp_path: Path) -> None:
    """Issue 18 item 3: a person's files and another stack's manifests in --out stay."""
    out = tmp_path / "gke-dev"
    out.mkdir()
    mine = {"00-mine.yaml": "kind: ConfigMap\n", "09-configmap-old.yaml": "x\n", "n.md": "k\n"}
    for name, text in mine.items():
        (out / name).write_text(text)
    _render(tmp_path, "eks-dev", "--out", str(out))  # another stack into the same folder
    eks = {p.name for p in out.iterdir()} - set(mine)
    listing = _render(tmp_path, "gke-dev")
    for name, text in mine.items():
        assert (out / name).read_text() == text
    assert eks <= {p.name for p in out.iterdir()}
    assert all(Path(f["path"]).is_file() for f in listing["files"])


def test_rerender_removes_only_its_own_stale_files(tmp_path: Path) -> None:
    out = tmp_path / "gke-dev"
    _render(tmp_path, "gke-dev")
    ledger = json.loads((out / ".tdk-render-gke-dev.ledger").read_text())
    ledger["files"]["42-configmap-gone.yaml"] = _sha(b"old\n")
    ledger["files"]["43-configmap-edited.yaml"] = _sha(b"old\n")
    (out / ".tdk-render-gke-dev.ledger").write_text(json.dumps(ledger))
    (out / "42-configmap-gone.yaml").write_bytes(b"old\n")
    (out / "43-configmap-edited.yaml").write_bytes(b"edited by a person\n")
    listing = _render(tmp_path, "gke-dev")
    assert not (out / "42-configmap-gone.yaml").exists()
    assert (out / "43-configmap-edited.yaml").read_bytes() == b"edited by a person\n"
    assert listing["kept"] == [str(out / "43-configmap-edited.yaml")]


def test_rerender_refuses_to_overwrite_an_edited_manifest(tmp_path: Path) -> None:
    out = tmp_path / "gke-dev"
    listing = _render(tmp_path, "gke-dev")
    target = Path(listing["files"][0]["path"])
    target.write_text("# mine now\n")
    args = ["render", "k8s", "--stack", "gke-dev", "--out", str(out), "--project-dir", str(ROOT)]
    result = runner.invoke(app, args)
    assert result.exit_code != 0
    assert str(target) in result.output and "Traceback" not in result.output
    assert target.read_text() == "# mine now\n"


def test_rendered_directory_is_only_kubernetes_objects(tmp_path: Path) -> None:
    """`kubectl apply -f DIR` and `kubernetes-validate DIR`: the rule file lives beside it."""
    listing = _render(tmp_path, "eks-dev")
    out = tmp_path / "eks-dev"
    assert Path(listing["alert_rules"]) == tmp_path / "eks-dev.alerts.rules.yaml"
    # what `kubectl apply -f DIR` reads: every .yaml/.yml/.json file, hidden ones too
    yamls = sorted(str(p) for p in out.iterdir() if p.suffix in (".yaml", ".yml", ".json"))
    assert len(yamls) == len(listing["files"])
    result = _validate_cli(yamls)
    assert result.returncode == 0, result.stdout + result.stderr


def test_out_dash_is_one_yaml_stream_on_stdout(tmp_path: Path) -> None:
    args = ["render", "k8s", "--stack", "gke-dev", "--out", "-", "--project-dir", str(ROOT)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    docs = list(yaml.safe_load_all(result.stdout))
    listing = _render(tmp_path, "gke-dev")
    assert [d["kind"] for d in docs] == [f["kind"] for f in listing["files"]]
    stream = tmp_path / "stream.yaml"
    stream.write_text(result.stdout)
    assert _validate_cli([str(stream)]).returncode == 0


def test_out_naming_a_file_is_a_clear_error(tmp_path: Path) -> None:
    target = tmp_path / "a-file.yaml"
    target.write_text("mine\n")
    args = ["render", "k8s", "--stack", "gke-dev", "--out", str(target), "--project-dir", str(ROOT)]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "is a file" in result.output and "Traceback" not in result.output
    assert target.read_text() == "mine\n"


def test_docs_alert_count_matches_the_rendered_rules(tmp_path: Path) -> None:
    import re

    listing = _render(tmp_path, "eks-dev")
    rules = yaml.safe_load(Path(listing["alert_rules"]).read_text())["groups"][0]["rules"]
    words = {3: "three", 4: "four", 5: "five"}
    docs = (ROOT / "docs" / "kubernetes.md").read_text()
    counts = re.findall(r"\b(three|four|five) alert rules\b", docs)
    assert counts and set(counts) == {words[len(rules)]}, counts


def _sha(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("stack", [dev_stack(t) for t in kubernetes_targets()])
def test_render_never_imports_pulumi_or_a_cloud_sdk(tmp_path: Path, stack: str) -> None:
    """Rendering needs only pure builders: run it with those packages unimportable."""
    helper = Path(__file__).with_name("run_without_pulumi.py")
    out = tmp_path / stack
    result = subprocess.run(
        [sys.executable, str(helper), "render", "k8s", "--stack", stack, "--out", str(out),
         "--project-dir", str(ROOT), "--json"],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "blocked import" not in result.stderr
    assert json.loads(result.stdout)["files"]
