"""Write ``infra/clouds/aws/generated.json`` from the installed botocore's service models.

    python -m infra.clouds.aws.generate          # rewrite the file
    python -m infra.clouds.aws.generate --check  # exit 1 when the committed file has drifted

Name limits/patterns, the InferenceAmiVersion and instance-type enums come from botocore's
``service-2.json`` models (derived, never transcribed); the kit reads them through
``infra.clouds.aws.generated``. Pure: botocore's loader reads local JSON, nothing calls AWS.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

GENERATED = Path(__file__).with_name("generated.json")
#: (service, shape) pairs whose length/pattern bounds the kit relies on
NAME_SHAPES: tuple[tuple[str, str], ...] = (
    ("sagemaker", "EndpointName"),
    ("sagemaker", "EndpointConfigName"),
    ("sagemaker", "ModelName"),
    ("sagemaker", "InferenceComponentName"),
    ("sagemaker", "VariantName"),
    ("application-autoscaling", "PolicyName"),
    ("cloudwatch", "AlarmName"),
)
ENUM_SHAPES: tuple[tuple[str, str], ...] = (
    ("sagemaker", "ProductionVariantInferenceAmiVersion"),
    ("sagemaker", "ProductionVariantInstanceType"),
)


def build() -> dict[str, Any]:
    """The table, from the installed botocore."""
    import botocore
    import botocore.session

    session = botocore.session.get_session()
    models = {s: session.get_service_model(s) for s, _ in (*NAME_SHAPES, *ENUM_SHAPES)}
    names: dict[str, Any] = {}
    for service, shape_name in NAME_SHAPES:
        meta = models[service].shape_for(shape_name).metadata
        names[f"{service}.{shape_name}"] = {
            k: meta[k] for k in ("min", "max", "pattern") if k in meta
        }
    enums = {
        f"{service}.{shape}": list(getattr(models[service].shape_for(shape), "enum", []))
        for service, shape in ENUM_SHAPES
    }
    return {
        "generator": "python -m infra.clouds.aws.generate",
        "source": f"botocore {botocore.__version__} data/<service>/*/service-2.json",
        "names": names,
        "enums": enums,
        "gpu_families": gpu_families(session, enums),
    }


def _families(types: Any, prefix: str = "") -> list[str]:
    """The g*/p* (accelerated: NVIDIA and AMD GPU) families among instance types."""
    cut = [t.removeprefix(prefix).split(".")[0] for t in types if t.startswith(prefix)]
    return sorted({family for family in cut if family[:1] in ("g", "p")})


def gpu_families(session: Any, enums: dict[str, list[str]]) -> dict[str, list[str]]:
    """GPU families botocore lists: SageMaker's (ProductionVariantInstanceType) and EC2's
    (InstanceType); a family the kit neither describes nor refuses fails a drift test."""
    ec2 = session.get_service_model("ec2").shape_for("InstanceType").enum
    return {
        "sagemaker": _families(enums["sagemaker.ProductionVariantInstanceType"], "ml."),
        "ec2": _families(ec2),
    }


def render() -> str:
    return json.dumps(build(), indent=2, sort_keys=True) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if GENERATED.read_text() != text:
            print(f"{GENERATED} is out of date; run `python -m infra.clouds.aws.generate`")
            return 1
        return 0
    GENERATED.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
