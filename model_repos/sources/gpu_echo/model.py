"""Triton Python backend model: ``gpu_mlp``'s tensors without torch, for the GPU check's probe.

``x`` (FP16, [batch, 64]) -> ``y`` (FP16, [batch, 16]): the first 16 columns of ``x``, with numpy
only. On a ``KIND_GPU`` instance it isolates the Python backend's own path for an output from
anything torch or CUDA does inside a model (bench/gpu_check.py sends it one raw request).
"""

from __future__ import annotations

import numpy as np
import triton_python_backend_utils as pb_utils

OUT = 16


class TritonPythonModel:
    """Echo the first ``OUT`` columns of every request's ``x``."""

    def execute(self, requests: list) -> list:
        responses = []
        for request in requests:
            x = pb_utils.get_input_tensor_by_name(request, "x").as_numpy()
            y = np.ascontiguousarray(x[:, :OUT], dtype=np.float16)
            responses.append(pb_utils.InferenceResponse([pb_utils.Tensor("y", y)]))
        return responses
