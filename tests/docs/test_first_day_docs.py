"""The README's road from a fresh clone to a cloud (issue 27): `tdk` is on PATH after the first
block, the cloud path names what to install and the state backend, versions in the docs are the
ones the stacks use, snippets paste (no `[--opt]`, no `<your-org>`, the completion folder is
created), and no page points to a file the repository does not have."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.docs.doc_blocks import ROOT, SHELL_TAGS, blocks, doc_files

README = ROOT / "README.md"
HELM_KEDA = re.compile(r"helm install keda \S+ --version (\S+)")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_tdk_is_on_path_after_the_first_block() -> None:
    first = blocks(README)[0].text.splitlines()
    demo = next(i for i, line in enumerate(first) if line.startswith("make demo"))
    activate = next(i for i, line in enumerate(first) if "source .venv/bin/activate" in line)
    uses = [i for i, line in enumerate(first) if line.startswith("tdk ")]
    assert demo < activate < min(uses), first
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^VENV\s*:=\s*\.venv$", makefile, re.M)
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert "tdk" in scripts  # what `pip install` puts in .venv/bin


def test_the_cloud_path_names_what_to_install_and_the_state_backend() -> None:
    text = README.read_text()
    cloud = text[text.index("## Deploy to a cloud") :]
    cloud = cloud[: cloud.index("\n## ", 5)]
    for needed in (
        "Pulumi CLI",
        "not come from PyPI",
        "kubectl",
        "pulumi login --local",
        "PULUMI_CONFIG_PASSPHRASE",
        "aws configure",
        "gcloud auth application-default login",
        "tdk doctor",
        "pulumi preview",
    ):
        assert needed in cloud.replace("\n", " ").replace("   ", " "), needed


K8S_STEPS = {
    "gke": ["pulumi login", "gcp:project", "gkeAuthorizedNetworks", "pulumi preview -s gke-dev",
            "pulumi up -s gke-dev", "KUBECONFIG", "kubectl -n triton port-forward"],
    "eks": ["pulumi login", "aws:region", "eksPublicAccessCidrs", "pulumi preview -s eks-dev",
            "pulumi up -s eks-dev", "update-kubeconfig", "kubectl -n triton port-forward"],
}  # fmt: skip


@pytest.mark.parametrize("cloud", sorted(K8S_STEPS))
def test_kubernetes_blocks_are_complete(cloud: str) -> None:
    """Each block reaches `pulumi preview` (what these machines allow) and goes on to invoke."""
    page = (ROOT / "docs" / "kubernetes.md").read_text()
    start = page.index(f"### {cloud.upper()}")
    block = page[start : page.index("```\n", page.index("```bash", start) + 7)]
    steps = K8S_STEPS[cloud]
    where = [block.index(step) for step in steps]
    assert where == sorted(where), dict(zip(steps, where, strict=True))


def test_keda_version_in_the_docs_is_the_stacks() -> None:
    from infra.k8s.addons import KEDA_CHART_VERSION
    from infra.targets import stacks

    shown = {m.group(1) for path in doc_files() for m in HELM_KEDA.finditer(path.read_text())}
    eks = stacks.load_stack(ROOT, "eks-dev").config.keda_version
    assert shown == {KEDA_CHART_VERSION} == {eks}, (shown, KEDA_CHART_VERSION, eks)


def _shell_lines() -> list[tuple[str, str]]:
    return [
        (block.where, line)
        for path in doc_files()
        for block in blocks(path)
        if block.tag in SHELL_TAGS | {"yaml", "yml"}
        for line in block.text.splitlines()
    ]


def test_snippets_have_no_optional_brackets_or_org_placeholders() -> None:
    bad = [
        f"{where}: {line}"
        for where, line in _shell_lines()
        if re.search(r"\[--[\w-]+", line) or "<your-org>" in line
    ]
    # `<pod>`, `<bucket>`: bash reads them as redirections (No such file or directory)
    bad += [
        f"{block.where}: {line}"
        for path in doc_files()
        for block in blocks(path)
        if block.tag in ("bash", "sh")
        for line in block.text.splitlines()
        if re.search(r"<[A-Za-z][\w.-]*>", line.split(" #")[0].split("'")[0])
    ]
    assert not bad, "\n".join(bad)


def test_no_page_points_to_a_file_the_repository_lacks() -> None:
    missing = []
    for path in [*doc_files(), ROOT / "Makefile"]:
        text = path.read_text()
        for name in ("ENVIRONMENT.md", "DESIGN notes", "DESIGN.md"):
            if name in text and not (ROOT / name.split()[0]).exists():
                missing.append(f"{path.name}: {name}")
        for target in LINK.findall(text):
            if target.startswith(("http://", "https://", "#", "mailto:")):
                continue
            file, _, anchor = target.partition("#")
            where = (path.parent / file).resolve()
            if not where.exists():
                missing.append(f"{path.name}: {target}")
            elif anchor and where.suffix == ".md":
                slugs = {_slug(h) for h in re.findall(r"^#+ (.+)$", where.read_text(), re.M)}
                if anchor not in slugs:
                    missing.append(f"{path.name}: {target} (no such heading)")
    assert not missing, missing


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _completion_instructions() -> list[tuple[str, str]]:
    """Every command line README and docs show that sets up shell completion."""
    from tests.docs.doc_blocks import tdk_lines

    return [
        (where, line)
        for path in doc_files()
        for where, line in tdk_lines(path)
        if re.search(r"tdk\s+(completion\b|--install-completion|--show-completion)", line)
    ]


def test_there_is_one_completion_instruction() -> None:
    """One way to set up completion (issue 40, row 6), documented once: README's, which the
    next test runs; typer's root options are hidden deprecated aliases naming it."""
    found = _completion_instructions()
    assert [line.split("#")[0].strip() for _, line in found] == [
        "tdk completion bash > ~/.local/share/bash-completion/completions/tdk"
    ], found
    assert found[0][0].startswith("README.md:")


