"""The target contract stays small, and every port of every registered target is the port
object or a refusal with its reason (issue 39 item 2: one target object, ports each an object
or a refusal, one refusal shape, fewer members than before).

The contract is what a target's three base classes declare: the registry entry
(``TargetEntry``), the deploy contract (``Target``) and the operations client
(``TargetClient``). What moved into a port class (``PlanPort``, ``ValidatePort``) is counted
there, not here: a target that does not plan implements none of it.
"""

from __future__ import annotations

import pytest

from infra.targets import registry
from infra.targets.base import Target
from infra.targets.capabilities import Refused
from infra.targets.entry import TargetEntry
from infra.targets.operations import TargetClient
from infra.targets.ports import PlanPort, ValidatePort

#: public members of the three bases before the ports (2026-11-27, 86d6dcd): TargetEntry 26,
#: Target 19, TargetClient 10 = 55 (the issue counted ~45 before the Azure target, cloud hooks)
BEFORE = 55
#: the bound now: the entry's plan and validate members moved into their ports, its
#: operations members into each target's locator (26 -> 11); ``enforce_refusals`` is the deploy
#: contract's own step (19 -> 18)
MOST = 39

#: each port of an entry, and the port class it is when not refused
PORTS = {"plan": PlanPort, "validate": ValidatePort, "deploy_module": str}


def _public(cls: type) -> set[str]:
    """What ``cls`` itself declares: methods, attributes and annotated class variables."""
    names = set(vars(cls)) | set(vars(cls).get("__annotations__", {}))
    return {name for name in names if not name.startswith("_")}


def test_the_contract_has_fewer_members_than_before_the_ports() -> None:
    counted = {base.__name__: _public(base) for base in (TargetEntry, Target, TargetClient)}
    total = sum(len(members) for members in counted.values())
    assert total <= MOST < BEFORE, counted
    moved = _public(PlanPort) | _public(ValidatePort)
    assert not moved & counted["TargetEntry"], "a port's member is back on the entry"


@pytest.mark.parametrize("name", registry.names())
def test_every_port_is_the_port_or_a_refusal_with_its_reason(name: str) -> None:
    entry = registry.get(name)
    for attribute, port in PORTS.items():
        value = getattr(entry, attribute)
        assert isinstance(value, (port, Refused)), f"{name}.{attribute}: {value!r}"
        if isinstance(value, Refused):
            assert value.reason.strip(), f"{name}.{attribute} is refused without a reason"
    for what, refused in entry.cannot_serve.items():
        assert isinstance(refused, Refused) and refused.reason.strip(), f"{name}: {what}"
    if not isinstance(entry.deploy_module, Refused):
        target = entry.deploy()
        for why in (target.cannot_render, target.cannot_build):
            assert why is None or (isinstance(why, Refused) and why.reason.strip()), name
