"""The README's first blocks run after `make demo`, inputs included (issue 40, row 7): `make
demo` writes the sample inputs the local block reads, and a missing input's hint names the
command that makes it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from infra.clients.inputs import parse_input
from packager.manifest import ManifestModel, TensorSpec
from tdk.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]


def _prerequisites(target: str) -> list[str]:
    makefile = (ROOT / "Makefile").read_text()
    match = re.search(rf"^{re.escape(target)}:(.*)$", makefile, re.M)
    assert match, target
    return match.group(1).split()


def test_make_demo_writes_the_sample_inputs_the_readme_reads() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "model_repos/inputs/image.npy" in readme
    assert "$(INPUTS)/.generated" in _prerequisites("demo")
    assert "$(INPUTS)/.generated" in _prerequisites("models")


def _model() -> ManifestModel:
    spec = TensorSpec("input", "FP32", (3, 224, 224))
    return ManifestModel(
        target_model="image_classifier-0.tar.gz", name="image_classifier-0",
        source="image_classifier", copy=0, sha256="0" * 64, size=1,
        archive="mme/image_classifier-0.tar.gz", backend="onnxruntime",
        platform="onnxruntime_onnx", max_batch_size=8, inputs=(spec,), outputs=(),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("path", "hint"),
    [
        ("model_repos/inputs/image.npy", "`make models` (and `make demo`) write the sample"),
        ("elsewhere/mine.npy", "numpy.save"),
    ],
)
def test_a_missing_input_file_names_what_makes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str, hint: str
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError) as caught:
        parse_input(_model(), f"input=@{path}")
    assert hint in (caught.value.hint or "")
