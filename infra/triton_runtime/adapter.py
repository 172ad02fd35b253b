"""Serve models on backends the local Triton lacks, with the identical I/O contract.

The ``nvidia-pytriton`` runtime carries only the Python backend, so an ``onnxruntime`` model's
config is rewritten to ``backend: "python"`` (names, datatypes, dims, ``max_batch_size`` and
batching untouched) and ``onnx_adapter_model.py``, copied as ``model.py``, runs the same
``model.onnx`` with ONNX Runtime on CPU. TensorRT engines need a GPU: they get a clear error
instead.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from packager.config import CONFIG_NAME, backend_of, dump_config, load_config
from tdk.errors import TdkError

ONNX_FILENAME_PARAMETER = "tdk_onnx_model_filename"
LOCAL_BACKENDS = ("python", "ensemble", "onnxruntime")


class BackendUnavailable(TdkError):
    """The model's backend cannot run on the local (CPU) Triton."""


ADAPTER_MODEL = Path(__file__).with_name("onnx_adapter_model.py")  # copied as model.py


def adapt_model_dir(model_dir: Path) -> None:
    """Rewrite ``model_dir`` in place so the local Triton can serve it faithfully."""
    config_path = model_dir / CONFIG_NAME
    config = load_config(config_path)
    backend = backend_of(config)
    if backend in ("tensorrt", "tensorrt_plan"):
        raise BackendUnavailable(
            f"{config.name or model_dir.name}: a TensorRT engine needs a GPU runtime; the local "
            "endpoint runs Triton on CPU",
            hint="test this model on a target with GPUs (`tdk --help` lists the targets)",
        )
    if backend not in LOCAL_BACKENDS:
        raise BackendUnavailable(
            f"{config.name or model_dir.name}: backend {backend!r} is not available in the "
            f"local runtime (it has {', '.join(LOCAL_BACKENDS)})",
            hint="test this model on a deployment target (`tdk --help` lists the targets)",
        )
    changed = _cpu_instances(config)
    if backend == "onnxruntime":
        _to_python_backend(config, model_dir)
        changed = True
    if changed:
        config_path.write_text(dump_config(config), encoding="utf-8")


def _cpu_instances(config: object) -> bool:
    """The local runtime has no GPU: instance groups become KIND_CPU with the same count."""
    from tritonclient.grpc import model_config_pb2 as pb

    changed = False
    for group in config.instance_group:  # type: ignore[attr-defined]
        if group.kind in (pb.ModelInstanceGroup.KIND_GPU, pb.ModelInstanceGroup.KIND_AUTO):
            group.kind = pb.ModelInstanceGroup.KIND_CPU
            del group.gpus[:]
            changed = True
    return changed


def _to_python_backend(config: object, model_dir: Path) -> None:
    filename = config.default_model_filename or "model.onnx"  # type: ignore[attr-defined]
    config.backend = "python"  # type: ignore[attr-defined]
    config.platform = ""  # type: ignore[attr-defined]
    config.default_model_filename = ""  # type: ignore[attr-defined]
    config.parameters[ONNX_FILENAME_PARAMETER].string_value = filename  # type: ignore[attr-defined]
    del config.optimization.execution_accelerators.cpu_execution_accelerator[:]  # type: ignore[attr-defined]
    del config.optimization.execution_accelerators.gpu_execution_accelerator[:]  # type: ignore[attr-defined]
    for version in model_dir.iterdir():
        if version.is_dir() and version.name.isdigit():
            shutil.copyfile(ADAPTER_MODEL, version / "model.py")
