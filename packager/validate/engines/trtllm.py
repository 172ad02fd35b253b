"""TensorRT-LLM under Triton, in the two shapes of NVIDIA/TensorRT-LLM
``triton_backend/all_models`` (checked 2026-11-26):

- the LLM-API model (``llmapi/tensorrt_llm``): a Python model whose ``1/model.yaml`` holds the
  ``LLM()`` arguments plus ``triton_config`` (``max_batch_size``, ``decoupled``);
- the engine-based ensemble (``inflight_batcher_llm``: preprocessing, ``tensorrt_llm`` with
  ``backend: "tensorrtllm"``, postprocessing, ensemble, tensorrt_llm_bls) whose configs are
  templates filled by ``tools/fill_template.py``; the engine directory's ``config.json`` records
  what the engine was built for.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from packager.repository import ModelDir, placeholder_message, template_placeholders
from packager.validate.engines import args as facts
from packager.validate.engines.files import (
    Unreadable,
    is_hub_id,
    positive_int,
    read_mapping,
    report_hub_id,
    report_parallel_sizes,
    suggestion,
    version_dir,
)
from packager.validate.findings import Sink

BACKEND = "tensorrtllm"
MODEL_YAML = "model.yaml"
ENGINE_CONFIG = "config.json"
ENGINE_DIR_PARAMETERS = ("gpt_model_path", "engine_dir")


def is_llm_api(model: ModelDir) -> bool:
    """A Python model served through TensorRT-LLM's LLM API (it ships ``1/model.yaml``)."""
    return model.backend == "python" and (version_dir(model) / MODEL_YAML).is_file()


def llm_args(model: ModelDir) -> dict[str, Any]:
    """``1/model.yaml``; Unreadable when it is not a YAML mapping."""
    return read_mapping(version_dir(model) / MODEL_YAML, "YAML")


#: how the LLM-API model.py reads ``triton_config`` (NVIDIA/TensorRT-LLM
#: triton_backend/all_models/llmapi/tensorrt_llm/1/model.py at 044a90d, checked 2026-11-27):
#: ``int(triton_config["max_batch_size"])`` and ``bool(triton_config["decoupled"])`` in
#: auto_complete_config (a KeyError when absent; ``bool("false")`` is True, so only a YAML
#: boolean says what it means), ``int(triton_config["cancellation_check_period_ms"])`` if given
TRITON_CONFIG_INTS = {"max_batch_size": 0, "cancellation_check_period_ms": 1}  # key -> minimum
TRITON_CONFIG_REQUIRED = ("max_batch_size", "decoupled")


def triton_config_problems(value: object) -> list[tuple[str, str]]:
    """(``.key`` or "", problem) for each way ``triton_config`` of a model.yaml breaks what
    the LLM-API model.py reads; [] when absent or right."""
    if value is None:
        return []
    if not isinstance(value, dict):
        return [("", f"triton_config is {value!r}; the model reads it as a mapping")]
    problems = [(f".{key}", f"triton_config has no {key}; the model reads it when it loads")
                for key in TRITON_CONFIG_REQUIRED if key not in value]  # fmt: skip
    for key, least in TRITON_CONFIG_INTS.items():
        number = value.get(key, least)
        if type(number) is not int or number < least:
            problems.append((f".{key}", f"triton_config.{key} is {number!r}; it must be a "
                             f"whole number >= {least}"))  # fmt: skip
    if "decoupled" in value and not isinstance(value["decoupled"], bool):
        problems.append((".decoupled", f"triton_config.decoupled is {value['decoupled']!r}; "
                         "the model reads bool() of it, so only true or false say what they "
                         "mean"))  # fmt: skip
    return problems


def engine_dir(model: ModelDir) -> Path | None:
    """Where the engine of a ``tensorrtllm`` model is: its ``gpt_model_path`` parameter when
    that exists here (relative paths from the model directory), else the version directory
    when it holds the engine's ``config.json``; None when neither does."""
    for key in ENGINE_DIR_PARAMETERS:
        if key in model.config.parameters:
            value = str(model.config.parameters[key].string_value)
            candidate = Path(value) if Path(value).is_absolute() else model.path / value
            if "${" not in value and (candidate / ENGINE_CONFIG).is_file():
                return candidate
    here = version_dir(model)
    return here if (here / ENGINE_CONFIG).is_file() else None


