"""Renaming copies: directory, ``name:`` and ensemble step references, collisions refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from packager.config import dump_config, load_config, parse_config
from packager.rename import plan_copies
from packager.repository import discover
from tdk.errors import UsageError, ValidationFailed


def test_config_round_trip(sample_repo: Path) -> None:
    for model in discover(sample_repo):
        config = load_config(model.config_path)
        assert parse_config(dump_config(config)) == config


def test_copies_are_numbered_from_zero_and_renamed(sample_repo: Path) -> None:
    plans = plan_copies(discover(sample_repo), copies=3)
    names = [plan.name for plan in plans]
    assert "text_classifier-0" in names and "text_classifier-2" in names
    assert "text_classifier-3" not in names
    for plan in plans:
        assert plan.target_model == f"{plan.name}.tar.gz"
        assert plan.served.config.name == plan.name


def test_ensemble_steps_point_at_the_copy_own_composing_models(sample_repo: Path) -> None:
    plans = {plan.name: plan for plan in plan_copies(discover(sample_repo), copies=2)}
    ensemble = plans["text_pipeline-1"]
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
    plans = plan_copies(discover(sample_repo), copies=2, share_composing=True)
    ensemble = next(plan for plan in plans if plan.name == "text_pipeline-0")
    steps = [step.model_name for step in ensemble.served.config.ensemble_scheduling.step]
    assert steps == ["tokenizer", "text_classifier"]


def test_custom_template(sample_repo: Path) -> None:
    plans = plan_copies(discover(sample_repo), copies=1, template="prod_{model}.v{i}")
    assert {plan.name for plan in plans} >= {"prod_text_classifier.v0", "prod_image_classifier.v0"}


@pytest.mark.parametrize("template", ["{model}", "{model}-{n}", "{model}-{i}-{x}"])
def test_bad_templates_are_usage_errors(sample_repo: Path, template: str) -> None:
    with pytest.raises(UsageError):
        plan_copies(discover(sample_repo), copies=2, template=template)


def test_template_that_collides_across_models_is_refused(sample_repo: Path) -> None:
    with pytest.raises(ValidationFailed) as info:
        plan_copies(discover(sample_repo), copies=2, template="model-{i}")
    assert any("also produced by" in f.message for f in info.value.findings)


def test_template_producing_invalid_names_is_refused(sample_repo: Path) -> None:
    with pytest.raises(ValidationFailed) as info:
        plan_copies(discover(sample_repo), copies=1, template="{model}/{i}")
    assert all(f.field == "name" for f in info.value.findings)
    assert "'/'" in info.value.findings[0].message


def test_zero_copies_is_a_usage_error(sample_repo: Path) -> None:
    with pytest.raises(UsageError):
        plan_copies(discover(sample_repo), copies=0)
