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


#: Llama-3.1-8B's shape (its config.json): 32 layers, 8 KV heads of 128, bf16, 128k context
LLAMA_8B = {
    "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
    "hidden_size": 4096, "torch_dtype": "bfloat16", "max_position_embeddings": 131072,
}  # fmt: skip
KV_PER_TOKEN = 2 * 32 * 8 * 128 * 2  # K and V x layers x KV heads x head size x bf16 bytes


def _llama_repo(tmp_path: Path, **args: object) -> Path:
    repo = c.vllm_repo(tmp_path, args={"model": "/models/vllm_model/1/weights", **args})
    weights = repo / "vllm_model" / "1" / "weights"
    weights.mkdir()
    _safetensors(weights / "model.safetensors", 16 * 10**9)
    (weights / "config.json").write_text(json.dumps(LLAMA_8B))
    return repo


def test_the_kv_cache_left_after_the_weights_is_sized_from_config_json(tmp_path: Path) -> None:
    """Issue 38 item 4: tokens of context = (0.9 x 24 GiB - 16 GB of weights) / 128 KiB."""
    codes, line = _check(_llama_repo(tmp_path, max_model_len=8192))
    share = int(0.9 * 24 * 2**30)
    assert codes == [], line
    assert f"at most {(share - 16 * 10**9) // KV_PER_TOKEN} tokens of context" in line
    assert "128 KiB per token" in line and "8 KV heads" in line and "config.json" in line
    # fp8 KV cache halves a token's size, so twice the tokens fit
    _, fp8 = _check(_llama_repo(tmp_path / "fp8", max_model_len=8192, kv_cache_dtype="fp8"))
    assert f"at most {(share - 16 * 10**9) // (KV_PER_TOKEN // 2)} tokens" in fp8


def test_a_context_longer_than_the_kv_cache_is_refused(tmp_path: Path) -> None:
    """The config's 128k context on an L4: vLLM refuses to start (TDK909), said before deploy."""
    repo = _llama_repo(tmp_path)
    models = load_models([repo])
    stack = flag_stack(registry.get("gke"), {"gpu": "nvidia-l4"}, models, ROOT)
    found = [f for f in feasible(stack, models).findings if f.code == "TDK909"]
    assert len(found) == 1 and found[0].severity == "error"
    assert "131072 (config.json max_position_embeddings)" in found[0].message
    assert "max_model_len" in found[0].fix


def test_a_release_without_config_json_says_the_kv_cache_is_not_sized(tmp_path: Path) -> None:
    codes, line = _check(c.vllm_repo(tmp_path))  # facebook/opt-125m from the hub
    assert codes == [] and "KV cache: not sized (no config.json" in line
