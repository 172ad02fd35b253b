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


def test_gke_block_is_complete() -> None:
    page = (ROOT / "docs" / "kubernetes.md").read_text()
    gke = page[page.index("### GKE") : page.index("### EKS")]
    steps = [
        "pulumi login",
        "gcp:project",
        "gkeAuthorizedNetworks",
        "pulumi up -s gke-dev",
        "KUBECONFIG",
        "kubectl -n triton port-forward",
    ]
    where = [gke.index(step) for step in steps]
    assert where == sorted(where), dict(zip(steps, where, strict=True))


def test_keda_version_in_the_docs_is_the_stacks() -> None:
    from infra.k8s.addons import KEDA_CHART_VERSION
    from infra.targets import registry

    shown = {m.group(1) for path in doc_files() for m in HELM_KEDA.finditer(path.read_text())}
    eks = registry.load_stack(ROOT, "eks-dev").config.keda_version
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
    written = tmp_path / ".local" / "share" / "bash-completion" / "completions" / "tdk"
    assert "_TDK_COMPLETE" in written.read_text()
