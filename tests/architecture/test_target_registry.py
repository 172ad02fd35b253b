"""One registered target: a target added from a test-only folder (``tests/targets/dummy``,
through ``TDK_EXTRA_TARGETS``, no edit anywhere else) appears in every ``--target``, in
``tdk plan``, in ``tdk validate --target``/``--stack`` and in ``tdk render k8s``; and the CLI
speaks one vocabulary (same ``--target`` choices everywhere, ``--stack`` a name, no command
with both ``--endpoint`` and ``--endpoint-url``)."""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from infra.targets.entry import TargetEntry

ROOT = Path(__file__).resolve().parents[2]
DUMMY = "tests.targets.dummy.entry"

#: every --target option, every --stack option and every command's option names, as JSON
_SURVEY = """
import enum, json, typing, typer
from cli.main import build_app
def walk(command, path):
    if hasattr(command, "commands"):
        for name, sub in command.commands.items():
            yield from walk(sub, path + [name])
    else:
        yield " ".join(path), command
def kinds(param):
    annotation = param.type_descriptor.annotation
    return [a for a in (typing.get_args(annotation) or (annotation,)) if a is not type(None)]
def choices(param):
    [kind] = kinds(param)
    assert isinstance(kind, type) and issubclass(kind, enum.Enum), kind
    return [member.value for member in kind]
rows = []
for path, command in walk(typer.main.get_command(build_app()), []):
    options = [o for p in command.params for o in p.opts]
    targets = [choices(p) for p in command.params if "--target" in p.opts]
    stacks = [[k.__name__ for k in kinds(p)] for p in command.params if "--stack" in p.opts]
    rows.append({"command": path, "options": options, "targets": targets, "stacks": stacks})
print(json.dumps(rows))
"""


def _builtin_entries() -> list[TargetEntry]:
    """The ``ENTRY`` of every ``infra/targets/*/entry.py``, found by walking the folder (not
    through the registry), so a target the registry's discovery missed fails the test."""
    found = []
    for path in sorted((ROOT / "infra" / "targets").glob("*/entry.py")):
        entry = getattr(
            importlib.import_module(f"infra.targets.{path.parent.name}.entry"), "ENTRY", None
        )
        if entry is not None:
            found.append(entry)
    return found


def test_the_targets_are_discovered_in_their_declared_order() -> None:
    """Adding a target is a folder with an ``entry.py``: the registry finds it (no list to
    edit) and orders the built-in targets by their ``order``; each order is its own."""
    from infra.targets import registry

    entries = _builtin_entries()
    assert len({e.order for e in entries}) == len(entries), "two targets share an order"
    assert registry.names() == [e.name for e in sorted(entries, key=lambda e: e.order)]
    # the order the --target choices had when the list was hand-written (a new target, such
    # as the Azure one, may stand anywhere among them)
    before = ["sagemaker", "sagemaker-ic", "gke", "eks", "local"]
    assert [name for name in registry.names() if name in before] == before


def _env(extra: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "TDK_EXTRA_TARGETS"}
    env["PYTHONPATH"] = str(ROOT)
    env["NO_COLOR"] = "1"
    env["COLUMNS"] = "200"
    if extra:
        env["TDK_EXTRA_TARGETS"] = extra
    return env


def _run(
    args: list[str], extra: str | None = DUMMY, cwd: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], env=_env(extra), cwd=cwd, capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip


