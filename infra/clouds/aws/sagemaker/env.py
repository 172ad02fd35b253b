"""The container environment of the SageMaker Triton image: typed knobs -> env variables.

The image's ``serve`` script turns these variables into ``tritonserver`` flags; SageMaker sets
``SAGEMAKER_MULTI_MODEL`` itself for a ``MultiModel`` container.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TritonKnobs:
    """The Triton settings the SageMaker image reads from its environment."""

    log_verbose: int
    #: SageMaker frontend threads and buffer-copy threads; 0 leaves the image's own default
    thread_count: int
    buffer_manager_threads: int
    #: Python backend shared memory per model instance, and its growth step
    shm_default_bytes: int
    shm_growth_bytes: int
    #: fraction of GPU memory above which Triton refuses another load; None on CPU instances
    model_load_gpu_limit: float | None


def container_environment(knobs: TritonKnobs) -> dict[str, str]:
    """Environment variables for the Model's primary container (strings, as SageMaker wants)."""
    env = {
        "SAGEMAKER_TRITON_LOG_VERBOSE": str(knobs.log_verbose),
        "SAGEMAKER_TRITON_SHM_DEFAULT_BYTE_SIZE": str(knobs.shm_default_bytes),
        "SAGEMAKER_TRITON_SHM_GROWTH_BYTE_SIZE": str(knobs.shm_growth_bytes),
    }
    if knobs.thread_count > 0:
        env["SAGEMAKER_TRITON_THREAD_COUNT"] = str(knobs.thread_count)
    if knobs.buffer_manager_threads > 0:
        env["SAGEMAKER_TRITON_BUFFER_MANAGER_THREAD_COUNT"] = str(knobs.buffer_manager_threads)
    if knobs.model_load_gpu_limit is not None:
        env["SAGEMAKER_TRITON_MODEL_LOAD_GPU_LIMIT"] = f"{knobs.model_load_gpu_limit:g}"
    return env
