"""Inference component names: a model copy's name made valid for SageMaker (pure).

A component name must match ``[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?`` and hold at most 63
characters (botocore's ``InferenceComponentName`` shape, sagemaker service model 2017-07-24,
botocore 1.44.8; https://github.com/boto/botocore/blob/develop/botocore/data/sagemaker/
2017-07-24/service-2.json; checked 2026-11-24). Copy names may also hold ``_`` and ``.``
(Triton and MME TargetModel allow them), so those become ``-``; the local endpoint accepts
either spelling, so the same boto3 code runs against both.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from tdk.errors import ConfigError

#: botocore InferenceComponentName (and ModelName): pattern and maximum length
NAME_PATTERN = re.compile(r"^[a-zA-Z0-9]([\-a-zA-Z0-9]*[a-zA-Z0-9])?$")
MAX_NAME = 63
_INVALID = re.compile(r"[^A-Za-z0-9-]+")


def component_name(copy: str) -> str:
    """``text_pipeline-0`` -> ``text-pipeline-0``: the component that serves model ``copy``."""
    return _INVALID.sub("-", copy.removesuffix(".tar.gz")).strip("-")


def check_component_names(key: str, copies: Iterable[str]) -> dict[str, str]:
    """copy -> component name; ConfigError on a name SageMaker refuses or two copies that
    would share one component name."""
    names: dict[str, str] = {}
    seen: dict[str, str] = {}
    for copy in copies:
        name = component_name(copy)
        if not NAME_PATTERN.match(name) or len(name) > MAX_NAME:
            raise ConfigError(
                f"{key}: model copy {copy!r} gives inference component name {name!r}, which "
                f"SageMaker refuses ({MAX_NAME} characters at most of A-Z a-z 0-9 and -)",
                hint="package the release with a shorter --name-template",
            )
        if name in seen:
            raise ConfigError(
                f"{key}: model copies {seen[name]!r} and {copy!r} both become inference "
                f"component {name!r}",
                hint="rename one of the models, or package with another --name-template",
            )
        seen[name] = copy
        names[copy] = name
    return names
