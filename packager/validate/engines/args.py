"""The engines' argument names, recorded per engine version as data with their source.

``1/model.json`` of a vLLM model is passed as ``AsyncEngineArgs(**model_json)`` and the
``LLM()`` part of a TensorRT-LLM ``1/model.yaml`` as ``LLM(**args)`` (a pydantic model with
``extra: forbid``): an argument outside these lists is refused when the model loads. Each list is
the dataclass / model fields at the named source, checked 2026-11-26.
"""

from __future__ import annotations

from dataclasses import dataclass

from packager.validate.engines.vllm_lists import VLLM_ENGINE_ARGS

CHECKED = "2026-11-26"


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


@dataclass(frozen=True)
class ArgList:
    """The arguments one engine version takes, and where the list was read."""

    engine: str
    version: str
    source: str
    names: frozenset[str]


#: vllm/engine/arg_utils.py ``EngineArgs`` fields at vllm-project/vllm commit 001999d2 (the
#: vLLM 0.7 line); AsyncEngineArgs adds ``disable_log_requests``.
VLLM_0_7 = ArgList(
    "vLLM",
    "0.7",
    "https://github.com/vllm-project/vllm/blob/001999d2f360c2c5da23a916510c273b1a73d06c/"
    "vllm/engine/arg_utils.py",
    _words(
        """model served_model_name tokenizer task skip_tokenizer_init tokenizer_mode
        intial_incremental_detokenization_offset trust_remote_code allowed_local_media_path
        download_dir load_format config_format dtype kv_cache_dtype seed max_model_len
        distributed_executor_backend pipeline_parallel_size tensor_parallel_size
        max_parallel_loading_workers block_size enable_prefix_caching disable_sliding_window
        use_v2_block_manager swap_space cpu_offload_gb gpu_memory_utilization
        max_num_batched_tokens max_num_seqs max_logprobs disable_log_stats revision
        code_revision rope_scaling rope_theta hf_overrides tokenizer_revision quantization
        enforce_eager max_seq_len_to_capture disable_custom_all_reduce tokenizer_pool_size
        tokenizer_pool_type tokenizer_pool_extra_config limit_mm_per_prompt mm_processor_kwargs
        disable_mm_preprocessor_cache enable_lora enable_lora_bias max_loras max_lora_rank
        enable_prompt_adapter max_prompt_adapters max_prompt_adapter_token fully_sharded_loras
        lora_extra_vocab_size long_lora_scaling_factors lora_dtype max_cpu_loras device
        num_scheduler_steps multi_step_stream_outputs ray_workers_use_nsight
        num_gpu_blocks_override num_lookahead_slots model_loader_extra_config ignore_patterns
        preemption_mode scheduler_delay_factor enable_chunked_prefill guided_decoding_backend
        logits_processor_pattern speculative_model speculative_model_quantization
        speculative_draft_tensor_parallel_size num_speculative_tokens
        speculative_disable_mqa_scorer speculative_max_model_len
        speculative_disable_by_batch_size ngram_prompt_lookup_max ngram_prompt_lookup_min
        spec_decoding_acceptance_method typical_acceptance_sampler_posterior_threshold
        typical_acceptance_sampler_posterior_alpha qlora_adapter_name_or_path
        disable_logprobs_during_spec_decoding otlp_traces_endpoint collect_detailed_traces
        disable_async_output_proc scheduling_policy override_neuron_config
        override_pooler_config compilation_config worker_cls kv_transfer_config
        generation_config override_generation_config enable_sleep_mode model_impl
        calculate_kv_scales disable_log_requests"""
    ),
)


def _from_wheel(version: str, wheel: str, sha256: str, names: str) -> ArgList:
    source = (
        f"https://pypi.org/project/vllm/{version}/ ({wheel} sha256 {sha256[:16]}..., "
        "vllm/engine/arg_utils.py)"
    )
    return ArgList("vLLM", version, source, _words(names))


