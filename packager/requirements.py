"""What one model asks of the hardware it is placed on: the seam between the repository and a
target's feasibility check.

Validate, package and the targets' feasibility path read a model's needs from here, never from
its backend name: GPUs per replica (tensor x pipeline parallel for an LLM engine, else 1), the
fraction of each GPU's memory its engine reserves (an LLM engine's ``gpu_memory_utilization``;
None when the weights' size is the estimate), and whether it is decoupled (streams several
responses per request; Triton's SageMaker MME front refuses those).
"""

from __future__ import annotations

from dataclasses import dataclass

from packager.repository import ModelDir


@dataclass(frozen=True)
class Requirements:
    """One model's placement needs (see the module docstring)."""

    model: str
    backend: str
    gpus_per_replica: int = 1
    #: share of each GPU's memory the engine reserves, in (0, 1]; None: estimate from weights
    gpu_memory_fraction: float | None = None
    decoupled: bool = False
    #: where the numbers come from (``config.pbtxt``, ``1/model.json``, ...), for messages
    source: str = "config.pbtxt"


def requirements(model: ModelDir) -> Requirements:
    """The placement needs of ``model`` as its config (and, for LLM engines, its engine files)
    declare them."""
    config = model.config
    return Requirements(
        model=model.name,
        backend=model.backend,
        decoupled=bool(config.model_transaction_policy.decoupled),
    )
