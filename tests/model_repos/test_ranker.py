"""The extra ``ranker`` sample (``generate.py --with ranker``): written only on request, valid,
deterministic, and a real batching model: one call on a batch gives each row's own answer."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import numpy as np
import onnxruntime as ort
from typer.testing import CliRunner

from cli.main import app
from packager.config import load_config


def test_ranker_is_extra_valid_and_deterministic(
    model_repos_generate: ModuleType, tmp_path: Path
) -> None:
    plain = model_repos_generate.generate(tmp_path / "plain")
    assert not (tmp_path / "plain" / "ranker").exists()
    files = model_repos_generate.generate(tmp_path / "a", ("ranker",))
    assert len(files) == len(plain) + 2
    again = model_repos_generate.generate(tmp_path / "b", ("ranker",))
    onnx_a = (tmp_path / "a" / "ranker" / "1" / "model.onnx").read_bytes()
    assert onnx_a == (tmp_path / "b" / "ranker" / "1" / "model.onnx").read_bytes()
    assert len(again) == len(files) and len(onnx_a) < 10_000_000
    assert CliRunner().invoke(app, ["validate", str(tmp_path / "a" / "ranker")]).exit_code == 0
    config = load_config(tmp_path / "a" / "ranker" / "config.pbtxt")
    assert config.max_batch_size == 1 and not config.HasField("dynamic_batching")


def test_ranker_batches_row_by_row(model_repos_generate: ModuleType) -> None:
    session = ort.InferenceSession(
        model_repos_generate.ranker_onnx().SerializeToString(),
        providers=["CPUExecutionProvider"],
    )
    rows = np.random.default_rng(0).standard_normal((4, 256)).astype(np.float32)
    (batched,) = session.run(None, {"features": rows})
    singles = [session.run(None, {"features": row[None]})[0] for row in rows]
    assert batched.shape == (4, 1) and float(batched.std()) > 0
    np.testing.assert_allclose(batched, np.concatenate(singles), rtol=1e-4, atol=1e-4)
