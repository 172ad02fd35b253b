"""The operations a user runs against a deployed target: invoke, metrics, status, wait.

A second small contract next to the deploy contract (``infra.targets.base``), importable without
Pulumi: one ``TargetClient`` per target in ``infra/targets/<target>/client.py``. Every operation
is either implemented by the target or refused in its ``cannot`` table with a reason; the base
checks that when the class is defined, so no target silently lacks a branch. The same module
defines the target's ``LOCATOR``, a ``Locator`` with only the fields that client reads (its
entry's ``locator`` references it): it is built from what a command was told (its options, the
``--stack``) and the target's name, refuses an option the target does not take, and builds the
client, telling it the name.
"""

from __future__ import annotations

import abc
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from datetime import timedelta
from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar, Self

from infra.clients.base import InferenceTarget
from infra.clients.deadline import DEFAULT_TIMEOUT_S
from infra.targets.capabilities import Refused
from tdk.errors import EndpointError, UsageError

if TYPE_CHECKING:
    from infra.clients.generate import Generator
    from infra.targets.ports import Stack
    from packager.manifest import ManifestModel


class Operation(StrEnum):
    """What a user does with a deployed target (each is a method of ``TargetClient``)."""

    INVOKE = "invoke"
    METRICS = "metrics"
    STATUS = "status"
    WAIT = "wait"

    @property
    def command(self) -> str:
        """The ``tdk`` command that does it (status and wait are ``tdk endpoint``'s)."""
        grouped = self in (Operation.STATUS, Operation.WAIT)
        return f"endpoint {self.value}" if grouped else self.value


@dataclass(frozen=True)
class Reading:
    """One figure over a window: None when the source has no data for it."""

    key: str
    label: str
    value: float | None
    unit: str
    #: where it comes from: a PromQL query, a CloudWatch metric, a status field
    source: str
    datapoints: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "label": self.label,
            "value": self.value,
            "unit": self.unit,
            "source": self.source,
            "datapoints": self.datapoints,
        }


#: the figure every target's ``metrics`` carries for models that failed to load
LOAD_FAILURES_KEY, LOAD_FAILURES_LABEL = "model_load_failures", "Model load failures"


def load_failures(value: float | None, source: str) -> Reading:
    """The shared "models that failed to load" figure (None: the target cannot count them;
    ``source`` then says where the failures show instead)."""
    return Reading(LOAD_FAILURES_KEY, LOAD_FAILURES_LABEL, value, "count", source)


@dataclass(frozen=True)
class Status:
    """A deployed target's state: ``ready`` means it serves requests now."""

    target: str
    name: str
    state: str
    ready: bool
    failure: str | None = None
    #: target-specific fields (instance counts, URLs), shown as they are
    details: Mapping[str, Any] = field(default_factory=dict)
    #: per-unit rows (SageMaker variants, Kubernetes pods that do not serve), shown as a table
    rows: list[Mapping[str, Any]] = field(default_factory=list)
    #: waiting will not make it ready (a model failed to load): ``wait`` fails at once
    final: bool = False
    #: what the rows are, as the table's title
    rows_title: str = "variants"

    def as_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "endpoint": self.name,
            "status": self.state,
            "ready": self.ready,
            "failure_reason": self.failure,
            **self.details,
        }


OnChange = Callable[[Status], None]


