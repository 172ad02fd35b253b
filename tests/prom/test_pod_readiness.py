"""Pod readiness on the Kubernetes targets (issue 40, item 2): ``endpoint status`` reads the
Deployment's pods with kubectl (Ready/NotReady counts; CrashLoopBackOff with the last
termination message, ImagePullBackOff, Pending and unschedulable) and ``endpoint wait`` fails
naming the reason when they crash-loop. A fake ``kubectl`` first on PATH prints pod lists in
the shape ``kubectl get pods -o json`` prints (Pod v1: PodStatus, ContainerStatus;
tests/prom/pods/), and records its argv; garbage from it is an error naming kubectl, not a
traceback."""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.k8s.spec import triton_selector
from infra.targets import stacks
from tests.prom.test_bad_release_k8s import INDEX
from tests.registry_lists import dev_stack, kubernetes_targets
from tests.stand_ins import triton_stand_in

PODS = Path(__file__).parent / "pods"
ROOT = Path(__file__).resolve().parents[2]
FAKE = """#!{python}
import json, os, sys
with open(os.environ["FAKE_KUBECTL_ARGV"], "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\\n")
sys.stdout.buffer.write(open(os.environ["FAKE_KUBECTL_ANSWER"], "rb").read())
sys.stderr.write(os.environ.get("FAKE_KUBECTL_STDERR", ""))
sys.exit(int(os.environ.get("FAKE_KUBECTL_EXIT", "0")))
"""


class Kubectl:
    """The fake kubectl: what it answers next, and the command lines it was given."""

    def __init__(self, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.tmp, self.monkeypatch = tmp, monkeypatch
        self.argv_file = tmp / "argv.jsonl"
        bin_dir = tmp / "bin"
        bin_dir.mkdir()
        kubectl = bin_dir / "kubectl"
        kubectl.write_text(FAKE.format(python=sys.executable))
        kubectl.chmod(kubectl.stat().st_mode | stat.S_IXUSR)
        monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
        monkeypatch.setenv("FAKE_KUBECTL_ARGV", str(self.argv_file))

    def answers(self, body: bytes | Path, exit_code: int = 0, stderr: str = "") -> None:
        answer = self.tmp / "answer"
        answer.write_bytes(body.read_bytes() if isinstance(body, Path) else body)
        self.monkeypatch.setenv("FAKE_KUBECTL_ANSWER", str(answer))
        self.monkeypatch.setenv("FAKE_KUBECTL_EXIT", str(exit_code))
        self.monkeypatch.setenv("FAKE_KUBECTL_STDERR", stderr)

    @property
    def calls(self) -> list[list[str]]:
        lines = self.argv_file.read_text().splitlines() if self.argv_file.exists() else []
        return [json.loads(line) for line in lines]


@pytest.fixture
def kubectl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Kubectl]:
    yield Kubectl(tmp_path, monkeypatch)


@pytest.fixture(scope="module")
def triton() -> Iterator[str]:
    """A stand-in Triton: not ready, one model UNAVAILABLE in its repository index."""
    with triton_stand_in(ready=False, index=INDEX) as url:
        yield url


STACKS = [dev_stack(target) for target in kubernetes_targets()]


