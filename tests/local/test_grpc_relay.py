"""Loads over Triton's gRPC listener when Triton runs in a network namespace of its own (issue
46): the launcher passes the front connections to the gRPC port (``g``), and the front's relay
(infra.triton_runtime.grpc_relay, a 0600 Unix socket in the 0700 work dir) joins grpcio's
connections to them. Real Triton, ``--triton-netns on`` (skipped where the kernel refuses a
network namespace). The gated model (tests/local/test_grpc_loads.py) holds its load until the
test creates its gate: no sleep synchronises anything.
"""

from __future__ import annotations

import asyncio
import os
import signal
import stat
import threading
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

import pytest

from infra.clients.inputs import example_inputs
from infra.clouds.aws.sagemaker.runtime import SageMakerRuntimeTarget
from infra.triton_runtime.grpc_control import GrpcControl
from infra.triton_runtime.runtime import GRPC_RELAY_FILE, TritonProcess, find_runtime
from packager.manifest import Manifest
from packager.publish import publish
from packager.stores import open_store
from tests.hostile.endpoint_helpers import netns_or_skip
from tests.hostile.other_user import as_other_user, probe, python_for_other_user
from tests.local.conftest import _runtime_or_skip
from tests.local.local_helpers import Endpoint, alive, children, start_endpoint, wait_for
from tests.local.test_grpc_loads import HTTP_BOUND_S, TRITON_HTTP_THREADS, _model, triton_index

pytestmark = pytest.mark.e2e
#: requests at once through the front: more than Triton's HTTP threads, so that the front's pool
#: holds connections on every thread (libevhtp gives a new one the first idle thread, or the
#: next in turn: test_grpc_loads.py)
PARALLEL = 2 * TRITON_HTTP_THREADS + 1


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_loads_reach_a_namespaced_triton_through_the_relay(tmp_path: Path) -> None:
    """GrpcControl at TritonProcess.grpc_address (the relay) loads, and says why not; the
    relay's socket is 0600 in the 0700 work dir and goes with Triton."""
    _runtime_or_skip()
    netns_or_skip()
    _model(tmp_path / "repo", "double", gated=False)
    work = tmp_path / "work"
    triton = TritonProcess(find_runtime(), tmp_path / "repo", work, netns="on")

    async def run() -> list[Any]:
        await triton.start()
        try:
            assert triton.own_network and triton.grpc_address is not None
            modes = [_mode(work), _mode(work / GRPC_RELAY_FILE)]
            control = GrpcControl(triton.grpc_address, triton.repository_headers)
            try:
                answers = [await control.load("double"), await control.load("absent")]
            finally:
                control.close()
            return [triton.grpc_address, modes, *answers, await triton_index(triton)]
        finally:
            await triton.stop()

    address, modes, loaded, absent, index = asyncio.run(run())
    assert address.startswith("unix:/proc/self/fd/") and address.endswith(GRPC_RELAY_FILE)
    assert modes == [0o700, 0o600]
    assert (loaded.status, loaded.message) == (200, "")
    assert absent.status == 400 and "absent" in absent.message
    assert {(m["name"], m.get("state")) for m in index} == {("double", "READY")}
    assert not (work / GRPC_RELAY_FILE).exists() and triton.relay is None


def _release(root: Path) -> tuple[Path, Manifest]:
    models = [_model(root / "repo", "double", gated=False), _model(root / "repo", "gated", True)]
    store = root / "store"
    publish(models, open_store(f"file://{store}"), copies=1)
    return store, Manifest.from_json((store / "manifest.json").read_text())


def _infer_all(endpoint: Endpoint, model: Any, count: int) -> list[Any]:
    """``count`` requests for ``model`` at once through the front, each given the bound; the
    answers of those answered within it (None for a failed one)."""

    def one() -> Any:
        target = SageMakerRuntimeTarget("local", endpoint_url=endpoint.url, local=True)
        try:
            return target.infer(model, example_inputs(model))
        finally:
            target.close()

    pool = ThreadPoolExecutor(count)
    futures = [pool.submit(one) for _ in range(count)]
    done, _ = wait(futures, timeout=HTTP_BOUND_S)
    pool.shutdown(wait=False)
    return [future.result() if future.exception() is None else None for future in done]


