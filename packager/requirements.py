"""What one model asks of the hardware it is placed on: the seam between the repository and a
target's feasibility check.

Validate, package and the targets' feasibility path read a model's needs from here, never from
its backend name: GPUs per replica (tensor x pipeline parallel for an LLM engine, else 1), the
fraction of each GPU's memory its engines reserve (an LLM engine's ``gpu_memory_utilization``
times the instances sharing a GPU; None when the weights' size is the estimate), and whether it
is decoupled (streams several responses per request; Triton's SageMaker MME front refuses those).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from packager.engines import reports_engine_metrics
from packager.repository import ModelDir
from packager.validate.engines import trtllm, vllm
from packager.validate.engines.files import Unreadable, positive_int
from packager.validate.engines.placement import instances_per_gpu


@dataclass(frozen=True)
class Requirements:
    """One model's placement needs (see the module docstring)."""

    model: str
    backend: str
    gpus_per_replica: int = 1
    #: share of each GPU's memory the engines reserve, in (0, 1] when valid; None: estimate
    #: from weights. Already summed over the model's instances that share one GPU.
    gpu_memory_fraction: float | None = None
    decoupled: bool = False
    #: where the numbers come from (``config.pbtxt``, ``1/model.json``, ...), for messages
    source: str = "config.pbtxt"
    #: the LLM engine the model runs on ("vllm", "tensorrt_llm"; "" for none): the image
    #: flavour that carries it (infra/facts/llm.py)
    engine: str = ""
    #: whether the engine's own metrics reach Triton's /metrics (vLLM: REPORT_CUSTOM_METRICS
    #: and disable_log_stats as the backend reads them; the TensorRT-LLM C++ backend: always;
    #: the LLM-API Python model registers none), so KEDA may scale on them
    engine_metrics: bool = False


def requirements(model: ModelDir) -> Requirements:
    """The placement needs of ``model`` as its config (and, for LLM engines, its engine files)
    declare them. An engine file that cannot be read gives the config's needs: validate reports
    the file itself."""
    base = Requirements(model.name, model.backend, decoupled=_decoupled(model.config))
    try:
        if model.backend == vllm.BACKEND:
            return _vllm(model, base)
        if model.backend == trtllm.BACKEND:
            return _trtllm_engine(model, base)
        if trtllm.is_llm_api(model):
            return _llm_api(model, base)
    except Unreadable:
        return base
    return base


def _decoupled(config: Any) -> bool:
    return bool(config.model_transaction_policy.decoupled)


def _vllm(model: ModelDir, base: Requirements) -> Requirements:
    engine = vllm.engine_args(model)
    tp, pp = vllm.parallel_sizes(engine)
    fraction = vllm.memory_fraction(engine) * instances_per_gpu(model.config)
    return Requirements(
        base.model,
        base.backend,
        gpus_per_replica=tp * pp,
        gpu_memory_fraction=fraction,
        decoupled=True,  # the backend's auto_complete_config sets it and initialize asserts it
        source=f"{model.path.name}/{vllm.version_dir(model).name}/{vllm.ENGINE_ARGS_FILE}",
        engine="vllm",
        engine_metrics=reports_engine_metrics(model.config, engine),
    )


def _llm_api(model: ModelDir, base: Requirements) -> Requirements:
    llm = trtllm.llm_args(model)
    triton = llm.get("triton_config") or {}
    decoupled = triton.get("decoupled", base.decoupled) if isinstance(triton, dict) else False
    gpus = (positive_int(llm.get("tensor_parallel_size", 1)) or 1) * (
        positive_int(llm.get("pipeline_parallel_size", 1)) or 1
    )
    return Requirements(
        base.model,
        base.backend,
        gpus_per_replica=gpus,
        decoupled=str(decoupled).lower() == "true",
        source=f"{model.path.name}/{trtllm.version_dir(model).name}/{trtllm.MODEL_YAML}",
        engine="tensorrt_llm",
    )


def _trtllm_engine(model: ModelDir, base: Requirements) -> Requirements:
    where = trtllm.engine_dir(model)
    if where is None:
        return replace(base, engine="tensorrt_llm", engine_metrics=True)
    limits = trtllm.engine_limits(trtllm.read_mapping(where / trtllm.ENGINE_CONFIG, "JSON"))
    return Requirements(
        base.model,
        base.backend,
        gpus_per_replica=limits.get("tp", 1) * limits.get("pp", 1),
        decoupled=base.decoupled,
        source=str(where / trtllm.ENGINE_CONFIG),
        engine="tensorrt_llm",
        engine_metrics=True,
    )
