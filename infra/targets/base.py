"""The contract every deployment target keeps (SageMaker MME, GKE, EKS).

A target's name is its registry entry's (``infra.targets.entry``), told to the program in the
stack's ``StackConfig.target``. A target says where it can read releases from
(``release_schemes``),
what it cannot do (``refusals``: data with a reason and a valid value to use instead, enforced
by this base class while the config is read, before any resource is declared), how to read its
own config keys, what one serving unit of a stack offers a model (``offer``) and whether the
stack's own numbers fit (``capacity``), both from the typed config, and how to declare its
resources; ``infra.targets.feasibility`` asks these. Its ports are each the port object or
``Refused(reason)``: ``render`` (``tdk render k8s``), ``build`` (``tdk build --stack``) and
``doctor`` (``tdk doctor``; the default checks nothing); ``render_port``/``build_port`` give
the port or the error naming why.
"""

from __future__ import annotations

import abc
import datetime as dt
import fnmatch
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from infra.config import ConfigReader, StackConfig, qualify
from infra.targets.capabilities import Refused
from infra.values.names import DerivedName, check_name
from infra.values.offer import TargetSpec
from tdk.errors import ConfigError, UsageError

if TYPE_CHECKING:
    from infra.facts.findings import Finding

ConfigT = TypeVar("ConfigT")

#: a sample-release archive with a text (BYTES) input: the example in printed invoke commands
EXAMPLE_TARGET_MODEL = "text_pipeline-0.tar.gz"
#: the Triton model name of that archive (what ``--target-model`` names on Kubernetes)
EXAMPLE_MODEL_NAME = EXAMPLE_TARGET_MODEL.removesuffix(".tar.gz")

#: stack output name -> its value (or a ``${name}`` placeholder under ``tdk render``)
OutputValue = Callable[[str], str]
Manifest = dict[str, Any]


@dataclass(frozen=True)
class Refusal:
    """Something a target cannot do: the config key, the refused values (a glob), why, and a
    valid value to use instead (the hint offers it)."""

    key: str
    value: str
    reason: str
    instead: str

    def matches(self, value: str) -> bool:
        return fnmatch.fnmatchcase(value, self.value)


@dataclass(frozen=True)
class EngineJob:
    """A TensorRT engine build to run on the stack's own compute (``tdk build --stack``): the
    Job's name, the cache entry's URL (``<release>/engines/.../``, its inputs under ``input/``),
    NVIDIA's TensorRT image of the stack's Triton release, and the build's deadline."""

    name: str
    entry_url: str
    tensorrt_image: str
    deadline_seconds: int


@dataclass(frozen=True)
class Shortfall:
    """A stack whose own numbers do not fit: the key to change, what is short, and the fix.
    ``blocking`` False: the stack deploys, but cannot reach what it configures."""

    key: str
    message: str
    fix: str
    blocking: bool = True


@dataclass(frozen=True)
class SchemaDrift:
    """The kit's facts against an installed provider package's schema (``tdk doctor``): what
    was read (package and version), kit values the schema does not accept (``pulumi up``
    would fail: broken), and what the schema offers that the kit neither uses nor refuses."""

    source: str
    refused: tuple[str, ...] = ()
    unknown: tuple[str, ...] = ()


class RenderPort(abc.ABC, Generic[ConfigT]):
    """``tdk render k8s``: the stack's Kubernetes manifests."""

    @abc.abstractmethod
    def manifests(self, config: ConfigT, output: OutputValue) -> list[Manifest]:
        """The manifests ``tdk render k8s`` writes, in apply order; ``output(name)`` gives a
        stack output only a deployment knows (or a placeholder)."""

    def written_forms(self, key: str, value: str) -> tuple[str, ...]:
        """How the stack value ``value`` of ``key`` (a qualified key) appears in the manifests:
        itself by default; a target that writes it in parts (an account and a container of a
        release URL) says so, and ``tdk render`` finds a placeholder however it is written."""
        del key
        return (value,)


class BuildPort(abc.ABC, Generic[ConfigT]):
    """``tdk build --stack``: a TensorRT engine built on the stack's own GPUs."""

    @abc.abstractmethod
    def engine_job(self, config: ConfigT, output: OutputValue, job: EngineJob) -> list[Manifest]:
        """The manifests that build one engine on the stack's GPUs."""


