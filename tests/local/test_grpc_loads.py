"""The front loads models over Triton's gRPC listener (infra.triton_runtime.grpc_control), so
that a load under way never holds an inference request for a loaded model (issue 46: the cold
tail). Over HTTP, Triton runs the load on the libevhtp thread of its connection until the
model is loaded, and the other connections of that thread wait as long.

The load is made long deterministically: the gated model's ``initialize`` marks that it runs,
then waits for a gate file that the test creates only once the loaded model's requests have
been answered (or have failed to be, within a bound that only detects the defect).
"""

from __future__ import annotations

import asyncio
import socket
import threading
from pathlib import Path
from typing import Any

import pytest
from tritonclient.grpc import service_pb2

from infra.clients.inputs import example_inputs
from infra.clouds.aws.sagemaker.runtime import SageMakerRuntimeTarget
from infra.triton_runtime import grpc_control
from infra.triton_runtime.grpc_control import ControlUnreachable, GrpcControl
from infra.triton_runtime.runtime import TritonProcess, find_runtime
from packager.manifest import MANIFEST_NAME, Manifest
from packager.publish import publish
from packager.stores import open_store
from tests.local.conftest import _runtime_or_skip
from tests.local.front_pod import free_port, start_pod, start_triton, wait_for, wait_ready
from tests.local.local_helpers import PYTHON_CONFIG

CONFIG = PYTHON_CONFIG  # x FP32 [1] -> y FP32 [1], one CPU instance
#: doubles x; with GATED, ``initialize`` first marks that it runs and polls for the gate beside
#: its own file (the test never sleeps to synchronise; the endpoint's work dir is the only place
#: a Triton in its mount namespace may write)
MODEL = """import os
import time
import triton_python_backend_utils as pb_utils

GATED = {gated}
GATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gate")


class TritonPythonModel:
    def initialize(self, args):
        if GATED:
            open(GATE + ".initializing", "w").close()
            while not os.path.exists(GATE):
                time.sleep(0.01)

    def execute(self, requests):
        return [
            pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor(
                "y", pb_utils.get_input_tensor_by_name(r, "x").as_numpy() * 2)])
            for r in requests
        ]
"""
#: warm requests sent through the front while the gated model loads
WARM_REQUESTS = 5
#: Triton's HTTP threads (``--http-thread-count``'s default, 8: Triton's ``main.cc`` /
#: ``command_line_parser.cc``, read 2026-12-07; the kit does not set it)
TRITON_HTTP_THREADS = 8
#: bounds a liveness answer: far beyond one (milliseconds), it only detects the defect
HTTP_BOUND_S = 20.0


def _model(root: Path, name: str, gated: bool) -> Path:
    model = root / name
    (model / "1").mkdir(parents=True)
    (model / "config.pbtxt").write_text(CONFIG.format(name=name))
    (model / "1" / "model.py").write_text(MODEL.format(gated=gated))
    return model


@pytest.mark.parametrize("name", ["a", "echo-0", "x" * 200, "modèle-ünïcode"])
def test_the_load_request_is_tritons_message(name: str) -> None:
    """Byte for byte the message tritonclient's generated code writes (grpc_service.proto)."""
    expected = service_pb2.RepositoryModelLoadRequest(model_name=name).SerializeToString()
    assert grpc_control.request_bytes(name) == expected


def test_grpc_metadata_prefixes_the_restricted_header() -> None:
    headers = (("tdk-repository-key", "s3cret"),)
    assert grpc_control.grpc_metadata(headers) == (
        ("triton-grpc-protocol-tdk-repository-key", "s3cret"),
    )


def test_loads_with_the_key_and_says_why_not(tmp_path: Path) -> None:
    """Against the runtime's Triton (restricted, as the front starts it): a load with the key
    loads; an unknown model and a call without the key answer 400 with Triton's reason; a
    listener that is not there is ControlUnreachable (the caller's 503), never a hang."""
    _runtime_or_skip()
    _model(tmp_path / "repo", "double", gated=False)
    triton = TritonProcess(find_runtime(), tmp_path / "repo", tmp_path / "work", netns="off")

    async def run() -> list[Any]:
        await triton.start()
        try:
            assert triton.grpc_address is not None
            keyed = GrpcControl(triton.grpc_address, triton.repository_headers)
            keyless = GrpcControl(triton.grpc_address)
            nowhere = GrpcControl("127.0.0.1:1")
            try:
                answers: list[Any] = [
                    await keyed.load("double"),
                    await keyed.load("absent"),
                    await keyless.load("double"),
                ]
                try:
                    await nowhere.load("double")
                except ControlUnreachable as exc:
                    answers.append(exc)
                index = await triton_index(triton)
                return [*answers, index]
            finally:
                for control in (keyed, keyless, nowhere):
                    control.close()
        finally:
            await triton.stop()

    loaded, absent, keyless, nowhere, index = asyncio.run(run())
    assert (loaded.status, loaded.message) == (200, "")
    assert absent.status == 400 and "absent" in absent.message
    assert keyless.status == 400
    assert "triton-grpc-protocol-tdk-repository-key" in keyless.message
    assert isinstance(nowhere, ControlUnreachable)
    assert {(m["name"], m.get("state")) for m in index} == {("double", "READY")}


