"""A locator per target (issue 39 item 2): each target's client module defines ``LOCATOR`` with
only the fields its client reads; an option the target does not take is refused, naming it and
the fix, never silently dropped. Every registered target, read from the registry."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.targets import registry, stacks
from infra.targets.deployment import locator, takers
from infra.targets.operations import Locator, flag
from tdk.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]
#: the locator fields ``tdk endpoint status`` takes (its options --endpoint, --region, --url)
STATUS_FIELDS = ("endpoint", "region", "url")


def _kind(target: str) -> type[Locator]:
    kind: type[Locator] = registry.get(target).locator()
    return kind


def _every_field() -> set[str]:
    """Every field some registered target's locator takes."""
    return {name for target in registry.names() for name in _kind(target).takes()}


@pytest.mark.parametrize("target", registry.names())
def test_each_target_defines_its_own_frozen_locator(target: str) -> None:
    kind = _kind(target)
    assert issubclass(kind, Locator) and kind is not Locator
    assert kind.__dataclass_params__.frozen  # type: ignore[attr-defined]
    where = locator(target, {})
    assert where.target == target  # the entry's name, told to the locator
    with pytest.raises(dataclasses.FrozenInstanceError):
        where.region = "x"  # type: ignore[attr-defined]


@pytest.mark.parametrize("target", registry.names())
def test_a_locator_refuses_an_option_its_target_does_not_take(target: str) -> None:
    """Each option another target takes and this one does not is a UsageError naming the
    option, the target and the fix (drop it; the options the target takes; the targets the
    option locates)."""
    takes = _kind(target).takes()
    refused = sorted(_every_field() - set(takes))
    if not refused:
        pytest.skip(f"{target} takes every field a target takes")
    for name in refused:
        with pytest.raises(UsageError) as caught:
            locator(target, {name: "x", **dict.fromkeys(takes, "y")})
        option = flag(name)
        assert caught.value.message == f"{option} is not an option of --target {target}"
        hint = caught.value.hint or ""
        assert f"drop {option}" in hint and all(flag(t) in hint for t in takes), hint
        assert f"{option} locates --target {', '.join(takers(name))}" in hint, hint


@pytest.mark.parametrize("target", registry.names())
def test_a_locator_keeps_each_option_its_target_takes(target: str) -> None:
    kind = _kind(target)
    assert "release" not in kind.takes()  # the deployment's, decided once (Deployment.release)
    for name in kind.takes():
        assert getattr(locator(target, {name: "v"}), name) == "v"
    assert locator(target, dict.fromkeys(kind.takes())) == locator(target, {})  # None: not given


@pytest.mark.parametrize("target", registry.names())
def test_endpoint_status_refuses_an_option_the_target_does_not_take(target: str) -> None:
    """Through the CLI: exit 2 naming the option, before any cloud or endpoint is asked."""
    refused = [flag(n) for n in STATUS_FIELDS if n not in _kind(target).takes()]
    if not refused:
        pytest.skip(f"{target} takes every option of `tdk endpoint status`")
    result = CliRunner().invoke(app, ["endpoint", "status", "--target", target, refused[0], "x"])
    assert result.exit_code == 2, result.output
    assert f"{refused[0]} is not an option of --target {target}" in " ".join(result.output.split())


def test_the_stack_names_the_amp_workspace_and_a_flag_wins() -> None:
    settings = stacks.load_stack(ROOT, "eks-dev")
    named = locator("eks", {}, settings, {"ampWorkspaceId": "ws-1"})
    assert named.workspace_id == "ws-1"  # type: ignore[attr-defined]
    given = locator("eks", {"workspace_id": "ws-2"}, settings, {"ampWorkspaceId": "ws-1"})
    assert given.workspace_id == "ws-2"  # type: ignore[attr-defined]
    assert locator("eks", {}, settings, {}).workspace_id is None  # type: ignore[attr-defined]


def test_an_inference_components_stack_names_its_region_before_it_is_deployed() -> None:
    """Without outputs the stack's aws:region, not the SDK's default, locates the endpoint."""
    settings = stacks.load_stack(ROOT, "sagemaker-ic-dev")
    where = locator("sagemaker-ic", {}, settings, {})
    assert where.region == settings.get("aws:region") == "us-east-1"  # type: ignore[attr-defined]
    assert where.endpoint == settings.common.name  # type: ignore[attr-defined]
    with pytest.raises(UsageError, match="--endpoint other and --stack sagemaker-ic-dev"):
        locator("sagemaker-ic", {"endpoint": "other"}, settings, {})


def test_a_target_added_outside_the_kit_brings_its_own_locator(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The test-only dummy (``TDK_EXTRA_TARGETS``): its ``LOCATOR`` takes ``--endpoint``, is
    refused ``--url`` like any target that does not take it, and builds its client."""
    monkeypatch.setenv(registry.EXTRA_ENV, "tests.targets.dummy.entry")
    assert "dummy" in takers("endpoint") and "dummy" not in takers("url")
    assert locator("dummy", {"endpoint": "d"}).client().status().state == "Dreaming"
    with pytest.raises(UsageError, match="--url is not an option of --target dummy"):
        locator("dummy", {"endpoint": "d", "url": "http://127.0.0.1:9"})
    with pytest.raises(UsageError, match="--target dummy needs --endpoint"):
        locator("dummy", {}).client()