def _status(*args: str) -> dict[str, object]:
    result = CliRunner().invoke(app, ["endpoint", "status", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


@pytest.mark.parametrize("stack", STACKS)
def test_ready_pods_are_counted_and_the_deployment_selected(
    kubectl: Kubectl,
    triton: str,
    stack: str,
) -> None:
    kubectl.answers(PODS / "ready.json")
    state = _status("--stack", stack, "--url", triton)
    assert state["pods"] == "2 Ready, 0 NotReady"  # the terminating pod is not counted
    settings = stacks.load_stack(ROOT, stack)
    namespace, name = settings.config.workload.namespace, settings.config.common.name
    [argv] = kubectl.calls
    labels = ",".join(f"{k}={v}" for k, v in sorted(triton_selector(name).items()))
    assert argv[:7] == ["-n", namespace, "get", "pods", "-l", labels, "-o"]
    assert "json" in argv and any(a.startswith("--request-timeout=") for a in argv)


@pytest.mark.parametrize("stack", STACKS)
def test_crash_looping_pods_fail_status_and_wait_with_the_termination_message(
    kubectl: Kubectl, stack: str
) -> None:
    """No --url needed: the pods alone say it will not serve; wait fails at once."""
    kubectl.answers(PODS / "crashloop.json")
    state = _status("--stack", stack)
    assert state["status"] == "CrashLoopBackOff" and not state["ready"]
    message = "error: creating server: Internal - failed to load all models"
    assert message in str(state["failure_reason"])
    assert state["pod_problems"] == [
        {"pod": "tdk-gke-dev-7d9f8c6b5-2xkqp", "reason": "CrashLoopBackOff", "message": message}
    ]
    wait = CliRunner().invoke(app, ["endpoint", "wait", "--stack", stack, "--timeout", "600"])
    assert wait.exit_code == 1, wait.output
    said = " ".join(wait.output.split())
    assert "CrashLoopBackOff" in said and message in said
    assert len(kubectl.calls) == 2  # one look each: wait did not poll on


def test_the_table_names_the_pods_that_do_not_serve(kubectl: Kubectl) -> None:
    kubectl.answers(PODS / "imagepull.json")
    result = CliRunner(env={"COLUMNS": "120"}).invoke(
        app, ["endpoint", "status", "--stack", "gke-dev"]
    )
    assert result.exit_code == 0, result.output
    assert "ImagePullBackOff" in result.stdout and "pods that do not serve" in result.stdout
    assert "pods: 0 Ready, 1 NotReady" in result.stdout


@pytest.mark.parametrize("stack", STACKS)
def test_an_unschedulable_pod_is_named_and_wait_reports_it_at_the_timeout(
    kubectl: Kubectl, stack: str
) -> None:
    kubectl.answers(PODS / "pending.json")
    state = _status("--stack", stack)
    assert state["status"] == "NotReady" and state["pods"] == "0 Ready, 1 NotReady"
    assert "Unschedulable: 0/3 nodes are available: 3 Insufficient nvidia.com/gpu" in str(
        state["failure_reason"]
    )
    wait = CliRunner().invoke(app, ["endpoint", "wait", "--stack", stack, "--timeout", "0"])
    assert wait.exit_code == 1
    assert "still NotReady" in wait.output and "Insufficient nvidia.com/gpu" in wait.output


@pytest.mark.parametrize(
    "garbage",
    [
        b"<html>502 Bad Gateway</html>",
        b'{"items": 5}',
        b'{"items": [{"metadata": {"name": "p"}, "status": {"conditions": "yes"}}]}',
        b'{"items": [{"metadata": {}, "status": {}}]}',
        b'{"items": [' * 5000,
        b"\xff\xfe not utf-8",
    ],
    ids=["html", "items-not-list", "conditions-not-list", "no-name", "deep", "bytes"],
)
def test_garbage_from_kubectl_is_an_error_naming_kubectl(
    kubectl: Kubectl,
    triton: str,
    garbage: bytes,
) -> None:
    kubectl.answers(garbage)
    result = CliRunner().invoke(app, ["endpoint", "status", "--stack", "gke-dev", "--url", triton])
    assert result.exit_code == 1, result.output
    assert "kubectl get pods" in result.output and "hint:" in result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_a_failing_kubectl_leaves_status_to_triton(kubectl: Kubectl, triton: str) -> None:
    """No cluster in kubectl's context: the pods are said to be unread, Triton still answers."""
    kubectl.answers(b"", exit_code=1, stderr="The connection to the server was refused\n")
    state = _status("--stack", "gke-dev", "--url", triton)
    assert state["status"] == "Failed"  # the stand-in Triton's failed model
    assert state["pods"] == "not read: kubectl get pods failed (The connection to the server " \
        "was refused)"  # fmt: skip


def test_the_deployment_selects_its_pods_and_keeps_tritons_last_words() -> None:
    """What status reads is there: the Deployment selects the pods kubectl is asked for, and a
    crashed Triton's log tail becomes its termination message (Triton writes none itself)."""
    from infra.k8s import manifests
    from tests.infra.test_k8s_manifests import make_spec

    spec = make_spec()
    deployment = manifests.deployment(spec)
    assert deployment["spec"]["selector"]["matchLabels"] == triton_selector(spec.name)
    [triton] = deployment["spec"]["template"]["spec"]["containers"][:1]
    assert triton["terminationMessagePolicy"] == "FallbackToLogsOnError"
