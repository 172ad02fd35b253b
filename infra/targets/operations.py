"""The operations a user runs against a deployed target: invoke, metrics, status, wait.

A second small contract next to the deploy contract (``infra.targets.base``), importable without
Pulumi: one ``TargetClient`` per target in ``infra/targets/<target>/client.py``. Every operation
is either implemented by the target or refused in its ``cannot`` table with a reason; the base
checks that when the class is defined, so no target silently lacks a branch.
"""

from __future__ import annotations

import abc
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from infra.clients.base import InferenceTarget
from infra.clients.deadline import DEFAULT_TIMEOUT_S
from tdk.errors import EndpointError, UsageError

if TYPE_CHECKING:
    from infra.clients.generate import Generator
    from packager.manifest import ManifestModel


class Operation(StrEnum):
    """What a user does with a deployed target (each is a method of ``TargetClient``)."""

    INVOKE = "invoke"
    METRICS = "metrics"
    STATUS = "status"
    WAIT = "wait"


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
    ``cannot`` (operation -> reason), never both and never neither (checked at definition);
    ``partial=True`` marks a shared intermediate class the check skips."""

    #: the target's name, as ``--target`` spells it
    target: ClassVar[str]
    #: operations this target cannot do, each with the reason a user is told
    cannot: ClassVar[Mapping[Operation, str]] = {}

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
            if refused and not cls.cannot[op].strip():
                raise TypeError(f"{cls.__name__} refuses {op.value!r} without a reason")

    @classmethod
    def can(cls, op: Operation) -> bool:
        return op not in cls.cannot

    def refused(self, op: Operation) -> UsageError:
        """The error for an operation this target cannot do, with its reason."""
        return UsageError(
            f"the {self.target} target cannot {op.value}: {self.cannot.get(op, 'not supported')}",
            hint=f"see `tdk {op.value} --help` for the targets that can",
        )

    @abc.abstractmethod
    def where(self) -> dict[str, str | None]:
        """What this client reads from, for reports (endpoint, region, URL...)."""

    def invoke(self, timeout: float = DEFAULT_TIMEOUT_S) -> InferenceTarget:
        """Where inference requests for this deployment go; each ends within ``timeout`` s."""
        raise self.refused(Operation.INVOKE)

    def generator(self, model: ManifestModel, timeout: float) -> Generator | None:
        """The target's own route to a decoupled model's generate endpoint; None (the
        default): Triton's HTTP generate routes at ``--url`` or ``where()["url"]``."""
        return None

    def metrics(self, window: timedelta | None) -> list[Reading]:
        """The dashboard's figures over ``window`` ending now (None: the target's default)."""
        raise self.refused(Operation.METRICS)

    def status(self) -> Status:
        """The deployment's state now."""
        raise self.refused(Operation.STATUS)

    def wait(self, timeout: float, interval: float, on_change: OnChange) -> Status:
        """Poll ``status`` until ready; EndpointError on failure or at ``timeout`` seconds."""
        raise self.refused(Operation.WAIT)


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


@dataclass(frozen=True)
class Locator:
    """Where a deployed target is, as the operation commands are told (one options type).

    Each target reads the fields it needs and says which one is missing.
    """

    #: SageMaker endpoint name, or the local endpoint's name
    endpoint: str | None = None
    region: str | None = None
    #: gke/eks: the committed stack whose namespace, workload and cloud location to use
    stack: str | None = None
    project_dir: str | Path = "."
    #: gke/eks: a Prometheus query API to read instead of the managed one (no auth)
    prometheus_url: str | None = None
    #: eks: the AMP workspace (``pulumi stack output ampWorkspaceId``)
    workspace_id: str | None = None
    #: gke/eks: Triton's HTTP URL (a load balancer, or ``kubectl port-forward``)
    url: str | None = None
    #: the release URL the deployment serves (``--release``; a stack's ``releaseUrl``)
    release: str | None = None

    def need(self, field_name: str, target: str, option: str, hint: str) -> str:
        """The value of ``field_name``, or a UsageError naming the option and the fix."""
        value = getattr(self, field_name)
        if not value:
            raise UsageError(f"--target {target} needs {option}", hint=hint)
        return str(value)


def http_probe(url: str, timeout: float = 10.0) -> int | OSError:
    """The HTTP status ``url`` answers with (errors included), or why it could not be reached."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except (urllib.error.URLError, OSError) as exc:
        return exc