async def triton_index(triton: TritonProcess) -> list[dict[str, Any]]:
    import json

    from infra.targets.local.upstream import UpstreamPool

    pool = UpstreamPool("127.0.0.1", triton.http_port, triton.open_socket)
    try:
        response = await pool.request(
            "POST", "/v2/repository/index", b"{}", headers=triton.repository_headers
        )
    finally:
        pool.close()
    return list(json.loads(response.body))


LIVE = b"GET /v2/health/live HTTP/1.1\r\nHost: triton\r\n\r\n"


def _answered(sock: socket.socket) -> bool:
    """Triton's liveness, asked on a kept-alive connection, answers within the bound."""
    sock.sendall(LIVE)
    try:
        return sock.recv(4096).startswith(b"HTTP/1.1 200")
    except TimeoutError:
        return False


def _kept_alive(port: int, count: int) -> list[socket.socket]:
    """``count`` connections to Triton's HTTP port, each answered once (libevhtp has given it a
    thread: the first idle one, so most share one; or round robin in other builds, so twice
    as many as threads puts two on each)."""
    socks = [
        socket.create_connection(("127.0.0.1", port), timeout=HTTP_BOUND_S) for _ in range(count)
    ]
    assert all(_answered(sock) for sock in socks)
    return socks


def test_a_load_under_way_holds_none_of_tritons_http_threads(tmp_path: Path) -> None:
    """A pod (the front beside a Triton it did not start, as rendered: loads to Triton's gRPC
    port): while the gated model's load is held, every connection kept alive to Triton's HTTP
    port answers (as the front's pooled ones must), and a loaded model answers through the
    front; then the held load completes. With the load over HTTP, Triton ran it on the thread
    of the front's connection, and the kept-alive connections on that thread (measured: the
    first one made) waited for the gate."""
    _runtime_or_skip()
    repo = tmp_path / "repo"
    models = [_model(repo, "double", gated=False), _model(repo, "gated", gated=True)]
    store = tmp_path / "store"
    publish(models, open_store(f"file://{store}"), copies=1)
    manifest = Manifest.from_json((store / MANIFEST_NAME).read_text())
    (tmp_path / "pod").mkdir()
    pod = start_pod(store, tmp_path / "pod")
    gate: Path | None = None
    cold: list[Any] = []
    try:
        wait_ready(pod)
        loaded = manifest.by_target_model("double-0.tar.gz")
        held = manifest.by_target_model("gated-0.tar.gz")
        target = SageMakerRuntimeTarget("local", endpoint_url=pod.url, local=True)
        gated = SageMakerRuntimeTarget("local", endpoint_url=pod.url, local=True)
        assert target.infer(loaded, example_inputs(loaded))
        kept = _kept_alive(pod.triton_port, 2 * TRITON_HTTP_THREADS + 1)
        loading = threading.Thread(
            target=lambda: cold.append(gated.infer(held, example_inputs(held)))
        )
        loading.start()
        marker = pod.models / "gated-0" / "1" / "gate.initializing"
        wait_for(marker.exists, "the gated model's load to start")
        gate = marker.with_name("gate")
        probes = [_answered(sock) for sock in kept]
        warm = [target.infer(loaded, example_inputs(loaded)) for _ in range(WARM_REQUESTS)]
        still_held = not gate.exists() and loading.is_alive()
        loads_over = pod.status()["triton_loads"]
        gate.touch()
        loading.join(60)
        for sock in kept:
            sock.close()
        target.close()
        gated.close()
    finally:
        if gate is not None:
            gate.touch()
        pod.stop()
    assert probes == [True] * len(probes), pod.log.read_text()[-3000:]
    assert loads_over == "grpc"
    assert len(warm) == WARM_REQUESTS and all(warm) and still_held
    assert len(cold) == 1 and cold[0]  # the held load then completed and answered


