"""The Prometheus query client's auth layer, checked on the request it builds and sends.

AMP: SigV4 for service ``aps`` (the signature of the request as it arrives at a 127.0.0.1 server
is recomputed with botocore and must match). GMP: Google credentials become a Bearer token.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlsplit

import botocore.auth
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from infra.clients.prometheus import PrometheusClient
from infra.targets.eks.client import amp_client
from infra.targets.eks.query_auth import SigV4
from infra.targets.gke.client import gmp_client
from tdk.errors import EndpointError
from tests.stand_ins import QuietHandler, serving

KEYS = Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
NOW = datetime.datetime(2026, 1, 1, 12, 30, 0)
QUERY = 'sum(rate(nv_inference_request_success{namespace="triton",job="w"}[2m]))'


@pytest.fixture
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: NOW)


class _Recorder(QuietHandler):
    seen: ClassVar[list[dict[str, Any]]] = []
    answer: ClassVar[tuple[int, dict[str, Any]]] = (200, {"status": "success"})

    def do_GET(self) -> None:
        self.seen.append({"path": self.path, "headers": dict(self.headers.items())})
        self.send_json(*self.answer)


@pytest.fixture
def server() -> Iterator[tuple[str, type[_Recorder]]]:
    handler = type("Handler", (_Recorder,), {"seen": []})
    with serving(handler) as url:
        yield url, handler


def test_amp_request_is_sigv4_for_aps_on_the_workspace_query_url(fixed_clock: None) -> None:
    request = amp_client("us-west-2", "ws-0123abcd", KEYS).request("up")
    assert request.url == (
        "https://aps-workspaces.us-west-2.amazonaws.com/workspaces/ws-0123abcd/api/v1/query?query=up"
    )
    assert request.headers["X-Amz-Date"] == "20260101T123000Z"
    authorization = request.headers["Authorization"]
    assert authorization.startswith(
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-west-2/aps/aws4_request, "
    )
    assert "SignedHeaders=" in authorization and "host" in authorization


def test_sigv4_signature_holds_for_the_request_as_it_arrives(
    fixed_clock: None, server: tuple[str, type[_Recorder]]
) -> None:
    url, handler = server
    handler.answer = (200, {"status": "success", "data": {"resultType": "vector", "result": []}})
    assert PrometheusClient(url, SigV4("eu-central-1", KEYS)).query(QUERY) == []
    [seen] = handler.seen
    headers = {k.lower(): v for k, v in seen["headers"].items()}
    assert parse_qs(urlsplit(seen["path"]).query) == {"query": [QUERY]}
    fields = dict(
        part.strip().split("=", 1) for part in headers["authorization"].split(" ", 1)[1].split(",")
    )
    signed = fields["SignedHeaders"].split(";")
    replay = AWSRequest("GET", f"http://{headers['host']}{seen['path']}", {
        name: headers[name] for name in signed
    })  # fmt: skip
    replay.context["timestamp"] = headers["x-amz-date"]
    signer = SigV4Auth(KEYS, "aps", "eu-central-1")
    expected = signer.signature(
        signer.string_to_sign(replay, signer.canonical_request(replay)), replay
    )
    assert fields["Signature"] == expected
    other = SigV4Auth(Credentials("AKIDEXAMPLE", "another-secret"), "aps", "eu-central-1")
    wrong = other.signature(other.string_to_sign(replay, other.canonical_request(replay)), replay)
    assert fields["Signature"] != wrong


def test_gmp_request_carries_the_google_token_on_the_project_query_url() -> None:
    from google.oauth2.credentials import Credentials as GoogleCredentials

    token = GoogleCredentials(token="ya29.test-token")
    request = gmp_client("my-project", token).request("up")
    assert request.url == (
        "https://monitoring.googleapis.com/v1/projects/my-project/location/global/prometheus"
        "/api/v1/query?query=up"
    )
    assert request.headers["authorization"] == "Bearer ya29.test-token"


def test_gmp_without_credentials_names_the_fix(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "missing.json"))
    with pytest.raises(EndpointError, match="no Google credentials") as info:
        gmp_client("my-project").request("up")
    assert "gcloud auth application-default login" in (info.value.hint or "")


@pytest.mark.parametrize(
    ("status", "body", "message"),
    [
        (400, {"status": "error", "errorType": "bad_data", "error": "parse error"}, "bad_data"),
        (403, {"message": "denied"}, "answered 403"),
    ],
)
def test_api_errors_name_the_status_and_the_fix(
    server: tuple[str, type[_Recorder]], status: int, body: dict[str, Any], message: str
) -> None:
    url, handler = server
    handler.answer = (status, body)
    with pytest.raises(EndpointError, match=message):
        PrometheusClient(url).query("up")


def test_unreachable_prometheus_is_an_endpoint_error() -> None:
    from infra.triton_runtime.runtime import free_port

    with pytest.raises(EndpointError, match="cannot reach Prometheus"):
        PrometheusClient(f"http://127.0.0.1:{free_port()}", timeout=5).query("up")
