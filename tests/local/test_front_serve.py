"""``tdk front serve``: the pod's front beside a Triton it did not start (issue 46 items 1, 2, 4).

A real Triton (the runtime wheel's, explicit model control, unrestricted as in a pod) runs as
its own process on a model directory the front fills; the front answers SageMaker's
InvokeEndpoint and Triton's v2 inference by copy name, evicts by a memory budget and answers
507 when a load runs out of memory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from infra.clients.base import InvokeFailed
from infra.clients.inputs import example_inputs
from infra.clients.triton_http import TritonHttpTarget
from infra.clouds.aws.sagemaker.runtime import SageMakerRuntimeTarget
from infra.targets.local import budget
from packager.manifest import Manifest
from tests.conftest import load_generator
from tests.local.conftest import _runtime_or_skip
from tests.local.front_pod import (
    Pod,
    get,
    oom_repo,
    start_pod,
    start_triton,
    wait_for,
    wait_ready,
)
from tests.local.local_helpers import make_release

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def echo_release(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Manifest]:
    """Four copies of ``echo`` (a Python-backend stub each) and one ``oom`` copy."""
    _runtime_or_skip()
    repo = tmp_path_factory.mktemp("echo-repo")
    load_generator().write_extra(repo, "echo")
    oom_repo(repo, repo)
    store = tmp_path_factory.mktemp("echo-store")
    return store, make_release(repo, store, copies=4)


@pytest.fixture(scope="module")
def pod(
    echo_release: tuple[Path, Manifest], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Pod]:
    """A pod whose budget holds two echo copies: a third evicts the least recently used (no
    headroom: an unload only when a load needs the room; the default's is test_headroom's)."""
    store, manifest = echo_release
    echo = manifest.by_target_model("echo-0.tar.gz")
    room = int(budget.estimate(echo) * 2.5)
    budgeted = ("--memory-budget-bytes", str(room), "--headroom-models", "0")
    running = start_pod(store, tmp_path_factory.mktemp("pod"), *budgeted)
    try:
        wait_ready(running)
        yield running
    finally:
        running.stop()


def _invoke(pod: Pod, manifest: Manifest, target: str) -> dict[str, np.ndarray]:
    client = SageMakerRuntimeTarget("local", endpoint_url=pod.url, local=True, max_attempts=1)
    try:
        model = manifest.by_target_model(target)
        return client.infer(model, example_inputs(model))
    finally:
        client.close()


def test_invocations_load_into_the_pods_triton(
    pod: Pod, echo_release: tuple[Path, Manifest]
) -> None:
    _, manifest = echo_release
    outputs = _invoke(pod, manifest, "echo-0.tar.gz")
    model = manifest.by_target_model("echo-0.tar.gz")
    np.testing.assert_array_equal(outputs["y"], example_inputs(model)["x"][:, :16])
    assert "echo-0" in pod.ready_models()
    assert (pod.models / "echo-0" / "config.pbtxt").is_file()  # extracted where Triton reads


def test_v2_inference_by_copy_name(pod: Pod, echo_release: tuple[Path, Manifest]) -> None:
    _, manifest = echo_release
    model = manifest.by_target_model("echo-1.tar.gz")
    target = TritonHttpTarget(pod.url)
    try:
        outputs = target.infer(model, example_inputs(model))
    finally:
        target.close()
    np.testing.assert_array_equal(outputs["y"], example_inputs(model)["x"][:, :16])
    status, _ = get(f"{pod.url}/v2/models/nope/infer")  # a GET: no such route
    assert status == 404


def test_budget_evicts_the_least_recently_used_and_exports_it(
    pod: Pod, echo_release: tuple[Path, Manifest]
) -> None:
    _, manifest = echo_release
    for target in ("echo-0.tar.gz", "echo-1.tar.gz", "echo-2.tar.gz", "echo-3.tar.gz"):
        _invoke(pod, manifest, target)
        status = pod.status()
        assert len(status["loaded"]) <= 2
        assert status["memory_used_bytes"] <= status["memory_budget_bytes"]
    assert wait_for(lambda: pod.ready_models() == {"echo-2", "echo-3"}, "two loaded in Triton")
    text = pod.metrics()
    assert "tdk_pending_requests 0.0" in text
    evictions = next(line for line in text.splitlines() if line.startswith("tdk_model_evictions"))
    assert float(evictions.split()[-1]) >= 2
    assert 'tdk_target_model_loaded{target_model="echo-3.tar.gz"} 1.0' in text
    assert 'tdk_target_model_model_cache_hit_count{target_model="echo-0.tar.gz"}' in text


def test_out_of_memory_load_evicts_retries_then_507(
    pod: Pod, echo_release: tuple[Path, Manifest]
) -> None:
    """The budget makes room for the load (one eviction); Triton's load then fails for want
    of memory: the last idle model goes too and the load is tried once more, then 507."""
    _, manifest = echo_release
    _invoke(pod, manifest, "echo-0.tar.gz")
    assert len(pod.status()["loaded"]) == 2
    evicted = pod.status()["metrics"]["ModelEvictions"]
    with pytest.raises(InvokeFailed) as info:
        _invoke(pod, manifest, "oom-0.tar.gz")
    assert info.value.status == 507
    assert "does not fit the memory left" in info.value.message
    assert pod.status()["metrics"]["ModelEvictions"] == evicted + 2
    assert wait_for(lambda: not pod.ready_models(), "Triton to report both unloaded")


def test_ping_waits_for_triton(echo_release: tuple[Path, Manifest], tmp_path: Path) -> None:
    """Readiness is Triton's and the front's, not a model's: 503 while Triton is away."""
    from tests.local.front_pod import free_port

    store, _ = echo_release
    lone = start_pod(store, tmp_path, with_triton=False, triton_port=free_port())
    try:
        status = wait_for(lambda: get(f"{lone.url}/ping")[0], "the front's first answer")
        assert status == 503
    finally:
        lone.stop()


def test_a_triton_that_restarted_unseen_gets_its_models_again(
    echo_release: tuple[Path, Manifest], tmp_path: Path
) -> None:
    """The pod's Triton restarts between two of the front's health polls: the first request
    finds the model forgotten (503, retry), the next loads it again: never a 424 for ever."""
    store, manifest = echo_release
    own = start_pod(store, tmp_path)
    try:
        wait_ready(own)
        _invoke(own, manifest, "echo-0.tar.gz")
        assert own.triton is not None
        own.triton.kill()
        own.triton.wait()
        own.triton, _, _ = start_triton(tmp_path, own.models, own.triton_port, own.triton_grpc)
        ready = f"http://127.0.0.1:{own.triton_port}/v2/health/ready"
        wait_for(lambda: get(ready)[0] == 200, "the new Triton")
        codes, errors = [], []
        for _ in range(2):
            try:
                _invoke(own, manifest, "echo-0.tar.gz")
                codes.append(200)
            except InvokeFailed as exc:
                codes.append(exc.status)
                errors.append(f"{exc.status} {exc.code}: {exc}")
        if codes[-1] != 200 or not set(codes) <= {200, 503}:
            # a failure says why (seen once under load as [0, 503]): each error and the front's log
            pytest.fail(f"{codes} {errors}\n{own.log.read_text()[-4000:]}")
    finally:
        own.stop()