#: the recorded vLLM EngineArgs lists: by exact version (read from each release's wheel,
#: ``vllm_lists.py``), and the 0.7 line's from GitHub (for 0.7.x without its own list)
VLLM_LISTS: dict[str, ArgList] = {
    VLLM_0_7.version: VLLM_0_7,
    **{version: _from_wheel(version, *row) for version, row in VLLM_ENGINE_ARGS.items()},
}
#: what is checked against when the image's vLLM has no recorded list (or no image is given)
VLLM_FALLBACK = VLLM_0_7


@dataclass(frozen=True)
class VllmImage:
    """The vLLM of the target's ``<release>-vllm-python-py3`` image (``vllm`` None: no checked
    source states it), handed in by ``tdk validate --target/--stack``."""

    release: str
    vllm: str | None


def vllm_list(image: VllmImage | None) -> tuple[ArgList, str | None]:
    """The EngineArgs list to check ``model.json`` against and, where it is not the image's own
    vLLM's, why (a warning text naming the version checked against)."""
    if image is None:
        return VLLM_FALLBACK, None
    fallback = f"checked against vLLM {VLLM_FALLBACK.version} EngineArgs ({VLLM_FALLBACK.source})"
    if image.vllm is None:
        return VLLM_FALLBACK, (
            f"the vLLM version of the {image.release}-vllm-python-py3 image is not recorded "
            f"(infra/facts/llm.py VLLM_ROWS); engine arguments {fallback}"
        )
    line = ".".join(image.vllm.split(".")[:2])
    for key in (image.vllm, line):
        if key in VLLM_LISTS:
            return VLLM_LISTS[key], None
    return VLLM_FALLBACK, (
        f"the {image.release}-vllm-python-py3 image ships vLLM {image.vllm}, whose EngineArgs "
        f"list is not recorded here; engine arguments {fallback}"
    )


#: tensorrt_llm/llmapi/llm_args.py ``BaseLlmArgs`` fields (TensorRT-LLM 1.0 line, NVIDIA/
#: TensorRT-LLM main as stored 2026-11-26). The PyTorch and TensorRT flavours (TorchLlmArgs,
#: TrtLlmArgs) add fields of their own, so an unlisted name is only a warning unless it is a
#: near miss of a listed one.
TRTLLM_1_0 = ArgList(
    "TensorRT-LLM",
    "1.0",
    "https://github.com/NVIDIA/TensorRT-LLM/blob/main/tensorrt_llm/llmapi/llm_args.py",
    _words(
        """model tokenizer tokenizer_mode skip_tokenizer_init trust_remote_code
        tensor_parallel_size dtype revision tokenizer_revision pipeline_parallel_size
        context_parallel_size gpus_per_node moe_cluster_parallel_size moe_tensor_parallel_size
        moe_expert_parallel_size enable_attention_dp cp_config load_format
        fail_fast_on_attention_window_too_large enable_lora lora_config kv_cache_config
        enable_chunked_prefill guided_decoding_backend batched_logits_processor
        iter_stats_max_iterations request_stats_max_iterations peft_cache_config
        scheduler_config cache_transceiver_config speculative_config max_batch_size
        max_input_len max_seq_len max_beam_width max_num_tokens gather_generation_logits
        num_postprocess_workers postprocess_tokenizer_dir reasoning_parser decoding_config
        backend build_config"""
    ),
)

#: keys of the triton_backend LLM-API model.yaml that the Triton model.py reads itself
#: (NVIDIA/TensorRT-LLM triton_backend/all_models/llmapi/tensorrt_llm/1/model.yaml)
TRTLLM_MODEL_YAML_EXTRA = frozenset({"triton_config", "logits_post_processors"})

VLLM_DEFAULT_GPU_MEMORY_UTILIZATION = 0.9  # EngineArgs.gpu_memory_utilization default, above
