"""Rules for the LLM engines' own files (vLLM, TensorRT-LLM), run by ``tdk validate`` after
the config rules. ``autocomplete`` gives a model the config its backend completes at load time,
so every other rule sees what Triton will load."""

from __future__ import annotations

from dataclasses import replace

from packager.repository import ModelDir
from packager.validate.engines import trtllm, vllm
from packager.validate.engines.args import VllmImage
from packager.validate.findings import Sink


def autocomplete(model: ModelDir) -> ModelDir:
    """``model`` with the config its engine backend completes (vLLM); others unchanged."""
    if model.backend == vllm.BACKEND:
        return replace(model, config=vllm.autocomplete(model.config))
    return model


def check_engine(
    model: ModelDir, sink: Sink, image: VllmImage | None = None, image_rules: bool = True
) -> None:
    """The engine rules that apply to ``model`` (none for other backends); ``image``: the
    target's vllm image, when a target is given. Without ``image_rules`` the rules that read
    the image's engine versions are left to ``check_engine_image`` (``tdk validate
    --target/--stack`` runs them in the target's feasibility, as the program and plan do)."""
    if model.backend == vllm.BACKEND:
        vllm.check(model, sink, image, image_rules)
    elif model.backend == trtllm.BACKEND:
        trtllm.check_engine(model, sink, image.release if image else None, image_rules)
    elif trtllm.is_llm_api(model):
        trtllm.check_llm_api(model, sink, image, image_rules)
    trtllm.check_placeholders(model, sink)


def check_engine_image(model: ModelDir, sink: Sink, image: VllmImage | None) -> None:
    """The engine rules that read the target image's engine versions: vLLM's EngineArgs names
    and values, TensorRT-LLM's ``LLM()`` names, the engine-based repositories' last release."""
    if model.backend == vllm.BACKEND:
        vllm.check_image(model, sink, image)
    elif model.backend == trtllm.BACKEND:
        trtllm.check_removed(image.release if image else None, sink)
    elif trtllm.is_llm_api(model):
        trtllm.check_llm_api_names(model, sink, image)
