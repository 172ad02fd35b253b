"""What a registered target is: ``TargetEntry``, the class each target's ``entry.py`` subclasses
(its ``ENTRY`` is found by ``infra.targets.registry``).

The entry answers everything the CLI, ``tdk plan``, ``tdk validate --target``, ``tdk render``
and the Pulumi program need: its name (the only place a target states it: its deploy program,
client and cloud names are told it, never restate it), its Pulumi program (``deploy``), its
operations client, and its ports (``infra.targets.ports``): ``plan`` and ``validate``, each the
port object or ``Refused(reason)``, as the deploy program is. Shared code asks the entry; it
never compares a target's name. ``infra.targets.registry.refusal`` turns a refusal into the
error a user reads, naming the targets that can.

Importing this module or an entry module is cheap: no cloud SDK and no Pulumi; an entry
reaches its target's heavier modules through a ``Lazy`` reference (an import statement inside
a function, which mypy and the import graph see), or inside the method that needs them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from infra.targets.capabilities import COMPARE, DEPLOY, PLAN, SERVING, VALIDATE, Refused
from infra.targets.ports import ComparePort, PlanPort, ValidatePort

if TYPE_CHECKING:
    from infra.facts.machine import Cloud
    from infra.targets.base import Target
    from infra.targets.operations import Locator

T = TypeVar("T")


@dataclass(frozen=True)
class Lazy(Generic[T]):
    """An object of one of the target's own modules, imported when first called: ``load`` is a
    function of the entry module whose body imports it. Every command imports every entry (the
    ``--target`` choices), so what would cost that import stays behind one of these: the
    Pulumi program imports Pulumi and the cloud providers, the operations client numpy and the
    stores (0.1-0.4 s each, ``python -X importtime``, 2026-12-07). A shape of the contract,
    as ``Refused`` is: no target implements it."""

    load: Callable[[], T]

    def __call__(self) -> T:
        return self.load()


class TargetEntry:
    """One registered target: subclasses set the class attributes and override what they do.

    Each port (``deploy``, ``plan``, ``validate``) is the port or ``Refused(reason)``,
    checked when the class is defined, as ``TargetClient`` checks its operations; what the
    target's runtime cannot serve (``SERVING``: decoupled models, LLM engines) is a refusal in
    ``cannot_serve``. ``refused(what)`` answers for all of them.
    """

    #: the ``--target`` value and the stack's ``triton-deploy-kit:target``
    name: ClassVar[str]
    #: where the target stands among the built-in ones (``--target`` choices, ``--help``):
    #: the registry sorts the discovered entries by it
    order: ClassVar[int] = 1000
    #: one line for ``--help`` and ``tdk doctor``
    summary: ClassVar[str]
    #: the deploy port: the Pulumi program (an ``infra.targets.base.Target``), loaded when
    #: called, or why the target has none (``registry.deploy_port`` refuses with the reason)
    deploy: ClassVar[Lazy[Target[Any]] | Refused]
    #: its client module's ``LOCATOR`` (an ``infra.targets.operations.Locator``), loaded when
    #: called: it locates a deployment from a command's options and builds its client
    locator: ClassVar[Lazy[type[Locator]]]
    #: the cloud a deploy reaches from this machine (its CLI, where its credentials come
    #: from): ``tdk doctor`` checks it; None where a deploy needs no cloud
    cloud: ClassVar[Cloud | None] = None
    #: the plan port (``tdk plan``), or why the target does not plan
    plan: ClassVar[PlanPort | Refused]
    #: the validate port (``tdk validate --target``), or why the target does not validate
    validate: ClassVar[ValidatePort | Refused]
    #: the compare port (``tdk plan --components``), or why the target has none
    # One implementer (sagemaker-ic), kept as a port: ``tdk plan --components`` asks the
    # registry for the target that has it (``registry.compare_port``), never a target by name,
    # and every other target refuses it with this reason.
    compare: ClassVar[ComparePort | Refused] = Refused(
        "it serves no model copy in a unit of its own: --components has nothing to compare"
    )
    #: what the target's runtime cannot serve (a ``SERVING`` capability) -> why
    cannot_serve: ClassVar[Mapping[str, Refused]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" not in cls.__dict__:  # a shared intermediate class (KubernetesEntry)
            return
        ports: dict[str, tuple[object, type]] = {DEPLOY: (cls.deploy, Lazy)}
        ports.update({PLAN: (cls.plan, PlanPort), VALIDATE: (cls.validate, ValidatePort)})
        ports[COMPARE] = (cls.compare, ComparePort)
        for what, (port, kind) in ports.items():
            if not isinstance(port, (kind, Refused)):
                raise TypeError(f"{cls.__name__}: its {what} port, or Refused(reason)")
        for what, why in cls.cannot_serve.items():
            if what not in SERVING or not isinstance(why, Refused):
                raise TypeError(f"{cls.__name__}.cannot_serve[{what!r}]: a known key, Refused")
        if isinstance(cls.deploy, Refused) and isinstance(cls.validate, ValidatePort):
            raise TypeError(f"{cls.__name__} validates stacks it cannot deploy")

    def refused(self, what: str) -> Refused | None:
        """Why this target cannot ``what`` (a capability of ``infra.targets.capabilities``);
        None when it can."""
        ports: dict[str, object] = {DEPLOY: self.deploy, PLAN: self.plan}
        ports.update({VALIDATE: self.validate, COMPARE: self.compare})
        port = ports[what] if what in ports else self.cannot_serve.get(what)
        return port if isinstance(port, Refused) else None
