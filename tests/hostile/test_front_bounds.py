"""The front against hostile JSON and one client hogging connections (issue 47 item 2), with the
real Triton: a body of 300,000 nested ``[`` crashed Triton (a restart, every in-flight request
503) until the front refused it; 300 slow connections from one local user gave every other
user 503 for the body timeout until each client got its own share of the cap."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator

import pytest

from infra.targets.local.bounds import MAX_VALUES, REQUEST_DEPTH
from infra.targets.local.options import default_of
from tests.hostile.endpoint_helpers import post, read_until_closed
from tests.hostile.other_user import in_background, python_for_other_user
from tests.local.conftest import _runtime_or_skip
from tests.local.local_helpers import Endpoint, infer_sleeper, python_endpoint

pytestmark = pytest.mark.e2e
HEADERS = {"Content-Type": "application/json", "X-Amzn-SageMaker-Target-Model": "sleeper-0.tar.gz"}
#: what one user opened in the probe (the endpoint's defaults: 256 in all, 64 per client)
HOG = 300
PER_CLIENT = int(default_of("max_client_connections"))


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Endpoint]:
    _runtime_or_skip()
    root = tmp_path_factory.mktemp("bounds")
    args = ("--max-body-bytes", str(3 * MAX_VALUES))  # the value count is met before the size
    with python_endpoint(root, "sleeper", args=args) as running:
        yield running


def _nested(depth: int) -> bytes:
    return b"[" * depth + b"0" + b"]" * depth


def _deep_request(depth: int) -> bytes:
    """An inference request whose ``data`` nests ``depth`` levels (3 levels around it)."""
    head = b'{"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":'
    return head + _nested(depth - 3) + b"}]}"


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/endpoints/local/invocations", b"[" * 300_000),
        ("/endpoints/local/invocations", _deep_request(REQUEST_DEPTH + 1)),
        ("/v2/models/sleeper-0/generate", b'{"x": ' + b"[" * 300_000),
        ("/endpoints/local/invocations", b"[" + b"0," * MAX_VALUES + b"0]"),
    ],
    ids=["300k-brackets", "one-level-too-deep", "generate", "too-many-values"],
)
def test_hostile_json_is_refused_before_triton_and_triton_never_restarts(
    endpoint: Endpoint, path: str, body: bytes
) -> None:
    assert infer_sleeper(endpoint) == [0.0]
    status, document, _ = post(endpoint.url, HEADERS, body, path)
    assert status == 400, document
    assert "nests more than" in document["message"] or "values" in document["message"]
    assert endpoint.status()["triton_restarts"] == 0
    assert infer_sleeper(endpoint) == [0.0]


def test_binary_json_header_is_bounded(endpoint: Endpoint) -> None:
    header = b"[" * 300_000
    kind = f"application/vnd.sagemaker-triton.binary+json;json-header-size={len(header)}"
    status, document, _ = post(endpoint.url, HEADERS | {"Content-Type": kind}, header + b"\0")
    assert status == 400 and "JSON header" in document["message"], document
    request = json.dumps(
        {
            "inputs": [
                {
                    "name": "x",
                    "shape": [1],
                    "datatype": "FP32",
                    "parameters": {"binary_data_size": 4},
                }
            ]
        }
    ).encode()
    tensor = b"[\0\0\0"  # x, a tiny FP32 (the model sleeps x s): raw bytes, never scanned
    kind = f"application/vnd.sagemaker-triton.binary+json;json-header-size={len(request)}"
    status, document, _ = post(endpoint.url, HEADERS | {"Content-Type": kind}, request + tensor)
    assert status == 200, document
    assert endpoint.status()["triton_restarts"] == 0


def test_a_request_within_bounds_still_reaches_triton(endpoint: Endpoint) -> None:
    status, document, _ = post(endpoint.url, HEADERS, _deep_request(REQUEST_DEPTH))
    assert status != 400 or "nests more than" not in document.get("message", ""), document
    assert endpoint.status()["triton_restarts"] == 0


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Endpoint]:
    _runtime_or_skip()
    if os.geteuid() != 0 or python_for_other_user() is None:
        pytest.skip("needs root (CI) to act as another local user")
    root = tmp_path_factory.mktemp("budget")
    with python_endpoint(root, "sleeper") as running:  # the defaults, as the probe found them
        yield running


def _ping(endpoint: Endpoint) -> int:
    host, port = endpoint.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(b"GET /ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        answer = read_until_closed(sock, 30)
    return int(answer.split()[1])


def test_one_user_holding_slow_connections_does_not_starve_another(shared: Endpoint) -> None:
    """Another local user opens 300 connections, each stalled mid-body (the probe's attack):
    it holds its share, the rest are refused, and the endpoint's own user is still served."""
    with in_background({"hold": [shared.url, HOG, "sleeper-0.tar.gz"]}) as hog:
        assert _ping(shared) == 200
        assert infer_sleeper(shared) == [0.0]
    assert hog["held"] == PER_CLIENT, hog


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "raw",
    [b'"' + b'\\"' * 500_000, b'"\\' * 500_000, b'"a",' * 250_000, b"[]" * 500_000],
    ids=["escaped-quotes", "trailing-backslashes", "many-strings", "flat-pairs"],
)
def test_the_depth_scan_is_linear_on_hostile_strings(raw: bytes) -> None:
    """The bounded reader's string pattern backtracked: 16 KB of escaped quotes took 0.8 s and
    1 MB would take about an hour; the front scans every request body with it."""
    from tdk.bounded import json_depth_over

    assert not json_depth_over(raw, REQUEST_DEPTH)
    assert json_depth_over(b'["\\"]", ' + b"[" * 65, 64)  # an escaped quote ends no string


@pytest.mark.parametrize(
    ("raw", "depth"),
    [
        (b"1", 0),
        (b"[][]", 1),
        (b'{"a": [1, [2, {"b": "[[["}]]]}', 4),
        (b'["\\"[[[["]', 1),
        (b'["\\\\", [[1]]]', 3),
        (b'["a\\nb", [[1]]]', 3),
        (b"[[[]", 3),  # an unclosed bracket counts
        (b"[[],[[]]]", 3),
    ],
)
def test_depth_counts_structure_outside_strings_only(raw: bytes, depth: int) -> None:
    from tdk.bounded import json_depth_over

    assert json_depth_over(raw, depth - 1) if depth else True
    assert not json_depth_over(raw, depth)
