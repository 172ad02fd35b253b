"""``--target k8s``: Triton's own KServe v2 API over HTTP (binary codec) or gRPC.

On Kubernetes, Triton loads the release's ``repository/`` tree, so a model is addressed by its
Triton name; the CLI maps ``--target-model`` (the archive name) to it through the manifest and
this target sends to ``/v2/models/<name>/infer``.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from infra.clients.base import (
    InferenceTarget,
    InvokeFailed,
    PreparedRequest,
    RawResponse,
    check_inputs,
)
from infra.clients.deadline import DEFAULT_TIMEOUT_S, Watchdog
from infra.clients.triton_errors import triton_error_text
from packager.manifest import ManifestModel
from tdk.errors import EndpointError, UsageError

HEADER_LENGTH = "Inference-Header-Content-Length"


@dataclass(frozen=True)
class GrpcRequest(PreparedRequest):
    """A request for the gRPC path: the checked arrays (gRPC has its own protobuf codec)."""

    arrays: dict[str, np.ndarray] = field(default_factory=dict)


@dataclass(frozen=True)
class GrpcResponse(RawResponse):
    """What the gRPC path decoded already."""

    outputs: dict[str, np.ndarray] = field(default_factory=dict)


def _split(url: str, grpc: bool) -> tuple[str, str, int, str]:
    """scheme, host, port, path prefix of ``url`` (gRPC accepts a bare ``host:port``)."""
    if grpc and "://" not in url:
        url = f"grpc://{url}"
    parts = urlsplit(url)
    allowed = ("grpc", "http", "https") if grpc else ("http", "https")
    if parts.scheme not in allowed or not parts.hostname:
        raise UsageError(
            f"--url {url!r} is not a Triton {'gRPC' if grpc else 'HTTP'} address",
            hint="e.g. --url http://127.0.0.1:8000 (HTTP) or --grpc --url 127.0.0.1:8001",
        )
    default = 443 if parts.scheme == "https" else (8001 if grpc else 8000)
    return parts.scheme, parts.hostname, parts.port or default, parts.path.rstrip("/")


#: opens a connected socket to the server (a Triton in a network namespace of its own is
#: reached only through its launcher: ``infra.triton_runtime.isolation.Connector``)
Opener = Callable[[], socket.socket]


class OpenedConnection(http.client.HTTPConnection):
    """An HTTP connection whose socket ``opener`` gives, not a TCP connect to host and port
    (which still name the server in the request's Host header)."""

    def __init__(self, host: str, port: int, timeout: float, opener: Opener) -> None:
        super().__init__(host, port, timeout=timeout)
        self._opener = opener

    def connect(self) -> None:
        sock = self._opener()
        sock.settimeout(self.timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as http.client's own
        self.sock = sock


class TritonHttpTarget(InferenceTarget):
    """Triton's HTTP inference API (keep-alive connection), or its gRPC API with ``grpc``;
    HTTP connections from ``opener`` where given."""

    kind = "k8s"

    def __init__(
        self,
        url: str,
        grpc: bool = False,
        timeout: float = DEFAULT_TIMEOUT_S,
        opener: Opener | None = None,
    ) -> None:
        self.url = url
        self.grpc = grpc
        self.timeout = timeout
        self._opener = opener
        self._scheme, self._host, self._port, self._prefix = _split(url, grpc)
        self._conn: http.client.HTTPConnection | None = None
        self._sock: socket.socket | None = None
        self._watchdog: Watchdog | None = None  # the deadline of the exchange under way
        self._grpc_client: Any = None

    # -- HTTP ------------------------------------------------------------------------------

    def _connection(self) -> http.client.HTTPConnection:
        if self._conn is None and self._opener is not None and self._scheme == "http":
            self._conn = OpenedConnection(self._host, self._port, self.timeout, self._opener)
        if self._conn is None:
            factory = (
                http.client.HTTPSConnection
                if self._scheme == "https"
                else http.client.HTTPConnection
            )
            self._conn = factory(self._host, self._port, timeout=self.timeout)
        return self._conn

    def post(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes, Any]:
        """One keep-alive POST to ``path`` under this URL: status, body, response headers.

        The bench uses it for the front and for Triton alike, so both go through one client.
        """
        return self._exchange(f"{self._prefix}{path}", body, headers)

    def _expire(self) -> None:
        """The deadline passed: shut the socket down so the blocked read returns at once."""
        sock = self._sock  # the response may hold it after the connection let go of it
        if sock is not None:
            with contextlib.suppress(OSError):  # already closed
                sock.shutdown(socket.SHUT_RDWR)

    def _exchange(
        self, path: str, body: bytes, headers: dict[str, str]
    ) -> tuple[int, bytes, http.client.HTTPResponse]:
        """POST and read the whole answer within ``timeout`` seconds in total (a socket
        timeout alone bounds each read, and a trickling server never trips it)."""
        response: http.client.HTTPResponse | None = None
        with Watchdog(self.timeout, self._expire) as watchdog:
            self._watchdog = watchdog
            try:
                response = self._post(path, body, headers)
                data = response.read()
            except (EndpointError, http.client.HTTPException, OSError) as exc:
                if not watchdog.fired:
                    if isinstance(exc, EndpointError):
                        raise
                    self.close()
                    raise self._unreachable(exc) from None
        if watchdog.fired or response is None:
            self.close()
            raise self._timed_out()
        return response.status, data, response

    def _timed_out(self) -> InvokeFailed:
        return InvokeFailed(
            f"Triton at {self.url} gave no complete answer within {self.timeout:g} s",
            hint="raise --timeout, or check the Service and its pods (a silent or slow endpoint)",
            code="timeout",
        )

    def _unreachable(self, exc: BaseException) -> InvokeFailed:
        if isinstance(exc, TimeoutError):  # the socket's read timeout can beat the watchdog
            return self._timed_out()
        return InvokeFailed(
            f"cannot reach Triton at {self.url}: {exc.__class__.__name__}: {exc}",
            hint="check --url and that the Service is reachable (kubectl "
            "port-forward svc/<name> 8000:8000)",
            code="unreachable",
        )

    def _post(self, path: str, body: bytes, headers: dict[str, str]) -> http.client.HTTPResponse:
        for attempt in (1, 2):  # a kept-alive connection the server closed is retried once
            conn = self._connection()
            try:
                conn.request("POST", path, body=body, headers=headers)
                self._sock = conn.sock
                return conn.getresponse()
            except (ConnectionError, http.client.HTTPException, OSError) as exc:
                self.close()
                expired = self._watchdog is not None and self._watchdog.fired
                if attempt == 2 or expired or isinstance(exc, TimeoutError):
                    raise self._unreachable(exc) from exc
        raise AssertionError("unreachable")

    def send(self, model: ManifestModel, request: PreparedRequest) -> RawResponse:
        if self.grpc:
            return self._send_grpc(model, request)
        headers = {"Content-Type": "application/octet-stream"}
        if request.header_length is not None:
            headers[HEADER_LENGTH] = str(request.header_length)
        else:
            headers["Content-Type"] = "application/json"
        path = f"{self._prefix}/v2/models/{model.name}/infer"
        status, body, response = self._exchange(path, request.body, headers)
        if status != 200:
            raise InvokeFailed(
                f"Triton at {self.url} refused {model.name} ({model.target_model}): "
                f"HTTP {status}: {triton_error_text(body, 300)}",
                hint="check the model is in the release the cluster serves (GET /v2/models/"
                f"{model.name}/ready) and the inputs match the manifest",
                code=f"http_{status}",
                status=status,
            )
        length = response.getheader(HEADER_LENGTH) or ""
        return RawResponse(
            body,
            int(length) if length.strip().isdigit() else None,
            response.getheader("Content-Type", "") or "",
        )

    # -- gRPC ------------------------------------------------------------------------------

    def prepare(self, model: ManifestModel, inputs: Any, binary: bool = True) -> PreparedRequest:
        if not self.grpc:
            return super().prepare(model, inputs, binary)
        return GrpcRequest(b"", None, arrays=check_inputs(model, inputs))

    def _send_grpc(self, model: ManifestModel, request: PreparedRequest) -> RawResponse:
        import tritonclient.grpc as grpcclient
        from tritonclient.utils import InferenceServerException, np_to_triton_dtype

        arrays = request.arrays if isinstance(request, GrpcRequest) else {}
        if self._grpc_client is None:
            self._grpc_client = grpcclient.InferenceServerClient(f"{self._host}:{self._port}")
        inputs = []
        for name, array in arrays.items():
            item = grpcclient.InferInput(name, list(array.shape), np_to_triton_dtype(array.dtype))
            item.set_data_from_numpy(array)
            inputs.append(item)
        outputs = [grpcclient.InferRequestedOutput(spec.name) for spec in model.outputs]
        try:
            result = self._grpc_client.infer(
                model.name, inputs, outputs=outputs, client_timeout=self.timeout
            )
        except InferenceServerException as exc:
            status = str(exc.status() or "")
            raise InvokeFailed(
                f"Triton at {self.url} (gRPC) refused {model.name} ({model.target_model}): "
                f"{exc.message()}",
                hint="check --url points at the gRPC port (8001) and the model is loaded; "
                "raise --timeout for a slow one",
                code="timeout" if "DEADLINE_EXCEEDED" in status else status or "grpc_error",
            ) from exc
        decoded = {
            spec.name: value
            for spec in model.outputs
            if (value := result.as_numpy(spec.name)) is not None
        }
        return GrpcResponse(b"", None, "application/grpc", outputs=decoded)

    def decode(self, model: ManifestModel, response: RawResponse) -> dict[str, np.ndarray]:
        if isinstance(response, GrpcResponse):
            return dict(response.outputs)
        return super().decode(model, response)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._grpc_client is not None:
            self._grpc_client.close()
            self._grpc_client = None