def test_a_held_load_holds_no_request_of_a_loaded_model(tmp_path: Path) -> None:
    """The default endpoint (Triton in its own network namespace): while the gated model's load
    is held, requests for a loaded model, as many at once as fill the front's connections to
    every Triton HTTP thread, are answered through the front (over HTTP, the load held the
    thread of its connection and the requests on that thread's connections); the status says
    loads go over gRPC; another user cannot connect to the relay; SIGTERM leaves no relay
    socket and no process."""
    _runtime_or_skip()
    netns_or_skip()
    store, manifest = _release(tmp_path)
    endpoint = start_endpoint(store, tmp_path / "state", "--triton-netns", "on")
    work = endpoint.state_dir / "local-local"
    loaded = manifest.by_target_model("double-0.tar.gz")
    held = manifest.by_target_model("gated-0.tar.gz")
    gate: Path | None = None
    cold: list[Any] = []
    try:
        assert len(_infer_all(endpoint, loaded, PARALLEL)) == PARALLEL  # the front's pool grows
        status = endpoint.status()
        processes = children(endpoint.proc.pid)
        target = SageMakerRuntimeTarget("local", endpoint_url=endpoint.url, local=True)
        loading = threading.Thread(
            target=lambda: cold.append(target.infer(held, example_inputs(held)))
        )
        loading.start()
        marker = work / "repository" / "gated-0" / "1" / "gate.initializing"
        wait_for(marker.exists, 90, "the gated model's load to start")
        gate = marker.with_name("gate")
        warm = _infer_all(endpoint, loaded, PARALLEL)
        still_held = not gate.exists() and loading.is_alive()
        gate.touch()
        loading.join(60)
        target.close()
        relay = work / GRPC_RELAY_FILE
        reach = _reach(relay)
        not_root = not _as_other_user()
    finally:
        if gate is not None:
            gate.touch()
        endpoint.stop()
    assert len(warm) == PARALLEL and all(warm) and still_held, endpoint.log.read_text()[-3000:]
    assert len(cold) == 1 and cold[0]  # the held load then completed and answered
    assert status["triton_loads"] == "grpc", status
    assert reach == ["connected", "PermissionError"] or (reach == ["connected"] and not_root), reach
    # ended by its SIGTERM path (not killed after the grace), its relay's socket removed
    assert endpoint.proc.returncode in (0, -signal.SIGTERM) and not relay.exists()
    assert processes and not [pid for pid in processes if alive(pid)]


def _reach(relay: Path) -> list[str]:
    """Whether this user's process connects to the relay, then (as root only) uid 65534's."""
    assert _mode(relay) == 0o600 and _mode(relay.parent) == 0o700
    mine = probe({"unix": [str(relay)]})["unix"]
    if not _as_other_user():
        return list(mine)
    return [*mine, *as_other_user({"unix": [str(relay)]})["unix"]]


def _as_other_user() -> bool:
    """Whether this test can run code as uid 65534 (as root, as in CI)."""
    return os.geteuid() == 0 and python_for_other_user() is not None


def _holding(pid: int, directory: Path) -> int:
    """How many of ``pid``'s descriptors are ``directory`` itself (the relay's keeps one)."""
    held = 0
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            held += os.readlink(fd) == str(directory)
        except OSError:  # closed meanwhile
            continue
    return held


def test_a_restarted_triton_gets_a_relay_of_its_own(tmp_path: Path) -> None:
    """Triton killed: the front's restart closes the old relay (its directory descriptor too)
    and opens one for the new Triton, through which the model is loaded again over gRPC."""
    _runtime_or_skip()
    netns_or_skip()
    store, manifest = _release(tmp_path)
    endpoint = start_endpoint(store, tmp_path / "state", "--triton-netns", "on")
    work = (endpoint.state_dir / "local-local").resolve()
    model = manifest.by_target_model("double-0.tar.gz")
    target = SageMakerRuntimeTarget("local", endpoint_url=endpoint.url, local=True)
    try:
        first = target.infer(model, example_inputs(model))
        before = _holding(endpoint.proc.pid, work)
        os.kill(endpoint.status()["triton_pid"], signal.SIGKILL)
        wait_for(lambda: endpoint.status()["triton_restarts"] == 1, 60, "Triton's restart")
        again = target.infer(model, example_inputs(model))  # loaded again, through the relay
        status = endpoint.status()
        after = _holding(endpoint.proc.pid, work)
    finally:
        target.close()
        endpoint.stop()
    assert first and again and status["triton_loads"] == "grpc", status
    assert (before, after) == (1, 1)
    assert model.target_model in status["loaded"]
