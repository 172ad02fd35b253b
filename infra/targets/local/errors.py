"""SageMaker Runtime errors, in the shape boto3 parses (``x-amzn-ErrorType`` + JSON body)."""

from __future__ import annotations

import json


class ApiError(Exception):
    """An InvokeEndpoint failure with SageMaker's error code and HTTP status."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        original_status: int | None = None,
        original_message: str | None = None,
        close: bool = False,
    ) -> None:
        super().__init__(message)
        self.close = close  # answer with ``Connection: close`` (the request was not read whole)
        self.status = status
        self.code = code
        self.message = message
        self.original_status = original_status
        self.original_message = original_message

    def body(self) -> bytes:
        payload: dict[str, object] = {"message": self.message}
        if self.original_status is not None:
            payload["OriginalStatusCode"] = self.original_status
        if self.original_message is not None:
            payload["OriginalMessage"] = self.original_message
        return json.dumps(payload).encode()


def validation(message: str) -> ApiError:
    """400: the request itself is wrong (unknown TargetModel, body too large, ...)."""
    return ApiError(400, "ValidationError", message)


def model_error(
    message: str, original_status: int | None = None, original_message: str | None = None
) -> ApiError:
    """424: the model failed to load or to run (Triton's message is kept)."""
    return ApiError(424, "ModelError", message, original_status, original_message)


def not_ready(message: str) -> ApiError:
    """429: no capacity to load the model now (every loaded model is busy)."""
    return ApiError(429, "ModelNotReadyException", message)


def unavailable(message: str) -> ApiError:
    """503: the Triton runtime is down or restarting."""
    return ApiError(503, "ServiceUnavailable", message)


def internal(message: str) -> ApiError:
    """500: a bug or an unexpected failure in the front."""
    return ApiError(500, "InternalFailure", message)


def insufficient_memory(message: str) -> ApiError:
    """507: the model does not fit the memory left after evicting (SageMaker's multi-model
    container contract answers a load without memory 507: "Custom Containers Contract for
    Multi-Model Endpoints", https://docs.aws.amazon.com/sagemaker/latest/dg/mms-container-apis.html,
    checked 2026-12-07)."""
    return ApiError(507, "InsufficientMemory", message)
