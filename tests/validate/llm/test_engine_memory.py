"""Memory that means something for engine models: the weights from the release's safetensors,
else from the parameter count the model id states, else "unknown" with the reason; against the
share of the GPUs one replica gets. Never "0.0 MB: over 1000 copies"."""

from __future__ import annotations

import json
import struct
from pathlib import Path

from infra.targets import registry
from infra.targets.feasibility import feasible, flag_stack
from packager.publish import load_models
from packager.validate.engines.weights import parameters_in_id, safetensors_bytes
from tests.infra.pulumi_harness import ROOT
from tests.validate.llm import corpus as c


def _check(repo: Path, gpu: str = "nvidia-l4") -> tuple[list[str], str]:
    models = load_models([repo])
    stack = flag_stack(registry.get("gke"), {"gpu": gpu}, models, ROOT)
    result = feasible(stack, models)
    assert result.spec is not None
    codes = [f.code for f in result.findings if f.severity == "error"]
    return codes, result.fits[0].describe(result.spec.label)


def test_a_70b_model_on_one_l4_is_refused(tmp_path: Path) -> None:
    args = {"model": "meta-llama/Llama-3.1-70B-Instruct", "gpu_memory_utilization": 0.9}
    codes, line = _check(c.vllm_repo(tmp_path, args=args))
    assert codes == ["TDK904"], line
    assert "140.0 GB" in line and "70B parameters" in line and "over 1000" not in line


def test_a_small_model_fits_and_says_where_its_size_comes_from(tmp_path: Path) -> None:
    codes, line = _check(c.vllm_repo(tmp_path))  # facebook/opt-125m
    assert codes == []
    assert "0.125B parameters in the model id 'facebook/opt-125m'" in line
    assert "0.0 MB" not in line and "over 1000" not in line


def test_unknown_weights_say_why(tmp_path: Path) -> None:
    codes, line = _check(c.vllm_repo(tmp_path, args={"model": "org/mystery-model"}))
    assert codes == [] and "states no parameter count" in line and "MB" not in line


def _safetensors(path: Path, tensor_bytes: int) -> None:
    header = json.dumps({"w": {"dtype": "BF16", "shape": [tensor_bytes // 2],
                               "data_offsets": [0, tensor_bytes]}}).encode()  # fmt: skip
    path.write_bytes(struct.pack("<Q", len(header)) + header)  # data left out: sparse test


def test_safetensors_headers_in_the_release_win(tmp_path: Path) -> None:
    repo = c.vllm_repo(tmp_path, args={"model": "/models/vllm_model/1/weights"})
    weights = repo / "vllm_model" / "1" / "weights"
    weights.mkdir()
    _safetensors(weights / "model-00001.safetensors", 30 * 10**9)
    assert safetensors_bytes(weights / "model-00001.safetensors") == 30 * 10**9
    codes, line = _check(repo)
    assert codes == ["TDK904"] and "safetensors" in line


def test_parameter_counts_in_model_ids() -> None:
    assert parameters_in_id("meta-llama/Llama-3.1-70B-Instruct") == 70e9
    assert parameters_in_id("TinyLlama/TinyLlama-1.1B-Chat-v1.0") == 1.1e9
    assert parameters_in_id("mistralai/Mixtral-8x7B-v0.1") == 56e9
    assert parameters_in_id("facebook/opt-125m") == 125e6
    assert parameters_in_id("org/model-v2") is None
