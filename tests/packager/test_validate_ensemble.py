"""Ensemble rules of `packager.validate`: steps name present models, maps connect, every
output is produced, no cycles, data types and shapes agree. Failing and passing cases."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tritonclient.grpc import model_config_pb2 as pb

from packager.validate.runner import Finding, validate_paths

Edit = Callable[[str, Callable[[Any], object]], Path]
PIPELINE = "text_pipeline"


def errors(findings: list[Finding], field: str, text: str) -> list[Finding]:
    return [
        f
        for f in findings
        if f.severity == "error" and f.field.startswith(field) and text in f.message
    ]


def step(config: Any, index: int) -> Any:
    return config.ensemble_scheduling.step[index]


def _remap(
    mapping: Any, old: str, new_key: str | None = None, new_value: str | None = None
) -> None:
    value = mapping.pop(old)
    mapping[new_key or old] = new_value or value


def test_step_model_must_be_in_the_repositories(repo: Path, edit_config: Edit) -> None:
    edit_config(PIPELINE, lambda c: setattr(step(c, 0), "model_name", "wordpiece"))
    found = errors(
        validate_paths([repo]), "ensemble_scheduling.step[0] (wordpiece).model_name", "'wordpiece'"
    )
    assert found and found[0].file == str(repo / PIPELINE / "config.pbtxt")


def test_step_models_given_as_separate_model_directories(repo: Path) -> None:
    alone = validate_paths([repo / PIPELINE])
    assert len(errors(alone, "ensemble_scheduling.step", "not in the repositories given")) == 2
    assert validate_paths([repo / PIPELINE, repo / "tokenizer", repo / "text_classifier"]) == []


def test_step_model_version_must_exist(repo: Path, edit_config: Edit) -> None:
    edit_config(PIPELINE, lambda c: setattr(step(c, 1), "model_version", 2))
    assert errors(
        validate_paths([repo]),
        "ensemble_scheduling.step[1] (text_classifier).model_version",
        "no version 2",
    )
    edit_config(PIPELINE, lambda c: setattr(step(c, 1), "model_version", 1))
    assert validate_paths([repo]) == []


def test_input_map_key_must_be_a_model_input(repo: Path, edit_config: Edit) -> None:
    edit_config(PIPELINE, lambda c: _remap(step(c, 0).input_map, "text", new_key="texts"))
    findings = validate_paths([repo])
    assert errors(
        findings, "ensemble_scheduling.step[0] (tokenizer).input_map[texts]", "no input 'texts'"
    )
    assert errors(
        findings, "ensemble_scheduling.step[0] (tokenizer).input_map", "required input 'text'"
    )


def test_input_map_value_must_be_produced(repo: Path, edit_config: Edit) -> None:
    edit_config(PIPELINE, lambda c: _remap(step(c, 1).input_map, "attn_mask", new_value="mask"))
    findings = validate_paths([repo])
    assert errors(
        findings,
        "ensemble_scheduling.step[1] (text_classifier).input_map[attn_mask]",
        "'mask' is neither",
    )
    assert errors(
        findings, "ensemble_scheduling.step.output_map", "'attn_mask' is produced but never used"
    )


def test_output_map_key_must_be_a_model_output(repo: Path, edit_config: Edit) -> None:
    edit_config(
        PIPELINE, lambda c: _remap(step(c, 1).output_map, "pooled_output", new_key="pooled")
    )
    assert errors(
        validate_paths([repo]),
        "ensemble_scheduling.step[1] (text_classifier).output_map[pooled]",
        "no output 'pooled'",
    )


def test_renamed_tensor_chain_passes(repo: Path, edit_config: Edit) -> None:
    def rename(config: Any) -> None:
        _remap(step(config, 0).output_map, "token_ids", new_value="ids")
        _remap(step(config, 1).input_map, "token_ids", new_value="ids")

    edit_config(PIPELINE, rename)
    assert validate_paths([repo]) == []


def test_every_ensemble_output_is_produced(repo: Path, edit_config: Edit) -> None:
    edit_config(
        PIPELINE, lambda c: _remap(step(c, 1).output_map, "pooled_output", new_value="pooled")
    )
    findings = validate_paths([repo])
    assert errors(findings, "output[1] (pooled_output)", "not produced by any step")
    assert errors(
        findings, "ensemble_scheduling.step.output_map", "'pooled' is produced but never used"
    )


def test_a_tensor_has_one_producer(repo: Path, edit_config: Edit) -> None:
    edit_config(PIPELINE, lambda c: _remap(step(c, 1).output_map, "output", new_value="token_ids"))
    assert errors(
        validate_paths([repo]),
        "ensemble_scheduling.step[1] (text_classifier).output_map[output]",
        "already produced",
    )


def test_ensemble_inputs_must_be_used(repo: Path, edit_config: Edit) -> None:
    edit_config(PIPELINE, lambda c: c.input.add(name="lang", data_type=pb.TYPE_STRING, dims=[1]))
    assert errors(validate_paths([repo]), "input (lang)", "not used by any step")


def test_data_types_must_agree(repo: Path, edit_config: Edit) -> None:
    edit_config("tokenizer", lambda c: setattr(c.output[0], "data_type", pb.TYPE_INT64))
    found = errors(
        validate_paths([repo]),
        "ensemble_scheduling.step[1] (text_classifier).input_map[token_ids]",
        "INT64",
    )
    assert found and "INT32" in found[0].message and found[0].model == PIPELINE


def test_ensemble_output_type_must_agree(repo: Path, edit_config: Edit) -> None:
    edit_config(PIPELINE, lambda c: setattr(c.output[1], "data_type", pb.TYPE_FP16))
    assert errors(validate_paths([repo]), "output[1] (pooled_output)", "FP16")


def test_shapes_must_agree_with_wildcards_allowed(repo: Path, edit_config: Edit) -> None:
    edit_config(
        PIPELINE, lambda c: c.output[0].ClearField("dims") or c.output[0].dims.extend([64, 32])
    )
    assert errors(validate_paths([repo]), "output[0] (output)", "[-1, 128, 32]")
    edit_config(
        PIPELINE, lambda c: c.output[0].ClearField("dims") or c.output[0].dims.extend([-1, 32])
    )
    assert validate_paths([repo]) == []


def test_ensemble_batch_size_within_its_models(repo: Path, edit_config: Edit) -> None:
    edit_config(PIPELINE, lambda c: setattr(c, "max_batch_size", 16))
    assert errors(
        validate_paths([repo]), "ensemble_scheduling.step[0] (tokenizer)", "batches of 16"
    )
    edit_config(PIPELINE, lambda c: setattr(c, "max_batch_size", 4))
    assert validate_paths([repo]) == []


def test_steps_maps_must_not_be_empty(repo: Path, edit_config: Edit) -> None:
    edit_config(PIPELINE, lambda c: step(c, 0).ClearField("output_map"))
    assert errors(
        validate_paths([repo]), "ensemble_scheduling.step[0] (tokenizer).output_map", "empty"
    )
    edit_config(PIPELINE, lambda c: c.ensemble_scheduling.ClearField("step"))
    assert errors(validate_paths([repo]), "ensemble_scheduling.step", "no steps")


def _swap_cycle(config: Any) -> None:
    """tokenizer reads `pooled_output`, which text_classifier produces from tokenizer's ids."""
    _remap(step(config, 0).input_map, "text", new_value="pooled_output")
    config.input[0].name = "unused"


