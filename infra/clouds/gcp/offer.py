"""What a GKE node's accelerators offer a model (``TargetSpec``), from the GCP catalog
(``catalog.py``): gke builds its ``offer`` with it."""

from __future__ import annotations

from infra.clouds.gcp import catalog as gcp_catalog
from infra.facts import hardware as facts
from infra.values.offer import TargetSpec, image_facts
from tdk.errors import UsageError


def accelerator_spec(target: str, gpu: str, image: str = "", gpus: int = 1) -> TargetSpec:
    """A pod on a node with ``gpus`` GKE accelerators ``gpu`` (no disk limit, no MME)."""
    if not gpu:
        raise UsageError(
            f"--target {target} needs --gpu (the accelerator to check against)",
            hint=f"add --gpu {next(iter(gcp_catalog.GKE_ACCELERATORS))}, "
            "or --stack NAME for a stack's",
        )
    kind = gcp_catalog.GKE_ACCELERATORS.get(gpu)
    if kind is None:
        raise UsageError(
            f"--gpu {gpu!r} is not a GKE accelerator tdk knows",
            hint=f"use one of {', '.join(sorted(gcp_catalog.GKE_ACCELERATORS))}",
        )
    return TargetSpec(
        target, gpu, facts.GPUS[kind], 0, image_facts(image), mme=False, gpus=gpus,
        image_name=image,
    )  # fmt: skip