class DoctorPort(Generic[ConfigT]):
    """``tdk doctor``: what this target's stacks rely on, against their sources (none by
    default: a target overrides what it can check)."""

    def facts(self, config: ConfigT, today: dt.date) -> list[Finding]:
        """The facts the stack relies on (its Kubernetes calendar, its add-on charts, its
        image, its AMI), each with its source and date; built from ``infra.facts.findings``."""
        del config, today
        return []

    def online_drift(self, config: ConfigT) -> tuple[str, list[str]] | None:
        """(what was asked, what differs from the kit's facts) from the cloud's own API for
        ``tdk doctor --online``; None where the target's cloud answers nothing it checks."""
        del config
        return None

    def schema_drift(self, config: ConfigT) -> list[SchemaDrift]:
        """The facts the stack relies on against the installed Pulumi providers' schemas
        (enums, documented accepted values)."""
        del config
        return []


class Target(abc.ABC, Generic[ConfigT]):
    """One deployment target: its frozen config type and the resources it declares. Its name
    is its entry's: ``common.target`` of the stack config it reads."""

    #: URL schemes of the release stores this target's runtime can read (``s3``, ``gs``)
    release_schemes: ClassVar[tuple[str, ...]]
    #: every cloud name the target derives from the stack's ``name``, with the cloud's rule
    #: (``infra/targets/<target>/cloud_names.py``); a name that breaks one is refused
    derived_names: ClassVar[tuple[DerivedName, ...]] = ()
    #: the render port (``tdk render k8s``), or why the target has nothing to render
    render: RenderPort[ConfigT] | Refused = Refused("it runs no Kubernetes workload")
    #: the build port (``tdk build --stack``), or why engines cannot be built on its compute
    build: BuildPort[ConfigT] | Refused = Refused("it runs no Kubernetes Job")
    #: the doctor port (``tdk doctor``): the facts its stacks rely on
    doctor: DoctorPort[ConfigT] = DoctorPort()

    def refusals(self) -> Iterable[Refusal]:
        """Values this target refuses outright, each with its reason (none by default)."""
        return ()

    def model_repositories(self, reader: ConfigReader) -> tuple[Path, ...]:
        """The model repositories the stack names, whose models ``feasible`` checks with the
        stack (none by default: the target serves whatever the release holds)."""
        del reader
        return ()

    def read_config(self, reader: ConfigReader, common: StackConfig) -> ConfigT:
        """Refuse what the target cannot do and a ``name`` whose derived cloud names would not
        fit, then read the target's keys into its frozen config."""
        self._enforce_refusals(reader, common.target)
        check_name(common.target, common.name, self.derived_names)
        return self.parse_config(reader, common)

    def _enforce_refusals(self, reader: ConfigReader, target: str) -> None:
        """ConfigError naming the key, the reason and a valid value, for the first refusal
        whose glob the configured value matches."""
        for refusal in self.refusals():
            value = reader.string(refusal.key)
            if refusal.matches(value):
                key = qualify(refusal.key)
                raise ConfigError(
                    f"{key} is {value!r}, which the {target} target refuses: {refusal.reason}",
                    hint=f"use a supported value, e.g. `pulumi config set {key} {refusal.instead}`",
                )

    @abc.abstractmethod
    def offer(self, config: ConfigT) -> TargetSpec:
        """What one serving unit of the stack (an instance, a pod) offers a model: its GPU and
        how many, disk, the Triton image the stack deploys."""

    # One implementer (sagemaker-ic), kept on the contract: the one feasibility path asks
    # every target whether the stack's own numbers fit, and only inference components size a
    # stack in units it sets itself (copies x accelerators against instances); the other
    # targets' sizing is what ``offer`` says, so they keep this default.
    def capacity(self, config: ConfigT) -> Iterable[Shortfall]:
        """What the stack's own sizing cannot place (none by default)."""
        del config
        return ()

    @abc.abstractmethod
    def parse_config(self, reader: ConfigReader, common: StackConfig) -> ConfigT:
        """Read and validate this target's keys into its frozen config (ConfigError if bad)."""

    @abc.abstractmethod
    def declare(self, config: ConfigT) -> Mapping[str, Any]:
        """Declare the stack's resources; return the stack outputs (name -> value or Output)."""


def render_port(target: Target[ConfigT], name: str) -> RenderPort[ConfigT]:
    """``target``'s render port; a UsageError naming why (and the target, ``name``) where it
    has none."""
    if isinstance(target.render, Refused):
        raise UsageError(
            f"the {name} target has no Kubernetes manifests: {target.render.reason}",
            hint="render a stack of a target that runs Triton on Kubernetes (docs/targets.md)",
        )
    return target.render


def build_port(target: Target[ConfigT], name: str) -> BuildPort[ConfigT]:
    """``target``'s build port; a UsageError naming why (and the target, ``name``) where engines
    cannot be built on its compute."""
    if isinstance(target.build, Refused):
        raise UsageError(
            f"the {name} target cannot build TensorRT engines on its own compute: "
            f"{target.build.reason}",
            hint="build on a machine with the same GPU (tdk build --local there; see "
            "docs/build.md), then tdk package --trt-built-for",
        )
    return target.build
