"""Issue 36 item 5, the readers added beside the bounded reader this round: ``--input``,
``--samples``, ``--outputs``, ``sagemakerIcModels``, engine records, a Hugging Face model's configs
and safetensors headers. A document nested 200,000 deep is refused naming its source (it was a
RecursionError), and a FIFO never blocks a read."""

from __future__ import annotations

import os
import struct
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from infra.clients.inputs import parse_input, sample_requests
from infra.targets.deployment import read_outputs
from infra.targets.sagemaker_ic.models import declared_copies
from packager.hf_export import _tokenizer_settings
from packager.tensorrt.engines import EngineRecord
from packager.validate.engines.weights import safetensors_bytes
from tdk.errors import TdkError
from tests.clients.test_example_inputs import MODEL

DEEP = "[" * 200_000 + "]" * 200_000


def _refused(call: Callable[[], Any], fifo: Path | None = None) -> TdkError:
    """The TdkError ``call`` raises, in a thread so that a read blocked on ``fifo`` fails the
    test instead of hanging it."""
    raised: list[BaseException] = []

    def run() -> None:
        try:
            call()
        except BaseException as exc:
            raised.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout=60)
    if worker.is_alive():
        assert fifo is not None
        with open(fifo, "wb"):  # unblocks the reader
            pass
        pytest.fail(f"the read blocked on the FIFO {fifo}")
    assert raised, "nothing was refused"
    assert isinstance(raised[0], TdkError), repr(raised[0])
    return raised[0]


def test_an_inline_input_nested_deep_is_refused_naming_the_option() -> None:
    error = _refused(lambda: parse_input(MODEL, f"input_ids={DEEP}"))
    assert "--input input_ids" in str(error) and "nested more than" in str(error)


def test_an_input_file_that_is_a_fifo_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "ids.npy"
    os.mkfifo(fifo)
    error = _refused(lambda: parse_input(MODEL, f"input_ids=@{fifo}"), fifo)
    assert "FIFO" in str(error) and "ids.npy" in str(error)


def test_a_sample_request_nested_deep_is_refused_naming_it(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text('{"input_ids": ' + DEEP + "}")
    error = _refused(lambda: sample_requests(MODEL, tmp_path))
    assert "a.json" in str(error) and "nested more than" in str(error)


def test_an_outputs_file_nested_deep_or_a_fifo_is_refused(tmp_path: Path) -> None:
    deep = tmp_path / "outputs.json"
    deep.write_text(DEEP)
    assert "nested more than" in str(_refused(lambda: read_outputs(deep)))
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    error = _refused(lambda: read_outputs(fifo), fifo)
    assert "--outputs" in str(error) and "FIFO" in str(error)


def test_sagemaker_ic_models_nested_deep_are_a_config_error() -> None:
    error = _refused(lambda: declared_copies(DEEP))
    assert "sagemakerIcModels" in str(error) and "nested more than" in str(error)


def test_a_plan_record_nested_deep_is_not_a_plan_record() -> None:
    error = _refused(lambda: EngineRecord.from_json(DEEP, "plans/x/record.json"))
    assert "not a tdk engine record" in str(error) and "record.json" in str(error)


def test_hugging_face_configs_are_read_bounded(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(DEEP)
    assert "nested more than" in str(_refused(lambda: _tokenizer_settings(tmp_path)))
    (tmp_path / "config.json").write_text('{"max_position_embeddings": 64}')
    (tmp_path / "tokenizer_config.json").write_text('{"do_lower_case": ' + DEEP + "}")
    error = _refused(lambda: _tokenizer_settings(tmp_path))
    assert "tokenizer_config.json" in str(error) and "nested more than" in str(error)


def test_a_safetensors_header_nested_deep_is_no_safetensors_file(tmp_path: Path) -> None:
    header = DEEP.encode()
    path = tmp_path / "model.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header)
    assert safetensors_bytes(path) is None
