"""Write ``infra/clouds/aws/generated.json`` from the installed botocore's service models.

    python -m infra.clouds.aws.generate          # rewrite the file
    python -m infra.clouds.aws.generate --check  # exit 1 when a fact in the file has drifted

Name limits/patterns, the InferenceAmiVersion and instance-type enums come from botocore's
``service-2.json`` models (derived, never transcribed); the kit reads them through
``infra.clouds.aws.generated``. Pure: botocore's loader reads local JSON, nothing calls AWS.

Drift is judged on the facts (names, enums, GPU families), never on ``source``, the botocore
version stamp: botocore releases several times a week, most releases change none of the shapes
the kit reads, and a newer botocore with the same facts is not drift (issue 45).
"""

from __future__ import annotations

import json
import os
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
    ("ecr", "RepositoryName"),
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


def render(table: dict[str, Any] | None = None) -> str:
    return json.dumps(build() if table is None else table, indent=2, sort_keys=True) + "\n"


#: the parts of the table that are facts; ``generator`` and ``source`` only say where they came from
FACTS = ("names", "enums", "gpu_families")


def differences(committed: dict[str, Any], current: dict[str, Any]) -> list[str]:
    """The facts that differ between two tables, one line each (``[]``: the same facts,
    whatever botocore version stamped either)."""
    out: list[str] = []
    for part in FACTS:
        old, new = committed.get(part, {}), current.get(part, {})
        for key in sorted(set(old) | set(new)):
            before, after = old.get(key), new.get(key)
            if before == after:
                continue
            if isinstance(before, dict) and isinstance(after, dict):
                out.extend(
                    f"{part}.{key}.{field}: {before.get(field)} -> {after.get(field)}"
                    for field in sorted(set(before) | set(after))
                    if before.get(field) != after.get(field)
                )
                continue
            if isinstance(before, list) and isinstance(after, list):
                added = [v for v in after if v not in before]
                dropped = [v for v in before if v not in after]
                change = f"adds {added or 'nothing'}, drops {dropped or 'nothing'}"
                if not added and not dropped:
                    change = "same values, another order"
            else:
                change = f"{before} -> {after}"
            out.append(f"{part}.{key}: {change}")
    return out


def main(argv: list[str]) -> int:
    table = build()
    if "--check" in argv:
        try:
            committed = json.loads(GENERATED.read_text())
        except (OSError, ValueError) as exc:
            print(f"{GENERATED} cannot be read ({exc}); run `python -m infra.clouds.aws.generate`")
            return 1
        drift = differences(committed, table)
        if drift:
            print(f"{GENERATED} differs from {table['source']} in {len(drift)} fact(s):")
            print("\n".join(f"  {line}" for line in drift))
            print("run `python -m infra.clouds.aws.generate` (or `make lock`) and review the diff")
            return 1
        if committed.get("source") != table["source"]:
            print(f"{GENERATED}: the same facts in {table['source']} "
                  f"(generated from {committed.get('source')})")  # fmt: skip
        return 0
    text = render(table)
    tmp = GENERATED.with_name(f".{GENERATED.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, GENERATED)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