def test_a_load_cut_by_a_closed_channel_is_unreachable_not_cancelled(tmp_path: Path) -> None:
    """The front closes the channel when Triton is restarted or stopped: a load waiting on it
    ends as ControlUnreachable (the request's 503), not as a cancellation of the request's
    task; a task cancelled while it waits cancels its call and nothing else."""
    _runtime_or_skip()
    work = tmp_path / "work"
    model = _model(tmp_path / "repo", "gated", gated=True)
    source = (model / "1" / "model.py").read_text()  # the gate where Triton may write: its work dir
    gate = work / "gate"
    (model / "1" / "model.py").write_text(
        source.replace('os.path.join(os.path.dirname(os.path.abspath(__file__)), "gate")',
                       repr(str(gate)))
    )  # fmt: skip
    triton = TritonProcess(find_runtime(), tmp_path / "repo", work, netns="off")
    marker = work / "gate.initializing"

    async def held(control: GrpcControl) -> asyncio.Task[Any]:
        task = asyncio.create_task(control.load("gated"))
        while not marker.exists():  # a poll of Triton's model, bounded by the test's timeout
            await asyncio.sleep(0.05)
        marker.unlink()
        return task

    async def run() -> tuple[Any, bool]:
        await triton.start()
        try:
            assert triton.grpc_address is not None
            cut = GrpcControl(triton.grpc_address, triton.repository_headers)
            task = await held(cut)
            cut.close()
            try:
                outcome: Any = await asyncio.wait_for(task, 60)
            except ControlUnreachable as exc:
                outcome = exc
            gate.touch()
            await asyncio.wait_for(_index_ready(triton, "gated"), 60)
            return outcome, task.cancelled()
        finally:
            gate.touch()
            await triton.stop()

    outcome, cancelled = asyncio.run(asyncio.wait_for(run(), 120))
    assert isinstance(outcome, ControlUnreachable) and not cancelled


async def _index_ready(triton: TritonProcess, name: str) -> None:
    while not any(
        m["name"] == name and m.get("state") == "READY" for m in await triton_index(triton)
    ):
        await asyncio.sleep(0.05)  # a poll of Triton's index, bounded by the caller's timeout


def test_the_liveness_answer_is_tritons_message() -> None:
    expected = service_pb2.ServerLiveResponse(live=True).SerializeToString()
    assert expected == grpc_control.LIVE_RESPONSE


def test_only_tritons_grpc_listener_is_live(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Triton's gRPC port answers live; its HTTP port, a closed port and a listener that never
    answers do not (the last within the check's deadline, here shortened)."""
    _runtime_or_skip()
    monkeypatch.setattr(grpc_control, "LIVE_TIMEOUT_S", 1.0)
    _model(tmp_path / "repo", "double", gated=False)
    triton = TritonProcess(find_runtime(), tmp_path / "repo", tmp_path / "work", netns="off")
    silent = socket.create_server(("127.0.0.1", 0))  # accepts (the kernel's backlog), never reads

    async def run() -> list[bool]:
        await triton.start()
        try:
            assert triton.grpc_address is not None
            addresses = [triton.grpc_address, f"127.0.0.1:{triton.http_port}", "127.0.0.1:1",
                         f"127.0.0.1:{silent.getsockname()[1]}"]  # fmt: skip
            answers = []
            for address in addresses:
                control = GrpcControl(address, triton.repository_headers)
                try:
                    answers.append(await asyncio.wait_for(control.live(), 30))
                finally:
                    control.close()
            return answers
        finally:
            await triton.stop()

    try:
        assert asyncio.run(run()) == [True, False, False, False]
    finally:
        silent.close()


def test_a_wrong_grpc_address_loads_over_http_and_says_so(tmp_path: Path) -> None:
    """A pod's front told Triton's HTTP port as its gRPC listener still loads (over HTTP),
    says so in /tdk/status, and its log names the flag and the fix."""
    _runtime_or_skip()
    store = tmp_path / "store"
    publish([_model(tmp_path / "repo", "double", gated=False)], open_store(f"file://{store}"),
            copies=1)  # fmt: skip
    manifest = Manifest.from_json((store / MANIFEST_NAME).read_text())
    (tmp_path / "pod").mkdir()
    http = free_port()
    triton, _, _ = start_triton(tmp_path / "pod", tmp_path / "pod" / "models", http)
    pod = start_pod(store, tmp_path / "pod", "--triton-grpc", f"127.0.0.1:{http}",
                    with_triton=False, triton_port=http)  # fmt: skip
    pod.triton = triton
    try:
        wait_ready(pod)
        model = manifest.by_target_model("double-0.tar.gz")
        client = SageMakerRuntimeTarget("local", endpoint_url=pod.url, local=True)
        try:
            answered = client.infer(model, example_inputs(model))
        finally:
            client.close()
        loads_over = pod.status()["triton_loads"]
    finally:
        pod.stop()
    assert answered and loads_over == "http"
    said = pod.log.read_text()
    assert f"--triton-grpc 127.0.0.1:{http} does not answer as Triton's gRPC listener" in said
