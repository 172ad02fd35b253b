"""LocalTriton reloads the model with each tried config (Triton's load API reloads a loaded
model), serves it, and leaves no Triton behind."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from infra.clients.triton_http import OpenedConnection, Opener
from infra.triton_runtime.runtime import RuntimeMissing, find_runtime

pytestmark = pytest.mark.e2e


def _config(opener: Opener, name: str, headers: dict[str, str]) -> dict[str, object]:
    conn = OpenedConnection("127.0.0.1", 0, 30, opener)
    try:  # the model-config API is restricted to the per-start secret (issue 36)
        conn.request("GET", f"/v2/models/{name}/config", headers=headers)
        response = conn.getresponse()
        assert response.status == 200
        document: dict[str, object] = json.loads(response.read())
        return document
    finally:
        conn.close()


def test_each_load_applies_the_new_config(sample_repo: Path, tmp_path: Path) -> None:
    try:
        find_runtime()
    except RuntimeMissing as exc:  # pragma: no cover - only without `make setup`
        pytest.skip(str(exc))
    from infra.clients.inputs import example_inputs
    from infra.perf.tune.server import LocalTriton, PerThreadSender
    from infra.perf.tune.space import Knobs, apply_knobs
    from infra.perf.tune.tuner import model_of

    source = sample_repo / "image_classifier"
    triton = LocalTriton(source, tmp_path)
    with triton:
        pid = triton.pid
        assert pid is not None
        for knobs in (Knobs(2, 8, False), Knobs(1, 4, True, 300, (4,))):
            triton.load(apply_knobs(triton.base_config, knobs))
            served = _config(triton.opener, "image_classifier", triton.repository_headers)
            assert served["max_batch_size"] == knobs.max_batch_size
            groups = served["instance_group"]
            assert isinstance(groups, list) and groups[0]["count"] == knobs.instances
            batching = served.get("dynamic_batching")
            if knobs.dynamic_batching:
                assert isinstance(batching, dict)
                assert batching["max_queue_delay_microseconds"] == 300
                assert batching["preferred_batch_size"] == [4]
            else:
                assert batching is None
            model = model_of(triton.base_config)
            sender = PerThreadSender(triton.url, model, example_inputs(model, 1), triton.opener)
            sender()  # it serves requests with this config
            sender.close()
    assert (source / "config.pbtxt").read_text().count("instance_group") == 0  # source untouched
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
