"""Reader of ``generated.json`` beside it: AWS's name rules, enums and GPU families, derived
from botocore's service models by ``infra.clouds.aws.generate`` (a test fails on drift)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

GENERATED = Path(__file__).with_name("generated.json")


@cache
def _table() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(GENERATED.read_text())
    return data


def name_bounds(shape: str) -> tuple[int, str]:
    """``sagemaker.EndpointName`` -> (max length, pattern)."""
    row = _table()["names"][shape]
    return int(row["max"]), str(row.get("pattern", ".+"))


def enum(shape: str) -> tuple[str, ...]:
    """``sagemaker.ProductionVariantInferenceAmiVersion`` -> its values."""
    return tuple(_table()["enums"][shape])


def source() -> str:
    return str(_table()["source"])


def sagemaker_sizes(family: str) -> tuple[str, ...]:
    """The sizes botocore's ``ProductionVariantInstanceType`` lists for ``family`` (``g6e`` ->
    ``xlarge``, ``2xlarge``, ...): which instance types exist is derived, never transcribed."""
    prefix = f"ml.{family}."
    return tuple(
        t.removeprefix(prefix)
        for t in enum("sagemaker.ProductionVariantInstanceType")
        if t.startswith(prefix)
    )


def gpu_families(service: str) -> tuple[str, ...]:
    """The GPU instance families botocore lists for ``service`` (``sagemaker`` or ``ec2``)."""
    return tuple(_table()["gpu_families"][service])
