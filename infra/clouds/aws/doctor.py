"""``tdk doctor``'s facts of AWS's catalog: the installed botocore's enums against the kit's
tables (``generated.json``, the GPU instance sizes and families of ``catalog``, the SageMaker
InferenceAmiVersions). The AWS cloud's ``catalog_facts`` (``infra.clouds.aws.machine``)."""

from __future__ import annotations

import json

from infra.clouds.aws import catalog
from infra.clouds.aws.generated import GENERATED
from infra.clouds.aws.sagemaker import images
from infra.facts.findings import Finding


def _generated_enums() -> tuple[str, dict[str, list[str]]]:
    """(botocore version, enums) as the installed botocore gives them (indirection for tests)."""
    from infra.clouds.aws import generate

    built = generate.build()
    return str(built["source"]), dict(built["enums"])


def _generated_families() -> dict[str, list[str]]:
    """The GPU families the installed botocore lists (indirection for tests)."""
    from infra.clouds.aws import generate

    return dict(generate.build()["gpu_families"])


def _generated_names() -> dict[str, dict[str, object]]:
    """The name rules (min, max, pattern) the installed botocore gives (indirection for tests)."""
    from infra.clouds.aws import generate

    return dict(generate.build()["names"])


def _name_rule_finding(source: str) -> Finding:
    """The installed botocore's name limits and patterns against ``generated.json``: a bound
    that moved changes which names the kit accepts (a name AWS now refuses, or one it takes)."""
    from infra.clouds.aws import generate

    committed = json.loads(GENERATED.read_text())
    drift = generate.differences(
        {"names": committed.get("names", {})}, {"names": _generated_names()}
    )
    note = "generated.json's name limits and patterns match the installed botocore"
    if drift:
        note = (
            f"{'; '.join(drift)}: run `python -m infra.clouds.aws.generate` (or `make lock` in "
            "a clone)"
        )
    return Finding("botocore name rules", f"{len(committed.get('names', {}))} shapes", source,
                   "installed", "aged" if drift else "ok", note)  # fmt: skip


def _gpu_family_finding(source: str) -> Finding:
    """A GPU family botocore lists that the kit neither describes nor refuses with a reason
    (it would be refused as unknown, and nobody said why)."""
    known = set(catalog.EC2_GPU_FAMILIES) | set(catalog.UNSUPPORTED_GPU_FAMILIES)
    listed = {f for families in _generated_families().values() for f in families}
    unknown = sorted(listed - known)
    note = f"all {len(listed)} are in infra/clouds/aws/catalog.py (described or refused, with why)"
    if unknown:
        note = (
            f"botocore lists {', '.join(unknown)}, which the kit neither describes nor refuses: "
            "add them to EC2_GPU_FAMILIES or UNSUPPORTED_GPU_FAMILIES in "
            "infra/clouds/aws/catalog.py"
        )
    return Finding("GPU instance families", f"{len(listed)} families", source, "installed",
                   "aged" if unknown else "ok", note)  # fmt: skip


def botocore_findings() -> list[Finding]:
    """The installed botocore's enums against the kit's tables: the generated file, the GPU
    instance sizes and the InferenceAmiVersions (a size or AMI botocore lists that the kit
    lacks is refused by the kit although AWS takes it)."""
    try:
        source, enums = _generated_enums()
    except ImportError as exc:
        return [Finding("botocore enums", "not installed", "", "", "broken", str(exc))]
    committed = json.loads(GENERATED.read_text())["enums"]
    out = []
    for shape, values in sorted(enums.items()):
        new, gone = (
            sorted(set(values) - set(committed.get(shape, []))),
            sorted(set(committed.get(shape, [])) - set(values)),
        )
        status, note = "ok", "generated.json matches the installed botocore"
        if new or gone:
            status = "aged"
            note = (
                f"botocore adds {new or 'nothing'}, drops {gone or 'nothing'}: run "
                "`python -m infra.clouds.aws.generate`"
            )
        out.append(Finding(f"botocore enum {shape}", f"{len(values)} values", source,
                           "installed", status, note))  # fmt: skip
    types = enums.get("sagemaker.ProductionVariantInstanceType", [])
    missing = [
        t for family, row in catalog.EC2_GPU_FAMILIES.items() for t in types
        if t.startswith(f"ml.{family}.") and t.removeprefix(f"ml.{family}.") not in row.gpus
    ]  # fmt: skip
    note = "every size of the kit's GPU families is in its table"
    if missing:
        note = (
            f"botocore lists {', '.join(missing)}, which the kit refuses: add them to "
            "infra/clouds/aws/catalog.py"
        )
    out.append(Finding("GPU instance sizes", f"{len(catalog.EC2_GPU_FAMILIES)} families",
                       source, "installed", "aged" if missing else "ok", note))  # fmt: skip
    out.append(_gpu_family_finding(source))
    out.append(_name_rule_finding(source))
    amis = {a for a in enums.get("sagemaker.ProductionVariantInferenceAmiVersion", [])
            if "-gpu-" in a}  # fmt: skip
    unknown = sorted(amis - set(images.AMI_BY_NAME))
    note = f"add {', '.join(unknown)} to INFERENCE_AMIS" if unknown else "all known"
    out.append(Finding("GPU InferenceAmiVersions", f"{len(amis)}", source, "installed",
                       "aged" if unknown else "ok", note))  # fmt: skip
    return out
