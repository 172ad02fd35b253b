"""The sample LLM (``generate.py --with llm``): vLLM's tensor names, decoupled, and a model.py
that streams one response per token and ends every request with the final flag."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from cli.main import app
from packager.config import datatype_name, load_config

ROOT = Path(__file__).resolve().parents[2]
FINAL = 1


def test_with_llm_writes_a_decoupled_generator_with_vllm_names(tmp_path: Path) -> None:
    script = [sys.executable, str(ROOT / "model_repos" / "generate.py"), "--out", str(tmp_path)]
    done = subprocess.run([*script, "--with", "llm"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    config = load_config(tmp_path / "llm" / "config.pbtxt")
    assert config.model_transaction_policy.decoupled and config.max_batch_size == 0
    inputs = {t.name: (datatype_name(t.data_type), list(t.dims), t.optional) for t in config.input}
    assert inputs == {
        "text_input": ("BYTES", [1], False),
        "stream": ("BOOL", [1], True),
        "sampling_parameters": ("BYTES", [1], True),
        "return_finish_reason": ("BOOL", [1], True),
    }
    assert (config.output[0].name, list(config.output[0].dims)) == ("text_output", [-1])
    assert (tmp_path / "llm" / "1" / "model.py").stat().st_size < 10_000
    validated = CliRunner().invoke(app, ["validate", str(tmp_path), "--json"])
    assert validated.exit_code == 0, validated.output


class _Tensor:
    def __init__(self, name: str, array: np.ndarray) -> None:
        self.name, self.array = name, array

    def as_numpy(self) -> np.ndarray:
        return self.array


class _Sender:
    def __init__(self) -> None:
        self.sent: list[tuple[Any, int]] = []

    def send(self, response: Any, flags: int = 0) -> None:
        self.sent.append((response, flags))


class _Request:
    def __init__(self, **inputs: np.ndarray) -> None:
        self.inputs = {name: _Tensor(name, value) for name, value in inputs.items()}
        self.sender = _Sender()

    def get_response_sender(self) -> _Sender:
        return self.sender


@pytest.fixture()
def llm(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    utils = ModuleType("triton_python_backend_utils")
    utils.get_input_tensor_by_name = lambda request, name: request.inputs.get(name)  # type: ignore[attr-defined]
    utils.Tensor = _Tensor  # type: ignore[attr-defined]
    utils.InferenceResponse = lambda output_tensors, error=None: SimpleNamespace(  # type: ignore[attr-defined]
        outputs={t.name: t.array for t in output_tensors}, error=error
    )
    utils.TritonError = lambda message: message  # type: ignore[attr-defined]
    utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL = FINAL  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "triton_python_backend_utils", utils)
    spec = importlib.util.spec_from_file_location(
        "llm_model", ROOT / "model_repos" / "sources" / "llm" / "model.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.TOKEN_DELAY_S = 0.0  # type: ignore[attr-defined]
    return module


def _run(llm: ModuleType, **inputs: np.ndarray) -> list[tuple[Any, int]]:
    model = llm.TritonPythonModel()
    model.initialize({})
    request = _Request(**inputs)
    model.execute([request])
    model.finalize()  # joins the request's thread
    return request.sender.sent


def _params(count: int) -> np.ndarray:
    return np.array([json.dumps({"max_tokens": count}).encode()], dtype=np.object_)


def test_streams_one_response_per_token_then_final(llm: ModuleType) -> None:
    prompt = np.array([b"hello"], dtype=np.object_)
    sent = _run(llm, text_input=prompt, stream=np.array([True]), sampling_parameters=_params(3))
    texts = [r.outputs["text_output"][0].decode() for r, _ in sent]
    assert texts == llm.tokens("hello", 3) and [f for _, f in sent] == [0, 0, FINAL]
    whole = _run(llm, text_input=prompt, sampling_parameters=_params(3))
    assert [(r.outputs["text_output"][0].decode(), f) for r, f in whole] == [
        ("".join(texts), FINAL)
    ]
    assert llm.tokens("hello", 3) != llm.tokens("other", 3)


def test_bad_parameters_end_the_request_with_an_error(llm: ModuleType) -> None:
    sent = _run(llm, text_input=np.array([b"x"], dtype=np.object_), sampling_parameters=_params(0))
    ((response, flags),) = sent
    assert flags == FINAL and "max_tokens 0" in response.error
