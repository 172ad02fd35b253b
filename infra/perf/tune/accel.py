"""Candidates that know the model and the server: execution accelerators and backend threads.

Which options exist depends on the model's backend and on what the server has (a GPU, the
OpenVINO backend); an option a server cannot run is skipped with a reason, never tried.
Each option is a named edit of the ``ModelConfig``; ``""`` leaves the config as shipped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from packager.config import backend_of

#: Triton facts these options rest on (checked 2026-11-24):
SOURCES = {
    "gpu_execution_accelerator tensorrt (precision_mode, max_workspace_size_bytes)": (
        "https://github.com/triton-inference-server/onnxruntime_backend#onnx-runtime-with-tensorrt-optimization",
        "2026-11-24",
    ),
    "onnxruntime parameters intra_op_thread_count": (
        "https://github.com/triton-inference-server/onnxruntime_backend#model-config-options",
        "2026-11-24",
    ),
    "cpu_execution_accelerator openvino": (
        "https://github.com/triton-inference-server/onnxruntime_backend#onnx-runtime-with-openvino-optimization",
        "2026-11-24",
    ),
    "TensorRT engines: max_batch_size within the engine's optimisation profile": (
        "https://github.com/triton-inference-server/tensorrt_backend#command-line-options",
        "2026-11-24",
    ),
}
WORKSPACE_BYTES = 1 << 30
ONNX_BACKENDS = ("onnxruntime",)
ENGINE_BACKENDS = ("tensorrt", "tensorrt_plan")


@dataclass(frozen=True)
class Capabilities:
    """What the tuned server can run: a GPU, and the backends known to be there (None: unknown)."""

    gpu: bool
    backends: frozenset[str] | None = None
    cpus: int = 1


@dataclass(frozen=True)
class Skipped:
    """A candidate option left out, and why."""

    option: str
    reason: str


def _tensorrt(precision: str) -> Callable[[Any], None]:
    def edit(config: Any) -> None:
        accelerators = config.optimization.execution_accelerators
        del accelerators.gpu_execution_accelerator[:]
        trt = accelerators.gpu_execution_accelerator.add(name="tensorrt")
        trt.parameters["precision_mode"] = precision
        trt.parameters["max_workspace_size_bytes"] = str(WORKSPACE_BYTES)

    return edit


def _threads(count: int) -> Callable[[Any], None]:
    def edit(config: Any) -> None:
        config.parameters["intra_op_thread_count"].string_value = str(count)

    return edit


def _openvino(config: Any) -> None:
    accelerators = config.optimization.execution_accelerators
    del accelerators.cpu_execution_accelerator[:]
    accelerators.cpu_execution_accelerator.add(name="openvino")


def _edits(cpus: int) -> dict[str, Callable[[Any], None]]:
    edits: dict[str, Callable[[Any], None]] = {
        "trt-fp16": _tensorrt("FP16"),
        "trt-fp32": _tensorrt("FP32"),
        "openvino": _openvino,
    }
    for count in sorted({1, 2, max(1, cpus)}):
        edits[f"threads-{count}"] = _threads(count)
    return edits


def is_option(option: str) -> bool:
    """Whether ``option`` names an option this module knows (``threads-N``: N >= 1)."""
    name, _, count = option.partition("-")
    if name == "threads":
        return count.isdigit() and int(count) >= 1
    return option in _edits(1)


def apply_option(config: Any, option: str) -> None:
    """Edit ``config`` in place with the named option (``""``: nothing)."""
    if not option:
        return
    name, _, count = option.partition("-")
    if name == "threads":
        _threads(int(count))(config)
    else:
        _edits(1)[option](config)


def options_for(config: Any, caps: Capabilities) -> tuple[tuple[str, ...], list[Skipped]]:
    """The options worth trying for this model on this server, and those skipped with a reason."""
    backend = backend_of(config)
    if backend not in ONNX_BACKENDS:
        return ("",), [Skipped("accelerators", f"backend {backend!r} has no tunable accelerator")]
    kept: list[str] = [""]
    skipped: list[Skipped] = []
    for option in ("trt-fp16", "trt-fp32"):
        if caps.gpu:
            kept.append(option)
        else:
            skipped.append(Skipped(option, "the server has no GPU (TensorRT needs one)"))
    if caps.backends is not None and "openvino" in caps.backends and not caps.gpu:
        kept.append("openvino")
    else:
        why = "the server runs on a GPU" if caps.gpu else "the server has no OpenVINO backend"
        if caps.backends is None and not caps.gpu:
            why = "cannot tell whether the server has the OpenVINO backend"
        skipped.append(Skipped("openvino", why))
    if not caps.gpu:
        kept.extend(f"threads-{n}" for n in sorted({2, max(1, caps.cpus)}) if n > 1)
    return tuple(kept), skipped


def batch_limit(config: Any) -> int | None:
    """The largest batch a TensorRT engine was built for: its shipped ``max_batch_size`` (the
    engine's optimisation profile; reading the engine itself needs TensorRT), else no limit."""
    if backend_of(config) in ENGINE_BACKENDS and int(config.max_batch_size) > 0:
        return int(config.max_batch_size)
    return None
