"""Google Cloud's GPU catalog: the GKE accelerator types the gke target's node pools take and
the GPU kind of each (``infra.facts.hardware.GPUS``). Pure data.

Source: cloud.google.com/compute/docs/gpus (the accelerator type names of Compute Engine GPUs).
"""

from __future__ import annotations

#: GKE accelerator type -> GPU kind
GKE_ACCELERATORS: dict[str, str] = {
    "nvidia-tesla-t4": "T4",
    "nvidia-l4": "L4",
    "nvidia-tesla-a100": "A100-40GB",
    "nvidia-a100-80gb": "A100-80GB",
    "nvidia-h100-80gb": "H100",
    "nvidia-tesla-v100": "V100",
}
