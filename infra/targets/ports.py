"""The ports of a registered target, and the one shape of a refusal.

A ``TargetEntry`` (``infra.targets.entry``) reaches each port as an attribute that is either
the port object or ``Refused(reason)``: ``plan`` (a ``PlanPort``: what ``tdk plan`` prices and
writes), ``validate`` (a ``ValidatePort``: which ``tdk validate --target`` flag sets which
stack key) and ``deploy`` (the Pulumi program, loaded when called: ``entry.Lazy``). What a
target's runtime cannot serve (decoupled models, LLM engines) is a ``Refused`` too. Shared
code asks ``entry.refused(what)`` or takes the port from ``infra.targets.registry``
(``deploy_port``, ``plan_port``, ``validate_port``), which refuse with the reason and the
targets that can.

Cheap to import: no cloud SDK, no Pulumi (a port imports its target's tables inside the
method that needs them).
"""

from __future__ import annotations

import abc
import inspect
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from tdk.errors import UsageError

if TYPE_CHECKING:
    from infra.config import StackConfig
    from infra.planning.pricing import PriceTable, Quote
    from infra.planning.report import Candidate, Option, PlanReport
    from packager.manifest import ManifestModel
    from packager.repository import ModelDir


class Stack(Protocol):
    """What a port or a locator reads of a stack (``infra.targets.stacks.StackSettings``, which
    imports the registry and so is not imported here)."""

    @property
    def name(self) -> str: ...

    @property
    def common(self) -> StackConfig: ...

    @property
    def config(self) -> Any:
        """The target's typed, validated config."""

    def get(self, key: str) -> str: ...


@dataclass(frozen=True)
class PlanUnit:
    """What one serving unit of a stack is, for ``tdk plan --write-stack``."""

    region: str
    instance: str  # an instance type, or a GKE MACHINE+GPU node shape
    gpus_per_node: int = 1


class PlanPort(abc.ABC):
    """``tdk plan``: the stack key holding the region, the region prices default to, the units
    compared by default, and how a unit is priced, read from and written to a stack. A
    concrete port says all three facts (checked when its class is defined)."""

    region_key: ClassVar[str] = ""
    default_region: ClassVar[str] = ""
    default_candidates: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not inspect.isabstract(cls) and not (
            cls.region_key and cls.default_region and cls.default_candidates
        ):
            raise TypeError(f"{cls.__name__} plans but lacks its region or candidates")

    @abc.abstractmethod
    def owns(self, unit: str) -> bool:
        """Whether a measured unit (an instance type or GPU) is one of this target's kinds, so
        ``tdk plan`` offers it as a candidate (asks the target's own tables)."""

    def prices(self) -> PriceTable | None:
        """The price table this target's catalog commits (dated, each row sourced; its cloud's
        when the cloud's targets share one), which ``tdk plan`` prices from unless ``--prices``
        is given; None where the target has none."""
        return None

    # One implementer (gke), kept on the port: ``tdk plan`` asks whichever target plans
    # whether a candidate is the unit a measurement ran on; a GKE unit is a node shape
    # MACHINE+GPU measured on its GPU, every other target's unit is what was measured.
    def matches(self, spec: str, measured_on: str | None) -> bool:
        """Whether candidate ``spec`` is the unit the measurement ran on."""
        return spec == measured_on

    @abc.abstractmethod
    def candidate(self, quote: Quote) -> Candidate:
        """One ``tdk plan`` option: ``quote.spec`` priced in ``quote.region``."""

    @abc.abstractmethod
    def plan_unit(self, stack: Stack) -> PlanUnit:
        """The serving unit a committed stack deploys."""

    @abc.abstractmethod
    def scaling_updates(self, report: PlanReport, option: Option) -> dict[str, int]:
        """The stack keys that size ``option`` to the report's trough and peak."""

    @abc.abstractmethod
    def unit_values(self, unit: PlanUnit) -> dict[str, str]:
        """The stack keys that deploy ``unit`` (``plan_unit``'s inverse; its region aside):
        ``tdk plan`` checks each candidate through the one feasibility path before pricing."""


@dataclass(frozen=True)
class ValidatePort:
    """``tdk validate --target``: which flag (``instance_type``, ``gpu``, ``image``) sets which
    stack key, and what a stack built from flags sets that ``Pulumi.yaml`` leaves to each
    stack (the provider's region or project, a release URL: placeholders, never deployed).
    The stack built from them goes through the one feasibility path."""

    flag_keys: Mapping[str, str]
    flag_defaults: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.flag_keys:
            raise TypeError("a validate port needs its flags (or the target refuses validate)")

    def flag_values(self, target: str, flags: Mapping[str, str]) -> dict[str, str]:
        """The stack keys ``tdk validate --target`` sets from its flags (given ones only), over
        the project's ``Pulumi.yaml`` defaults; a flag this target does not take is refused."""
        values = dict(self.flag_defaults)
        for flag, value in flags.items():
            if not value:
                continue
            key = self.flag_keys.get(flag)
            if key is None:
                takes = ", ".join("--" + f.replace("_", "-") for f in self.flag_keys)
                raise UsageError(
                    f"--{flag.replace('_', '-')} is not an option of --target {target}",
                    hint=f"--target {target} takes {takes}",
                )
            values[key] = value
        return values

    # One implementer (sagemaker-ic), kept on the port: ``tdk validate --target`` builds every
    # target's stack from flags the same way, and only a sagemaker-ic stack lists the models it
    # serves (``sagemakerIcModels``); the others serve whatever the release holds.
    def model_values(self, models: list[ModelDir]) -> dict[str, str]:
        """The stack keys that name the models a stack serves, for a stack built from flags
        (none: the target serves whatever the release holds)."""
        del models
        return {}


@dataclass(frozen=True)
class ComparedLoad:
    """The load ``tdk plan --components`` compares at: the peak over the ``hot`` busiest
    models (the rest idle), what one unit serves, and the safety factor."""

    peak_rps: Decimal
    hot: int | None
    unit_rate: Decimal
    safety: Decimal


class ComparePort(abc.ABC):
    """``tdk plan --components RELEASE``: a target that serves each model copy in a unit of its
    own, priced at the plan's load beside a shared-unit option and the baseline."""

    @abc.abstractmethod
    def rows(
        self,
        models: list[ManifestModel],
        load: ComparedLoad,
        specs: list[str],
        table: PriceTable,
        baseline: Candidate | None,
        streamed: bool,
    ) -> list[dict[str, object]]:
        """One row per option (``specs``: the plan's units, those this target owns priced;
        none: its defaults); ``streamed``: a token load, which a shared unit may refuse."""
