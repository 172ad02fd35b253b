"""What a registered target is: ``TargetEntry``, the class each target's ``entry.py`` subclasses
(its ``ENTRY`` is found by ``infra.targets.registry``), and ``PlanUnit``, one serving unit.

The entry answers everything the CLI, ``tdk plan``, ``tdk validate --target``, ``tdk render``
and the Pulumi program need: its name, its config (read once per stack by
``infra.targets.stacks.load_stack``), its Pulumi program, its operations client, its plan facts
(region key, candidates) and which ``tdk validate --target`` flags set which stack keys. Shared
code asks the entry; it never compares a target's name. What a target cannot do is data
(``cannot``: what -> why, its keys in ``infra.targets.capabilities``), as the operations
clients' refusals are; ``infra.targets.registry.refusal`` turns one into the error a user reads.

Importing this module or an entry module is cheap: no cloud SDK and no Pulumi; an entry
imports its target's heavier modules only inside the method that needs them.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from infra.targets.capabilities import CAPABILITIES, DEPLOY, PLAN, VALIDATE
from tdk.errors import UsageError

if TYPE_CHECKING:
    from infra.clients.base import InferenceTarget
    from infra.config import StackConfig
    from infra.facts.machine import Cloud
    from infra.planning.pricing import PriceTable, Quote
    from infra.planning.report import Candidate, Option, PlanReport
    from infra.targets.base import Target
    from infra.targets.operations import Locator, TargetClient
    from packager.repository import ModelDir


class Stack(Protocol):
    """What an entry reads of a stack (``infra.targets.stacks.StackSettings``, which imports
    the registry and so cannot be imported here)."""

    @property
    def common(self) -> StackConfig: ...

    def get(self, key: str) -> str: ...


@dataclass(frozen=True)
class PlanUnit:
    """What one serving unit of a stack is, for ``tdk plan --write-stack``."""

    region: str
    instance: str  # an instance type, or a GKE MACHINE+GPU node shape
    gpus_per_node: int = 1


class TargetEntry:
    """One registered target: subclasses set the class attributes and override what they do.

    A capability (``deploy``, ``plan``, ``validate``) is either implemented (its methods
    overridden, ``deploy_module`` set, ``flag_keys`` given) or refused in ``cannot`` with a
    reason, never both and never neither; checked when the class is defined, as
    ``TargetClient`` checks its operations. A target that plans also says its region key and
    candidates. ``cannot[DECOUPLED]`` says why the target cannot serve decoupled models.
    """

    #: the ``--target`` value and the stack's ``triton-deploy-kit:target``
    name: ClassVar[str]
    #: where the target stands among the built-in ones (``--target`` choices, ``--help``):
    #: the registry sorts the discovered entries by it
    order: ClassVar[int] = 1000
    #: one line for ``--help`` and ``tdk doctor``
    summary: ClassVar[str]
    #: module whose ``TARGET`` is the Pulumi program (``infra.targets.base.Target``), if any
    deploy_module: ClassVar[str | None] = None
    #: module whose ``from_locator(Locator)`` builds the operations client
    client_module: ClassVar[str]
    #: the cloud a deploy reaches from this machine (its CLI, where its credentials come
    #: from): ``tdk doctor`` checks it; None where a deploy needs no cloud
    cloud: ClassVar[Cloud | None] = None
    #: what this target cannot do (``deploy``, ``plan``, ``validate``) -> why
    cannot: ClassVar[Mapping[str, str]] = {}
    #: plan facts: the stack key holding the region, the region prices default to, the
    #: instance types ``tdk plan`` compares by default
    region_key: ClassVar[str] = ""
    default_region: ClassVar[str] = ""
    default_candidates: ClassVar[tuple[str, ...]] = ()
    #: ``tdk validate --target`` flag (``instance_type``, ``gpu``, ``image``) -> the stack key
    #: it sets; the stack built from them goes through the one feasibility path
    flag_keys: ClassVar[Mapping[str, str]] = {}
    #: what a stack built from flags sets that ``Pulumi.yaml`` leaves to each stack (the
    #: provider's region or project, a release URL): placeholders, never deployed
    flag_defaults: ClassVar[Mapping[str, str]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for what, why in cls.cannot.items():
            if what not in CAPABILITIES or not why.strip():
                raise TypeError(f"{cls.__name__}.cannot[{what!r}] needs a known key and a reason")
        if "name" not in cls.__dict__:  # a shared intermediate class (KubernetesEntry)
            return
        for what, methods in _METHODS.items():
            done = [m for m in methods if getattr(cls, m) is not getattr(TargetEntry, m)]
            if what in cls.cannot and done:
                raise TypeError(f"{cls.__name__} refuses {what} but implements {done}")
            if what not in cls.cannot and len(done) != len(methods):
                missing = sorted(set(methods) - set(done))
                raise TypeError(f"{cls.__name__} neither refuses {what} nor implements {missing}")
        if (DEPLOY in cls.cannot) == (cls.deploy_module is not None):
            raise TypeError(f"{cls.__name__}: a deploy_module, or a reason in cannot[deploy]")
        if (VALIDATE in cls.cannot) == bool(cls.flag_keys):
            raise TypeError(f"{cls.__name__}: flag_keys, or a reason in cannot[validate]")
        if VALIDATE not in cls.cannot and DEPLOY in cls.cannot:
            raise TypeError(f"{cls.__name__} validates stacks it cannot deploy")
        plans = PLAN not in cls.cannot
        if plans and not (cls.region_key and cls.default_region and cls.default_candidates):
            raise TypeError(f"{cls.__name__} plans but lacks its region or candidates")

    def can(self, what: str) -> bool:
        return what not in self.cannot

    def refuse(self, what: str) -> UsageError:
        """The error for ``what`` this target cannot do, with its reason
        (``infra.targets.registry.refusal`` adds the targets that can)."""
        reason = self.cannot.get(what, "not supported")
        return UsageError(
            f"the {self.name} target cannot {what}: {reason}",
            hint=f"`tdk --help` lists the targets; pick one that can {what}",
        )

    # --- the Pulumi program and its config ------------------------------------------------
    def deploy(self) -> Target[Any]:
        """The Pulumi program (deploy contract) of this target."""
        if self.deploy_module is None:
            raise self.refuse(DEPLOY)
        target: Target[Any] = importlib.import_module(self.deploy_module).TARGET
        return target

    # --- operations -----------------------------------------------------------------------
    def client(self, where: Locator) -> TargetClient:
        """The operations client (invoke, metrics, status, wait) located by ``where``."""
        client: TargetClient = importlib.import_module(self.client_module).from_locator(where)
        return client

    def inference(self, where: Locator, grpc: bool, timeout: float) -> InferenceTarget:
        """Where ``tdk invoke``/``bench`` send requests (how this target finds its Triton);
        ``--grpc`` is refused, never dropped, where the target's API has no gRPC."""
        if grpc:
            raise UsageError(
                f"--grpc: the {self.name} target is called through its own HTTP API, which has "
                "no gRPC form",
                hint="leave out --grpc (the binary codec is already the default)",
            )
        return self.client(where).invoke(timeout)

    def stack_location(self, stack: Stack, outputs: Mapping[str, Any]) -> dict[str, str | None]:
        """Where ``stack``'s deployment is, as ``Locator`` fields (endpoint, region, release):
        its outputs once deployed (``pulumi stack output --json``), else its config."""
        release = stack.common.release
        region = stack.get(self.region_key) if self.region_key else None
        return {
            "endpoint": _text(outputs.get("endpointName")) or stack.common.name,
            "region": _text(outputs.get("region")) or region or None,
            "release": _text(outputs.get("releaseUrl")) or (release.url if release else None),
        }

    def default_store(self, where: Locator) -> str | None:
        """The release whose manifest describes the deployment's models when ``--release`` is
        not given (None: the user must pass it)."""
        del where
        return None

    # --- tdk validate --target ------------------------------------------------------------
    def flag_values(self, flags: Mapping[str, str]) -> dict[str, str]:
        """The stack keys ``tdk validate --target`` sets from its flags (given ones only), over
        the project's ``Pulumi.yaml`` defaults; a flag this target does not take is refused."""
        if not self.flag_keys:
            raise self.refuse(VALIDATE)
        values = dict(self.flag_defaults)
        for flag, value in flags.items():
            if not value:
                continue
            key = self.flag_keys.get(flag)
            if key is None:
                takes = ", ".join("--" + f.replace("_", "-") for f in self.flag_keys)
                raise UsageError(
                    f"--{flag.replace('_', '-')} is not an option of --target {self.name}",
                    hint=f"--target {self.name} takes {takes}",
                )
            values[key] = value
        return values

    def model_values(self, models: list[ModelDir]) -> dict[str, str]:
        """The stack keys that name the models a stack serves, for a stack built from flags
        (none: the target serves whatever the release holds)."""
        return {}

    # --- tdk plan -------------------------------------------------------------------------
    def prices(self) -> PriceTable | None:
        """The price table this target's catalog commits (dated, each row sourced; its cloud's
        when the cloud's targets share one), which ``tdk plan`` prices from unless ``--prices``
        is given; None where the target has none."""
        return None

    def owns(self, unit: str) -> bool:
        """Whether a measured unit (an instance type or GPU) is one of this target's kinds, so
        ``tdk plan`` offers it as a candidate."""
        del unit
        return False

    def matches(self, spec: str, measured_on: str | None) -> bool:
        """Whether candidate ``spec`` is the unit the measurement ran on."""
        return spec == measured_on

    def candidate(self, quote: Quote) -> Candidate:
        """One ``tdk plan`` option: ``quote.spec`` priced in ``quote.region``."""
        del quote
        raise self.refuse(PLAN)

    def plan_unit(self, stack: Stack) -> PlanUnit:
        """The serving unit a committed stack deploys."""
        del stack
        raise self.refuse(PLAN)

    def scaling_updates(self, report: PlanReport, option: Option) -> dict[str, int]:
        """The stack keys that size ``option`` to the report's trough and peak."""
        del report, option
        raise self.refuse(PLAN)

    def unit_values(self, unit: PlanUnit) -> dict[str, str]:
        """The stack keys that deploy ``unit`` (``plan_unit``'s inverse; its region aside):
        ``tdk plan`` checks each candidate through the one feasibility path before pricing."""
        del unit
        raise self.refuse(PLAN)


def _text(value: Any) -> str | None:
    """A stack output as text (None when absent or not a string)."""
    return value if isinstance(value, str) and value else None


#: what each capability a target may refuse needs implemented (all of them, or a refusal)
_METHODS: Mapping[str, tuple[str, ...]] = {
    PLAN: ("candidate", "plan_unit", "scaling_updates", "unit_values"),
}
