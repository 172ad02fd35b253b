"""Another local user against the local endpoint (issue 25 item 1, issue 36 item 1): every API of
its Triton but health and inference answers 403 without the per-start secret (over HTTP and gRPC),
the secret is not on Triton's command line, ``/tdk/status`` names no Triton port, and state, logs
and work dir are private. Where the kernel allows it, Triton runs in a network namespace of its
own that no other user can connect to at all; the restrictions hold without it too (the
``--triton-netns off`` endpoint here is that fallback). The uid-65534 tests run as root (CI)."""

from __future__ import annotations

import base64
import json
import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from infra.triton_runtime.netns import PLACEHOLDER
from infra.triton_runtime.runtime import REPOSITORY_HEADER
from tests.hostile.endpoint_helpers import NO_NAMESPACES, no_namespaces_or_skip, post
from tests.hostile.other_user import as_other_user, in_subprocess, python_for_other_user
from tests.local.conftest import _runtime_or_skip
from tests.local.local_helpers import (
    Endpoint,
    infer_sleeper,
    python_endpoint,
    python_release,
    start_endpoint,
)

pytestmark = pytest.mark.e2e
NOBODY = 65534


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Endpoint]:
    _runtime_or_skip()
    root = tmp_path_factory.mktemp("endpoint")
    with python_endpoint(root, "sleeper", args=("--triton-netns", "off")) as running:
        yield running


def _evil_load(url: str, marker: Path, headers: dict[str, str]) -> int:
    """What issue 25 reproduced: a load whose ``file:1/model.py`` override runs code."""
    code = f"open({str(marker)!r}, 'w').write('pwned')\n"
    config = {"name": "evil", "backend": "python", "max_batch_size": 0}
    body = {
        "parameters": {
            "config": json.dumps(config),
            "file:1/model.py": base64.b64encode(code.encode()).decode(),
        }
    }
    status, _, _ = post(url, headers, json.dumps(body).encode(), "/v2/repository/models/evil/load")
    return status


def test_triton_repository_api_refuses_callers_without_the_secret(
    endpoint: Endpoint, tmp_path: Path
) -> None:
    assert infer_sleeper(endpoint) == [0.0]  # the endpoint itself loads models
    triton = f"http://127.0.0.1:{endpoint.triton()['http_port']}"
    marker = tmp_path / "marker"
    assert _evil_load(triton, marker, {}) == 403
    assert _evil_load(triton, marker, {REPOSITORY_HEADER: "guess"}) == 403
    for path in ("/v2/repository/index", "/v2/repository/models/sleeper-0/unload"):
        assert post(triton, {}, b"{}", path)[0] == 403, path
    assert not marker.exists()
    assert infer_sleeper(endpoint) == [0.0]  # still loaded: the unload was refused
    name, secret = endpoint.triton()["repository_header"]  # from the endpoint's private file
    assert post(triton, {name: secret}, b"{}", "/v2/repository/index")[0] == 200
    # inference stays open (tdk invoke --url against the endpoint's Triton works)
    body = {"inputs": [{"name": "x", "shape": [1], "datatype": "FP32", "data": [1.0]}]}
    answer = post(triton, {}, json.dumps(body).encode(), "/v2/models/sleeper-0/infer")
    assert answer[0] == 200 and answer[1]["outputs"][0]["data"] == [2.0]


def test_triton_grpc_repository_api_refuses_callers_without_the_secret(
    endpoint: Endpoint,
) -> None:
    address = f"127.0.0.1:{endpoint.triton()['grpc_port']}"
    seen = in_subprocess({"grpc": [[address, "load"], [address, "live"]]})["grpc"]
    assert "restricted" in seen[0].lower() or "permission" in seen[0].lower(), seen
    assert seen[1] == "ok"  # health stays open


def _as_nobody(*argv: str) -> subprocess.CompletedProcess[bytes]:
    """``argv`` run as another local user (uid 65534) when we are root, else as ourselves."""
    uid = NOBODY if os.geteuid() == 0 else None
    return subprocess.run(argv, capture_output=True, timeout=30, check=False, user=uid, group=uid)


def test_the_secret_is_not_on_tritons_command_line(endpoint: Endpoint) -> None:
    pid = endpoint.triton()["pid"]
    seen = _as_nobody("cat", f"/proc/{pid}/cmdline")  # another user reads it as well as we do
    assert seen.returncode == 0, seen.stderr
    args = seen.stdout.decode().split("\0")
    rules = [a for a in args if a.startswith("--http-restricted-api=")]
    rules += [a for a in args if a.startswith("--grpc-restricted-protocol=")]
    assert len(rules) == 2, args
    secret = endpoint.triton()["repository_header"][1]
    for rule in rules:  # Triton read it from its environment (issue 47 item 1)
        assert rule.split("=", 1)[1] == PLACEHOLDER and secret not in rule, rule


