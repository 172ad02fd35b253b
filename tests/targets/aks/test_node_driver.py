"""AKS's node driver against the engine images (issue 48 item 4): AKS installs the GRID driver
on the A10 sizes and the R580 LTS CUDA driver on the compute sizes (Azure/AgentBaker)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from infra.config import ConfigReader
from infra.targets import stacks
from infra.targets.aks import catalog
from infra.targets.feasibility import feasible
from tdk.errors import ConfigError
from tests.infra.pulumi_harness import run_stack, stack_config
from tests.validate.llm import corpus as c


def _stack(name: str, overrides: dict[str, Any]) -> stacks.StackSettings:
    return stacks.settings(ConfigReader(stack_config(name, overrides).get), name)


def test_aks_grid_driver_refuses_a_cuda_13_engine_image_in_validate_and_the_program(
    tmp_path: Path,
) -> None:
    """The A10 sizes get AKS's GRID driver (570.211.01), below CUDA 13's 580: refused."""
    repo = c.vllm_repo(tmp_path / "repo")
    size = "Standard_NV36ads_A10_v5"
    assert catalog.node_driver(size).version == "570.211.01"
    overrides = {"k8sModels": str(repo), "aksGpuVmSize": size}
    refusal = feasible(_stack("aks-dev", overrides)).first_refusal()
    assert refusal is not None and refusal.code == "TDK917", refusal
    assert "570.211.01" in refusal.message and "github.com/Azure/AgentBaker" in refusal.message
    run = run_stack("aks-dev", overrides, expect_error=True)
    assert isinstance(run.error, ConfigError) and "570.211.01" in str(run.error), run.error
    assert not run.of_type("kubernetes:apps/v1:Deployment")
    # the T4 size gets the R580 LTS CUDA driver: it runs, through minor version compatibility
    t4 = feasible(_stack("aks-dev", {"k8sModels": str(repo)}))
    assert t4.ok and [f.code for f in t4.findings if f.code.startswith("TDK91")] == ["TDK918"]
