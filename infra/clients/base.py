"""The contract every inference target keeps: prepare a body, send it, decode the answer.

Bodies are built and parsed with tritonclient's own codec, so every target speaks the same
binary+json (or plain JSON) format; the manifest supplies the signature, so a wrong name,
datatype or shape is caught before anything is sent.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from packager.manifest import ManifestModel, TensorSpec
from tdk.errors import EndpointError, UsageError

BINARY_CONTENT_TYPE = "application/vnd.sagemaker-triton.binary+json"
JSON_CONTENT_TYPE = "application/json"


class InvokeFailed(EndpointError):
    """The target answered with an error: ``status`` (HTTP, 0 if none) and ``code`` (its name)."""

    def __init__(self, message: str, hint: str = "", code: str = "", status: int = 0) -> None:
        super().__init__(message, hint)
        self.code = code
        self.status = status


@dataclass(frozen=True)
class PreparedRequest:
    """An encoded inference body; ``header_length`` is None for a plain JSON body."""

    body: bytes
    header_length: int | None

    @property
    def content_type(self) -> str:
        if self.header_length is None:
            return JSON_CONTENT_TYPE
        return f"{BINARY_CONTENT_TYPE};json-header-size={self.header_length}"


@dataclass(frozen=True)
class RawResponse:
    """What came back: the body and the JSON header length (None when the body is all JSON)."""

    body: bytes
    header_length: int | None
    content_type: str = ""


def header_length_from_content_type(content_type: str) -> int | None:
    """The ``json-header-size=N`` parameter of a binary+json content type, else None."""
    for part in content_type.split(";")[1:]:
        key, _, value = part.strip().partition("=")
        if key.strip().lower() == "json-header-size":
            return int(value.strip()) if value.strip().isdigit() else None
    return None


class InferenceTarget(abc.ABC):
    """A place inference requests go: the local endpoint, SageMaker, a Triton HTTP server."""

    #: short name shown in reports ("local", "sagemaker", "k8s")
    kind: str = ""

    def prepare(
        self, model: ManifestModel, inputs: Mapping[str, np.ndarray], binary: bool = True
    ) -> PreparedRequest:
        """Check ``inputs`` against the manifest and encode them (binary+json or plain JSON)."""
        from tritonclient.http import InferenceServerClient, InferInput, InferRequestedOutput
        from tritonclient.utils import np_to_triton_dtype

        arrays = check_inputs(model, inputs)
        encoded = []
        for name, array in arrays.items():
            item = InferInput(name, list(array.shape), np_to_triton_dtype(array.dtype))
            item.set_data_from_numpy(array, binary_data=binary)
            encoded.append(item)
        outputs = [InferRequestedOutput(spec.name, binary_data=binary) for spec in model.outputs]
        body, header_length = InferenceServerClient.generate_request_body(encoded, outputs)
        return PreparedRequest(bytes(body), header_length if binary else None)

    @abc.abstractmethod
    def send(self, model: ManifestModel, request: PreparedRequest) -> RawResponse:
        """Send one prepared request for ``model``; InvokeFailed when it is refused or fails."""

    def decode(self, model: ManifestModel, response: RawResponse) -> dict[str, np.ndarray]:
        """Decode the outputs the manifest lists (BYTES outputs come back as object arrays).

        A body that is not a Triton response, or lacks an output, is InvokeFailed with code
        ``bad_response``: an HTTP 200 alone is not a successful inference.
        """
        from tritonclient.http import InferenceServerClient

        try:
            result = InferenceServerClient.parse_response_body(
                response.body, header_length=response.header_length
            )
            outputs = {spec.name: result.as_numpy(spec.name) for spec in model.outputs}
        except Exception as exc:  # rapidjson, numpy, struct errors: all "not a Triton body"
            raise bad_response(model, response, f"{exc.__class__.__name__}: {exc}") from None
        missing = [name for name, value in outputs.items() if value is None]
        if missing:
            raise bad_response(model, response, f"no output named {', '.join(missing)}")
        return {name: value for name, value in outputs.items() if value is not None}

    def infer(
        self, model: ManifestModel, inputs: Mapping[str, np.ndarray], binary: bool = True
    ) -> dict[str, np.ndarray]:
        """prepare → send → decode."""
        return self.decode(model, self.send(model, self.prepare(model, inputs, binary)))

    def close(self) -> None:  # noqa: B027 - optional hook, most targets hold nothing
        """Release connections (optional)."""


def bad_response(model: ManifestModel, response: RawResponse, why: str) -> InvokeFailed:
    """The error for an answer that is not a Triton inference response."""
    start = response.body[:60].decode("utf-8", "replace")
    return InvokeFailed(
        f"{model.target_model}: the answer is not a Triton inference response ({why}); "
        f"it starts {start!r} ({len(response.body)} bytes, content type "
        f"{response.content_type or 'none'!r})",
        hint="check that the URL or endpoint points at Triton (or the tdk front), not at a "
        "proxy or another service",
        code="bad_response",
    )


def check_inputs(model: ManifestModel, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Inputs in manifest order as the declared dtype; UsageError on a wrong signature or a
    conversion that would change values."""
    known = {spec.name for spec in model.inputs}
    unknown = sorted(set(inputs) - known)
    if unknown:
        raise UsageError(
            f"{model.target_model}: no input named {', '.join(unknown)}",
            hint=f"inputs are: {', '.join(_describe(s, model) for s in model.inputs)}",
        )
    arrays: dict[str, np.ndarray] = {}
    for spec in model.inputs:
        if spec.name not in inputs:
            if spec.optional:
                continue
            raise UsageError(
                f"{model.target_model}: input {spec.name!r} is missing",
                hint=f"pass it with --input {spec.name}=... ({_describe(spec, model)})",
            )
        arrays[spec.name] = _check_one(model, spec, np.asarray(inputs[spec.name]))
    return arrays