def engine_limits(config: dict[str, Any]) -> dict[str, int]:
    """tp, pp, max_batch_size, max_input_len from an engine ``config.json`` (TensorRT-LLM
    >= 0.8: ``pretrained_config.mapping`` and ``build_config``); missing ones are left out."""
    pretrained = config.get("pretrained_config") or {}
    mapping = pretrained.get("mapping") or {} if isinstance(pretrained, dict) else {}
    build = config.get("build_config") or {}
    found: dict[str, int] = {}
    for key, source, name in (("tp", mapping, "tp_size"), ("pp", mapping, "pp_size"),
                              ("max_batch_size", build, "max_batch_size"),
                              ("max_input_len", build, "max_input_len")):  # fmt: skip
        value = positive_int(source.get(name)) if isinstance(source, dict) else None
        if value is not None:
            found[key] = value
    return found


def check_placeholders(model: ModelDir, sink: Sink) -> None:
    """A template whose placeholders still parse (inside strings) is as unloadable."""
    unfilled = template_placeholders(model.config_path)
    if unfilled:
        message, hint = placeholder_message(model.config_path, unfilled)
        sink.report("TDK601", "config.pbtxt", message, hint)


def check_llm_api(
    model: ModelDir, sink: Sink, image: facts.VllmImage | None = None, image_rules: bool = True
) -> None:
    """The LLM-API model's ``model.yaml``; without ``image_rules`` its names are left to
    ``check_llm_api_names`` (a target's feasibility)."""
    path = version_dir(model) / MODEL_YAML
    try:
        llm = llm_args(model)
    except Unreadable as exc:
        sink.report("TDK602", MODEL_YAML, f"{exc}: the model passes it to LLM() when it loads",
                    "write the LLM() arguments as a YAML mapping (model: ..., "
                    "tensor_parallel_size: ..., triton_config: {...})", file=path)  # fmt: skip
        return
    if image_rules:
        _check_llm_names(llm, path, sink, image)
    _check_llm_values(model, llm, path, sink)


def check_llm_api_names(model: ModelDir, sink: Sink, image: facts.VllmImage | None) -> None:
    """``model.yaml``'s names against the image's TensorRT-LLM ``LLM()`` (an unreadable file
    is ``check_llm_api``'s TDK602)."""
    try:
        llm = llm_args(model)
    except Unreadable:
        return
    _check_llm_names(llm, version_dir(model) / MODEL_YAML, sink, image)


def _check_llm_names(
    llm: dict[str, Any], path: Path, sink: Sink, image: facts.VllmImage | None
) -> None:
    known, unrecorded = facts.trtllm_list(image)
    if unrecorded:
        sink.report("TDK613", MODEL_YAML, unrecorded,
                    "check the LLM() arguments against that release's tensorrt_llm/llmapi/"
                    "llm_args.py by hand", file=path)  # fmt: skip
    where = f"TensorRT-LLM {known.version} LLM() ({known.source}, read {facts.TRTLLM_READ})"
    _check_llm_choices(llm, path, sink, known.version, where)
    for key in llm:
        if key in known.names or key in facts.TRTLLM_MODEL_YAML_EXTRA:
            continue
        close = suggestion(key, known.names | facts.TRTLLM_MODEL_YAML_EXTRA)
        if close:
            sink.report("TDK603", f"{path.name} {key}",
                        f"{key!r} is not an argument of {where}; did you mean {close!r}?",
                        f"rename {key!r} to {close!r}", file=path)  # fmt: skip
        else:
            sink.report("TDK604", f"{path.name} {key}", f"{key!r} is not an argument of {where}",
                        "check it against the TensorRT-LLM version of the image you deploy",
                        file=path)  # fmt: skip


def _check_llm_choices(
    llm: dict[str, Any], path: Path, sink: Sink, version: str, where: str
) -> None:
    """TDK605 for a string the release's ``LLM()`` does not accept (``backend: "pytorchh"``)."""
    for key, choices in facts.trtllm_choices(version).items():
        if key in llm and not choices.allows(llm[key]):
            allowed = ", ".join(repr(v) for v in choices.values)
            case = " (in any case)" if choices.any_case else ""
            sink.report("TDK605", f"{path.name} {key}",
                        f"{key} is {llm[key]!r}; {where} accepts {allowed}{case}",
                        f"set {key} to one of {allowed}", file=path)  # fmt: skip


