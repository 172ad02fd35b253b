"""The registry entry contract: a capability is implemented or refused with a reason, checked
when the class is defined; ``register`` refuses a name twice; every built-in entry keeps it."""

from __future__ import annotations

from typing import Any

import pytest

from infra.targets import registry
from infra.targets.registry import DEPLOY, PLAN, VALIDATE, TargetEntry
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
    with pytest.raises(TypeError, match="neither refuses validate"):
        _entry(cannot={DEPLOY: "no stack", PLAN: "no prices"})


def test_a_capability_both_implemented_and_refused_is_a_definition_error() -> None:
    with pytest.raises(TypeError, match="refuses validate but implements"):
        _entry(spec=lambda self, i, g, m: None)


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
    with pytest.raises(UsageError, match="the probe target cannot plan: no prices") as caught:
        probe.candidate(None)  # type: ignore[arg-type]
    assert "sagemaker" in (caught.value.hint or "")


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
