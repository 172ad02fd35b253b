"""Triton Python backend model: a small two-layer MLP, on the GPU with torch (``KIND_GPU``).

``x`` (FP16, [batch, 64]) -> ``y`` (FP16, [batch, 16]); weights from a fixed seed. Every request
of a call is run as one batch. torch is imported here only (the repository generator does not
need it); a ``KIND_CPU`` instance without torch computes the same with numpy, so the CPU mode of
bench/gpu_check.py runs where torch is absent.
"""

from __future__ import annotations

import numpy as np
import triton_python_backend_utils as pb_utils

IN, HIDDEN, OUT = 64, 1024, 16
SEED = 7


def weights() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(SEED)
    first = rng.standard_normal((IN, HIDDEN)).astype(np.float32) / np.sqrt(IN)
    second = rng.standard_normal((HIDDEN, OUT)).astype(np.float32) / np.sqrt(HIDDEN)
    return first, second


class TritonPythonModel:
    """One instance: its weights on its device, a forward pass per call."""

    def initialize(self, args: dict) -> None:
        kind = args.get("model_instance_kind", "CPU")
        first, second = weights()
        try:
            import torch
        except ImportError:
            if kind == "GPU":
                raise RuntimeError("KIND_GPU needs torch on PYTHONPATH in Triton's env") from None
            self.torch = None
            self.weights = (first, second)
            return
        self.torch = torch
        on_gpu = kind == "GPU"
        self.device = torch.device(f"cuda:{args['model_instance_device_id']}" if on_gpu else "cpu")
        self.dtype = torch.float16 if on_gpu else torch.float32
        self.weights = tuple(
            torch.from_numpy(w).to(self.device, self.dtype) for w in (first, second)
        )

    def forward(self, x: np.ndarray) -> np.ndarray:
        if self.torch is None:
            first, second = self.weights
            hidden = np.maximum(x.astype(np.float32) @ first, 0)
            return (hidden @ second).astype(np.float16)
        torch = self.torch
        with torch.inference_mode():
            batch = torch.from_numpy(x).to(self.device, self.dtype)
            hidden = torch.relu(batch @ self.weights[0])
            return (hidden @ self.weights[1]).to(torch.float16).cpu().numpy()

    def execute(self, requests: list) -> list:
        inputs = [pb_utils.get_input_tensor_by_name(r, "x").as_numpy() for r in requests]
        outputs = self.forward(np.concatenate(inputs))
        responses, start = [], 0
        for x in inputs:
            y = outputs[start : start + len(x)]
            start += len(x)
            responses.append(pb_utils.InferenceResponse([pb_utils.Tensor("y", y)]))
        return responses
