"""The local target's registry entry: the local endpoint (a real Triton behind a SageMaker
runtime-compatible front, started by ``tdk local up``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from infra.targets.capabilities import DECOUPLED, DEPLOY, LLM_ENGINES, PLAN, VALIDATE
from infra.targets.entry import TargetEntry

if TYPE_CHECKING:
    from infra.targets.operations import Locator


class LocalEntry(TargetEntry):
    name = "local"
    order = 60
    summary = "the local endpoint started by `tdk local up` (no cloud account)"
    client_module = "infra.targets.local.client"
    cannot: ClassVar[dict[str, str]] = {
        DEPLOY: "it is started by `tdk local up`, not by a Pulumi stack",
        PLAN: "it has no instances to price",
        VALIDATE: "it runs the Triton of the nvidia-pytriton wheel on this machine; "
        "`tdk local check` checks a release against it",
        # triton-inference-server/server src/http_server.cc, HandleInfer (checked 2026-11-26)
        LLM_ENGINES: "its Triton is the nvidia-pytriton wheel's, without the vllm and "
        "tensorrtllm backends",
        DECOUPLED: "its front sends each InvokeEndpoint to Triton's /v2/models/<name>/infer, "
        "which answers one response per request and refuses decoupled models",
    }

    def default_store(self, where: Locator) -> str | None:
        """The release the running endpoint serves (UsageError when none runs)."""
        from infra.targets.local.serve import running_state

        return str(running_state(where.endpoint or "local").store)


ENTRY = LocalEntry()
