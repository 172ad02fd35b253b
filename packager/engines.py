"""LLM engine backends and what their model configs need for the kit's scaling.

The vLLM backend reports its engine metrics (TTFT, end-to-end latency, token counts) through
Triton's ``/metrics`` only when the model config's parameter ``REPORT_CUSTOM_METRICS`` is true
(vllm_backend ``src/model.py`` and ``src/utils/metrics.py``,
github.com/triton-inference-server/vllm_backend, checked 2026-11-26). KEDA scales an LLM
workload on those metrics, so a packaged vLLM model gets the parameter unless it sets it itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

VLLM = "vllm"
TENSORRT_LLM = "tensorrtllm"
#: backends whose engines schedule requests themselves (Triton's queue reads ~0 in front of them)
ENGINES = (VLLM, TENSORRT_LLM)
REPORT_CUSTOM_METRICS = "REPORT_CUSTOM_METRICS"


def engines_of(backends: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """The LLM engines among ``backends``, each once, in ``ENGINES`` order."""
    return tuple(engine for engine in ENGINES if engine in backends)


def reports_engine_metrics(config: Any, engine_args: Any) -> bool:
    """Whether a vLLM model's engine metrics reach Triton's /metrics once packaged, read as the
    vllm_backend reads it (``src/model.py`` ``initialize``, github.com/triton-inference-server/
    vllm_backend at 1e66a22, read 2026-11-27): the parameter's ``string_value.lower() ==
    "true"`` and ``not AsyncEngineArgs.disable_log_stats`` (Python truth of the JSON value, so
    the string ``"false"`` turns them off too). An unset parameter is "true": packaging adds it
    (``with_engine_metrics``)."""
    disabled = isinstance(engine_args, dict) and bool(engine_args.get("disable_log_stats"))
    if REPORT_CUSTOM_METRICS not in config.parameters:
        return not disabled
    return config.parameters[REPORT_CUSTOM_METRICS].string_value.lower() == "true" and not disabled


def with_engine_metrics(config: Any) -> None:
    """Turn on a vLLM model's engine metrics in ``config`` (a ModelConfig), unless the
    repository set ``REPORT_CUSTOM_METRICS`` itself."""
    # vLLM is always named by ``backend`` (no platform implies it). This module imports no
    # protobuf: the pure k8s builders read its names.
    if config.backend != VLLM or REPORT_CUSTOM_METRICS in config.parameters:
        return
    config.parameters[REPORT_CUSTOM_METRICS].string_value = "true"


def released_engine(name: str, backend: str, files: Iterable[str]) -> str:
    """The LLM engine a release's model copy runs ("vllm", "tensorrt_llm"; "" for none), from
    its manifest entry: the backend, or a Python model shipping TensorRT-LLM's LLM-API
    ``<version>/model.yaml`` (``packager.requirements`` reads the same from a repository)."""
    if backend == VLLM:
        return "vllm"
    if backend == TENSORRT_LLM:
        return "tensorrt_llm"
    prefix = f"{name}/"
    for path in files:
        version, _, rest = path.removeprefix(prefix).partition("/")
        if (
            backend == "python"
            and path.startswith(prefix)
            and version.isdigit()
            and (rest == "model.yaml")
        ):
            return "tensorrt_llm"
    return ""
