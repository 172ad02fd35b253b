"""Stack files survive a round trip byte for byte; an edit changes only its own line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from infra.perf.plan.stackfile import load_stack
from tdk.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
STACKS = sorted(p.name for p in ROOT.glob("Pulumi.*.yaml"))


@pytest.mark.parametrize("name", STACKS)
def test_round_trip_is_byte_identical(name: str) -> None:
    stack = load_stack(ROOT / name)
    assert stack.project == "triton-deploy-kit"
    assert stack.render() == (ROOT / name).read_text()
    assert stack.diff() == ""


def test_edit_replaces_one_line_and_appends_new_keys(tmp_path: Path) -> None:
    path = Path(shutil.copy(ROOT / "Pulumi.eks-dev.yaml", tmp_path / "Pulumi.eks-dev.yaml"))
    path.write_text(path.read_text().replace("alertEmail: ops@example.com", 'alertEmail: ""'))
    before = path.read_text().splitlines()
    stack = load_stack(path)
    stack.set("eksGpuNodesMax", 9)
    stack.set("k8sPollingSeconds", 30)
    stack.write()
    after = path.read_text().splitlines()
    changed = [(a, b) for a, b in zip(before, after, strict=False) if a != b]
    assert changed == [
        ("  triton-deploy-kit:eksGpuNodesMax: 2", "  triton-deploy-kit:eksGpuNodesMax: 9")
    ]
    assert after[len(before) :] == ["  triton-deploy-kit:k8sPollingSeconds: 30"]
    assert '  triton-deploy-kit:alertEmail: ""' in after  # quoting kept


def test_not_a_stack_file(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.x.yaml"
    path.write_text("config:\n  aws:region: us-east-1\n")
    with pytest.raises(ConfigError, match="expected one '<project>:target' key"):
        load_stack(path)
    path.write_text("config: [1, 2\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_stack(path)
