"""Another local user against the local endpoint (issue 25 item 1): its Triton's model-repository
API answers 403 without the per-start secret (over HTTP and gRPC), the secret is not on Triton's
command line, ``/tdk/status`` names no Triton port, and state, logs and work dir are private."""

from __future__ import annotations

import base64
import json
import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from infra.sagemaker_common.runtime import SageMakerRuntimeTarget
from infra.triton_runtime.runtime import REPOSITORY_HEADER, RuntimeMissing, find_runtime
from tests.hostile.endpoint_helpers import post
from tests.local.local_helpers import Endpoint, make_release, start_endpoint, write_python_model

pytestmark = pytest.mark.e2e
NOBODY = 65534


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Endpoint]:
    try:
        find_runtime()
    except RuntimeMissing as exc:  # pragma: no cover - only without the Triton runtime venv
        pytest.skip(str(exc))
    repo = tmp_path_factory.mktemp("repo")
    write_python_model(repo, "sleeper")
    store = tmp_path_factory.mktemp("store")
    make_release(repo, store, copies=1)
    running = start_endpoint(store, tmp_path_factory.mktemp("state"))
    try:
        yield running
    finally:
        running.stop()


def _infer(endpoint: Endpoint) -> list[float]:
    model = endpoint.manifest.by_target_model("sleeper-0.tar.gz")
    target = SageMakerRuntimeTarget("local", endpoint_url=endpoint.url, local=True, max_attempts=1)
    try:
        return list(target.infer(model, {"x": np.array([0.0], np.float32)})["y"].tolist())
    finally:
        target.close()


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
    assert _infer(endpoint) == [0.0]  # the endpoint itself loads models
    triton = f"http://127.0.0.1:{endpoint.triton()['http_port']}"
    marker = tmp_path / "marker"
    assert _evil_load(triton, marker, {}) == 403
    assert _evil_load(triton, marker, {REPOSITORY_HEADER: "guess"}) == 403
    for path in ("/v2/repository/index", "/v2/repository/models/sleeper-0/unload"):
        assert post(triton, {}, b"{}", path)[0] == 403, path
    assert not marker.exists()
    assert _infer(endpoint) == [0.0]  # still loaded: the unload was refused
    name, secret = endpoint.triton()["repository_header"]  # from the endpoint's private file
    assert post(triton, {name: secret}, b"{}", "/v2/repository/index")[0] == 200
    # inference stays open (tdk invoke --url against the endpoint's Triton works)
    body = {"inputs": [{"name": "x", "shape": [1], "datatype": "FP32", "data": [1.0]}]}
    answer = post(triton, {}, json.dumps(body).encode(), "/v2/models/sleeper-0/infer")
    assert answer[0] == 200 and answer[1]["outputs"][0]["data"] == [2.0]


def test_triton_grpc_repository_api_refuses_callers_without_the_secret(
    endpoint: Endpoint,
) -> None:
    import tritonclient.grpc as grpcclient
    from tritonclient.utils import InferenceServerException

    client = grpcclient.InferenceServerClient(f"127.0.0.1:{endpoint.triton()['grpc_port']}")
    try:
        with pytest.raises(InferenceServerException) as info:
            client.load_model("sleeper-0")
        assert "restricted" in str(info.value).lower() or "permission" in str(info.value).lower()
        assert client.is_server_live()  # health stays open
    finally:
        client.close()


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
    for rule in rules:
        secret = rule.split(f"{REPOSITORY_HEADER}=", 1)[1]
        assert len(secret) >= 32 and set(secret) == {"x"}, rule


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
    _infer(endpoint)
    work = endpoint.state_dir / "local-local"
    assert _mode(work) == 0o700
    for name in ("triton.log", "triton.json"):
        assert _mode(work / name) == 0o600, name
    assert _mode(endpoint.state_dir / "local-local.json") == 0o600
