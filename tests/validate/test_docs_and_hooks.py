"""What ships around `tdk validate`: docs/rules.md generated from the registry, the pre-commit
hook run by the real `pre-commit` from a temporary git repository, and a fast, SDK-free start."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
TDK = Path(sys.executable).with_name("tdk")


def test_rules_doc_is_generated_from_the_registry() -> None:
    generated = subprocess.run(
        [sys.executable, "-m", "packager.validate.rules"], cwd=ROOT, capture_output=True, text=True,
        check=True, timeout=60,
    ).stdout  # fmt: skip
    assert (ROOT / "docs" / "rules.md").read_text() == generated, (
        "docs/rules.md is stale: run `python -m packager.validate.rules > docs/rules.md`"
    )
    from packager.validate.rules import RULES

    assert all(f"| {code} |" in generated for code in RULES)


@pytest.mark.parametrize(
    "extra",
    [[], ["--target", "sagemaker", "--instance-type", "ml.g5.xlarge"]],
    ids=["plain", "target"],
)
def test_validate_imports_no_cloud_sdk(sample_repo: Path, extra: list[str]) -> None:
    argv = ["tdk", "validate", str(sample_repo), "--json", *extra]
    probe = (
        "import sys\n"
        "from cli.main import main\n"
        f"sys.argv = {argv!r}\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('boto3', 'botocore', 'pulumi', 'pulumi_aws', 'pulumi_gcp', 'pulumi_kubernetes') "
        "or m.startswith('google.cloud'))\n"
        "sys.stderr.write('HEAVY=' + ','.join(heavy))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert json.loads(result.stdout) == []
    assert "HEAVY=" in result.stderr and result.stderr.rsplit("HEAVY=", 1)[1] == ""


def test_pre_commit_hook_definition() -> None:
    [hook] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "tdk-validate" and hook["entry"] == "tdk validate"
    assert hook["language"] == "python" and hook["pass_filenames"] is False


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=cwd, check=True, capture_output=True, timeout=60,
    )  # fmt: skip


@pytest.mark.e2e  # builds the hook's own environment: pip installs the kit at HEAD
@pytest.mark.timeout(900)
def test_pre_commit_runs_the_hook_from_this_repository(sample_repo: Path, tmp_path: Path) -> None:
    pre_commit = shutil.which("pre-commit") or str(Path(sys.executable).with_name("pre-commit"))
    if not Path(pre_commit).exists():
        pytest.skip("pre-commit is not installed (pip install pre-commit)")
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    project = tmp_path / "project"
    shutil.copytree(sample_repo, project / "models")
    config = {"repos": [{"repo": str(ROOT), "rev": head,
                         "hooks": [{"id": "tdk-validate", "args": ["models"]}]}]}  # fmt: skip
    (project / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": os.environ.get("TDK_PRE_COMMIT_HOME", str(tmp_path / "home")),
    }

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [pre_commit, "run", "--all-files"], cwd=project, env=env, capture_output=True,
            text=True, timeout=840,
        )  # fmt: skip

    passed = run()
    assert passed.returncode == 0, passed.stdout + passed.stderr
    config_path = project / "models" / "text_classifier" / "config.pbtxt"
    config_path.write_text(
        config_path.read_text().replace("max_batch_size: 8", "max_batch_size: -1")
    )
    failed = run()
    assert failed.returncode == 1
    assert "TDK201" in failed.stdout and "models/text_classifier/config.pbtxt:2:1" in failed.stdout
