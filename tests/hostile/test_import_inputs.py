"""Issue 47 item 4: `tdk import` copied whatever a link pointed at into the model it wrote (an
ONNX external-data file `weights.bin -> /etc/shadow`, a directory link to ~/.ssh, a tokenizer
`vocab.txt -> /etc/shadow`), 0644, and validate and package took it. Now it refuses every link
with the message `tdk package` gives, and writes nothing; a hostile Hugging Face directory
(config.json or weights) is a message, never a traceback, and its pickles never run."""

from __future__ import annotations

import json
import os
import pickle
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from typer.testing import CliRunner

from cli.main import app

runner = CliRunner(env={"COLUMNS": "200"})
SECRET = "TOPSECRET patient record 12345\n"


def _onnx_with_external(folder: Path, location: str) -> Path:
    """``folder/model.onnx`` adding an initializer kept in the external file ``location``."""
    weight = numpy_helper.from_array(np.ones((1, 4), np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["b", 4])], [weight],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    (folder / location).parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, folder / "model.onnx", save_as_external_data=True, location=location,
              size_threshold=0)  # fmt: skip
    return folder / "model.onnx"


def _secret(tmp_path: Path) -> Path:
    """A file and a folder elsewhere, as /etc/shadow and ~/.ssh are."""
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "id_rsa").write_text(SECRET)
    return tmp_path / "elsewhere"


def external_file_link(tmp_path: Path) -> tuple[Path, Path]:
    model = _onnx_with_external(tmp_path / "src", "weights.bin")
    (model.parent / "weights.bin").unlink()
    (model.parent / "weights.bin").symlink_to(_secret(tmp_path) / "id_rsa")
    return model, model.parent / "weights.bin"


def external_directory_link(tmp_path: Path) -> tuple[Path, Path]:
    model = _onnx_with_external(tmp_path / "src", "keys/id_rsa")
    elsewhere = _secret(tmp_path)
    (elsewhere / "id_rsa").write_bytes((model.parent / "keys" / "id_rsa").read_bytes())
    (model.parent / "keys" / "id_rsa").unlink()
    (model.parent / "keys").rmdir()
    (model.parent / "keys").symlink_to(elsewhere)
    return model, model.parent / "keys"


def model_file_link(tmp_path: Path) -> tuple[Path, Path]:
    model = _onnx_with_external(tmp_path / "src", "weights.bin")
    (tmp_path / "link.onnx").symlink_to(model)
    return tmp_path / "link.onnx", tmp_path / "link.onnx"


def model_fifo(tmp_path: Path) -> tuple[Path, Path]:
    os.mkfifo(tmp_path / "fifo.onnx")  # reading it would block forever
    return tmp_path / "fifo.onnx", tmp_path / "fifo.onnx"


ONNX_CASES: dict[str, Callable[[Path], tuple[Path, Path]]] = {
    "external-data-file-link": external_file_link,
    "external-data-directory-link": external_directory_link,
    "model-file-link": model_file_link,
    "model-file-fifo": model_fifo,
}


def _import(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["import", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    return result.exit_code, " ".join(result.output.split())


def _written(out: Path) -> list[str]:
    return sorted(str(p.relative_to(out)) for p in out.rglob("*")) if out.exists() else []


@pytest.mark.parametrize("case", sorted(ONNX_CASES))
def test_an_onnx_import_refuses_links_and_writes_nothing(case: str, tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    source, culprit = ONNX_CASES[case](tmp_path)
    out = tmp_path / "repo"
    code, output = _import(str(source), "--name", "m", "--out", str(out))
    assert code != 0, output
    assert str(culprit) in output and "hint:" in output, output
    assert "symbolic link" in output or "not a regular file" in output, output
    assert _written(out) == []


def test_an_onnx_with_external_data_beside_it_is_still_imported(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    source = _onnx_with_external(tmp_path / "src", "data/weights.bin")
    code, output = _import(str(source), "--name", "m", "--out", str(tmp_path / "repo"))
    assert code == 0, output
    copied = tmp_path / "repo" / "m" / "1" / "data" / "weights.bin"
    assert copied.read_bytes() == (tmp_path / "src" / "data" / "weights.bin").read_bytes()


# a Hugging Face directory: the links are refused before transformers is asked
def _hf_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "hf"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "bert"}))
    (folder / "vocab.txt").write_text("[PAD]\n[UNK]\n")
    return folder


def vocab_link(folder: Path, elsewhere: Path) -> Path:
    (folder / "vocab.txt").unlink()
    (folder / "vocab.txt").symlink_to(elsewhere / "id_rsa")
    return folder / "vocab.txt"


def directory_link(folder: Path, elsewhere: Path) -> Path:
    (folder / "ssh").symlink_to(elsewhere)
    return folder / "ssh"


def config_link(folder: Path, elsewhere: Path) -> Path:
    (elsewhere / "config.json").write_text((folder / "config.json").read_text())
    (folder / "config.json").unlink()
    (folder / "config.json").symlink_to(elsewhere / "config.json")
    return folder / "config.json"


def hf_fifo(folder: Path, elsewhere: Path) -> Path:
    os.mkfifo(folder / "tokenizer.json")
    return folder / "tokenizer.json"


HF_LINKS: dict[str, Callable[[Path, Path], Path]] = {
    "vocab-txt-link": vocab_link,
    "directory-link": directory_link,
    "config-json-link": config_link,
    "fifo": hf_fifo,
}


@pytest.mark.parametrize("case", sorted(HF_LINKS))
def test_a_hugging_face_import_refuses_links_and_writes_nothing(case: str, tmp_path: Path) -> None:
    folder = _hf_dir(tmp_path)
    culprit = HF_LINKS[case](folder, _secret(tmp_path))
    out = tmp_path / "repo"
    code, output = _import(str(folder), "--name", "m", "--out", str(out), "--tokenizer")
    assert code != 0, output
    assert str(culprit) in output and "cannot be packaged" in output and "hint:" in output
    assert _written(out) == []


class _Runs:
    """Unpickling it runs ``touch <marker>``: what a hostile pytorch_model.bin does."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return os.system, (f"touch {self.marker}",)


def deep_config(folder: Path) -> str:
    (folder / "config.json").write_text('{"model_type": "bert", "x": ' + "[" * 100_000
                                        + "]" * 100_000 + "}")  # fmt: skip
    return "config.json"


def numeric_architecture(folder: Path) -> str:
    (folder / "config.json").write_text(json.dumps({"model_type": "bert", "architectures": [123]}))
    return "architectures"


def config_a_list(folder: Path) -> str:
    (folder / "config.json").write_text("[1, 2]")
    return "not a JSON object"


def pickled_weights(folder: Path) -> str:
    with (folder / "pytorch_model.bin").open("wb") as handle:
        pickle.dump({"w": _Runs(folder.parent / "ran")}, handle)
    return "cannot load it"


HF_HOSTILE: dict[str, Callable[[Path], str]] = {
    "deep-config-json": deep_config,
    "architectures-not-names": numeric_architecture,
    "config-json-a-list": config_a_list,
    "plain-pickle-weights": pickled_weights,
}


@pytest.mark.parametrize("case", sorted(HF_HOSTILE))
def test_a_hostile_hugging_face_directory_is_a_message(case: str, tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    folder = _hf_dir(tmp_path)
    said = HF_HOSTILE[case](folder)
    out = tmp_path / "repo"
    code, output = _import(str(folder), "--name", "m", "--out", str(out))
    assert code != 0 and "Traceback" not in output, output
    assert said in output and "hint:" in output, output
    assert not (tmp_path / "ran").exists(), "the pickle's code ran"
    assert _written(out) == []
