"""A corpus of LLM repositories shaped like the real ones (small files written here, no weights):
the vllm_backend sample (samples/model_repository/vllm_model), TensorRT-LLM's
triton_backend/all_models LLM-API model and its engine-based inflight_batcher_llm templates."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests.validate.helpers import PYTHON_MODEL, make_repo

VLLM_CONFIG = """
backend: "vllm"
instance_group [
  {
    count: 1
    kind: KIND_MODEL
  }
]
"""
#: vllm_backend samples/model_repository/vllm_model/1/model.json, less its
#: ``disable_log_requests``: vLLM 0.10 replaced it by ``enable_log_requests`` (vllm_backend
#: 2d0f250 dropped it from the sample), so the stacks' 26.05 image (vLLM 0.19.0) refuses it
#: (TDK603) and a corpus model would not deploy (tests that want it set it themselves)
VLLM_ARGS: dict[str, Any] = {
    "model": "facebook/opt-125m",
    "gpu_memory_utilization": 0.5,
    "enforce_eager": True,
}

LLM_API_CONFIG = """
name: "tensorrt_llm"
backend: "python"
instance_group [ { count: 1 kind: KIND_CPU } ]
input [ { name: "text_input" data_type: TYPE_STRING dims: [ -1 ] } ]
output [ { name: "text_output" data_type: TYPE_STRING dims: [ -1 ] } ]
"""
#: triton_backend/all_models/llmapi/tensorrt_llm/1/model.yaml (comments dropped)
LLM_API_YAML = """\
model: TinyLlama/TinyLlama-1.1B-Chat-v1.0
backend: "pytorch"
tensor_parallel_size: 1
pipeline_parallel_size: 1
triton_config:
  max_batch_size: 0
  decoupled: False
"""

#: inflight_batcher_llm/tensorrt_llm/config.pbtxt as shipped, before fill_template.py
TRTLLM_TEMPLATE = """
name: "tensorrt_llm"
backend: "${triton_backend}"
max_batch_size: ${triton_max_batch_size}
model_transaction_policy {
  decoupled: ${decoupled_mode}
}
input [ { name: "input_ids" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "output_ids" data_type: TYPE_INT32 dims: [ -1, -1 ] } ]
parameters: { key: "gpt_model_path" value: { string_value: "${engine_dir}" } }
"""
TRTLLM_FILLED = """
name: "tensorrt_llm"
backend: "tensorrtllm"
max_batch_size: 8
model_transaction_policy {
  decoupled: true
}
input [ { name: "input_ids" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "output_ids" data_type: TYPE_INT32 dims: [ -1, -1 ] } ]
instance_group [ { count: 1 kind: KIND_CPU } ]
parameters: { key: "gpt_model_path" value: { string_value: "1" } }
"""


def engine_config(tp: int = 1, pp: int = 1, max_batch: int = 8) -> str:
    """An engine directory's config.json as trtllm-build writes it (the fields we read)."""
    return json.dumps({
        "version": "0.17.0",
        "pretrained_config": {"architecture": "LlamaForCausalLM", "dtype": "float16",
                              "mapping": {"world_size": tp * pp, "tp_size": tp, "pp_size": pp}},
        "build_config": {"max_batch_size": max_batch, "max_input_len": 1024,
                         "max_seq_len": 2048},
    })  # fmt: skip


def vllm_repo(
    root: Path,
    config: str = VLLM_CONFIG,
    args: Mapping[str, Any] | str | None = None,
    extra: Mapping[str, str] | None = None,
) -> Path:
    """One vLLM model ``vllm_model``; ``args`` replaces model.json (a str is written as is)."""
    files: dict[str, str] = dict(extra or {})
    text = args if isinstance(args, str) else json.dumps(VLLM_ARGS if args is None else args)
    files.setdefault("1/model.json", text)
    return make_repo(root, {"vllm_model": (config, files)})


def llm_api_repo(root: Path, yaml_text: str = LLM_API_YAML) -> Path:
    files = {"1/model.py": PYTHON_MODEL, "1/model.yaml": yaml_text}
    return make_repo(root, {"tensorrt_llm": (LLM_API_CONFIG, files)})


def trtllm_repo(
    root: Path, config: str = TRTLLM_FILLED, files: Mapping[str, str] | None = None
) -> Path:
    default = {"1/config.json": engine_config(), "1/rank0.engine": "engine bytes"}
    return make_repo(root, {"tensorrt_llm": (config, dict(default if files is None else files))})