def test_status_names_no_triton_port_and_no_secret(endpoint: Endpoint) -> None:
    document = endpoint.status()
    ports = endpoint.triton()
    assert not any("port" in key for key in document), document
    text = json.dumps(document)
    assert str(ports["http_port"]) not in text and str(ports["grpc_port"]) not in text
    assert REPOSITORY_HEADER not in text


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_state_logs_and_work_dir_are_private(endpoint: Endpoint) -> None:
    infer_sleeper(endpoint)
    work = endpoint.state_dir / "local-local"
    assert _mode(work) == 0o700
    for name in ("triton.log", "triton.json"):
        assert _mode(work / name) == 0o600, name
    assert _mode(endpoint.state_dir / "local-local.json") == 0o600


#: one call of each Triton API category but health and inference (Triton 2.51's names)
RESTRICTED: list[tuple[str, str, str, str]] = [
    ("metadata", "GET", "/v2", ""),
    ("metadata", "GET", "/v2/models/sleeper-0", ""),
    ("shared-memory", "POST", "/v2/systemsharedmemory/region/z/register",
     '{"key": "/tdk-evil", "offset": 0, "byte_size": 8}'),
    ("shared-memory", "GET", "/v2/systemsharedmemory/status", ""),
    ("shared-memory", "GET", "/v2/cudasharedmemory/status", ""),
    ("model-config", "GET", "/v2/models/sleeper-0/config", ""),
    ("model-repository", "POST", "/v2/repository/index", "{}"),
    ("statistics", "GET", "/v2/models/stats", ""),
    ("trace", "GET", "/v2/trace/setting", ""),
    ("trace", "POST", "/v2/trace/setting", '{"trace_level": ["TIMESTAMPS"]}'),
    ("logging", "GET", "/v2/logging", ""),
    ("logging", "POST", "/v2/logging", '{"log_verbose_level": 2}'),
]  # fmt: skip
_INFER = '{"inputs": [{"name": "x", "shape": [1], "datatype": "FP32", "data": [1.0]}]}'
#: the attack of issue 36: an output written into a shared-memory region the caller names
_INTO_REGION = (
    '{"inputs": [{"name": "x", "shape": [1], "datatype": "FP32", "data": [1.0]}], "outputs": '
    '[{"name": "y", "parameters": {"shared_memory_region": "z", "shared_memory_byte_size": 4}}]}'
)


def _request(url: str, method: str, path: str, body: str, headers: dict[str, str]) -> int:
    import http.client

    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        conn.request(method, path, body.encode() or None, headers)
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [r[1:] for r in RESTRICTED],
    ids=[f"{r[0]}:{r[2]}" for r in RESTRICTED],
)
def test_every_api_but_health_and_inference_needs_the_secret(
    endpoint: Endpoint, method: str, path: str, body: str
) -> None:
    infer_sleeper(endpoint)
    triton = f"http://127.0.0.1:{endpoint.triton()['http_port']}"
    assert _request(triton, method, path, body, {}) == 403
    assert _request(triton, method, path, body, {REPOSITORY_HEADER: "guess"}) == 403
    name, secret = endpoint.triton()["repository_header"]
    assert _request(triton, method, path, body, {name: secret}) != 403


def test_grpc_shared_memory_logging_and_the_rest_need_the_secret(endpoint: Endpoint) -> None:
    address = f"127.0.0.1:{endpoint.triton()['grpc_port']}"
    calls = ["register-shm", "log-settings", "statistics", "metadata"]
    seen = in_subprocess({"grpc": [[address, call] for call in calls]})["grpc"]
    for call, answer in zip(calls, seen, strict=True):
        assert "restricted" in answer.lower() or "permission" in answer.lower(), (call, answer)


def _other_user_or_skip() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to run a probe as another user (uid 65534); CI runs as root")
    if python_for_other_user() is None:
        pytest.skip("no Python interpreter that uid 65534 may run on this machine")


def test_status_shows_the_release_only_to_the_endpoints_user(endpoint: Endpoint) -> None:
    """Any local user read the release URL (its bucket, its prefix) from ``/tdk/status``
    (issue 47 item 7); the front knows who connected (peers.client_of)."""
    assert endpoint.status()["release"] == str(endpoint.store)
    _other_user_or_skip()
    seen = as_other_user({"fetch": [f"{endpoint.url}/tdk/status"]})
    theirs = json.loads(seen["fetch"][0])
    assert theirs["release"] is None and str(endpoint.store) not in seen["fetch"][0]
    assert theirs["models"] == endpoint.status()["models"]  # the rest is still there


