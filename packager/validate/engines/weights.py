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
