"""What ``tdk doctor`` reports for a SageMaker stack (both SageMaker targets): its Triton
image and, where the stack pins one, its InferenceAmiVersion."""

from __future__ import annotations

import datetime as dt

from infra.clouds.aws.sagemaker import images
from infra.facts.findings import UNVERIFIED, Finding, image_findings


def findings(triton_version: str, ami: str | None, today: dt.date) -> list[Finding]:
    found = image_findings(triton_version, today)
    if ami:
        src = images.AMI_SOURCE
        row = images.AMI_BY_NAME[ami]
        note = f"driver {row.driver}, CUDA {row.cuda[0]}.{row.cuda[1]} (the kit's table)"
        found.append(
            Finding("InferenceAmiVersion", ami, src.url, str(src.checked), UNVERIFIED, note)
        )
    return found