class TargetClient(abc.ABC):
    """One target's operations. Subclasses implement each ``Operation`` or refuse it in
    ``cannot`` (operation -> ``Refused(reason)``, the targets' one refusal shape), never both
    and never neither (checked at definition);
    ``partial=True`` marks a shared intermediate class the check skips."""

    #: the target's name (its entry's, as ``--target`` spells it): the locator that builds the
    #: client tells it
    target: str
    #: operations this target cannot do, each with the reason a user is told
    cannot: ClassVar[Mapping[Operation, Refused]] = {}

    def __init_subclass__(cls, partial: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if partial:
            return
        for op in Operation:
            implemented = getattr(cls, op.value) is not getattr(TargetClient, op.value)
            refused = op in cls.cannot
            if implemented == refused:
                state = (
                    "both implements and refuses" if refused else "neither implements nor refuses"
                )
                raise TypeError(f"{cls.__name__} {state} {op.value!r}")
            if refused and not isinstance(cls.cannot[op], Refused):
                raise TypeError(f"{cls.__name__} refuses {op.value!r} without a Refused(reason)")

    def _refused(self, op: Operation) -> UsageError:
        """The error for an operation this target cannot do, with its reason (what the default
        of each operation raises; nothing else asks it)."""
        refused = self.cannot.get(op)
        reason = refused.reason if refused is not None else "not supported"
        return UsageError(
            f"the {self.target} target cannot {op.value}: {reason}",
            hint=f"see `tdk {op.command} --help` for the targets that can",
        )

    @abc.abstractmethod
    def where(self) -> dict[str, str | None]:
        """What this client reads from, for reports (endpoint, region, URL...)."""

    def invoke(self, timeout: float = DEFAULT_TIMEOUT_S) -> InferenceTarget:
        """Where inference requests for this deployment go; each ends within ``timeout`` s."""
        raise self._refused(Operation.INVOKE)

    def metrics(self, window: timedelta | None) -> list[Reading]:
        """The dashboard's figures over ``window`` ending now (None: the target's default)."""
        raise self._refused(Operation.METRICS)

    def status(self) -> Status:
        """The deployment's state now."""
        raise self._refused(Operation.STATUS)

    def wait(self, timeout: float, interval: float, on_change: OnChange) -> Status:
        """Poll ``status`` until ready; EndpointError on failure or at ``timeout`` seconds."""
        raise self._refused(Operation.WAIT)


def poll_until_ready(
    poll: Callable[[], Status],
    timeout: float,
    interval: float,
    on_change: OnChange,
    sleep: Callable[[float], None] = time.sleep,
) -> Status:
    """Poll until ``ready``; EndpointError when not ready at the deadline."""
    deadline = time.monotonic() + timeout
    last: str | None = None
    while True:
        state = poll()
        if state.state != last:
            last = state.state
            on_change(state)
        if state.ready:
            return state
        if state.final:
            raise EndpointError(
                f"{state.target} endpoint {state.name} is {state.state}: {state.failure}",
                hint="fix the release and deploy it again, or roll back (docs/operations.md)",
            )
        if time.monotonic() >= deadline:
            reason = f": {state.failure}" if state.failure else ""
            raise EndpointError(
                f"{state.target} endpoint {state.name} is still {state.state} after "
                f"{timeout:.0f} s{reason}",
                hint="wait longer (--timeout) or check `tdk endpoint status`",
            )
        sleep(interval)


#: the metadata key marking a locator field as one the user gives (an option of the commands)
GIVEN = "given"
#: the metadata key marking a field that names the deployment itself (an endpoint's name): a
#: flag the stack contradicts is an error, never a silent choice
NAMES_DEPLOYMENT = "names deployment"


def option(names_deployment: bool = False) -> Any:
    """A locator field the user gives (None: not given); the commands' option is ``flag(name)``;
    ``names_deployment``: the field names the deployment itself (``--endpoint``)."""
    return field(default=None, metadata={GIVEN: True, NAMES_DEPLOYMENT: names_deployment})


def flag(name: str) -> str:
    """The command option that gives the locator field ``name`` (``workspace_id``:
    ``--workspace-id``): said in messages, never used as a key."""
    return "--" + name.replace("_", "-")


def output_text(outputs: Mapping[str, Any], name: str) -> str | None:
    """A stack output as text (None when absent or not a string)."""
    value = outputs.get(name)
    return value if isinstance(value, str) and value else None


@dataclass(frozen=True, kw_only=True)
class Locator(abc.ABC):
    """Where one target's deployment is: each target's client module defines its own
    (``LOCATOR``), with only the fields its client reads, each given by the user (``option``)
    or by the committed stack (``stack_fields``). ``build`` makes one from what a command was
    told and refuses a field the target does not take, naming its option. The release is not
    the locator's: ``infra.targets.deployment.Deployment.release`` decides it."""

    #: the target's name (its entry's: ``build`` is told it); the client it builds is told it
    target: str

    @classmethod
    def takes(cls) -> tuple[str, ...]:
        """The fields the user may give this target (each is the option ``flag(name)``)."""
        return tuple(f.name for f in fields(cls) if f.metadata.get(GIVEN))

    @classmethod
    def build(
        cls,
        target: str,
        given: Mapping[str, Any],
        stack: Stack | None = None,
        outputs: Mapping[str, Any] | None = None,
    ) -> Self:
        """The locator of a deployment of ``target`` (the entry's name) from what the user gave
        (field name -> value; None or empty: not given; each a field it ``takes``:
        ``infra.targets.deployment.locator`` refuses the others, naming their option) over
        what ``stack`` and its ``outputs`` name. A field naming another deployment than the
        stack names is a UsageError naming both."""
        told = {name: value for name, value in given.items() if value not in (None, "")}
        values = cls.stack_fields(stack, outputs or {}) if stack is not None else {}
        identity = {f.name for f in fields(cls) if f.metadata.get(NAMES_DEPLOYMENT)}
        for name, value in told.items():
            named = values.get(name)
            if name in identity and named and named != value and stack is not None:
                raise UsageError(
                    f"{flag(name)} {value} and --stack {stack.name} disagree: the stack's "
                    f"{name} is {named}",
                    hint=f"drop {flag(name)} (the stack names it), or pass the stack of {value}",
                )
            values[name] = value
        return cls(target=target, **values)

    @classmethod
    def stack_fields(cls, stack: Stack, outputs: Mapping[str, Any]) -> dict[str, Any]:
        """What ``stack`` says of its deployment, as this locator's fields: its outputs once
        deployed (``pulumi stack output --json``), else its config."""
        return {}

    def need(self, name: str, hint: str) -> str:
        """The value of field ``name``, or a UsageError naming its option and the fix."""
        value = getattr(self, name)
        if not value:
            raise UsageError(f"--target {self.target} needs {flag(name)}", hint=hint)
        return str(value)

    @abc.abstractmethod
    def client(self) -> TargetClient:
        """The operations client (invoke, metrics, status, wait) of the located deployment."""

    def inference(self, grpc: bool, timeout: float) -> InferenceTarget:
        """Where ``tdk invoke``/``bench`` send requests (how this target finds its Triton);
        ``--grpc`` is refused, never dropped, where the target's API has no gRPC."""
        if grpc:
            raise UsageError(
                f"--grpc: the {self.target} target is called through its own HTTP API, "
                "which has no gRPC form",
                hint="leave out --grpc (the binary codec is already the default)",
            )
        return self.client().invoke(timeout)

    # One implementer (local), kept on the contract: ``Deployment.release`` asks every locator
    # when neither the user nor the stack names the release, and only the local endpoint
    # records the release it serves outside a stack (its state file and status).
    def default_release(self) -> str | None:
        """The release whose manifest describes the deployment's models when neither the
        user nor the stack names one (None: the user must pass it)."""
        return None

    def generator(self, model: ManifestModel, timeout: float) -> Generator | None:
        """The target's own route to a decoupled model's generate endpoint: Triton's HTTP
        address as given (the Kubernetes targets' ``--url``), or the target's own API
        (sagemaker-ic's response streams); None (the default): Triton's HTTP generate routes at
        the URL the client reports (``where()["url"]``, the local endpoint's)."""
        return None


@dataclass(frozen=True, kw_only=True)
class EndpointLocator(Locator):
    """An endpoint by name in a region (a cloud's managed endpoint API): ``--endpoint`` and
    ``--region``, or the stack's ``endpointName`` and ``region`` outputs, else its ``name``
    and ``region_key``."""

    #: the stack key holding the region the endpoint is deployed to
    region_key: ClassVar[str]

    endpoint: str | None = option(names_deployment=True)
    #: None: the cloud SDK's default
    region: str | None = option()

    @classmethod
    def stack_fields(cls, stack: Stack, outputs: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "endpoint": output_text(outputs, "endpointName") or stack.common.name,
            "region": output_text(outputs, "region") or stack.get(cls.region_key) or None,
        }


def http_probe(url: str, timeout: float = 10.0) -> int | OSError:
    """The HTTP status ``url`` answers with (errors included), or why it could not be reached."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except (urllib.error.URLError, OSError) as exc:
        return exc
