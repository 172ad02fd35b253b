"""The vLLM backend (``backend: "vllm"``): the config it completes and its ``1/model.json``.

What the backend does is read from triton-inference-server/vllm_backend ``src/model.py``
(commit 00ea75bc, checked 2026-11-26): ``auto_complete_config`` adds its inputs and outputs,
sets the decoupled transaction policy and ``max_batch_size`` 0; ``initialize`` asserts decoupled,
reads ``model.json`` into ``AsyncEngineArgs``, refuses KIND_GPU for tensor x pipeline parallel > 1,
and with ``enable_lora`` reads ``multi_lora.json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from packager.config import new_config, parse_config
from packager.engines import REPORT_CUSTOM_METRICS, reports_engine_metrics
from packager.protos import generated_module
from packager.repository import ModelDir
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
from packager.validate.engines.placement import instances_per_gpu, single_gpu_kinds
from packager.validate.findings import Sink
from packager.validate.locate import Locations

BACKEND = "vllm"
ENGINE_ARGS_FILE = "model.json"
LORA_FILE = "multi_lora.json"

# name, data type, dims, optional (None: the backend does not say): what auto_complete_config
# adds when the config lacks it, and what it insists on when the config declares it
_INPUTS: tuple[tuple[str, str, list[int], bool | None], ...] = (
    ("text_input", "TYPE_STRING", [1], None),
    ("image", "TYPE_STRING", [-1], True),
    ("stream", "TYPE_BOOL", [1], True),
    ("sampling_parameters", "TYPE_STRING", [1], True),
    ("exclude_input_in_output", "TYPE_BOOL", [1], True),
    ("return_finish_reason", "TYPE_BOOL", [1], True),
    ("return_cumulative_logprob", "TYPE_BOOL", [1], True),
    ("return_logprobs", "TYPE_BOOL", [1], True),
    ("return_num_input_tokens", "TYPE_BOOL", [1], True),
    ("return_num_output_tokens", "TYPE_BOOL", [1], True),
    ("embedding_request", "TYPE_STRING", [1], True),
)
_OUTPUTS: tuple[tuple[str, str, list[int]], ...] = (
    ("text_output", "TYPE_STRING", [-1]),
    ("finish_reason", "TYPE_STRING", [-1]),
    ("cumulative_logprob", "TYPE_FP32", [-1]),
    ("logprobs", "TYPE_STRING", [-1]),
    ("num_input_tokens", "TYPE_UINT32", [1]),
    ("num_output_tokens", "TYPE_UINT32", [-1]),
)


def autocomplete(config: Any) -> Any:
    """A copy of ``config`` as the backend's ``auto_complete_config`` leaves it: its tensors
    added, a declared one's missing type or dims filled, decoupled set. What the backend would
    refuse instead (``max_batch_size`` above 0, a declared tensor that differs) is kept for
    ``check`` to report."""
    pb = _pb()
    done = new_config()
    done.CopyFrom(config)
    declared = {t.name: t for t in done.input}
    for name, dtype, dims, optional in _INPUTS:
        tensor = declared.get(name) or done.input.add(name=name, optional=bool(optional))
        _fill(tensor, pb.DataType.Value(dtype), dims)
    declared = {t.name: t for t in done.output}
    for name, dtype, dims in _OUTPUTS:
        _fill(declared.get(name) or done.output.add(name=name), pb.DataType.Value(dtype), dims)
    done.model_transaction_policy.decoupled = True
    return done


def _pb() -> Any:
    return generated_module("tritonclient.grpc.model_config_pb2", "'tritonclient[grpc]'")


def _fill(tensor: Any, dtype: int, dims: list[int]) -> None:
    if tensor.data_type == 0:  # TYPE_INVALID: the backend's type
        tensor.data_type = dtype
    if not tensor.dims:
        tensor.dims.extend(dims)


def engine_args(model: ModelDir) -> dict[str, Any]:
    """``1/model.json`` as the backend reads it; Unreadable when missing or not an object."""
    return read_mapping(version_dir(model) / ENGINE_ARGS_FILE, "JSON")


def parallel_sizes(engine: dict[str, Any]) -> tuple[int, int]:
    """(tensor, pipeline) parallel sizes; a value the engine would refuse counts as 1 here."""
    return (
        positive_int(engine.get("tensor_parallel_size", 1)) or 1,
        positive_int(engine.get("pipeline_parallel_size", 1)) or 1,
    )


def memory_fraction(engine: dict[str, Any]) -> float:
    """The share of each GPU one engine reserves (vLLM's default when unset)."""
    value = engine.get("gpu_memory_utilization", facts.VLLM_DEFAULT_GPU_MEMORY_UTILIZATION)
    try:
        return float(value)
    except (TypeError, ValueError):
        return facts.VLLM_DEFAULT_GPU_MEMORY_UTILIZATION


def check(
    model: ModelDir, sink: Sink, image: facts.VllmImage | None = None, image_rules: bool = True
) -> None:
    """Every vLLM rule for one model (its config already auto-completed); ``image``: the
    target's vllm image, whose vLLM's EngineArgs the names are checked against; without
    ``image_rules`` those names and values are left to ``check_image`` (a target's
    feasibility, ``infra.targets.feasibility``)."""
    _check_policy(model, sink)
    _check_tensors(model, sink)
    path = version_dir(model) / ENGINE_ARGS_FILE
    try:
        engine = engine_args(model)
    except Unreadable as exc:
        sink.report(
            "TDK602",
            ENGINE_ARGS_FILE,
            f"{exc}: the vLLM backend reads the engine arguments from {path} when the model loads",
            f'write {path} as a JSON object, e.g. {{"model": "<path or hub id>", '
            '"gpu_memory_utilization": 0.9}',
            file=path,
        )
        return
    _check_metrics(model, engine, path, sink)
    known = _check_names(engine, path, sink, image) if image_rules else None
    _check_values(engine, path, sink)
    if known is not None:
        _check_types(engine, path, sink, known)
    _check_gpus(model, engine, path, sink)
    _check_lora(model, engine, sink)
    for key in ("model", "tokenizer"):
        if is_hub_id(engine.get(key), model):
            report_hub_id(sink, path, key, str(engine[key]))


def check_image(model: ModelDir, sink: Sink, image: facts.VllmImage | None) -> None:
    """The rules that read the image's vLLM: ``model.json``'s names and values against its
    EngineArgs (an unreadable file is ``check``'s TDK602)."""
    try:
        engine = engine_args(model)
    except Unreadable:
        return
    path = version_dir(model) / ENGINE_ARGS_FILE
    _check_types(engine, path, sink, _check_names(engine, path, sink, image))


def _check_policy(model: ModelDir, sink: Sink) -> None:
    text = _text(model.config_path)
    if "model_transaction_policy.decoupled" in Locations(text).positions and not _declares_true(
        text
    ):
        sink.report(
            "TDK608",
            "model_transaction_policy.decoupled",
            "decoupled is set to false; the vLLM backend's auto-complete sets it true and "
            "refuses the model ('trying to change decoupled property in auto-complete-config "
            "... which is already set to False'; initialize asserts decoupled too)",
            "remove model_transaction_policy (the backend sets decoupled: true) or set it true",
        )
    if model.config.max_batch_size > 0:
        sink.report(
            "TDK608",
            "max_batch_size",
            f"max_batch_size is {model.config.max_batch_size}; the vLLM backend sets it to 0 "
            "(vLLM batches requests itself) and refuses a larger one ('configuration specified "
            "max_batch_size ..., but in auto-complete-config function ... specified "
            "max_batch_size 0')",
            "remove max_batch_size (or set 0)",
        )


def _check_tensors(model: ModelDir, sink: Sink) -> None:
    """A declared tensor the backend also declares must agree with it (python_backend's
    ``add_input``/``add_output`` raise otherwise; Triton prints ``optional: false``)."""
    pb = _pb()
    wanted = {n: (d, dims, opt) for n, d, dims, opt in _INPUTS}
    wanted |= {n: (d, dims, None) for n, d, dims in _OUTPUTS}
    for kind, tensors in (("input", model.config.input), ("output", model.config.output)):
        for tensor in tensors:
            if tensor.name not in wanted:
                continue
            dtype, dims, optional = wanted[tensor.name]
            have = (pb.DataType.Name(tensor.data_type), list(tensor.dims))
            differs = have != (dtype, dims) or (
                optional is not None and bool(tensor.optional) != optional
            )
            if differs:
                want = f"{dtype} dims {dims}" + (
                    "" if optional is None else f" optional {optional}"
                )
                sink.report(
                    "TDK612",
                    f"{kind} ({tensor.name})",
                    f"{kind} {tensor.name!r} is declared {_declared(kind, tensor)}; the vLLM "
                    "backend's auto-complete "
                    f"declares it {want} and refuses the model",
                    f"remove {tensor.name!r} from config.pbtxt (the backend adds it) or declare "
                    f"it {want}",
                )


def _declared(kind: str, tensor: Any) -> str:
    text = f"{_pb().DataType.Name(tensor.data_type)} dims {list(tensor.dims)}"
    return text + (f" optional {bool(tensor.optional)}" if kind == "input" else "")


def _declares_true(text: str) -> bool:
    return bool(parse_config(text).model_transaction_policy.decoupled)


def _check_names(
    engine: dict[str, Any], path: Path, sink: Sink, image: facts.VllmImage | None
) -> facts.ArgList:
    """The unknown names (against the image's vLLM); returns the list checked against."""
    known, unrecorded = facts.vllm_list(image)
    if unrecorded:
        sink.report("TDK613", ENGINE_ARGS_FILE, unrecorded,
                    "record that vLLM's EngineArgs: add its wheel to packager/validate/engines/"
                    "vllm_lists.json with `python -m packager.validate.engines.vllm_argsgen`, or "
                    "check the names by hand", file=path)  # fmt: skip
    for key in engine:
        if key in known.names:
            continue
        close = suggestion(key, known.names)
        where = f"vLLM {known.version} EngineArgs ({known.source}, checked {facts.CHECKED})"
        renamed = facts.RENAMED_VLLM_ARGS.get(key)
        if renamed and renamed.new in known.names:
            _report_renamed(renamed, engine[key], where, path, sink)
        elif close:
            sink.report("TDK603", f"{path.name} {key}",
                        f"{key!r} is not an engine argument of {where}; did you mean {close!r}?",
                        f"rename {key!r} to {close!r}", file=path)  # fmt: skip
        else:
            sink.report("TDK604", f"{path.name} {key}",
                        f"{key!r} is not an engine argument of {where}",
                        "check it against the vLLM version of the image you deploy",
                        file=path)  # fmt: skip
    return known


def _check_metrics(model: ModelDir, engine: dict[str, Any], path: Path, sink: Sink) -> None:
    """TDK614: the engine's metrics off, read as the backend reads them, and what follows."""
    if reports_engine_metrics(model.config, engine):
        return
    given = model.config.parameters.get(REPORT_CUSTOM_METRICS)
    why = (
        f"disable_log_stats is {json.dumps(engine['disable_log_stats'])} in {path.name}"
        if engine.get("disable_log_stats")
        else f'{REPORT_CUSTOM_METRICS} is "{given.string_value}" (the backend reads only "true")'
    )
    sink.report("TDK614", "parameters" if not engine.get("disable_log_stats") else
                f"{path.name} disable_log_stats",
                f"{why}: the vLLM backend exports no vllm: series, so TTFT and end-to-end alerts "
                "have no data and KEDA scales this workload on Triton's in-flight and pending "
                "series instead of the engine's",
                "remove disable_log_stats and set REPORT_CUSTOM_METRICS to \"true\" (or leave "
                "it out: packaging adds it)", file=path)  # fmt: skip


#: values with a rule of their own (TDK605 gpu_memory_utilization, the parallel sizes)
_OWN_RULES = frozenset({"gpu_memory_utilization", "tensor_parallel_size", "pipeline_parallel_size"})


def _check_types(engine: dict[str, Any], path: Path, sink: Sink, known: facts.ArgList) -> None:
    """Each value against what that vLLM's EngineArgs annotation, Literal choices and config
    Field bounds accept (``vllm_values.json``)."""
    specs = facts.vllm_values(known.version)
    for key, value in engine.items():
        spec = specs.get(key)
        if spec is None or key in _OWN_RULES or not facts.value_problem(value, spec):
            continue
        sink.report("TDK605", f"{path.name} {key}",
                    f"{key} is {json.dumps(value)}; vLLM {known.version} takes "
                    f"{facts.describe(spec)} ({known.source}): AsyncEngineArgs or its config "
                    "refuses it when the model loads",
                    f"give {key} {facts.describe(spec)}", file=path)  # fmt: skip


def _report_renamed(
    renamed: facts.RenamedArg, value: Any, where: str, path: Path, sink: Sink
) -> None:
    """``old: value`` means ``new: not value``: the fix says the inverse, never a bare rename."""
    wanted = not _truthy(value)
    if wanted == renamed.new_default:
        fix = (f"remove {renamed.old!r} ({renamed.new} defaults to "
               f"{str(renamed.new_default).lower()}, which is what {renamed.old}: "
               f"{json.dumps(value)} asked for)")  # fmt: skip
    else:
        fix = f'replace it with "{renamed.new}": {str(wanted).lower()}'
    sink.report("TDK603", f"{path.name} {renamed.old}",
                f"{renamed.old!r} is not an engine argument of {where}: that vLLM replaced it "
                f"by {renamed.new!r}, its negation ({renamed.source}), and AsyncEngineArgs "
                f"refuses {renamed.old!r} when the model loads", fix, file=path)  # fmt: skip


def _truthy(value: Any) -> bool:
    """How the engine reads a flag given in JSON (the backend passes strings through)."""
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes")
    return bool(value)


def _check_values(engine: dict[str, Any], path: Path, sink: Sink) -> None:
    if "gpu_memory_utilization" in engine:
        value = engine["gpu_memory_utilization"]
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not number or not 0 < float(value) <= 1:
            sink.report("TDK605", f"{path.name} gpu_memory_utilization",
                        f"gpu_memory_utilization is {value!r}; it is the fraction of each GPU's "
                        "memory the engine reserves and must lie in (0, 1]",
                        "give a number such as 0.9 (or 0.45 for two engines on one GPU)",
                        file=path)  # fmt: skip
    report_parallel_sizes(sink, path, engine)


def _check_gpus(model: ModelDir, engine: dict[str, Any], path: Path, sink: Sink) -> None:
    tp, pp = parallel_sizes(engine)
    kinds = single_gpu_kinds(model.config)
    if tp * pp > 1 and kinds:
        sink.report(
            "TDK606",
            "instance_group",
            f"{path.name} spreads the model over {tp * pp} GPUs (tensor_parallel_size {tp} x "
            f"pipeline_parallel_size {pp}) but the instances are {kinds[0]}: the vLLM backend "
            "refuses it ('KIND_GPU is currently for single-GPU models')",
            "use instance_group [{ count: 1, kind: KIND_MODEL }]",
        )
    share = instances_per_gpu(model.config)
    fraction = memory_fraction(engine)
    if share * fraction > 1 + 1e-9:
        sink.report(
            "TDK607",
            "instance_group",
            f"{share} engine instances share a GPU, each reserving gpu_memory_utilization "
            f"{fraction:g} of it: {share * fraction:.2f} of the GPU's memory",
            f"set gpu_memory_utilization <= {1 / share:.2f} in {path.name}, or one instance per "
            "GPU",
        )


def _check_lora(model: ModelDir, engine: dict[str, Any], sink: Sink) -> None:
    path = version_dir(model) / LORA_FILE
    enabled = str(engine.get("enable_lora", "")).lower() == "true"
    if not (enabled or path.exists()):
        return
    try:
        adapters = read_mapping(path, "JSON")
    except Unreadable as exc:
        why = " and enable_lora is true" if enabled else ""
        fix = 'write it as {"<adapter name>": "<local adapter path>"}'
        sink.report("TDK609", LORA_FILE, f"{exc}{why}", fix, file=path)
        return
    bad = [k for k, v in adapters.items() if not isinstance(v, str) or not v]
    if bad:
        sink.report("TDK609", LORA_FILE,
                    f"adapter {bad[0]!r} does not map to a path string",
                    'give each adapter as "<name>": "<local adapter path>"', file=path)  # fmt: skip


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