@pytest.mark.parametrize("shell", ["bash"])
def test_completion_snippet_pastes_into_a_fresh_home(shell: str, tmp_path: Path) -> None:
    [block] = [b for b in blocks(README) if f"tdk completion {shell} >" in b.text]
    lines = block.text.splitlines()
    upto = next(i for i, line in enumerate(lines) if f"tdk completion {shell} >" in line)
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(ROOT),
    }
    script = "\n".join(lines[: upto + 1])
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [".local"]  # nothing else written
    written = tmp_path / ".local" / "share" / "bash-completion" / "completions" / "tdk"
    # what bash-completion does with the file: source it, then complete `tdk pac`
    complete = subprocess.run(
        ["bash", "-c", f"source {written} && complete -p tdk"],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert "_tdk_completion" in complete.stdout, complete.stderr
    asked = {**env, "_TDK_COMPLETE": "complete_bash", "COMP_WORDS": "tdk pac", "COMP_CWORD": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "cli"], env=asked, capture_output=True, text=True, timeout=60
    )
    assert done.stdout.split() == ["package"], done.stderr


def test_the_old_completion_options_are_hidden_and_name_the_one_way(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from cli.main import app

    runner = CliRunner()
    shown = runner.invoke(app, ["--help"]).output
    assert "--install-completion" not in shown and "--show-completion" not in shown
    result = runner.invoke(app, ["--show-completion", "bash"], env={"HOME": str(tmp_path)})
    assert "tdk --show-completion is now `tdk completion bash > " in result.stderr
    assert "deprecated" in result.stderr


def _make_tree(tmp: Path) -> Path:
    """A copy of the Makefile and the files its rules depend on (contents do not matter to
    ``make -n``, which prints the recipes without running them)."""
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "Makefile").write_text((ROOT / "Makefile").read_text())
    for name in (
        "pyproject.toml",
        "infra/targets/local/runtime-requirements.txt",
        "model_repos/generate.py",
        "model_repos/inputs.py",
        "requirements/dev.lock",
        "requirements/triton-runtime.lock",
    ):
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / name).write_text("")
    return tmp


def _dry_run(tmp: Path, goal: str) -> str:
    done = subprocess.run(
        ["make", "-n", goal], cwd=tmp, capture_output=True, text=True, timeout=60, check=True
    )
    return done.stdout


def test_make_demo_installs_only_what_the_demo_needs(tmp_path: Path) -> None:
    demo = _dry_run(_make_tree(tmp_path), "demo")
    assert "-c requirements/dev.lock ." in demo and "-e " not in demo  # plain: no editable notice
    assert "[infra,dev]" not in demo and "prometheus" not in demo, demo
    assert "-c requirements/triton-runtime.lock" in demo  # the runtime is pinned too
    assert "local demo" in demo
    everything = _dry_run(tmp_path, "test")
    assert "-c requirements/dev.lock -e '.[infra,dev]'" in everything and "prometheus" in everything


