"""AWS's committed price table (``prices.json`` beside this module): what the sagemaker and
sagemaker-ic targets' instances (section ``sagemaker``: ``ml.*`` Real-Time Inference hosting)
and the eks target's nodes (section ``ec2``: Linux on-demand) cost per hour. Each row names its
source; the file says when it was read and how it is regenerated (``fetch_prices``)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from infra.planning.pricing import PriceTable, load_table

TABLE = Path(__file__).with_name("prices.json")
#: SageMaker real-time inference instances (``ml.g5.xlarge``)
SAGEMAKER = "sagemaker"
#: EC2 instances (``g5.xlarge``), what an EKS node costs
EC2 = "ec2"


@lru_cache(maxsize=1)
def load() -> PriceTable:
    """The committed table."""
    return load_table(TABLE, "infra/clouds/aws/prices.json: restore it from git")
