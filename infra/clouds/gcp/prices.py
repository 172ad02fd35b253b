"""Google Cloud's committed price table (``prices.json`` beside this module): what the gke
target's nodes cost per hour, a machine type (section ``gce_machine``: its vCPUs and memory) plus
its GPUs (section ``gce_gpu``, per GPU). Each row names its source; the file says when it was
read and how it is regenerated (``regenerate``)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from infra.planning.pricing import PriceTable, load_table

TABLE = Path(__file__).with_name("prices.json")
#: Compute Engine machine types (``g2-standard-8``), without their GPUs
MACHINE = "gce_machine"
#: Compute Engine GPUs (``nvidia-l4``), per GPU
GPU = "gce_gpu"


@lru_cache(maxsize=1)
def load() -> PriceTable:
    """The committed table."""
    return load_table(TABLE, "infra/clouds/gcp/prices.json: restore it from git")