def test_cycle_between_steps(repo: Path, edit_config: Edit) -> None:
    edit_config(PIPELINE, _swap_cycle)
    found = errors(validate_paths([repo]), "ensemble_scheduling.step", "a cycle")
    assert found and "step[0] (tokenizer), step[1] (text_classifier)" in found[0].message


def _nest(repo: Path, name: str, inner: str) -> None:
    """A copy of the pipeline named ``name`` whose second step is the ensemble ``inner``."""
    from packager.config import dump_config, load_config

    shutil.copytree(repo / PIPELINE, repo / name)
    config = load_config(repo / name / "config.pbtxt")
    config.name = name
    del config.ensemble_scheduling.step[0]
    inner_step = config.ensemble_scheduling.step[0]
    inner_step.model_name = inner
    inner_step.input_map.clear()
    inner_step.input_map["text"] = "text"
    (repo / name / "config.pbtxt").write_text(dump_config(config))


def test_ensemble_may_nest_but_not_contain_itself(repo: Path) -> None:
    _nest(repo, "outer", PIPELINE)
    assert validate_paths([repo]) == []
    _nest(repo, "loop_a", "loop_b")
    _nest(repo, "loop_b", "loop_a")
    findings = errors(
        validate_paths([repo]), "ensemble_scheduling.step.model_name", "contains itself"
    )
    assert {f.model for f in findings} == {"loop_a", "loop_b"}
    assert "loop_a -> loop_b -> loop_a" in findings[0].message


@pytest.mark.parametrize("optional", [True, False])
def test_optional_step_inputs_need_no_mapping(
    repo: Path, edit_config: Edit, optional: bool
) -> None:
    edit_config(
        "tokenizer",
        lambda c: c.input.add(name="lang", data_type=pb.TYPE_STRING, dims=[1], optional=optional),
    )
    found = errors(
        validate_paths([repo]), "ensemble_scheduling.step[0] (tokenizer).input_map", "'lang'"
    )
    assert bool(found) is not optional
