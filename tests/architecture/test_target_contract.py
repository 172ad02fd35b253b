"""The target contract stays small, and every port of every registered target is the port
object or a refusal with its reason (issue 39 item 2: one target object, ports each an object
or a refusal, one refusal shape, fewer members than before).

The contract is what a target's three base classes declare: the registry entry
(``TargetEntry``), the deploy contract (``Target``) and the operations client
(``TargetClient``). What moved into a port class (``PlanPort``, ``ValidatePort`` of the entry;
``RenderPort``, ``BuildPort``, ``DoctorPort`` of the deploy contract) is counted there, not
here: a target that does not plan implements none of it.
"""

from __future__ import annotations

import importlib

import pytest

from infra.targets import registry
from infra.targets.base import BuildPort, DoctorPort, RenderPort, Target
from infra.targets.capabilities import Refused
from infra.targets.entry import TargetEntry
from infra.targets.operations import TargetClient
from infra.targets.ports import ComparePort, PlanPort, ValidatePort

#: public members of the three bases before the ports (2026-11-27, 86d6dcd): TargetEntry 26,
#: Target 19, TargetClient 10 = 55 (the issue counted ~45 before the Azure target, cloud hooks)
BEFORE = 55
#: the bound now: the entry's plan and validate members moved into their ports, its
#: operations members into each target's locator (26 -> 11); the deploy contract's render,
#: build and doctor members into its ports (19 -> 13: ``render``, ``build``, ``doctor``, and
#: ``enforce_refusals`` is its own private step); the client's refusals are ``Refused`` too and
#: its ``can`` is gone (10 -> 9); the entry's ``compare`` port (``tdk plan --components``) was
#: an import of one target in the shared CLI (11 -> 12)
MOST = 34

#: each port of an entry, and the port class it is when not refused
PORTS = {"plan": PlanPort, "validate": ValidatePort, "compare": ComparePort, "deploy_module": str}


def _public(cls: type) -> set[str]:
    """What ``cls`` itself declares: methods, attributes and annotated class variables."""
    names = set(vars(cls)) | set(vars(cls).get("__annotations__", {}))
    return {name for name in names if not name.startswith("_")}


def test_the_contract_has_fewer_members_than_before_the_ports() -> None:
    counted = {base.__name__: _public(base) for base in (TargetEntry, Target, TargetClient)}
    total = sum(len(members) for members in counted.values())
    assert total <= MOST < BEFORE, counted
    moved = _public(PlanPort) | _public(ValidatePort) | _public(ComparePort)
    assert not moved & counted["TargetEntry"], "a port's member is back on the entry"
    moved = _public(RenderPort) | _public(BuildPort) | _public(DoctorPort)
    assert not moved & counted["Target"], "a port's member is back on the deploy contract"


@pytest.mark.parametrize("name", registry.names())
def test_every_port_is_the_port_or_a_refusal_with_its_reason(name: str) -> None:
    entry = registry.get(name)
    for attribute, port in PORTS.items():
        value = getattr(entry, attribute)
        assert isinstance(value, (port, Refused)), f"{name}.{attribute}: {value!r}"
        if isinstance(value, Refused):
            assert value.reason.strip(), f"{name}.{attribute} is refused without a reason"
    client = importlib.import_module(entry.client_module)
    for kind in vars(client).values():
        if isinstance(kind, type) and issubclass(kind, TargetClient):
            assert all(isinstance(why, Refused) for why in kind.cannot.values()), name
    for what, refused in entry.cannot_serve.items():
        assert isinstance(refused, Refused) and refused.reason.strip(), f"{name}: {what}"
    if not isinstance(entry.deploy_module, Refused):
        target = entry.deploy()
        ports = {"render": RenderPort, "build": BuildPort, "doctor": DoctorPort}
        for attribute, port in ports.items():
            value = getattr(target, attribute)
            assert isinstance(value, (port, Refused)), f"{name} TARGET.{attribute}: {value!r}"
            if isinstance(value, Refused):
                assert value.reason.strip(), f"{name} TARGET.{attribute} refused without a reason"
