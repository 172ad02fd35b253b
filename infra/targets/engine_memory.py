"""GPU memory of an LLM engine model on a target: its weights (``engine_weights``) against the
share of the GPUs one replica gets (``gpu_memory_utilization`` x memory x tensor x pipeline
GPUs), then the KV cache the rest holds, sized per token from the release's ``config.json``
(``kv_cache``). Both are upper bounds: the engine also keeps activations and CUDA graphs in
its share, so fewer tokens fit than said, never more."""

from __future__ import annotations

from infra.facts import hardware as facts
from infra.targets.fit import Fit
from infra.values.offer import TargetSpec
from packager.repository import ModelDir
from packager.requirements import requirements
from packager.validate.engines import trtllm, vllm
from packager.validate.engines.args import VLLM_DEFAULT_GPU_MEMORY_UTILIZATION
from packager.validate.engines.files import Unreadable
from packager.validate.engines.weights import KvCache, engine_weights, kv_cache
from packager.validate.findings import Sink


def engine_fit(model: ModelDir, spec: TargetSpec, sink: Sink) -> Fit | None:
    """A vLLM or LLM-API model: its weights and KV cache against one replica's share; TDK904
    when the weights cannot fit, TDK909 when vLLM's KV cache cannot hold one request of its
    max_model_len; None for other models."""
    need = requirements(model)
    try:
        if need.engine == "vllm":
            args = vllm.engine_args(model)
        elif trtllm.is_llm_api(model):
            args = trtllm.llm_args(model)
        else:
            return None
    except Unreadable:
        return None
    weights = engine_weights(model, args)
    path = str(model.config_path)
    if spec.gpu is None or weights.size is None:
        how = weights.how if weights.size is None else f"{weights.size / 1e9:.1f} GB"
        return Fit(model.name, path, weights.size or 0, None, None, weights_from=how)
    fraction = need.gpu_memory_fraction or VLLM_DEFAULT_GPU_MEMORY_UTILIZATION
    gpus = max(need.gpus_per_replica, 1)
    share = fraction * spec.gpu.memory_gib * facts.GIB * gpus
    replicas = max(spec.gpus // gpus, 1) * max(int(1 / fraction + 1e-9), 1)
    if weights.size > share:
        sink.report(
            "TDK904",
            "model",
            f"the weights take {weights.size / 1e9:.1f} GB ({weights.how}); one replica gets "
            f"{fraction:g} of {gpus} x {spec.gpu.memory_gib} GiB {spec.gpu.kind} = "
            f"{share / 1e9:.1f} GB, before any KV cache",
            "pick GPUs with more memory or more of them (tensor_parallel_size), a quantized "
            "model, or a smaller one",
            file=model.path,
        )
        return Fit(model.name, path, weights.size, 0, None, weights_from=weights.how)
    kv = kv_cache(model, args, _tensor_parallel(args))
    tokens = None if kv.bytes_per_token is None else int(share - weights.size) // kv.bytes_per_token
    if tokens is not None and need.engine == "vllm":
        _check_context(model, kv, tokens, (share, weights.size), sink)
    return Fit(model.name, path, weights.size, replicas, None, weights_from=weights.how,
               kv_tokens=tokens, kv_from=_kv_words(kv))  # fmt: skip


def _tensor_parallel(args: dict[str, object]) -> int:
    value = args.get("tensor_parallel_size")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 1


def _kv_words(kv: KvCache) -> str:
    if kv.bytes_per_token is None:
        return kv.how
    return f"{kv.bytes_per_token / 1024:g} KiB per token: {kv.how}"


def _check_context(
    model: ModelDir, kv: KvCache, tokens: int, memory: tuple[float, int], sink: Sink
) -> None:
    """TDK909: vLLM refuses to start when its KV cache cannot hold one request of
    ``max_model_len`` ("To serve at least one request with the models's max seq len ... KV
    cache is needed, which is larger than the available KV cache memory",
    ``vllm/v1/core/kv_cache_utils.py`` ``_check_enough_kv_cache_memory`` at v0.19.0, checked
    2026-11-27); what fits here is an upper bound, so a shorter one surely fails."""
    if kv.max_len is None or tokens >= kv.max_len:
        return
    share, weights = memory
    sink.report(
        "TDK909",
        "model",
        f"the KV cache holds at most {tokens} tokens ({(share - weights) / 1e9:.1f} GB left of "
        f"the replica's {share / 1e9:.1f} GB after {weights / 1e9:.1f} GB of weights; "
        f"{kv.bytes_per_token} bytes per token: {kv.how}), fewer than one request of "
        f"{kv.max_len} ({kv.max_len_from}): vLLM refuses to start",
        "set max_model_len to what you serve, raise gpu_memory_utilization, or give the "
        "replica more GPU memory (tensor_parallel_size, a larger GPU)",
        file=model.path,
    )
