"""The local target's registry entry: the local endpoint (a real Triton behind a SageMaker
runtime-compatible front, started by ``tdk local up``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from infra.targets.capabilities import DECOUPLED, LLM_ENGINES, Refused
from infra.targets.entry import Lazy, TargetEntry


def _locator() -> type[Locator]:
    """The operations client's locator: imported when asked (the client imports numpy and the
    stores)."""
    from infra.targets.local.client import LOCATOR

    return LOCATOR


if TYPE_CHECKING:
    from infra.targets.operations import Locator


class LocalEntry(TargetEntry):
    name = "local"
    order = 60
    summary = "the local endpoint started by `tdk local up` (no cloud account)"
    locator = Lazy(_locator)
    deploy = Refused("it is started by `tdk local up`, not by a Pulumi stack")
    plan = Refused("it has no instances to price")
    validate = Refused(
        "it runs the Triton of the nvidia-pytriton wheel on this machine; "
        "`tdk local check` checks a release against it"
    )
    cannot_serve: ClassVar[dict[str, Refused]] = {
        # triton-inference-server/server src/http_server.cc, HandleInfer (checked 2026-11-26)
        LLM_ENGINES: Refused(
            "its Triton is the nvidia-pytriton wheel's, without the vllm and tensorrtllm backends"
        ),
        DECOUPLED: Refused(
            "its front sends each InvokeEndpoint to Triton's /v2/models/<name>/infer, "
            "which answers one response per request and refuses decoupled models"
        ),
    }


ENTRY = LocalEntry()