def _tdk(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return _run(["-m", "cli", *args], cwd=cwd)


def _survey(extra: str | None) -> list[dict[str, object]]:
    done = _run(["-c", _SURVEY], extra)
    assert done.returncode == 0, done.stderr
    rows: list[dict[str, object]] = json.loads(done.stdout)
    return rows


@pytest.mark.parametrize("extra", [None, DUMMY], ids=["builtin", "with-dummy"])
def test_one_cli_vocabulary(extra: str | None) -> None:
    rows = _survey(extra)
    choices = {json.dumps(t) for row in rows for t in row["targets"]}  # type: ignore[attr-defined]
    assert len(choices) == 1, f"--target choices differ between commands: {choices}"
    [found] = [json.loads(c) for c in choices]
    # the built-in targets in their declared order (discovered, not listed), extras after
    builtin = sorted(_builtin_entries(), key=lambda e: e.order)
    want = [e.name for e in builtin] + (["dummy"] if extra else [])
    assert found == want
    with_target = {row["command"] for row in rows if row["targets"]}
    assert {"invoke", "bench tensors", "bench generate", "metrics", "endpoint status",
            "endpoint wait", "validate", "plan"} <= with_target  # fmt: skip
    for row in rows:
        options = row["options"]
        assert "--endpoint-url" not in options, row["command"]  # type: ignore[operator]
        assert row["stacks"] in ([], [["str"]]), f"{row['command']}: --stack is a name"
        assert not ({"--endpoint", "--endpoint-url"} <= set(options)), row["command"]  # type: ignore[arg-type]


def _dummy_project(tmp_path: Path) -> Path:
    """A project holding the kit's Pulumi.yaml and one dummy stack, ``dummy-dev``."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "Pulumi.yaml", project / "Pulumi.yaml")
    (project / "Pulumi.dummy-dev.yaml").write_text(
        "config:\n"
        "  triton-deploy-kit:target: dummy\n"
        "  triton-deploy-kit:name: tdk-dummy-dev\n"
        "  triton-deploy-kit:dummyBox: box.large\n"
        "  triton-deploy-kit:dummyRegion: moon-2\n"
    )
    return project


def test_doctor_asks_the_target_for_its_cloud_and_its_facts(tmp_path: Path) -> None:
    """doctor guessed a stack's cloud from its key prefixes (a new cloud's stack got no
    credentials check, and "ok") and picked facts by config attribute names (a
    ``kubernetes_version`` was judged on the EKS calendar; "1.30" raised KeyError): both are
    now the registered target's (``TargetEntry.cloud``, ``Target.doctor``)."""
    project = _dummy_project(tmp_path)
    done = _tdk("doctor", "--project-dir", str(project), "--stack", "dummy-dev", "--json")
    assert "Traceback" not in done.stderr, done.stderr
    document = json.loads(done.stdout)
    facts = {f["fact"]: f["value"] for f in document["stacks"]["dummy-dev"]}
    assert facts["moon calendar"] == "1.30" and "Kubernetes version" not in facts
    moon = [(c["check"], c["status"]) for c in document["machine"] if c["scope"] == "moon"]
    assert moon == [("credentials", "missing")]
    assert ("tools", "moonctl") in {(c["scope"], c["check"]) for c in document["machine"]}
    [cloud] = document["clouds"]
    assert (cloud["cloud"], cloud["status"], cloud["stacks"]) == ("moon", "not ready", "dummy-dev")
    assert "moon credentials" in cloud["fix"]


