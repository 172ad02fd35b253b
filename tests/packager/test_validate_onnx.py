"""ONNX rules of `packager.validate`: the graph's inputs/outputs (names, element types, ranks,
batch dimension) against config.pbtxt. Failing and passing cases for each."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import onnx
import pytest
from tritonclient.grpc import model_config_pb2 as pb

from packager.validate.runner import Finding, validate_paths

Edit = Callable[[str, Callable[[Any], object]], Path]
MODEL = "text_classifier"


def onnx_errors(repo: Path, field: str, text: str) -> list[Finding]:
    """Findings on the text_classifier alone (the ensemble is left out to isolate the rule)."""
    return [
        f
        for f in validate_paths([repo / MODEL])
        if f.severity == "error" and f.field.startswith(field) and text in f.message
    ]


def _batch_size(size: int) -> Callable[[Any], None]:
    def change(config: Any) -> None:
        config.max_batch_size = size
        config.ClearField("dynamic_batching")

    return change


def _dims(tensor: Any, dims: list[int]) -> None:
    tensor.ClearField("dims")
    tensor.dims.extend(dims)


def test_config_input_must_exist_in_graph(repo: Path, edit_config: Edit) -> None:
    edit_config(MODEL, lambda c: setattr(c.input[0], "name", "ids"))
    assert onnx_errors(repo, "input[0] (ids).name", "no input 'ids'")
    assert onnx_errors(repo, "input", "needs input 'token_ids'")


def test_graph_inputs_must_all_be_declared(repo: Path, edit_config: Edit) -> None:
    edit_config(MODEL, lambda c: c.input.pop())
    found = onnx_errors(repo, "input", "needs input 'attn_mask'")
    assert found and "add an input named 'attn_mask'" in found[0].fix


def test_config_output_must_exist_in_graph(repo: Path, edit_config: Edit) -> None:
    edit_config(MODEL, lambda c: setattr(c.output[1], "name", "pooled"))
    assert onnx_errors(repo, "output[1] (pooled).name", "no output 'pooled'")


def test_declaring_a_subset_of_outputs_passes(repo: Path, edit_config: Edit) -> None:
    edit_config(MODEL, lambda c: c.output.pop())
    assert validate_paths([repo / MODEL]) == []


def test_element_types_must_match(repo: Path, edit_config: Edit) -> None:
    edit_config(MODEL, lambda c: setattr(c.input[0], "data_type", pb.TYPE_INT64))
    found = onnx_errors(
        repo, "input[0] (token_ids).data_type", "INT64 but the ONNX graph has INT32"
    )
    assert found and found[0].fix == "set data_type: TYPE_INT32"


def test_rank_must_match(repo: Path, edit_config: Edit) -> None:
    edit_config(MODEL, lambda c: _dims(c.output[0], [128, 32, 1]))
    assert onnx_errors(repo, "output[0] (output).dims", "rank differs")


def test_fixed_dimensions_must_match(repo: Path, edit_config: Edit) -> None:
    edit_config(MODEL, lambda c: _dims(c.input[1], [64]))
    assert onnx_errors(repo, "input[1] (attn_mask).dims", "dimension 0 is 64 in the config but 128")


def test_variable_config_dim_against_fixed_graph_dim(repo: Path, edit_config: Edit) -> None:
    edit_config(MODEL, lambda c: _dims(c.input[1], [-1]))
    found = onnx_errors(repo, "input[1] (attn_mask).dims", "is -1 in the config but 128")
    assert found and "the graph fixes it" in found[0].fix


def test_reshape_is_compared_instead_of_dims(repo: Path, edit_config: Edit) -> None:
    def flatten(config: Any) -> None:
        _dims(config.output[0], [4096])
        config.output[0].reshape.shape.extend([128, 32])

    edit_config(MODEL, flatten)
    assert validate_paths([repo / MODEL]) == []


def test_non_batching_config_needs_the_batch_dim_in_dims(repo: Path, edit_config: Edit) -> None:
    edit_config(MODEL, _batch_size(0))
    assert onnx_errors(repo, "input[0] (token_ids).dims", "rank differs")

    def with_batch(config: Any) -> None:
        for tensor in [*config.input, *config.output]:
            _dims(tensor, [-1, *tensor.dims])

    edit_config(MODEL, with_batch)
    assert validate_paths([repo / MODEL]) == []


def _save(model: onnx.ModelProto, repo: Path) -> None:
    onnx.save(model, str(repo / MODEL / "1" / "model.onnx"))


def test_fixed_batch_dimension_refused_when_batching(
    repo: Path, edit_config: Edit, model_repos_generate: ModuleType
) -> None:
    model = model_repos_generate.text_classifier_onnx()
    for value in [*model.graph.input, *model.graph.output]:
        value.type.tensor_type.shape.dim[0].dim_value = 4
    _save(model, repo)
    assert onnx_errors(repo, "input[0] (token_ids).dims", "batch dimension is fixed at 4")
    for value in [*model.graph.input, *model.graph.output]:
        value.type.tensor_type.shape.dim[0].dim_value = 1
    _save(model, repo)
    assert onnx_errors(repo, "input[0] (token_ids).dims", "batch dimension is fixed at 1")
    edit_config(MODEL, _batch_size(1))  # the backend wants -1 even for max_batch_size 1
    assert onnx_errors(repo, "input[0] (token_ids).dims", "batch dimension is fixed at 1")


def test_unreadable_onnx_file(repo: Path) -> None:
    path = repo / MODEL / "1" / "model.onnx"
    path.write_bytes(b"\xff\x00 definitely not protobuf" * 10)
    (finding,) = validate_paths([repo / MODEL])
    assert finding.file == str(path) and "cannot be read as an ONNX model" in finding.message


def test_external_weights_are_not_loaded(repo: Path, model_repos_generate: ModuleType) -> None:
    model = model_repos_generate.text_classifier_onnx()
    path = repo / MODEL / "1" / "model.onnx"
    onnx.save(
        model, str(path), save_as_external_data=True, location="weights.bin", size_threshold=0
    )
    (path.parent / "weights.bin").unlink()  # the graph alone is enough to check the signature
    assert validate_paths([repo / MODEL]) == []


@pytest.mark.parametrize("platform_only", [False, True])
def test_checked_for_platform_and_backend_forms(
    repo: Path, edit_config: Edit, platform_only: bool
) -> None:
    def change(config: Any) -> None:
        if platform_only:
            config.ClearField("backend")
            config.platform = "onnxruntime_onnx"
        config.input[0].data_type = pb.TYPE_FP32

    edit_config(MODEL, change)
    assert onnx_errors(repo, "input[0] (token_ids).data_type", "FP32")