def test_what_needs_root_prints_the_one_command(tmp_path: Path) -> None:
    tree = _make_tree(tmp_path / "tree")
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "id").write_text("#!/bin/sh\necho 1000\n")  # not root
    (fake / "id").chmod(0o755)
    keep = ("sh", "make", "grep")  # and no promtool, prometheus or apt-get
    for name in keep:
        found = subprocess.run(["which", name], capture_output=True, text=True).stdout.strip()
        os.symlink(found, fake / name)
    done = subprocess.run(
        ["make", "prometheus"],
        cwd=tree,
        env={"PATH": str(fake)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "needs root" in done.stderr and "sudo apt-get install -y prometheus" in done.stderr


#: the top-level modules of the optional extras (pyproject.toml: infra, dev)
EXTRA_MODULES = (
    "pulumi,pulumi_aws,pulumi_gcp,pulumi_kubernetes,pulumi_aws_native,sagemaker,pytest,moto,"
    "gcp_storage_emulator,kubernetes_validate,jsonschema,importlinter,onnxruntime,mypy"
)


def test_the_demo_runs_without_the_extras(sample_repo: Path, tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": f"{Path(__file__).with_name('without_extras')}{os.pathsep}{ROOT}",
        "TDK_BLOCK_FOR": sys.executable,
        "TDK_BLOCKED_MODULES": EXTRA_MODULES,
    }
    dest = f"file://{tmp_path / 'release'}"
    steps = [
        ["-c", "import pulumi"],  # the blocker works
        ["-m", "cli", "validate", str(sample_repo)],
        ["-m", "cli", "package", str(sample_repo), "--copies", "2", "--release", dest],
        ["-c", "import cli.local, infra.targets.local.serve, infra.clouds.aws.sagemaker.runtime"],
    ]
    codes = []
    for args in steps:
        done = subprocess.run(
            [sys.executable, *args], env=env, capture_output=True, text=True, timeout=120
        )
        codes.append(done.returncode)
        assert "Traceback" not in done.stderr or args[1] == "import pulumi", done.stderr
    assert codes == [1, 0, 0, 0]


def test_the_cloud_path_installs_the_infra_extra_before_pulumi_runs() -> None:
    """`make demo` installs the kit alone: the stacks' program (Pulumi.yaml runs it with .venv)
    and `validate --stack` need the infra extra, so the cloud path installs it first."""
    from infra.facts import INFRA_EXTRA_INSTALL

    text = README.read_text()
    cloud = text[text.index("## Deploy to a cloud") :]
    assert INFRA_EXTRA_INSTALL in cloud
    assert cloud.index(INFRA_EXTRA_INSTALL) < cloud.index("pulumi preview")
    assert "virtualenv: .venv" in (ROOT / "Pulumi.yaml").read_text()
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "pulumi" not in " ".join(extra["dependencies"])  # else the step would be needless


def test_chart_pins_in_the_docs_are_what_the_eks_stack_installs() -> None:
    """docs/kubernetes.md said device plugin 0.17.0 and Cluster Autoscaler 9.50.1 while the
    eks-dev stack installs 0.20.0 and 9.59.0 (as the KEDA version had drifted before)."""
    from infra.facts.kubernetes import autoscaler_for, device_plugin_for
    from infra.targets import stacks

    page = (ROOT / "docs" / "kubernetes.md").read_text().replace("\n", " ")
    plugin = re.search(r"NVIDIA device plugin \((\d[\w.]*)\)", page)
    autoscaler = re.search(
        r"Cluster Autoscaler \(chart (\d[\w.]*) on the stack's Kubernetes (\S+),", page
    )
    assert plugin and autoscaler, "docs/kubernetes.md no longer names the chart pins"
    kubernetes = stacks.load_stack(ROOT, "eks-dev").config.kubernetes_version
    assert autoscaler.group(2) == kubernetes
    assert plugin.group(1) == device_plugin_for(kubernetes).version
    assert autoscaler.group(1) == autoscaler_for(kubernetes).version


def test_the_plan_walkthrough_names_the_warning_plan_prints() -> None:
    """docs/inferentia.md said unmeasured types are marked "(assumed)"; plan prints `*` and a
    NOT MEASURED warning (issue 27, friction 7)."""
    from typer.testing import CliRunner

    from cli.main import app

    page = (ROOT / "docs" / "inferentia.md").read_text()
    example = str(ROOT / "docs" / "examples" / "g4dn.json")
    args = ["plan", example, "--latency-budget-ms", "50", "--peak-rps", "100"]
    result = CliRunner().invoke(app, [*args, "--instance-type", "ml.g5.xlarge"])
    assert result.exit_code == 0, result.output
    assert '"(assumed)"' not in page
    for said in ("NOT MEASURED (every candidate)", "`*`"):
        assert said.strip("`") in result.output and said in page, said
