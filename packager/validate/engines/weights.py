"""How much GPU memory an LLM engine model's weights take, from what the release says.

In order: the ``*.safetensors`` files in the model directory (their headers give every
tensor's byte range), else the parameter count the model id states (``...-70B-...``,
``...-8x7B-...``, ``...-125m``) times the bytes per parameter its ``dtype`` / ``quantization``
ask for, else unknown, with the reason. Never the size of the config files: an engine model's
directory holds a few kilobytes while the engine downloads the weights at load time.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packager.repository import ModelDir
from tdk.bounded import DocumentError, parse_json

#: a safetensors header larger than this is not read (the format caps it at 100 MB)
HEADER_CAP = 100 * 2**20
_BILLIONS = re.compile(r"(?<![\w.])(?:(\d+)x)?(\d+(?:\.\d+)?)[bB](?![a-zA-Z0-9])")
_MILLIONS = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)[mM](?![a-zA-Z0-9])")
#: bytes per parameter by dtype (vLLM's and TensorRT-LLM's names; "auto" is the checkpoint's,
#: 16-bit for the models these engines serve)
_DTYPE_BYTES = {"float32": 4.0, "float": 4.0, "half": 2.0, "float16": 2.0, "bfloat16": 2.0,
                "auto": 2.0}  # fmt: skip
#: quantization methods whose weights take fewer bytes per parameter
_QUANT_BYTES = {"awq": 0.5, "awq_marlin": 0.5, "gptq": 0.5, "gptq_marlin": 0.5,
                "bitsandbytes": 0.5, "gguf": 0.5, "fp8": 1.0, "fbgemm_fp8": 1.0,
                "modelopt": 1.0, "experts_int8": 1.0}  # fmt: skip


@dataclass(frozen=True)
class Weights:
    """The weights' bytes (None: unknown) and how they were found, in words."""

    size: int | None
    how: str


def safetensors_bytes(path: Path) -> int | None:
    """The tensor bytes one safetensors file declares (None when it is not one)."""
    try:
        with path.open("rb") as handle:
            (length,) = struct.unpack("<Q", handle.read(8))
            if not 0 < length <= HEADER_CAP:
                return None
            header = parse_json(handle.read(length), str(path), "not a safetensors file")
    except (OSError, ValueError, struct.error, DocumentError):
        return None
    if not isinstance(header, dict):
        return None
    ends = [
        t["data_offsets"][1]
        for name, t in header.items()
        if name != "__metadata__" and isinstance(t, dict) and len(t.get("data_offsets", ())) == 2
    ]
    return max(ends, default=0) if all(isinstance(e, int) for e in ends) else None


def parameters_in_id(model_id: str) -> float | None:
    """The parameter count a model id states (``Llama-3.1-70B``: 70e9), None if it states none."""
    name = model_id.rstrip("/").rpartition("/")[2]
    found = _BILLIONS.findall(name)
    if found:
        experts, size = found[-1]
        return float(size) * 1e9 * (int(experts) if experts else 1)
    millions = _MILLIONS.findall(name)
    return float(millions[-1]) * 1e6 if millions else None


def bytes_per_parameter(args: dict[str, Any]) -> tuple[float, str]:
    """Bytes each parameter takes, and which argument says so."""
    quant = str(args.get("quantization") or "").lower()
    if quant in _QUANT_BYTES:
        return _QUANT_BYTES[quant], f"quantization {quant}"
    dtype = str(args.get("dtype") or "auto").lower()
    return _DTYPE_BYTES.get(dtype, 2.0), f"dtype {dtype}"


def engine_weights(model: ModelDir, args: dict[str, Any]) -> Weights:
    """The weights of an engine model whose arguments (model.json / model.yaml) are ``args``."""
    files = [p for p in sorted(model.path.rglob("*.safetensors")) if p.is_file()]
    sizes = [safetensors_bytes(p) for p in files]
    if files and all(s is not None for s in sizes):
        total = sum(s or 0 for s in sizes)
        return Weights(total, f"{len(files)} safetensors file(s) in the release")
    model_id = args.get("model")
    if isinstance(model_id, str) and model_id:
        count = parameters_in_id(model_id)
        if count:
            per, why = bytes_per_parameter(args)
            return Weights(int(count * per), f"{count / 1e9:g}B parameters in the model id "
                           f"{model_id!r} x {per:g} bytes ({why})")  # fmt: skip
        return Weights(None, f"the model id {model_id!r} states no parameter count and the "
                       "release holds no safetensors weights")  # fmt: skip
    return Weights(None, "the engine arguments name no model and the release holds no weights")


