"""Fixtures for the local endpoint: a release on disk and a real endpoint (front + Triton)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from infra.triton_runtime.runtime import RuntimeMissing, find_runtime
from tests.local.local_helpers import Endpoint, make_release, start_endpoint


def _runtime_or_skip() -> None:
    try:
        find_runtime()
    except RuntimeMissing as exc:  # pragma: no cover - only without `make setup`
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def release(sample_repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A release with 3 copies of each sample model (12 TargetModels)."""
    store = tmp_path_factory.mktemp("store")
    make_release(sample_repo, store, copies=3)
    return store


@pytest.fixture(scope="module")
def endpoint(release: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Endpoint]:
    """One endpoint (K = 2) per test module. A long ``--min-residency`` keeps the sequential
    tests' evictions pure LRU (a busy model is never drained for them, however slow a load)."""
    _runtime_or_skip()
    running = start_endpoint(
        release,
        tmp_path_factory.mktemp("state"),
        "--max-loaded-models",
        "2",
        "--min-residency",
        "60",
    )
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="session")
def onnx_reference(sample_repo: Path) -> Any:
    """Run a sample model's ONNX file with onnxruntime directly: ``run(model, feeds)``."""
    import onnxruntime as ort

    sessions: dict[str, Any] = {}

    def run(source: str, feeds: dict[str, Any]) -> dict[str, Any]:
        if source not in sessions:
            path = sample_repo / source / "1" / "model.onnx"
            sessions[source] = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        session = sessions[source]
        names = [o.name for o in session.get_outputs()]
        return dict(zip(names, session.run(names, feeds), strict=True))

    return run
