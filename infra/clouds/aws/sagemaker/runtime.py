"""InvokeEndpoint through boto3's ``sagemaker-runtime`` client: SageMaker or the local front."""

from __future__ import annotations

from typing import Any

from infra.clients.base import (
    InferenceTarget,
    InvokeFailed,
    PreparedRequest,
    RawResponse,
    header_length_from_content_type,
)
from infra.clients.deadline import DEFAULT_TIMEOUT_S, DeadlineExceeded, call_with_deadline
from packager.manifest import ManifestModel


class SageMakerRuntimeTarget(InferenceTarget):
    """A multi-model endpoint addressed by name; ``TargetModel`` is the archive name.

    ``local=True`` points at the local endpoint: boto3 still signs requests, so placeholder
    credentials are used when none are configured (the local front does not check them).
    """

    kind = "sagemaker"

    def __init__(
        self,
        endpoint_name: str,
        endpoint_url: str | None = None,
        region: str | None = None,
        local: bool = False,
        max_attempts: int | None = None,
        pool_size: int = 64,
        timeout: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        import boto3
        from botocore.config import Config

        self.endpoint_name = endpoint_name
        self.local = local
        self.kind = "local" if local else "sagemaker"
        self.timeout = timeout
        options: dict[str, Any] = {
            "max_pool_connections": pool_size,
            "connect_timeout": timeout,
            "read_timeout": timeout,
        }
        if max_attempts is not None:
            options["retries"] = {"total_max_attempts": max_attempts, "mode": "standard"}
        kwargs: dict[str, Any] = {"endpoint_url": endpoint_url, "config": Config(**options)}
        if local:
            session = boto3.session.Session()
            kwargs["region_name"] = region or session.region_name or "us-east-1"
            if session.get_credentials() is None:
                kwargs.update(aws_access_key_id="local", aws_secret_access_key="local")
        elif region:
            kwargs["region_name"] = region
        self.client = boto3.client("sagemaker-runtime", **kwargs)

    def address(self, model: ManifestModel) -> dict[str, str]:
        """The InvokeEndpoint parameter that picks the model (MME: its archive, TargetModel)."""
        return {"TargetModel": model.target_model}

    def send(self, model: ManifestModel, request: PreparedRequest) -> RawResponse:
        from botocore.exceptions import BotoCoreError, ClientError

        where = f"endpoint {self.endpoint_name!r} ({self.client.meta.endpoint_url})"

        def call() -> tuple[Any, bytes]:
            response = self.client.invoke_endpoint(
                EndpointName=self.endpoint_name,
                Body=request.body,
                **self.address(model),
                ContentType=request.content_type,
            )
            return response, response["Body"].read()

        try:  # botocore's timeouts bound connect and each read; this bounds the whole exchange
            response, body = call_with_deadline(call, self.timeout)
        except DeadlineExceeded:
            raise InvokeFailed(
                f"{where} gave no complete answer to {model.target_model} within "
                f"{self.timeout:g} s",
                hint="raise --timeout, or check the endpoint (`tdk endpoint status`)",
                code="timeout",
            ) from None
        except ClientError as exc:
            error = exc.response.get("Error", {})
            code = str(error.get("Code", "Unknown"))
            status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0))
            raise InvokeFailed(
                f"{where} refused {model.target_model}: {code}: {error.get('Message', exc)}",
                hint=_hint(code, self.local, status, str(error.get("Message", ""))),
                code=code,
                status=status,
            ) from exc
        except BotoCoreError as exc:
            raise InvokeFailed(
                f"cannot reach {where}: {exc}",
                hint="check that the endpoint is running (`tdk local status` for local)"
                if self.local
                else "check the endpoint name, region and your AWS credentials",
                code="timeout" if "Timeout" in exc.__class__.__name__ else exc.__class__.__name__,
            ) from exc
        content_type = str(response.get("ContentType", ""))
        return RawResponse(body, header_length_from_content_type(content_type), content_type)

    def close(self) -> None:
        self.client.close()


#: what an endpoint says of a model it unloaded after a crash (the local endpoint's front)
RELOADS = "loads it again on the next request"
PAYLOAD_HINT = (
    "InvokeEndpoint accepts at most 6 MB per request: send a smaller batch, use the binary "
    "codec (drop --json-body), or use SageMaker asynchronous inference for larger payloads"
)


def _hint(code: str, local: bool, status: int = 0, message: str = "") -> str:
    if status == 413:
        return PAYLOAD_HINT
    if code == "ModelError" and RELOADS in message:
        return "retry: the endpoint reloads the model on the next request"
    hints = {
        "ValidationError": "check --endpoint and --target-model against the release manifest",
        "ModelError": "the model failed to load or run; Triton's message is above",
        "ModelNotReadyException": "every loaded model is busy; retry or raise --max-loaded-models",
        "ServiceUnavailable": "the runtime is restarting; retry shortly",
    }
    if code in hints:
        return hints[code]
    return "see `tdk local status`" if local else "see the endpoint's CloudWatch logs"
