"""Google Cloud's GPU catalog: the GKE accelerator types the gke target's node pools take and
the GPU kind of each (``infra.facts.hardware.GPUS``). Pure data.

Source: cloud.google.com/compute/docs/gpus (the accelerator type names of Compute Engine GPUs).
"""

from __future__ import annotations

import datetime as dt

from infra.facts import Source

#: GKE accelerator type -> GPU kind
GKE_ACCELERATORS: dict[str, str] = {
    "nvidia-tesla-t4": "T4",
    "nvidia-l4": "L4",
    "nvidia-tesla-a100": "A100-40GB",
    "nvidia-a100-80gb": "A100-80GB",
    "nvidia-h100-80gb": "H100",
    "nvidia-tesla-v100": "V100",
}

#: GPUs per G2 machine type (Compute Engine accelerator-optimized machines)
GCE_G2 = Source(
    "https://cloud.google.com/compute/docs/accelerator-optimized-machines#g2-vms",
    dt.date(2026, 11, 26),
)
#: GKE G2 machine type -> L4 GPUs (GCE_G2)
G2_MACHINE_GPUS: dict[str, int] = {
    "g2-standard-4": 1, "g2-standard-8": 1, "g2-standard-12": 1, "g2-standard-16": 1,
    "g2-standard-32": 1, "g2-standard-24": 2, "g2-standard-48": 4, "g2-standard-96": 8,
}  # fmt: skip


def smallest_g2(gpus: int) -> str | None:
    """The smallest G2 machine type with at least ``gpus`` L4s, None above 8."""
    fits = [(n, m) for m, n in G2_MACHINE_GPUS.items() if n >= gpus]
    return min(fits)[1] if fits else None
