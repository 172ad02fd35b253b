"""Operations on a running local endpoint: invoke through its SageMaker-compatible front,
figures from its ``/tdk/status`` (SageMaker's names and units), readiness from ``/ping``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from infra.clients.base import InferenceTarget
from infra.clients.deadline import DEFAULT_TIMEOUT_S
from infra.clouds.aws.sagemaker.metrics import BY_KEY
from infra.targets.local.control import fetch_status
from infra.targets.operations import (
    Locator,
    OnChange,
    Reading,
    Status,
    TargetClient,
    http_probe,
    load_failures,
    option,
    poll_until_ready,
)
from tdk.errors import EndpointError, UsageError

#: figure key -> (SageMaker figure name, statistic): counters read as they are, timers in µs
FIGURES: tuple[tuple[str, str, str], ...] = (
    ("invocations", "Invocations", "count"),
    ("model_latency_p50", "ModelLatency", "p50"),
    ("model_latency_p99", "ModelLatency", "p99"),
    ("overhead_latency", "OverheadLatency", "avg"),
    ("errors_4xx", "Invocation4XXErrors", "count"),
    ("errors_5xx", "Invocation5XXErrors", "count"),
    ("loaded_models", "LoadedModelCount", "count"),
    ("cache_hit_rate", "ModelCacheHit", "ratio"),
    ("model_loading_wait", "ModelLoadingWaitTime", "avg"),
    ("model_downloading", "ModelDownloadingTime", "avg"),
)


def _value(snapshot: dict[str, Any], name: str, stat: str) -> float | None:
    figure = snapshot.get(name)
    if stat == "count":
        return float(figure) if figure is not None else None
    if stat == "ratio":  # the endpoint's ModelCacheHit is already the 0..1 share of hits
        samples = snapshot.get(f"{name}Samples") or 0
        return 100.0 * float(figure) if samples and figure is not None else None
    if not isinstance(figure, dict) or not figure.get("count"):
        return None
    return float(figure[stat]) / 1000  # µs -> ms


def readings(snapshot: dict[str, Any]) -> list[Reading]:
    """The local endpoint's SageMaker-named snapshot as the shared figures (since it started)."""
    return [
        Reading(
            key,
            BY_KEY[key].label,
            _value(snapshot, name, stat),
            BY_KEY[key].unit,
            f"/tdk/status {name}" + ("" if stat in ("count", "ratio") else f" {stat}"),
        )
        for key, name, stat in FIGURES
    ]


class LocalClient(TargetClient):
    """A local endpoint found by its name (its state file says the URL)."""

    def __init__(self, target: str, name: str, url: str) -> None:
        self.target = target
        self.name = name
        self.url = url.rstrip("/")

    def where(self) -> dict[str, str | None]:
        return {"endpoint": self.name, "url": self.url}

    def invoke(self, timeout: float = DEFAULT_TIMEOUT_S) -> InferenceTarget:
        from infra.clouds.aws.sagemaker.runtime import SageMakerRuntimeTarget

        return SageMakerRuntimeTarget(self.name, endpoint_url=self.url, local=True, timeout=timeout)

    def _document(self) -> dict[str, Any]:
        hint = f"check `tdk local status --endpoint {self.name}` and the endpoint's log"
        return fetch_status(self.url, hint, EndpointError)

    def release(self) -> str | None:
        """The release URL the endpoint serves now (None: its status does not say)."""
        release = self._document().get("release")
        return release if isinstance(release, str) and release else None

    def metrics(self, window: timedelta | None) -> list[Reading]:
        if window is not None:
            raise UsageError(
                "the local endpoint keeps its figures since it started, not over a window",
                hint="drop --since for --target local",
            )
        snapshot = self._document()["metrics"]
        failed = snapshot.get("ModelLoadFailures")
        return [
            *readings(snapshot),
            load_failures(float(failed or 0), "/tdk/status ModelLoadFailures"),
        ]

    def status(self) -> Status:
        details: dict[str, Any] = {"url": self.url}
        code = http_probe(f"{self.url}/ping")
        if isinstance(code, OSError):
            return Status(self.target, self.name, "Unreachable", False, str(code), details)
        if code != 200:
            return Status(self.target, self.name, "Starting", False, f"/ping answered {code}")
        document = self._document()
        failed: dict[str, str] = document.get("failed") or {}
        details.update(loaded=document.get("loaded"), models=document.get("models"))
        if failed:
            details["failed"] = failed
            reasons = "; ".join(failed.values())
            failure = f"{len(failed)} model(s) failed to load: {reasons}"
            return Status(self.target, self.name, "Failed", False, failure, details, final=True)
        return Status(self.target, self.name, "InService", True, None, details)

    def wait(self, timeout: float, interval: float, on_change: OnChange) -> Status:
        return poll_until_ready(self.status, timeout, interval, on_change)


@dataclass(frozen=True, kw_only=True)
class LocalLocator(Locator):
    """A local endpoint by the name `tdk local up --endpoint` gave it (``local`` by default);
    its state file says its URL and the release it serves."""

    endpoint: str | None = option()

    @property
    def name(self) -> str:
        return self.endpoint or "local"

    def client(self) -> LocalClient:
        from infra.targets.local.endpoint_state import running_state

        state = running_state(self.name)
        return LocalClient(self.target, self.name, state.url)

    def default_release(self) -> str | None:
        """The release the running endpoint serves now (UsageError when none runs): its status
        says, since ``tdk local switch`` moves it off the release its state file names."""
        from infra.targets.local.endpoint_state import running_state

        state = running_state(self.name)
        return LocalClient(self.target, self.name, state.url).release() or state.release


LOCATOR = LocalLocator
