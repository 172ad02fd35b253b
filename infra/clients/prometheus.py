"""Instant PromQL queries against a Prometheus-compatible HTTP API (``/api/v1/query``).

One client for every Prometheus we read: a managed one with the cloud's own query auth (an
``Auth`` its target gives: ``infra/targets/<target>/query_auth.py``), and a Prometheus the user
runs (``NoAuth``). The auth layer only adds headers to the request the client builds, so it is
tested on that request; cloud SDKs are imported when a credential is first needed.
"""

from __future__ import annotations

import abc
import json
import math
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit

from tdk.errors import EndpointError

#: the Prometheus HTTP API path of an instant query, appended to a server's base URL
QUERY_PATH = "/api/v1/query"


@dataclass(frozen=True)
class Request:
    """One HTTP request, as it will be sent (auth adds to ``headers``)."""

    method: str
    url: str
    headers: dict[str, str]
    body: bytes = b""


class Auth(abc.ABC):
    """Adds credentials to a request; ``describe`` names them for error hints."""

    @abc.abstractmethod
    def sign(self, request: Request) -> Request:
        """The request with its credential headers."""

    @abc.abstractmethod
    def describe(self) -> str:
        """What credentials this uses, for messages."""


class NoAuth(Auth):
    """A Prometheus the user runs (or reaches through a port-forward): no credentials."""

    def sign(self, request: Request) -> Request:
        return request

    def describe(self) -> str:
        return "no credentials"


@dataclass(frozen=True)
class Sample:
    """One element of an instant vector: its labels and value (NaN kept as NaN)."""

    labels: dict[str, str]
    value: float


class PrometheusClient:
    """Instant queries against ``base_url`` (the part before ``/api/v1/query``)."""

    def __init__(self, base_url: str, auth: Auth | None = None, timeout: float = 30.0) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise EndpointError(
                f"Prometheus URL {base_url!r} is not an http(s) URL",
                hint="pass the query API's base, e.g. http://127.0.0.1:9090",
            )
        self.base_url = base_url.rstrip("/")
        self.auth = auth or NoAuth()
        self.timeout = timeout

    def request(self, expr: str, at: float | None = None) -> Request:
        """The signed GET request evaluating ``expr`` (at ``at``, UNIX seconds, or now)."""
        params = {"query": expr} | ({"time": f"{at:.3f}"} if at is not None else {})
        url = f"{self.base_url}{QUERY_PATH}?{urlencode(params)}"
        return self.auth.sign(Request("GET", url, {"Accept": "application/json"}))

    def query(self, expr: str, at: float | None = None) -> list[Sample]:
        """Evaluate ``expr``: the samples of the instant vector (a scalar is one sample)."""
        request = self.request(expr, at)
        document = self._send(request)
        data: dict[str, Any] = document.get("data") or {}
        kind, result = data.get("resultType"), data.get("result") or []
        if kind == "scalar":
            return [Sample({}, float(result[1]))]
        if kind != "vector":
            raise EndpointError(
                f"{self.base_url}: {expr!r} gave a {kind}, not an instant vector",
                hint="query an instant vector expression",
            )
        return [Sample(dict(s.get("metric", {})), float(s["value"][1])) for s in result]

    def value(self, expr: str, at: float | None = None) -> float | None:
        """The single value of an aggregate ``expr``; None when it has no sample or is NaN."""
        samples = self.query(expr, at)
        if not samples or math.isnan(samples[0].value):
            return None
        return samples[0].value

    def _send(self, request: Request) -> dict[str, Any]:
        http = urllib.request.Request(request.url, headers=request.headers, method=request.method)
        where = f"{self.base_url} ({self.auth.describe()})"
        try:
            with urllib.request.urlopen(http, timeout=self.timeout) as response:
                body = response.read()
        except urllib.error.HTTPError as exc:
            raise _api_error(where, exc.code, exc.read()) from None
        except (urllib.error.URLError, OSError) as exc:
            raise EndpointError(
                f"cannot reach Prometheus at {where}: {exc}",
                hint="check the URL (and the port-forward or network path to it)",
            ) from None
        try:
            document: dict[str, Any] = json.loads(body)
        except ValueError:
            raise EndpointError(
                f"{where} did not answer with JSON: {body[:200]!r}",
                hint="the URL must be the Prometheus query API's base (before /api/v1/query)",
            ) from None
        if document.get("status") != "success":
            raise _api_error(where, 200, body)
        return document


def _api_error(where: str, status: int, body: bytes) -> EndpointError:
    try:
        detail = json.loads(body)
        message = f"{detail.get('errorType', 'error')}: {detail.get('error', '')}"
    except (ValueError, AttributeError):
        message = body.decode("utf-8", "replace")[:300]
    hints = {
        400: "the PromQL was refused; see the message",
        401: "the credentials were refused; refresh them",
        403: "the credentials lack permission to query (aps:QueryMetrics / monitoring.viewer)",
        404: "check the workspace id, project or URL",
    }
    return EndpointError(
        f"Prometheus at {where} answered {status}: {message}",
        hint=hints.get(status, "retry; if it persists, check the service's status"),
    )
