"""AWS resource names (ARNs) as the SageMaker and eks targets build them."""

from __future__ import annotations


def partition(region: str) -> str:
    """The ARN partition of a region (aws, aws-cn, aws-us-gov)."""
    if region.startswith("cn-"):
        return "aws-cn"
    if region.startswith("us-gov-"):
        return "aws-us-gov"
    return "aws"
