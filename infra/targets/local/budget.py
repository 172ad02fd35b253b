"""What a loaded model costs in memory, against an endpoint's budget (``--memory-budget-bytes``).

A model's cost is what Triton's statistics extension reports in ``memory_usage`` once it is
loaded (GPU and host bytes; Triton 2.51 fills it for the backends that estimate it, mostly ONNX
Runtime and TensorRT); where it reports nothing, the manifest's archive size times
``MEMORY_FACTOR``, plus one Python stub process per model whose backend runs in one (the local
runtime serves ONNX through the Python backend). Both figures were measured on this kit's CPU
runtime and are documented in docs/kubernetes.md. The budget is host memory for CPU models and
GPU memory for GPU ones.

Triton's statistics: https://github.com/triton-inference-server/server/blob/main/docs/protocol/
extension_statistics.md (``memory_usage``: type, id, byte_size; checked 2026-12-07).
"""

from __future__ import annotations

import json
import re

from packager.manifest import ManifestModel

#: memory per byte of archive. Measured 2026-12-07 with ONNX Runtime 1.x on CPU (a MatMul with
#: random float32 weights, which gzip cannot shrink): resident memory after the session's load
#: and one run grew by 1.75x the archive's bytes at 16 MiB of weights, 1.25x at 64 MiB; 2 leaves
#: room for the load's own peak (the model file is read whole before the session copies it)
MEMORY_FACTOR = 2.0
#: one Triton Python-backend stub process (Triton 2.51, CPU, numpy loaded): 39 MB resident on
#: average (20 MB proportional share) over 39 stubs measured 2026-12-07 on this machine
#: (/proc/<pid>/smaps_rollup during bench/mme_k8s.py); 48 MiB with a margin
PYTHON_STUB_BYTES = 48 * 1024**2
#: backends whose models run in a Python stub on the local runtime (ONNX through the adapter)
STUB_BACKENDS = frozenset({"python", "onnxruntime"})

#: what Triton's load error says when memory ran out: CUDA's and ONNX Runtime's allocators,
#: C++'s bad_alloc, Python's MemoryError in a stub's initialize, and ENOMEM
_OUT_OF_MEMORY = re.compile(
    r"out of memory|MemoryError|bad_alloc|Cannot allocate memory|failed to allocate",
    re.IGNORECASE,
)


def estimate(entry: ManifestModel) -> int:
    """The bytes ``entry`` is expected to take once loaded, before Triton can say."""
    stub = PYTHON_STUB_BYTES if entry.backend in STUB_BACKENDS else 0
    return int(entry.size * MEMORY_FACTOR) + stub


def reported(statistics: bytes) -> int:
    """The bytes Triton's ``/v2/models/<m>/stats`` reports in ``memory_usage`` (0: none)."""
    try:
        document = json.loads(statistics)
        stats = document.get("model_stats", []) if isinstance(document, dict) else []
        return sum(
            int(usage.get("byte_size", 0))
            for model in stats
            if isinstance(model, dict)
            for usage in model.get("memory_usage", []) or []
            if isinstance(usage, dict)
        )
    except (ValueError, TypeError, AttributeError):
        return 0


def out_of_memory(message: str) -> bool:
    """Whether Triton's load error ``message`` says memory ran out."""
    return _OUT_OF_MEMORY.search(message) is not None
