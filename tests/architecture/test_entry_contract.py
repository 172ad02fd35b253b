"""The registry entry contract: a port is the port object or ``Refused(reason)``, checked
when the class is defined; ``register`` refuses a name twice; every built-in entry keeps it."""

from __future__ import annotations

from typing import Any

import pytest

from infra.targets import registry
from infra.targets.capabilities import DECOUPLED, DEPLOY, PLAN, Refused
from infra.targets.entry import TargetEntry
from infra.targets.ports import ValidatePort
from tdk.errors import ConfigError, UsageError
from tests.targets.dummy.entry import ENTRY as DUMMY


def _entry(**attrs: Any) -> type[TargetEntry]:
    base: dict[str, Any] = {
        "name": "probe",
        "summary": "a probe",
        "locator": DUMMY.locator,
        "deploy": Refused("no stack"),
        "plan": Refused("no prices"),
        "validate": Refused("no checks"),
    }
    return type("Probe", (TargetEntry,), {**base, **attrs})


def test_a_port_neither_implemented_nor_refused_is_a_definition_error() -> None:
    with pytest.raises(TypeError, match="its plan port, or Refused"):
        _entry(plan=None)
    with pytest.raises(TypeError, match="its validate port, or Refused"):
        _entry(validate={"instance_type": "probeBox"})
    with pytest.raises(TypeError, match="its deploy port, or Refused"):
        _entry(deploy=None)
    with pytest.raises(TypeError, match="its deploy port, or Refused"):
        _entry(deploy="tests.targets.dummy.target")  # a module is referenced, never spelt


def test_a_refusal_needs_a_reason() -> None:
    with pytest.raises(TypeError, match="a refusal needs a reason"):
        Refused(" ")
    with pytest.raises(TypeError, match="needs its flags"):
        ValidatePort({})


def test_a_plan_port_says_its_region_and_candidates() -> None:
    with pytest.raises(TypeError, match="lacks its region or candidates"):
        type("NoRegion", (type(registry.plan_port(registry.get("sagemaker"))),),
             {"default_region": ""})  # fmt: skip


def test_validating_needs_a_deploy_program() -> None:
    """Validation parses the stack with the target's deploy program: no program, no check."""
    with pytest.raises(TypeError, match="validates stacks it cannot deploy"):
        _entry(validate=ValidatePort({"x": "y"}))


def test_a_capability_without_methods_is_a_refusal_with_a_reason() -> None:
    """Serving decoupled models is refused with a reason, and the refusal names who can."""
    probe = _entry(cannot_serve={DECOUPLED: Refused("no streams")})()
    assert probe.refused(DECOUPLED) == Refused("no streams")
    refusal = registry.refusal(probe, DECOUPLED)
    assert "cannot serve decoupled models: no streams" in refusal.message
    assert "eks" in (refusal.hint or "") and "sagemaker," not in (refusal.hint or "")
    with pytest.raises(TypeError, match="cannot_serve\\['fly'\\]"):
        _entry(cannot_serve={"fly": Refused("x")})
    with pytest.raises(TypeError, match="a known key, Refused"):
        _entry(cannot_serve={DECOUPLED: "no streams"})


def test_a_refused_port_says_why_and_who_can() -> None:
    probe = _entry()()
    assert probe.refused(PLAN) == Refused("no prices") and probe.refused(DEPLOY)
    with pytest.raises(UsageError, match="the probe target cannot plan: no prices") as caught:
        registry.plan_port(probe)
    assert "sagemaker" in (caught.value.hint or "")
    with pytest.raises(UsageError, match="the probe target cannot validate: no checks"):
        registry.validate_port(probe)
    with pytest.raises(UsageError, match="the probe target cannot deploy: no stack"):
        registry.deploy_port(probe)


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
    modules = [entry.locator().__module__]
    if not isinstance(entry.deploy, Refused):
        modules.append(type(registry.deploy_port(entry)).__module__)
    assert all(m.startswith(folder) for m in modules), modules
    assert type(entry).__module__ == f"{folder}entry"


@pytest.mark.parametrize("name", registry.able(PLAN))
def test_a_target_owns_its_own_units_and_no_sibling_s(name: str) -> None:
    """``owns`` asks the target's own tables, not the unit's spelling: every planning target
    owns its default candidates and none of another target's."""
    plan = registry.plan_port(registry.get(name))
    assert all(plan.owns(unit) for unit in plan.default_candidates)
    ports = [registry.plan_port(registry.get(other)) for other in registry.able(PLAN)]
    others = {u for port in ports for u in port.default_candidates}
    others -= set(plan.default_candidates)
    assert not [u for u in others if plan.owns(u)], name
    assert not plan.owns("box.huge") and not plan.owns("ml.g9.huge")