#: inflight_batcher_llm after fill_template.py, reduced to the tensors the steps exchange
#: (names as in TensorRT-LLM triton_backend/all_models/inflight_batcher_llm/*/config.pbtxt)
IFB_MODELS: dict[str, str] = {
    "preprocessing": """
name: "preprocessing"
backend: "python"
max_batch_size: 8
input [ { name: "QUERY" data_type: TYPE_STRING dims: [ 1 ] },
        { name: "REQUEST_OUTPUT_LEN" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "INPUT_ID" data_type: TYPE_INT32 dims: [ -1 ] },
         { name: "REQUEST_INPUT_LEN" data_type: TYPE_INT32 dims: [ 1 ] },
         { name: "REQUEST_OUTPUT_LEN" data_type: TYPE_INT32 dims: [ 1 ] } ]
instance_group [ { count: 1 kind: KIND_CPU } ]
""",
    "tensorrt_llm": """
name: "tensorrt_llm"
backend: "tensorrtllm"
max_batch_size: 8
model_transaction_policy { decoupled: true }
input [ { name: "input_ids" data_type: TYPE_INT32 dims: [ -1 ] },
        { name: "input_lengths" data_type: TYPE_INT32 dims: [ 1 ] },
        { name: "request_output_len" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "output_ids" data_type: TYPE_INT32 dims: [ -1, -1 ] },
         { name: "sequence_length" data_type: TYPE_INT32 dims: [ -1 ] } ]
instance_group [ { count: 1 kind: KIND_CPU } ]
parameters: { key: "gpt_model_path" value: { string_value: "1" } }
""",
    "postprocessing": """
name: "postprocessing"
backend: "python"
max_batch_size: 8
input [ { name: "TOKENS_BATCH" data_type: TYPE_INT32 dims: [ -1, -1 ] },
        { name: "SEQUENCE_LENGTH" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "OUTPUT" data_type: TYPE_STRING dims: [ -1 ] } ]
instance_group [ { count: 1 kind: KIND_CPU } ]
""",
    "ensemble": """
name: "ensemble"
platform: "ensemble"
max_batch_size: 8
input [ { name: "text_input" data_type: TYPE_STRING dims: [ 1 ] },
        { name: "max_tokens" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "text_output" data_type: TYPE_STRING dims: [ -1 ] } ]
ensemble_scheduling {
  step [
    { model_name: "preprocessing" model_version: -1
      input_map { key: "QUERY" value: "text_input" }
      input_map { key: "REQUEST_OUTPUT_LEN" value: "max_tokens" }
      output_map { key: "INPUT_ID" value: "_INPUT_ID" }
      output_map { key: "REQUEST_INPUT_LEN" value: "_REQUEST_INPUT_LEN" }
      output_map { key: "REQUEST_OUTPUT_LEN" value: "_REQUEST_OUTPUT_LEN" } },
    { model_name: "tensorrt_llm" model_version: -1
      input_map { key: "input_ids" value: "_INPUT_ID" }
      input_map { key: "input_lengths" value: "_REQUEST_INPUT_LEN" }
      input_map { key: "request_output_len" value: "_REQUEST_OUTPUT_LEN" }
      output_map { key: "output_ids" value: "_TOKENS_BATCH" }
      output_map { key: "sequence_length" value: "_SEQUENCE_LENGTH" } },
    { model_name: "postprocessing" model_version: -1
      input_map { key: "TOKENS_BATCH" value: "_TOKENS_BATCH" }
      input_map { key: "SEQUENCE_LENGTH" value: "_SEQUENCE_LENGTH" }
      output_map { key: "OUTPUT" value: "text_output" } }
  ]
}
""",
    "tensorrt_llm_bls": """
name: "tensorrt_llm_bls"
backend: "python"
max_batch_size: 8
model_transaction_policy { decoupled: true }
input [ { name: "text_input" data_type: TYPE_STRING dims: [ 1 ] } ]
output [ { name: "text_output" data_type: TYPE_STRING dims: [ -1 ] } ]
instance_group [ { count: 1 kind: KIND_CPU } ]
""",
}


def inflight_batcher_repo(root: Path, template: bool = False) -> Path:
    """The five models of inflight_batcher_llm, filled (or, with ``template``, with their
    batch size still ``${triton_max_batch_size}``), the engine in tensorrt_llm/1."""
    models: dict[str, tuple[str, dict[str, str]]] = {}
    for name, config in IFB_MODELS.items():
        if template:
            config = config.replace("max_batch_size: 8", "max_batch_size: ${triton_max_batch_size}")
        files = {"1/model.py": PYTHON_MODEL} if "python" in config else {"1/.keep": ""}
        if name == "tensorrt_llm":
            files = {"1/config.json": engine_config(), "1/rank0.engine": "engine bytes"}
        models[name] = (config, files)
    return make_repo(root, models)
