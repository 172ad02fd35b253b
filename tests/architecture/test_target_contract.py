"""The target contract stays small, and every port of every registered target is the port
object or a refusal with its reason (issue 39 item 2: one target object, ports each an object
or a refusal, one refusal shape; issue 50 item 5: every member counted).

The contract is every class of the contract modules (``CONTRACT``) that a registered target
implements, found from the registry: the entry (``TargetEntry``) and its ports (``PlanPort``,
``ValidatePort``, ``ComparePort``), the deploy program (``Target``) and its ports
(``RenderPort``, ``BuildPort``, ``DoctorPort``), and the operations client and its locator.
Every public member of each is counted, ports included.
"""

from __future__ import annotations

import inspect
import re
from types import ModuleType

import pytest

from infra.targets import registry
from infra.targets.base import BuildPort, DoctorPort, RenderPort, Target
from infra.targets.capabilities import Refused
from infra.targets.entry import Lazy, TargetEntry
from infra.targets.operations import TargetClient
from infra.targets.ports import ComparePort, PlanPort, ValidatePort

#: the modules that state the contract (what shared code calls a target through)
CONTRACT = (
    "infra.targets.base",
    "infra.targets.ports",
    "infra.targets.entry",
    "infra.targets.operations",
)
#: every public member of every contract class a registered target implements (issue 50 item
#: 5), measured 2026-12-07: Target 12, TargetEntry 11, Locator 9, TargetClient 7, PlanPort 10,
#: EndpointLocator 4, ValidatePort 4, DoctorPort 3, RenderPort 2, BuildPort 1, ComparePort 1.
#: The bound before counted three classes (34); this one counts them all and only goes down.
MOST = 64

#: each port of an entry, and the port class it is when not refused
PORTS = {"plan": PlanPort, "validate": ValidatePort, "compare": ComparePort, "deploy": Lazy}


def _public(cls: type) -> set[str]:
    """What ``cls`` itself declares: methods, attributes and annotated class variables."""
    names = set(vars(cls)) | set(vars(cls).get("__annotations__", {}))
    return {name for name in names if not name.startswith("_")}


def _client_module(entry: TargetEntry) -> ModuleType:
    """The module of the entry's locator (its ``LOCATOR``, as the entry references it), which
    defines the operations client too."""
    module = inspect.getmodule(entry.locator())
    assert module is not None
    return module


def _objects(name: str) -> list[type]:
    """The classes of the target ``name``'s objects: its entry, its ports, its deploy program
    and its ports, and its client module's classes."""
    entry = registry.get(name)
    objects: list[type] = [type(entry)]
    objects += [type(getattr(entry, port)) for port in ("plan", "validate", "compare")]
    if not isinstance(entry.deploy, Refused):
        target = entry.deploy()
        objects += [type(target)] + [
            type(getattr(target, p)) for p in ("render", "build", "doctor")
        ]
    client = _client_module(entry)
    defined = (k for k in vars(client).values() if getattr(k, "__module__", "") == client.__name__)
    objects += [kind for kind in defined if isinstance(kind, type)]
    return objects


def _implemented(name: str) -> set[type]:
    """The contract classes the target ``name`` implements: the bases, in ``CONTRACT``, of the
    classes of its objects (``_objects``)."""
    return {
        base
        for kind in _objects(name)
        for base in kind.__mro__
        if base.__module__ in CONTRACT and base is not Refused
    }


#: the words beside a hook that one registered target alone overrides, before its reason
JUSTIFIED = "One implementer"


def _overriders(cls: type, member: str) -> set[str]:
    """The registered targets one of whose classes declares ``member`` below ``cls`` (shared
    intermediates such as ``infra.k8s``'s count for each target that uses them)."""
    found = set()
    for name in registry.names():
        for kind in _objects(name):
            if cls in kind.__mro__ and kind is not cls:
                below = kind.__mro__[: kind.__mro__.index(cls)]
                if any(b.__module__ not in CONTRACT and member in _declared(b) for b in below):
                    found.add(name)
    return found


def _declared(cls: type) -> set[str]:
    return set(vars(cls)) | set(vars(cls).get("__annotations__", {}))


def _comment_above(cls: type, member: str) -> str:
    """The comment lines right above ``member``'s declaration in ``cls``'s source."""
    lines, _ = inspect.getsourcelines(cls)
    pattern = re.compile(rf"^\s+(def {member}\(|{member}\s*[:=])")
    [at] = [i for i, line in enumerate(lines) if pattern.match(line)][:1]
    above = []
    for line in reversed(lines[:at]):
        if not line.strip().startswith(("#", "@")):
            break
        above.append(line.strip())
    return " ".join(reversed(above))


def test_the_contract_counts_every_member_of_every_class_a_target_implements() -> None:
    classes = set().union(*(_implemented(name) for name in registry.names()))
    assert {TargetEntry, Target, TargetClient, PlanPort, RenderPort} <= classes
    counted = {cls.__name__: sorted(_public(cls)) for cls in classes}
    total = sum(len(members) for members in counted.values())
    assert total <= MOST, counted
    entry = set(counted["TargetEntry"])
    assert not (_public(PlanPort) | _public(ValidatePort) | _public(ComparePort)) & entry
    deploy = set(counted["Target"])
    assert not (_public(RenderPort) | _public(BuildPort) | _public(DoctorPort)) & deploy


def test_a_hook_one_target_alone_overrides_says_why_it_stays_in_the_contract() -> None:
    """A member with a default (not abstract) that exactly one registered target overrides is
    moved into that target, or justified beside it (``JUSTIFIED`` and the reason)."""
    classes = set().union(*(_implemented(name) for name in registry.names()))
    unjustified = []
    for cls in classes:
        abstract = getattr(cls, "__abstractmethods__", frozenset())
        for member in sorted(_public(cls) - abstract):
            if len(_overriders(cls, member)) == 1 and JUSTIFIED not in _comment_above(cls, member):
                unjustified.append(f"{cls.__name__}.{member} ({_overriders(cls, member)})")
    assert unjustified == [], "move each into its target, or say why beside it"


def test_an_unjustified_single_override_is_seen() -> None:
    assert _overriders(PlanPort, "matches") == {"gke"}
    assert JUSTIFIED in _comment_above(PlanPort, "matches")
    assert JUSTIFIED not in _comment_above(PlanPort, "prices")


@pytest.mark.parametrize("name", registry.names())
def test_every_port_is_the_port_or_a_refusal_with_its_reason(name: str) -> None:
    entry = registry.get(name)
    for attribute, port in PORTS.items():
        value = getattr(entry, attribute)
        assert isinstance(value, (port, Refused)), f"{name}.{attribute}: {value!r}"
        if isinstance(value, Refused):
            assert value.reason.strip(), f"{name}.{attribute} is refused without a reason"
    client = _client_module(entry)
    for kind in vars(client).values():
        if isinstance(kind, type) and issubclass(kind, TargetClient):
            assert all(isinstance(why, Refused) for why in kind.cannot.values()), name
    for what, refused in entry.cannot_serve.items():
        assert isinstance(refused, Refused) and refused.reason.strip(), f"{name}: {what}"
    if not isinstance(entry.deploy, Refused):
        target = entry.deploy()
        ports = {"render": RenderPort, "build": BuildPort, "doctor": DoctorPort}
        for attribute, port in ports.items():
            value = getattr(target, attribute)
            assert isinstance(value, (port, Refused)), f"{name} TARGET.{attribute}: {value!r}"
            if isinstance(value, Refused):
                assert value.reason.strip(), f"{name} TARGET.{attribute} refused without a reason"
