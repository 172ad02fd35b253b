"""``packager.requirements``: the placement needs an LLM model's engine files declare."""

from __future__ import annotations

from pathlib import Path

import pytest

from packager.repository import ModelDir, discover
from packager.requirements import requirements
from tests.validate.llm import corpus as c


def _one(repo: Path) -> ModelDir:
    (model,) = discover(repo)
    return model


def test_vllm_sample(tmp_path: Path) -> None:
    needs = requirements(_one(c.vllm_repo(tmp_path)))
    assert (needs.gpus_per_replica, needs.gpu_memory_fraction, needs.decoupled) == (1, 0.5, True)
    assert (needs.source, needs.engine) == ("vllm_model/1/model.json", "vllm")


def test_vllm_parallel_sizes_multiply(tmp_path: Path) -> None:
    args = dict(c.VLLM_ARGS, tensor_parallel_size=2, pipeline_parallel_size="2")
    assert requirements(_one(c.vllm_repo(tmp_path, args=args))).gpus_per_replica == 4


def test_vllm_instances_sharing_a_gpu_sum_their_fractions(tmp_path: Path) -> None:
    two = c.VLLM_CONFIG.replace("count: 1", "count: 2")
    args = dict(c.VLLM_ARGS, gpu_memory_utilization=0.6)
    fraction = requirements(_one(c.vllm_repo(tmp_path, config=two, args=args))).gpu_memory_fraction
    assert fraction == pytest.approx(1.2)


def test_vllm_default_utilization(tmp_path: Path) -> None:
    args = {"model": "facebook/opt-125m"}
    assert requirements(_one(c.vllm_repo(tmp_path, args=args))).gpu_memory_fraction == 0.9


def test_vllm_unreadable_model_json_falls_back_to_the_config(tmp_path: Path) -> None:
    needs = requirements(_one(c.vllm_repo(tmp_path, args="{")))
    assert (needs.gpus_per_replica, needs.gpu_memory_fraction) == (1, None)


def test_llm_api_model(tmp_path: Path) -> None:
    yaml_text = c.LLM_API_YAML.replace("tensor_parallel_size: 1", "tensor_parallel_size: 4")
    needs = requirements(_one(c.llm_api_repo(tmp_path, yaml_text)))
    assert (needs.gpus_per_replica, needs.decoupled, needs.gpu_memory_fraction) == (4, False, None)
    assert needs.engine == "tensorrt_llm"
    streaming = c.LLM_API_YAML.replace("decoupled: False", "decoupled: True")
    assert requirements(_one(c.llm_api_repo(tmp_path / "b", streaming))).decoupled


def test_trtllm_engine_ranks(tmp_path: Path) -> None:
    files = {"1/config.json": c.engine_config(tp=2, pp=2)}
    needs = requirements(_one(c.trtllm_repo(tmp_path, files=files)))
    assert (needs.gpus_per_replica, needs.decoupled, needs.engine) == (4, True, "tensorrt_llm")


def test_plain_model_is_one_gpu(tmp_path: Path) -> None:
    from tests.validate.helpers import PYTHON_MODEL, make_repo

    config = 'backend: "python"\nmodel_transaction_policy { decoupled: true }\n'
    repo = make_repo(tmp_path, {"m": (config, {"1/model.py": PYTHON_MODEL})})
    needs = requirements(_one(repo))
    assert (needs.gpus_per_replica, needs.gpu_memory_fraction, needs.decoupled) == (1, None, True)
    assert needs.engine == ""
