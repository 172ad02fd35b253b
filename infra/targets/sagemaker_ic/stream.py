"""``tdk invoke --prompt`` / ``tdk bench generate`` on inference components: a decoupled copy's
component runs Triton in ``generate_stream`` mode (``generate.py``), reached through
InvokeEndpointWithResponseStream with ``InferenceComponentName``. Each ``PayloadPart`` carries
bytes of Triton's server-sent events, decoded and checked as for Triton's own HTTP route."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from infra.clients.base import InvokeFailed
from infra.clients.generate import (
    Generation,
    OnChunk,
    StreamError,
    read_events,
    request_body,
    split_lines,
)
from infra.clouds.aws.sagemaker.components import component_name
from infra.targets.sagemaker_ic.generate import GENERATE_MODE
from packager.manifest import ManifestModel
from tdk.errors import UsageError

#: what Triton's generate_stream answers (sagemaker_server.cc: ``text/event-stream``)
ACCEPT = "text/event-stream"


def stream_request(
    endpoint: str, component: str, prompt: str, max_tokens: int, stream: bool
) -> dict[str, Any]:
    """The InvokeEndpointWithResponseStream request of one generate call."""
    return {
        "EndpointName": endpoint,
        "InferenceComponentName": component,
        "Body": request_body(prompt, max_tokens, stream),
        "ContentType": "application/json",
        "Accept": ACCEPT,
    }


def payload_bytes(events: Any) -> Iterator[bytes]:
    """The bytes of each ``PayloadPart``; the stream's own error events raise StreamError."""
    for event in events:
        if "PayloadPart" in event:
            yield event["PayloadPart"].get("Bytes", b"")
            continue
        for kind in ("ModelStreamError", "InternalStreamFailure"):
            if kind in event:
                detail = event[kind]
                raise StreamError(
                    f"the response stream failed ({kind}: {detail.get('Message', detail)})",
                    code=str(detail.get("ErrorCode") or kind),
                    hint="the component's CloudWatch log says more",
                )


class ComponentGenerateClient:
    """Generate calls to one decoupled copy's inference component (``runtime``: a boto3
    ``sagemaker-runtime`` client)."""

    def __init__(self, runtime: Any, endpoint: str, model: ManifestModel) -> None:
        if model.archive:
            raise UsageError(
                f"{model.name} is not a decoupled model: its inference component runs Triton "
                f"in infer mode, which has no generate route (only decoupled copies, packaged "
                f"without an mme/ archive, run in {GENERATE_MODE} mode)",
                hint="invoke it with --input/--text, or give --target-model a decoupled (LLM) "
                "copy of the release",
            )
        self.runtime = runtime
        self.endpoint = endpoint
        self.model = model.name
        self.component = component_name(model.name)

    def generate(
        self, prompt: str, max_tokens: int, stream: bool, on_chunk: OnChunk | None = None
    ) -> Generation:
        """One request; the events are read as they arrive."""
        from botocore.exceptions import BotoCoreError, ClientError

        request = stream_request(self.endpoint, self.component, prompt, max_tokens, stream)
        where = f"endpoint {self.endpoint!r} component {self.component!r}"
        started = time.perf_counter()
        try:
            response = self.runtime.invoke_endpoint_with_response_stream(**request)
            return read_events(split_lines(payload_bytes(response["Body"])), started, on_chunk)
        except ClientError as exc:
            error = exc.response.get("Error", {})
            raise InvokeFailed(
                f"{where}: {error.get('Code', 'error')}: {error.get('Message', exc)}",
                hint="check --endpoint, --region and that the component is InService "
                "(`tdk endpoint status --target sagemaker-ic`)",
                code=str(error.get("Code") or "ClientError"),
            ) from None
        except BotoCoreError as exc:
            raise StreamError(f"{where}: the answer broke off ({exc})") from None
