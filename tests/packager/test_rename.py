"""Renaming copies: directory, ``name:`` and ensemble step references, collisions refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from packager.config import dump_config, load_config, parse_config
from packager.rename import lay_out_copies
from packager.repository import discover
from tdk.errors import UsageError, ValidationFailed


def test_config_round_trip(sample_repo: Path) -> None:
    for model in discover(sample_repo):
        config = load_config(model.config_path)
        assert parse_config(dump_config(config)) == config


def test_copies_are_numbered_from_zero_and_renamed(sample_repo: Path) -> None:
    layouts = lay_out_copies(discover(sample_repo), copies=3)
    names = [layout.name for layout in layouts]
    assert "text_classifier-0" in names and "text_classifier-2" in names
    assert "text_classifier-3" not in names
    for layout in layouts:
        assert layout.target_model == f"{layout.name}.tar.gz"
        assert layout.served.config.name == layout.name


def test_ensemble_steps_point_at_the_copy_own_composing_models(sample_repo: Path) -> None:
    layouts = {layout.name: layout for layout in lay_out_copies(discover(sample_repo), copies=2)}
    ensemble = layouts["text_pipeline-1"]
    member_names = [member.name for member in ensemble.members]
    assert member_names[-1] == "text_pipeline-1"
    steps = [step.model_name for step in ensemble.served.config.ensemble_scheduling.step]
    assert steps == ["text_pipeline-1.tokenizer", "text_pipeline-1.text_classifier"]
    assert set(steps) <= set(member_names)
    for member in ensemble.members[:-1]:
        assert member.config.name == member.name
    # the source configs are untouched
    assert discover(sample_repo)[-1].config.name in ("tokenizer", "text_pipeline")


def test_shared_composing_models_keep_their_names(sample_repo: Path) -> None:
    layouts = lay_out_copies(discover(sample_repo), copies=2, share_composing=True)
    ensemble = next(layout for layout in layouts if layout.name == "text_pipeline-0")
    steps = [step.model_name for step in ensemble.served.config.ensemble_scheduling.step]
    assert steps == ["tokenizer", "text_classifier"]


def test_custom_template(sample_repo: Path) -> None:
    layouts = lay_out_copies(discover(sample_repo), copies=1, template="prod_{model}.v{i}")
    assert {layout.name for layout in layouts} >= {
        "prod_text_classifier.v0",
        "prod_image_classifier.v0",
    }


@pytest.mark.parametrize("template", ["{model}", "{model}-{n}", "{model}-{i}-{x}"])
def test_bad_templates_are_usage_errors(sample_repo: Path, template: str) -> None:
    with pytest.raises(UsageError):
        lay_out_copies(discover(sample_repo), copies=2, template=template)


def test_template_that_collides_across_models_is_refused(sample_repo: Path) -> None:
    with pytest.raises(ValidationFailed) as info:
        lay_out_copies(discover(sample_repo), copies=2, template="model-{i}")
    assert any("also produced by" in f.message for f in info.value.findings)


def test_template_producing_invalid_names_is_refused(sample_repo: Path) -> None:
    with pytest.raises(ValidationFailed) as info:
        lay_out_copies(discover(sample_repo), copies=1, template="{model}/{i}")
    assert all(f.field == "name" for f in info.value.findings)
    assert "'/'" in info.value.findings[0].message


def test_zero_copies_is_a_usage_error(sample_repo: Path) -> None:
    with pytest.raises(UsageError):
        lay_out_copies(discover(sample_repo), copies=0)
