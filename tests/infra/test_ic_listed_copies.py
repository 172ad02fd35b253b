"""Hand-listed ``sagemakerIcModels`` copies are checked for decoupled (LLM) models like manifest
copies: read from the release the stack names. Without a published release nothing is declared
(issue 37): the copies are checked and the next step is said (Pulumi mocks, the real program)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tdk.errors import ConfigError
from tests.infra.pulumi_harness import StackRun, run_stack
from tests.local.local_helpers import make_release

STACK = "sagemaker-ic-dev"
MODEL = "aws:sagemaker/model:Model"
COMPONENT = "aws-native:sagemaker:InferenceComponent"
GENERATE = "generate_stream"


def _release(sample_repo: Path, dest: Path) -> tuple[str, str]:
    """(decoupled copy, archived copy) of a release whose first copy has no mme/ archive."""
    manifest = make_release(sample_repo, dest, copies=1)
    first, second = manifest.models[0], manifest.models[1]
    left = replace(first, archive="", sha256="", mme_left_out="decoupled: MME cannot serve it")
    manifest = replace(manifest, models=(left, *manifest.models[1:]))
    (dest / "manifest.json").write_text(manifest.to_json())
    return first.name, second.name


def _modes(run: StackRun) -> dict[str, str]:
    """copy -> the inference type its component's Triton runs ("infer" when unset)."""
    found = {}
    for model in run.of_type(MODEL):
        env = model.inputs["primaryContainer"]["environment"]
        mode = env.get("SAGEMAKER_TRITON_INFERENCE_TYPE", "infer")
        found[env["SAGEMAKER_TRITON_DEFAULT_MODEL_NAME"]] = mode
    return found


def _listed(*groups: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"sizeMb": 1, **group} for group in groups]


def test_a_listed_copy_is_decoupled_as_the_named_release_says(
    tmp_path: Path, sample_repo: Path, s3_release: Callable[[Path], str]
) -> None:
    llm, other = _release(sample_repo, tmp_path)
    listed = _listed({"copies": [llm, other]})
    run = run_stack(STACK, {"sagemakerIcModels": listed, "releaseUrl": s3_release(tmp_path)})
    assert _modes(run) == {llm: GENERATE, other: "infer"}
    container = next(
        m.inputs["primaryContainer"]
        for m in run.of_type(MODEL)
        if m.inputs["primaryContainer"]["environment"]["SAGEMAKER_TRITON_DEFAULT_MODEL_NAME"] == llm
    )
    assert "modelDataUrl" not in container  # served from repository/, no mme/ archive


@pytest.mark.parametrize(
    ("group", "message"),
    [
        ({"copies": ["absent-0"]}, "absent-0 is not a copy of the release"),
        ({"copies": ["{llm}"], "decoupled": False}, "without an mme/ archive (decoupled)"),
        ({"copies": ["{other}"], "decoupled": True}, "as an archive"),
    ],
)
def test_a_listed_copy_the_release_contradicts_is_refused(
    tmp_path: Path,
    sample_repo: Path,
    group: dict[str, Any],
    message: str,
    s3_release: Callable[[Path], str],
) -> None:
    llm, other = _release(sample_repo, tmp_path)
    group = {**group, "copies": [c.format(llm=llm, other=other) for c in group["copies"]]}
    overrides = {
        "sagemakerIcModels": _listed(group),
        "releaseUrl": s3_release(tmp_path),
    }
    run = run_stack(STACK, overrides, expect_error=True)
    assert isinstance(run.error, ConfigError), run.error
    assert message in str(run.error) and "sagemakerIcModels[0]" in str(run.error)
    assert run.error.hint
    assert not run.of_type(COMPONENT) and not run.of_type(MODEL)


def test_without_a_release_listed_copies_are_checked_but_not_declared() -> None:
    """The trap of issue 37: a component created before its archive exists fails."""
    listed = _listed(
        {"copies": ["llm-0"], "decoupled": True}, {"copies": ["bert-0"], "decoupled": False}
    )
    run = run_stack(STACK, {"sagemakerIcModels": listed})
    assert not run.of_type(MODEL) and not run.of_type(COMPONENT)
    assert "pulumi config set triton-deploy-kit:releaseUrl " in run.outputs["nextStep"]
    too_big = _listed({"copies": ["big-0"], "sizeMb": 40000})
    run = run_stack(STACK, {"sagemakerIcModels": too_big}, expect_error=True)
    assert isinstance(run.error, ConfigError) and "GPUs but" in str(run.error)


def test_decoupled_must_be_a_boolean() -> None:
    listed = _listed({"copies": ["llm-0"], "decoupled": "yes"})
    run = run_stack(STACK, {"sagemakerIcModels": listed}, expect_error=True)
    assert isinstance(run.error, ConfigError)
    assert "sagemakerIcModels[0].decoupled" in str(run.error) and "true or false" in str(run.error)


def test_an_unpublished_named_release_waits_for_its_manifest(
    tmp_path: Path, s3_release: Callable[[Path], str]
) -> None:
    url = s3_release(tmp_path)  # an empty directory: a bucket with nothing published
    overrides = {
        "sagemakerIcModels": _listed({"copies": ["llm-0"], "decoupled": True}),
        "releaseUrl": url,
    }
    run = run_stack(STACK, overrides)
    assert not run.of_type(MODEL) and not run.of_type(COMPONENT)
    step = run.outputs["nextStep"]
    assert step == f"tdk package MODEL_REPO --release {url} && pulumi up -s {STACK}"
