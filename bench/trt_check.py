"""What a machine offers for TensorRT engines, and, where it can, the sample BERT's engine against
ONNX Runtime (CUDA) on it.

Always: is ``tensorrt`` importable (its version), is ``trtexec`` on PATH, which GPU and
compute capability ``nvidia-smi`` reports, does ONNX Runtime have its CUDA provider. Where
TensorRT, a GPU and torch (for device buffers) are present: builds the BERT-shaped model of
``bench/bert_onnx.py`` (batch 1..32, sequence 128) with TensorRT's Python API, checks parity
with ONNX Runtime on CPU (``infra.tensorrt_engines.pod_build.compare``), and measures median
latency of the engine and of ONNX Runtime's CUDA provider at batch 1, 8 and 32 in one run (the
write-up being reproduced: TensorRT 2x ONNX Runtime). Without them it says what is missing and
exits 0. The last line is one JSON object.

Usage: ``python bench/trt_check.py [--out FILE] [--repeats N]``
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # infra, run as a script
sys.path.insert(0, str(Path(__file__).resolve().parent))  # bert_onnx beside it

from bert_onnx import INPUTS, write_model_dir

from infra.tensorrt_engines.pod_build import compare

BATCHES = (1, 8, 32)
SEQUENCE = 128


def _gpu() -> dict[str, str] | None:
    if shutil.which("nvidia-smi") is None:
        return None
    done = subprocess.run(
        ["nvidia-smi", "--query-gpu=name,compute_cap,driver_version", "--format=csv,noheader"],
        capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    if done.returncode != 0 or not done.stdout.strip():
        return None
    name, compute, driver = (p.strip() for p in done.stdout.splitlines()[0].split(","))
    return {"name": name, "compute_capability": compute, "driver": driver}


def _tensorrt() -> str | None:
    if importlib.util.find_spec("tensorrt") is None:
        return None
    import tensorrt

    return str(tensorrt.__version__)


def _ort_providers() -> list[str]:
    import onnxruntime

    return list(onnxruntime.get_available_providers())


def offer() -> dict[str, Any]:
    """What this machine offers, and what an engine measurement would still need."""
    found: dict[str, Any] = {
        "tensorrt": _tensorrt(),
        "trtexec": shutil.which("trtexec"),
        "gpu": _gpu(),
        "onnxruntime_providers": _ort_providers(),
        "torch": importlib.util.find_spec("torch") is not None,
    }
    missing = [
        what
        for what, ok in (
            ("an NVIDIA GPU (nvidia-smi)", found["gpu"] is not None),
            ("the tensorrt Python package", found["tensorrt"] is not None),
            ("torch (device buffers for the engine)", found["torch"]),
            (
                "ONNX Runtime's CUDAExecutionProvider",
                "CUDAExecutionProvider" in found["onnxruntime_providers"],
            ),
        )
        if not ok
    ]
    return found | {"missing": missing}


def _inputs(batch: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {name: rng.integers(0, 2, (batch, SEQUENCE)).astype(np.int64) for name in INPUTS}


def _build_engine(onnx: Path) -> bytes:
    import tensorrt as trt

    logger = trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    network = builder.create_network(0)
    parser = trt.OnnxParser(network, logger)
    if not parser.parse(onnx.read_bytes()):
        raise RuntimeError("; ".join(str(parser.get_error(i)) for i in range(parser.num_errors)))
    config = builder.create_builder_config()
    profile = builder.create_optimization_profile()
    for name in INPUTS:
        profile.set_shape(name, (1, SEQUENCE), (max(BATCHES), SEQUENCE), (max(BATCHES), SEQUENCE))
    config.add_optimization_profile(profile)
    serialized = builder.build_serialized_network(network, config)
    if serialized is None:
        raise RuntimeError("TensorRT could not build the engine")
    return bytes(serialized)


class _EngineRunner:
    """The engine in an execution context with torch device buffers."""

    def __init__(self, serialized: bytes) -> None:
        import tensorrt as trt
        import torch

        self.torch = torch
        self.engine = trt.Runtime(trt.Logger(trt.Logger.WARNING)).deserialize_cuda_engine(
            serialized
        )
        self.context = self.engine.create_execution_context()
        self.stream = torch.cuda.Stream()

    def __call__(self, feeds: dict[str, np.ndarray]) -> np.ndarray:
        torch = self.torch
        batch = next(iter(feeds.values())).shape[0]
        for name, array in feeds.items():
            device = torch.from_numpy(array).cuda()
            self.context.set_input_shape(name, tuple(array.shape))
            self.context.set_tensor_address(name, device.data_ptr())
            setattr(self, f"_keep_{name}", device)
        out = torch.empty((batch, 2), dtype=torch.float32, device="cuda")
        self.context.set_tensor_address("logits", out.data_ptr())
        self.context.execute_async_v3(self.stream.cuda_stream)
        self.stream.synchronize()
        return out.cpu().numpy()


def _median_ms(call: Any, feeds: dict[str, np.ndarray], repeats: int) -> dict[str, float]:
    for _ in range(3):
        call(feeds)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call(feeds)
        times.append((time.perf_counter() - start) * 1000)
    median = statistics.median(times)
    return {"median_ms": round(median, 3), "spread_pct": round(
        100 * (max(times) - min(times)) / median, 1)}  # fmt: skip


def measure(repeats: int) -> dict[str, Any]:
    """Build, check parity, measure: the figures per batch size."""
    import onnxruntime

    with tempfile.TemporaryDirectory() as tmp:
        onnx = write_model_dir(Path(tmp)) / "1" / "model.onnx"
        serialized = _build_engine(onnx)
        cpu = onnxruntime.InferenceSession(str(onnx), providers=["CPUExecutionProvider"])
        cuda = onnxruntime.InferenceSession(str(onnx), providers=["CUDAExecutionProvider"])
    runner = _EngineRunner(serialized)
    feeds = _inputs(8)
    parity = compare({"logits": runner(feeds)}, {"logits": cpu.run(None, feeds)[0]}, 1e-3, 1e-3)
    figures = {}
    for batch in BATCHES:
        feeds = _inputs(batch)
        trt_ms = _median_ms(runner, feeds, repeats)
        ort_ms = _median_ms(lambda f: cuda.run(None, f), feeds, repeats)
        figures[str(batch)] = {
            "tensorrt": trt_ms,
            "onnxruntime_cuda": ort_ms,
            "speedup": round(ort_ms["median_ms"] / trt_ms["median_ms"], 2),
        }
    return {"engine_bytes": len(serialized), "parity": parity, "batches": figures}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="also write the JSON report here")
    parser.add_argument("--repeats", type=int, default=50, help="timed runs per batch size")
    parser.add_argument("--json", action="store_true", help="(the last line is always JSON)")
    args = parser.parse_args(argv)
    report: dict[str, Any] = offer()
    report["ran"] = not report["missing"]
    if report["ran"]:
        report["measured"] = measure(args.repeats)
    else:
        report["measured"] = None
        print(f"no engine measured: missing {', '.join(report['missing'])}", file=sys.stderr)
    text = json.dumps(report)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