#: a config.json larger than this is not read (a Hugging Face config is a few kilobytes)
CONFIG_CAP = 4 * 2**20


@dataclass(frozen=True)
class KvCache:
    """The KV cache one token of context takes in one replica (None: unknown, ``how`` says
    why), and the context one request may need (``max_len``: max_model_len, else the config's
    max_position_embeddings; None: not stated)."""

    bytes_per_token: int | None
    how: str
    max_len: int | None = None
    max_len_from: str = ""


def _hf_config(model: ModelDir) -> tuple[dict[str, Any], Path] | None:
    """The release's Hugging Face ``config.json`` that describes a decoder (its text part for
    a multimodal one), None when the release holds none."""
    for path in sorted(model.path.rglob("config.json")):
        try:
            if not path.is_file() or path.stat().st_size > CONFIG_CAP:
                continue
            data = parse_json(path.read_bytes(), str(path), "not a JSON config")
        except (OSError, DocumentError):
            continue
        if isinstance(data, dict) and isinstance(data.get("text_config"), dict):
            data = data["text_config"] | {k: v for k, v in data.items() if k == "torch_dtype"}
        if isinstance(data, dict) and _whole(data.get("num_hidden_layers")):
            return data, path
    return None


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _length(value: Any) -> int | None:
    """A context length argument: a whole number, or its digits (pydantic's lax mode)."""
    if isinstance(value, str) and value.isascii() and value.isdigit():
        return _whole(int(value))
    return _whole(value)


def _kv_dtype_bytes(args: dict[str, Any], config: dict[str, Any]) -> tuple[float, str]:
    """Bytes per cached element: ``kv_cache_dtype`` (vLLM) or ``kv_cache_config.dtype``
    (TensorRT-LLM) when it asks for fp8, else the model's dtype (the argument, else the
    config's ``torch_dtype``)."""
    nested = args.get("kv_cache_config")
    kv = args.get("kv_cache_dtype") or (nested.get("dtype") if isinstance(nested, dict) else None)
    if isinstance(kv, str) and kv.lower().startswith("fp8"):
        return 1.0, f"KV cache dtype {kv}"
    dtype = str(args.get("dtype") or "auto").lower()
    if dtype == "auto":
        dtype = str(config.get("torch_dtype") or config.get("dtype") or "auto").lower()
    return _DTYPE_BYTES.get(dtype, 2.0), f"dtype {dtype}"


def kv_cache(model: ModelDir, args: dict[str, Any], tensor_parallel: int) -> KvCache:
    """KV bytes per token from ``config.json``: 2 (K and V) x layers x KV heads x head size x
    bytes per element, as vLLM sizes a page (``vllm/v1/kv_cache_interface.py``
    ``real_page_size_bytes`` at v0.19.0: 2 x block x KV heads x head size x dtype size, per
    layer); heads split over ``tensor_parallel`` GPUs, at least one each (replicated)."""
    found = _hf_config(model)
    if found is None:
        return KvCache(None, "no config.json with num_hidden_layers in the release")
    config, path = found
    if "kv_lora_rank" in config:
        return KvCache(None, f"{path.name} describes MLA attention (kv_lora_rank): not sized")
    layers = _whole(config.get("num_hidden_layers")) or 0
    heads = _whole(config.get("num_attention_heads"))
    kv_heads = _whole(config.get("num_key_value_heads")) or heads
    head_dim = _whole(config.get("head_dim"))
    hidden = _whole(config.get("hidden_size"))
    if head_dim is None and hidden and heads:
        head_dim = hidden // heads
    if not (kv_heads and head_dim):
        return KvCache(None, f"{path.name} states no attention heads or head size")
    tp = max(tensor_parallel, 1)
    stored_heads = tp * max(1, kv_heads // tp)
    per, why = _kv_dtype_bytes(args, config)
    size = int(2 * layers * stored_heads * head_dim * per)
    how = (f"2 x {layers} layers x {stored_heads} KV heads x {head_dim} x {per:g} bytes "
           f"({why}), from {path.name}")  # fmt: skip
    asked = _length(args.get("max_model_len")) or _length(args.get("max_seq_len"))
    if asked:
        return KvCache(size, how, asked, "max_model_len")
    stated = _whole(config.get("max_position_embeddings"))
    return KvCache(size, how, stated, f"{path.name} max_position_embeddings" if stated else "")