def _check_one(model: ManifestModel, spec: TensorSpec, array: np.ndarray) -> np.ndarray:
    array = _cast(model, spec, array)
    expected = (-1, *spec.dims) if model.max_batch_size > 0 else spec.dims
    if len(array.shape) != len(expected) or any(
        want not in (-1, got) for want, got in zip(expected, array.shape, strict=True)
    ):
        raise UsageError(
            f"{model.target_model}: input {spec.name!r} has shape {list(array.shape)}, "
            f"expected {list(expected)} (-1 is any size)",
            hint=f"reshape the data ({_describe(spec, model)})",
        )
    if model.max_batch_size > 0 and array.shape[0] > model.max_batch_size:
        raise UsageError(
            f"{model.target_model}: batch of {array.shape[0]} exceeds max_batch_size "
            f"{model.max_batch_size}",
            hint="send smaller batches",
        )
    return array


def numpy_dtype(datatype: str) -> type | None:
    """The numpy type of a Triton datatype (tritonclient's own table); None when it has none."""
    from tritonclient.utils import triton_to_np_dtype

    want: type | None = triton_to_np_dtype(datatype)
    return want


def _cast(model: ManifestModel, spec: TensorSpec, array: np.ndarray) -> np.ndarray:
    """``array`` as the declared dtype: exact or lossless (e.g. int32 → INT64) only.

    A lossy conversion (int64 or float64 data for an FP32 input) is refused: the data would not
    be what the caller holds, so they convert it themselves.
    """
    want = numpy_dtype(spec.datatype)
    if want is None:
        raise UsageError(
            f"{model.target_model}: input {spec.name!r} has datatype {spec.datatype}, which "
            "tdk cannot encode",
            hint="use tritonclient directly for this model",
        )
    if want is np.object_:
        if array.dtype.kind in ("U", "S", "O"):
            return np.array([_to_bytes(v) for v in array.ravel()], dtype=np.object_).reshape(
                array.shape
            )
    elif array.dtype == want:
        return array
    elif np.can_cast(array.dtype, want, casting="safe"):
        return array.astype(want)
    raise UsageError(
        f"{model.target_model}: input {spec.name!r} expects {spec.datatype} "
        f"({np.dtype(want).name}) but the data is {array.dtype}; tdk does not convert it "
        "silently (the values would change)",
        hint=f"convert the data first, e.g. np.save(path, array.astype(np.{np.dtype(want).name}))"
        f" ({_describe(spec, model)})",
    )


def _to_bytes(value: object) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode("utf-8")


def _describe(spec: TensorSpec, model: ManifestModel) -> str:
    dims = [-1, *spec.dims] if model.max_batch_size > 0 else list(spec.dims)
    return f"{spec.name} {spec.datatype} {dims}"
