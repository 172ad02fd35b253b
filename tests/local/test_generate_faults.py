"""Triton dies in the middle of a generate stream: the local endpoint cuts the caller's stream
(never a short answer that looks complete), then serves the model again after its restart."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from infra.clients.generate import GenerateClient, StreamError
from tests.local.conftest import _runtime_or_skip
from tests.local.local_helpers import make_release, start_endpoint, wait_for
from tests.model_repos.llm_repo import llm_repo

pytestmark = pytest.mark.e2e


def test_triton_killed_mid_stream_breaks_the_stream(tmp_path: Path) -> None:
    _runtime_or_skip()
    make_release(llm_repo(tmp_path / "repo"), tmp_path / "store", 1)
    endpoint = start_endpoint(tmp_path / "store", tmp_path / "state")
    try:
        client = GenerateClient(endpoint.url, "llm-0", timeout=60)
        chunks: list[str] = []

        def kill_after_two(text: str) -> None:
            chunks.append(text)
            if len(chunks) == 2:
                os.kill(int(endpoint.status()["triton_pid"]), signal.SIGKILL)

        with pytest.raises(StreamError, match="broke off"):
            client.generate("a long answer", 200, True, kill_after_two)
        assert 2 <= len(chunks) < 200
        wait_for(lambda: endpoint.status()["triton_restarts"] >= 1, 60, "Triton's restart")
        again = client.generate("a long answer", 3, True)
        assert again.chunks == 3 and again.text.startswith("".join(chunks[:2]))
    finally:
        endpoint.stop()