def _check_llm_values(model: ModelDir, llm: dict[str, Any], path: Path, sink: Sink) -> None:
    report_parallel_sizes(sink, path, llm)
    for key, problem in triton_config_problems(llm.get("triton_config")):
        sink.report("TDK605", f"{path.name} triton_config{key}", problem,
                    "give triton_config as in the shipped model.yaml: {max_batch_size: 0, "
                    "decoupled: false} (a whole number and true or false)", file=path)  # fmt: skip
    if is_hub_id(llm.get("model"), model):
        report_hub_id(sink, path, "model", str(llm["model"]))


def check_engine(
    model: ModelDir, sink: Sink, release: str | None = None, image_rules: bool = True
) -> None:
    """The ``tensorrtllm`` model against the engine it loads, when the engine is here; flagged
    (TDK615) on a release after TensorRT-LLM removed engine-based repositories, or when no
    target names the release (without ``image_rules``: left to ``check_removed``, a target's
    feasibility)."""
    if image_rules:
        check_removed(release, sink)
    where = engine_dir(model)
    if where is None:
        return
    path = where / ENGINE_CONFIG
    try:
        limits = engine_limits(read_mapping(path, "JSON"))
    except Unreadable as exc:
        sink.report("TDK602", ENGINE_CONFIG, f"{exc}: the backend reads it to load the engine",
                    "rebuild the engine with trtllm-build (it writes config.json)",
                    file=path)  # fmt: skip
        return
    batch = int(model.config.max_batch_size)
    if "max_batch_size" in limits and batch > limits["max_batch_size"]:
        sink.report("TDK611", "max_batch_size",
                    f"max_batch_size {batch} exceeds the engine's {limits['max_batch_size']} "
                    f"({path})", f"set max_batch_size <= {limits['max_batch_size']} or rebuild "
                    "the engine with a larger --max_batch_size")  # fmt: skip
    _check_input_len(model, limits, path, sink)
    world = limits.get("tp", 1) * limits.get("pp", 1)
    missing = [f"rank{i}.engine" for i in range(world) if not (where / f"rank{i}.engine").exists()]
    if missing:
        sink.report("TDK611", "parameters[gpt_model_path]",
                    f"the engine is built for {world} ranks (tp {limits.get('tp', 1)} x pp "
                    f"{limits.get('pp', 1)}) but {where} lacks {', '.join(missing[:3])}",
                    "copy every rank's engine file next to config.json, or rebuild",
                    file=path)  # fmt: skip


def _check_input_len(model: ModelDir, limits: dict[str, int], path: Path, sink: Sink) -> None:
    """A fixed ``input_ids`` length above the engine's ``max_input_len`` is refused per request."""
    limit = limits.get("max_input_len")
    for tensor in model.config.input:
        fixed = [int(d) for d in tensor.dims if int(d) > 0]
        if tensor.name == "input_ids" and limit and fixed and fixed[-1] > limit:
            sink.report("TDK611", f"input ({tensor.name}).dims",
                        f"input_ids holds {fixed[-1]} tokens but the engine's max_input_len is "
                        f"{limit} ({path})", f"use dims [ -1 ] (or <= {limit}), or rebuild the "
                        "engine with a larger --max_input_len")  # fmt: skip


def check_removed(release: str | None, sink: Sink) -> None:
    """TDK615 unless the target's release still carries the engine-based repositories."""
    if release is not None and _key(release) <= _key(facts.ENGINE_REPOS_LAST_RELEASE):
        return
    when = (
        f"the {release}-trtllm-python-py3 image is"
        if release
        else "with no --target, the image is unknown; images are"
    )
    sink.report("TDK615", "backend",
                "TensorRT-LLM removed its engine-based Triton repositories (the tensorrtllm "
                "backend, all_models/inflight_batcher_llm) in NVIDIA/TensorRT-LLM PRs #15763 and "
                f"#15907; {when} released after "
                f"{facts.ENGINE_REPOS_LAST_RELEASE}, the last tdk treats as carrying them",
                "move to the LLM-API model (triton_backend/all_models/llmapi: 1/model.yaml on the "
                "python backend), or pin --image to a release that still has them")  # fmt: skip


def _key(release: str) -> tuple[int, int]:
    year, _, month = release.partition(".")
    return (int(year), int(month)) if year.isdigit() and month.isdigit() else (0, 0)
