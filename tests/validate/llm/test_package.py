"""``tdk package`` with LLM models: repository/ for every model, an mme/ archive only for the
models SageMaker MME can run (decoupled ones cannot), and the summary says which and why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infra.targets.local.cache import fetch_verified
from packager.manifest import Manifest
from packager.publish import publish
from packager.stores import open_store
from tdk.errors import TdkError
from tests.validate.helpers import PYTHON_MODEL, make_repo
from tests.validate.llm import corpus as c

CLASSIFIER = """
backend: "python"
max_batch_size: 4
input [ { name: "x" data_type: TYPE_FP32 dims: [ 2 ] } ]
output [ { name: "y" data_type: TYPE_FP32 dims: [ 2 ] } ]
"""


def test_decoupled_models_get_no_mme_archive(tmp_path: Path) -> None:
    repo = c.vllm_repo(tmp_path / "repo")
    make_repo(repo, {"classifier": (CLASSIFIER, {"1/model.py": PYTHON_MODEL})})
    dest = tmp_path / "store"
    result = publish([repo], open_store(f"file://{dest}"), copies=1)
    assert sorted(p.name for p in (dest / "mme").iterdir()) == ["classifier-0.tar.gz"]
    assert (dest / "repository" / "vllm_model-0" / "1" / "model.json").is_file()
    assert (dest / "repository" / "classifier-0" / "config.pbtxt").is_file()
    manifest = Manifest.from_json((dest / "manifest.json").read_bytes())
    llm = manifest.by_name("vllm_model-0")
    assert (llm.archive, llm.sha256) == ("", "")
    assert "decoupled" in llm.mme_left_out and "SageMaker MME" in llm.mme_left_out
    # the manifest records the signature Triton serves: the backend's auto-completed tensors
    assert llm.input("text_input") is not None and llm.max_batch_size == 0
    assert "text_output" in {o.name for o in llm.outputs}
    assert manifest.by_name("classifier-0").mme_left_out == ""
    assert any("vllm_model-0: no mme/ archive" in w for w in result.warnings)
    assert all(manifest.keys())  # no empty archive key for the left-out copy


def test_republishing_a_repository_only_release_is_stable(tmp_path: Path) -> None:
    repo = c.vllm_repo(tmp_path / "repo")
    url = f"file://{tmp_path / 'store'}"
    publish([repo], open_store(url), copies=1)
    again = publish([repo], open_store(url), copies=1)
    assert again.uploaded == [] and not again.stale
    payload = json.loads((tmp_path / "store" / "manifest.json").read_text())
    assert payload["models"][0]["mme_left_out"]


def test_local_endpoint_names_why_a_left_out_copy_has_no_archive(tmp_path: Path) -> None:
    url = f"file://{tmp_path / 'store'}"
    publish([c.vllm_repo(tmp_path / "repo")], open_store(url), copies=1)
    entry = Manifest.from_json((tmp_path / "store" / "manifest.json").read_bytes()).models[0]
    with pytest.raises(TdkError, match="has no archive in this release: vllm_model-0 decoupled"):
        fetch_verified(open_store(url), entry, tmp_path / "downloads")
