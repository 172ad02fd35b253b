"""``tdk tune`` counts only decoded answers: a server answering 200 with a body that is not a
Triton inference response (seen on a GPU: a KIND_GPU Python model's FP16 output came back empty)
is an error for the load generator, never throughput."""

from __future__ import annotations

import numpy as np
import pytest

from infra.clients.base import InvokeFailed
from infra.perf.tune.server import PerThreadSender
from packager.manifest import ManifestModel, TensorSpec
from tests.hostile.bad_servers import bad_server

MODEL = ManifestModel(
    target_model="m.tar.gz", name="m", source="m", copy=0, sha256="", size=0,
    archive="mme/m.tar.gz", backend="python", platform="", max_batch_size=0,
    inputs=(TensorSpec("x", "FP32", (4,)),), outputs=(TensorSpec("y", "FP32", (2,)),),
)  # fmt: skip


def test_a_200_that_does_not_decode_is_an_error_for_tune() -> None:
    with bad_server("garbage") as url:
        send = PerThreadSender(url, MODEL, {"x": np.zeros((4,), dtype=np.float32)})
        try:
            with pytest.raises(InvokeFailed) as caught:
                send()
        finally:
            send.close()
    assert caught.value.code == "bad_response"
