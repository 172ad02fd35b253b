"""The registry entry contract: a capability is implemented or refused with a reason, checked
when the class is defined; ``register`` refuses a name twice; every built-in entry keeps it."""

from __future__ import annotations

from typing import Any

import pytest

from infra.targets import registry
from infra.targets.capabilities import DECOUPLED, DEPLOY, PLAN, VALIDATE
from infra.targets.entry import TargetEntry
from tdk.errors import ConfigError, UsageError


def _entry(**attrs: Any) -> type[TargetEntry]:
    base: dict[str, Any] = {
        "name": "probe",
        "summary": "a probe",
        "client_module": "tests.targets.dummy.client",
        "cannot": {DEPLOY: "no stack", PLAN: "no prices", VALIDATE: "no checks"},
    }
    return type("Probe", (TargetEntry,), {**base, **attrs})


def test_a_capability_neither_implemented_nor_refused_is_a_definition_error() -> None:
    with pytest.raises(TypeError, match="neither refuses plan"):
        _entry(cannot={DEPLOY: "no stack", VALIDATE: "no checks"})
    with pytest.raises(TypeError, match="flag_keys, or a reason in cannot\\[validate\\]"):
        _entry(cannot={DEPLOY: "no stack", PLAN: "no prices"})


def test_a_capability_both_implemented_and_refused_is_a_definition_error() -> None:
    with pytest.raises(TypeError, match="refuses plan but implements"):
        _entry(plan_unit=lambda self, stack: None)
    with pytest.raises(TypeError, match="flag_keys, or a reason in cannot\\[validate\\]"):
        _entry(flag_keys={"instance_type": "probeBox"})


def test_validating_needs_a_deploy_program() -> None:
    """Validation parses the stack with the target's deploy program: no program, no check."""
    with pytest.raises(TypeError, match="validates stacks it cannot deploy"):
        _entry(cannot={DEPLOY: "no stack", PLAN: "no prices"}, flag_keys={"x": "y"})


def test_a_capability_without_methods_is_data_with_a_reason() -> None:
    """Serving decoupled models is refused with a reason, and the refusal names who can."""
    probe = _entry(cannot={DEPLOY: "x", PLAN: "x", VALIDATE: "x", DECOUPLED: "no streams"})()
    assert not probe.can(DECOUPLED)
    refusal = registry.refusal(probe, DECOUPLED)
    assert "cannot serve decoupled models: no streams" in refusal.message
    assert "eks" in (refusal.hint or "") and "sagemaker," not in (refusal.hint or "")


def test_a_refusal_needs_a_reason_and_a_known_key() -> None:
    with pytest.raises(TypeError, match="needs a known key and a reason"):
        _entry(cannot={DEPLOY: " ", PLAN: "x", VALIDATE: "x"})
    with pytest.raises(TypeError, match="needs a known key and a reason"):
        _entry(cannot={"fly": "x", DEPLOY: "x", PLAN: "x", VALIDATE: "x"})


def test_deploy_is_a_module_or_a_refusal() -> None:
    with pytest.raises(TypeError, match="cannot\\[deploy\\]"):
        _entry(cannot={PLAN: "x", VALIDATE: "x"})


def test_a_refused_capability_says_why_and_who_can() -> None:
    probe = _entry()()
    with pytest.raises(UsageError, match="the probe target cannot plan: no prices"):
        probe.candidate(None)  # type: ignore[arg-type]
    refusal = registry.refusal(probe, PLAN)
    assert "the probe target cannot plan: no prices" in refusal.message
    assert "sagemaker" in (refusal.hint or "")


def test_register_adds_a_target_once() -> None:
    probe = _entry()()
    registry.register(probe)
    try:
        assert registry.names()[-1] == "probe"
        assert registry.get("probe") is probe
        with pytest.raises(ConfigError, match="registered twice"):
            registry.register(probe)
    finally:
        registry.unregister("probe")
    assert "probe" not in registry.names()
    with pytest.raises(UsageError, match="is not a target"):
        registry.get("probe")


@pytest.mark.parametrize("name", registry.names())
def test_every_builtin_entry_lives_in_its_own_folder(name: str) -> None:
    entry = registry.get(name)
    folder = f"infra.targets.{name.replace('-', '_')}."
    modules: list[str | None] = [entry.client_module, entry.deploy_module]
    assert all(m is None or m.startswith(folder) for m in modules), modules
    assert type(entry).__module__ == f"{folder}entry"


@pytest.mark.parametrize("name", registry.able(PLAN))
def test_a_target_owns_its_own_units_and_no_sibling_s(name: str) -> None:
    """``owns`` asks the target's own tables, not the unit's spelling: every planning target
    owns its default candidates and none of another target's."""
    entry = registry.get(name)
    assert all(entry.owns(unit) for unit in entry.default_candidates)
    others = {u for e in registry.entries() if e.can(PLAN) for u in e.default_candidates}
    others -= set(entry.default_candidates)
    assert not [u for u in others if entry.owns(u)], name
    assert not entry.owns("box.huge") and not entry.owns("ml.g9.huge")
