"""How an LLM engine's instances land on GPUs: the numbers validate checks and
``packager.requirements`` hands to the targets' feasibility path."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from packager.protos import generated_module


def _kinds() -> Any:
    pb = generated_module("tritonclient.grpc.model_config_pb2", "'tritonclient[grpc]'")
    return pb.ModelInstanceGroup


def instances_per_gpu(config: Any) -> int:
    """The most engine instances that share one GPU: a KIND_GPU group puts ``count`` on each of
    its GPUs, KIND_MODEL (and KIND_AUTO) instances all see the same devices; no group means one
    instance (Triton's default). KIND_CPU instances take no GPU."""
    group = _kinds()
    shared = 0
    pinned: dict[int, int] = defaultdict(int)
    groups = list(config.instance_group) or [group(count=1, kind=group.KIND_AUTO)]
    for g in groups:
        count = max(int(g.count), 1)
        if g.kind == group.KIND_CPU:
            continue
        if g.kind == group.KIND_GPU and g.gpus:
            for gpu in g.gpus:
                pinned[int(gpu)] += count
        else:
            shared += count
    return shared + max(pinned.values(), default=0)


def single_gpu_kinds(config: Any) -> list[str]:
    """The instance kinds of ``config`` that Triton hands to the backend as one GPU each:
    KIND_GPU, and KIND_AUTO or no instance_group (both become KIND_GPU on a GPU host)."""
    group = _kinds()
    groups = list(config.instance_group)
    if not groups:
        return ["no instance_group (Triton's default is KIND_GPU on a GPU host)"]
    found = []
    for g in groups:
        if g.kind == group.KIND_GPU:
            found.append("KIND_GPU")
        elif g.kind == group.KIND_AUTO:
            found.append("KIND_AUTO (KIND_GPU on a GPU host)")
    return found
