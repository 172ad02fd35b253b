"""AKS's node driver against the engine images (issue 48 item 4): AKS installs the GRID driver
on the A10 sizes and the R580 LTS CUDA driver on the compute sizes (Azure/AgentBaker)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from infra.clouds.azure import catalog
from infra.config import ConfigReader
from infra.targets import stacks
from infra.targets.feasibility import feasible
from tests.infra.pulumi_harness import stack_config
from tests.validate.llm import corpus as c


def _stack(name: str, overrides: dict[str, Any]) -> stacks.StackSettings:
    return stacks.settings(ConfigReader(stack_config(name, overrides).get), name)


def test_aks_grid_driver_below_cuda_13_says_only_forward_compatibility_could_run_it(
    tmp_path: Path,
) -> None:
    """The A10 sizes get AKS's GRID driver (570.211.01), below CUDA 13's 580: on a data-center
    GPU only forward compatibility can run the image, on branches tdk has not recorded, so
    validate, the program and doctor say it is unknown (TDK918) rather than guess."""
    repo = c.vllm_repo(tmp_path / "repo")
    size = "Standard_NV36ads_A10_v5"
    assert catalog.node_driver(size).version == "570.211.01"
    overrides = {"k8sModels": str(repo), "aksGpuVmSize": size}
    result = feasible(_stack("aks-dev", overrides))
    (said,) = [f for f in result.findings if f.code == "TDK918"]
    assert "570.211.01" in said.message and "github.com/Azure/AgentBaker" in said.message
    assert "forward-compatibility" in said.message and "unknown" in said.message
    # the T4 size gets the R580 LTS CUDA driver: it runs, through minor version compatibility
    t4 = feasible(_stack("aks-dev", {"k8sModels": str(repo)}))
    (minor,) = [f for f in t4.findings if f.code == "TDK918"]
    assert t4.ok and "580.159.04" in minor.message and "minor version" in minor.message