def test_the_dummy_target_is_everywhere(tmp_path: Path, sample_repo: Path) -> None:
    project = _dummy_project(tmp_path)
    # tdk plan: the dummy's candidates, priced by the dummy, led by the measured box
    bench = tmp_path / "bench.json"
    level = {"mode": "concurrency", "level": 1, "throughput_rps": 100, "p50_ms": 5,
             "p90_ms": 8, "p99_ms": 10, "errors": {}}  # fmt: skip
    bench.write_text(json.dumps({"target": "dummy", "instance_type": "box.small", "gpu": None,
                                 "target_model": "m-0.tar.gz", "levels": [level]}))  # fmt: skip
    done = _tdk("plan", str(bench), "--peak-rps", "1000", "--latency-budget-ms", "50", "--json")
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert plan["region"] == "moon-1"
    assert [o["name"] for o in plan["options"]] == ["box.small", "box.large"]
    assert plan["options"][0]["unit_rps_measured"] is True

    # tdk plan --write-stack: the dummy's own scaling keys
    stack_file = project / "Pulumi.dummy-dev.yaml"
    done = _tdk("plan", str(bench), "--peak-rps", "1000", "--latency-budget-ms", "50",
                "--write-stack", str(stack_file),
                "--instance-type", "box.large:100", "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "dummyMaxBoxes: 20" in stack_file.read_text()

    # tdk validate --target dummy, and --stack of a dummy stack: the target's checks run
    for args in (["--target", "dummy", "--instance-type", "box.small"],
                 ["--stack", "dummy-dev"]):  # fmt: skip
        done = _tdk("validate", str(sample_repo), *args, "--json", "--project-dir", str(project))
        assert done.returncode == 0, done.stderr
        assert re.search(r"working set on box\.(small|large): text_classifier", done.stderr)
    # ... through the dummy's own config parser: a box it does not have is refused
    done = _tdk("validate", str(sample_repo), "--target", "dummy", "--instance-type", "box.tiny",
                "--json", "--project-dir", str(project))  # fmt: skip
    assert done.returncode == 1 and "box.tiny" in done.stdout and "TDK910" in done.stdout

    # tdk render k8s: the dummy renders its own manifests, with its output placeholder
    done = _tdk("render", "k8s", "--stack", "dummy-dev", "--project-dir", str(project),
                "--out", "-")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "kind: ConfigMap" in done.stdout and "box: box.large" in done.stdout
    assert "${dummyEndpoint}" in done.stdout

    # tdk endpoint status: the dummy's client; invoke: its refusal, with its reason
    done = _tdk("endpoint", "status", "--target", "dummy", "--endpoint", "dream", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "Dreaming"
    done = _tdk("invoke", "--target", "dummy", "--endpoint", "dream", "--release",
                f"file://{tmp_path}/none", "--target-model", "m-0.tar.gz")  # fmt: skip
    assert done.returncode != 0


def test_without_the_variable_the_dummy_is_not_a_target() -> None:
    done = _run(["-m", "cli", "endpoint", "status", "--target", "dummy"], extra=None)
    assert done.returncode == 2
    assert "dummy" in done.stderr and "sagemaker" in done.stderr


def test_a_broken_extra_target_is_a_clear_error() -> None:
    done = _run(["-m", "cli", "endpoint", "status", "--target", "local"], extra="no.such.module")
    assert done.returncode != 0
    assert "TDK_EXTRA_TARGETS" in done.stderr and "Traceback" not in done.stderr


def test_deprecated_spellings_still_work_with_a_warning(tmp_path: Path) -> None:
    """--target k8s (now gke/eks), --endpoint-url (now --s3-endpoint-url) and validate's
    --stack PATH (now a name) keep working for one release, each with a warning."""
    done = _run(["-m", "cli", "invoke", "--target", "k8s", "--url", "http://127.0.0.1:9",
                 "--release", f"file://{tmp_path}/none", "--endpoint-url", "http://127.0.0.1:9",
                 "--target-model", "m-0.tar.gz"], extra=None)  # fmt: skip
    assert "--target k8s is now --target gke or --target eks" in done.stderr
    assert "--endpoint-url is now --s3-endpoint-url" in done.stderr
    assert "No such option" not in done.stderr and "Invalid value" not in done.stderr
    done = _run(["-m", "cli", "validate", str(ROOT / "tests"), "--stack",
                 str(ROOT / "Pulumi.gke-dev.yaml")], extra=None)  # fmt: skip
    assert "--stack takes a stack name now: use --stack gke-dev" in done.stderr
    assert "working set" in done.stderr or done.returncode in (0, 1)


def test_listing_the_targets_loads_no_cloud_sdk() -> None:
    """Every command builds its ``--target`` choices from the registry: loading every entry
    (the dummy's too) must not import Pulumi or a cloud SDK (entries import those lazily)."""
    script = (
        "import sys\n"
        "from infra.targets import registry\n"
        "assert 'dummy' in registry.names()\n"
        "heavy = ('pulumi', 'boto3', 'botocore', 'google.cloud', 'google.auth')\n"
        "print(sorted(m for m in sys.modules if m.startswith(heavy)))\n"
    )
    done = _run(["-c", script])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