def test_another_user_reaches_only_health_and_inference(endpoint: Endpoint) -> None:
    """Without a namespace (this fixture): as uid 65534, every restricted API answers 403, the
    shared-memory attack fails, and neither the secret nor a prompt is readable."""
    _other_user_or_skip()
    infer_sleeper(endpoint)
    known = endpoint.triton()
    triton = f"http://127.0.0.1:{known['http_port']}"
    secret = known["repository_header"][1]
    regions = sorted(str(p) for p in Path("/dev/shm").glob(f"tdk{endpoint.proc.pid}_*"))
    # in Triton's own /dev/shm (a mount namespace), or here, carrying the front's pid, 0600
    assert ("mount" in known["protections"]) != bool(regions), regions
    work = endpoint.state_dir / "local-local"
    pid = known["pid"]
    plan = {
        "http": [[m, triton + p, b] for _, m, p, b in RESTRICTED]
        + [
            ["GET", f"{triton}/v2/health/live", ""],
            ["POST", f"{triton}/v2/models/sleeper-0/infer", _INFER],
            ["POST", f"{triton}/v2/models/sleeper-0/infer", _INTO_REGION],
        ],
        "read": [
            *(str(work / name) for name in ("triton.json", "triton.log")),
            *(f"/proc/{pid}/{name}" for name in ("cmdline", "environ")),
            *regions,
        ],
    }
    seen = as_other_user(plan)
    *restricted, live, infer, into_region = seen["http"]
    assert restricted == [403] * len(RESTRICTED), seen
    assert (live, infer) == (200, 200)
    assert into_region in (400, 404)  # no region of theirs: the output goes nowhere
    triton_json, log, cmdline, environ, *shared = seen["read"]
    assert (triton_json, log, environ) == ("PermissionError",) * 3
    assert cmdline.startswith("ok:") and secret not in cmdline
    assert shared == ["PermissionError"] * len(regions)  # prompts and outputs: 0600


@pytest.fixture(scope="module")
def isolated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Endpoint]:
    """The default endpoint: Triton in a network namespace of its own (skipped where the
    kernel refuses one: ``--triton-netns on`` then fails to start)."""
    root = tmp_path_factory.mktemp("isolated")
    store = python_release(root, "sleeper")
    try:
        running = start_endpoint(store, root / "state", "--triton-netns", "on")
    except AssertionError as exc:
        if "network namespace" in str(exc):
            pytest.skip(f"this kernel refuses network namespaces: {exc}")
        raise
    try:
        yield running
    finally:
        running.stop()


def test_in_its_namespace_triton_is_unreachable_for_another_user(isolated: Endpoint) -> None:
    assert infer_sleeper(isolated) == [0.0]  # the front reaches it
    known = isolated.triton()
    assert known["netns"] is True
    pid = known["pid"]
    secret = known["repository_header"][1].encode()
    launcher = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    for process in (pid, launcher):  # the command reached Triton through a socket
        assert secret not in Path(f"/proc/{process}/cmdline").read_bytes()
    # the Python backend's memory is in Triton's own /dev/shm, not in this machine's
    inside = sorted(Path(f"/proc/{pid}/root/dev/shm").iterdir())
    assert inside and not list(Path("/dev/shm").glob(f"tdk{isolated.proc.pid}_*"))
    _other_user_or_skip()
    ports = [known["http_port"], known["grpc_port"]]
    plan = {
        "connect": [["127.0.0.1", port] for port in ports],
        "read": [f"/proc/{pid}/ns/net", str(isolated.state_dir / "local-local" / "triton.json")]
        + [str(region) for region in inside],
    }
    seen = as_other_user(plan)
    assert seen["connect"] == ["ConnectionRefusedError"] * 2, seen
    assert seen["read"] == ["PermissionError"] * (2 + len(inside)), seen
    # the namespace is Triton's alone: its listeners are not in this machine's tables
    host = Path("/proc/net/tcp").read_text() + Path("/proc/net/tcp6").read_text()
    assert f":{known['http_port']:04X} " not in host


def test_without_namespaces_the_endpoint_warns_and_keeps_the_restrictions(
    tmp_path: Path,
) -> None:
    no_namespaces_or_skip()
    with python_endpoint(tmp_path, "sleeper", wrapper=NO_NAMESPACES) as running:
        assert infer_sleeper(running) == [0.0]
        known = running.triton()
        assert known["netns"] is False
        log = running.log.read_text()
        assert "Triton runs with less isolation than it could" in log
        assert "every other API answers 403 without the per-start secret" in log
        triton = f"http://127.0.0.1:{known['http_port']}"
        assert _request(triton, "POST", "/v2/repository/index", "{}", {}) == 403
        assert _request(triton, "GET", "/v2/logging", "", {}) == 403


def test_triton_netns_on_refuses_to_start_without_namespaces(tmp_path: Path) -> None:
    no_namespaces_or_skip()
    store = python_release(tmp_path, "sleeper")
    with pytest.raises(AssertionError) as refused:
        start_endpoint(store, tmp_path / "state", "--triton-netns", "on", wrapper=NO_NAMESPACES)
    assert "cannot run in a network namespace of its own" in str(refused.value)
    assert "--triton-netns auto" in str(refused.value)
