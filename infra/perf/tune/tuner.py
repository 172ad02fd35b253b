"""Run a tune end to end on a Triton (the local runtime, or the user's own through ``--url``).

The shipped configuration is measured in the same run as the search, so "tuned vs shipped" is
a like-for-like ratio, and it stays the choice unless something beats it. Ctrl-C, SIGTERM and
SIGHUP end the search, not the report: what was measured is kept, the best so far is reported,
and the server is stopped (local) or restored (``--url``) on the way out.
"""

from __future__ import annotations

import signal
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from infra.perf.bench.drive import Driver, InProcess, Processes
from infra.perf.tune.accel import Capabilities, Skipped, batch_limit, options_for
from infra.perf.tune.search import (
    Duel,
    Point,
    Progress,
    Search,
    Settings,
    beats,
    carry_drift,
    drift_note,
    duel,
    full_search,
    inside_noise,
    measure_point,
    pareto_front,
    probe_drift,
    quick_search,
    sweep,
    typical,
)
from infra.perf.tune.space import Knobs, Space, apply_knobs, shipped_knobs
from packager.config import backend_of, datatype_name
from packager.manifest import ManifestModel, TensorSpec
from tdk.signals import Terminated, terminations_interrupt

if TYPE_CHECKING:
    from infra.clients.triton_http import Opener

KEEP_MARGIN = 1.02  # a candidate must beat the shipped config by 2% (and the spreads) to replace it


class SearchMode(StrEnum):
    quick = "quick"
    full = "full"


@dataclass
class TuneReport:
    """What a tune measured and chose (``choice`` is None when nothing met the budget)."""

    model: str
    mode: SearchMode
    settings: Settings
    shipped: Knobs
    search: Search
    server: str = "local"
    shipped_best: Point | None = None
    shipped_points: list[Point] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    signal: int | None = None  # the signal that ended the search early, if one did
    gpu: bool = False  # the server has a GPU (instance notes explain time-slicing)
    repeats: list[Point] = field(default_factory=list)  # the shipped best measured again
    duel: Duel | None = None  # the choice against the shipped config, when inside the noise

    @property
    def drift(self) -> float:
        """How much the shipped best point varied when measured again (0.0: not measured)."""
        return self.shipped_best.drift if self.shipped_best else 0.0

    @property
    def choice(self) -> Point | None:
        """The best point within the budget; the shipped config's unless a candidate beats it
        by more than the margin and both points' spreads, or won a duel with it."""
        found, shipped = self.search.best(), self.shipped_best
        if found is None:
            return shipped
        if shipped is None or beats(found, shipped, KEEP_MARGIN) or self._won(found):
            return found
        return shipped

    def _won(self, found: Point) -> bool:
        return self.duel is not None and self.duel.won and self.duel.candidate == found.knobs

    @property
    def inside_noise(self) -> bool:
        """The best candidate beat the shipped config by the margin, but not by the spreads
        (nor in a duel)."""
        found, shipped = self.search.best(), self.shipped_best
        return (
            found is not None
            and shipped is not None
            and inside_noise(found, shipped, KEEP_MARGIN)
            and not self._won(found)
        )

    @property
    def notes(self) -> list[str]:
        """Why decisions went as they did: gains inside the noise, GPU limits, instance falls."""
        notes = list(self.search.notes)
        said = drift_note(self.drift, self.settings.stability)
        notes += [said] if said else []
        found, shipped = self.search.best(), self.shipped_best
        if found is not None and shipped is not None and self._won(found):
            assert self.duel is not None
            notes.append(
                f"chose {found.knobs.label()}: {found.throughput_rps:.1f} vs "
                f"{shipped.throughput_rps:.1f} rps is a gain inside the measured spread, but "
                f"{self.duel.describe()}"
            )
        elif self.duel is not None:  # lost: the gain it settled may have gone with the pairs
            notes.append(
                f"kept the shipped config: {self.duel.candidate.label()} gained inside the "
                f"measured spread, and {self.duel.describe()}"
            )
        elif self.inside_noise:
            assert found is not None and shipped is not None
            notes.append(
                f"kept the shipped config: {found.knobs.label()} measured "
                f"{found.throughput_rps:.1f} vs {shipped.throughput_rps:.1f} rps, a gain inside "
                "the measured spread"
            )
        if self.gpu:
            notes += instance_falls([*self.shipped_points, *self.search.points], self.budget_ok)
        said = self.stand_in_note
        return [*notes, said] if said else notes

    @property
    def stand_in_note(self) -> str | None:
        """A config chosen on a server without a GPU, which the model may serve on: the kit's
        local endpoint stands in for a GPU target, and its instance, batching and CPU thread
        counts (``threads-N``, ONNX Runtime's intra_op_thread_count) say nothing of a GPU."""
        choice = self.choice
        if self.gpu or choice is None or not self.improves:
            return None
        option = choice.knobs.accelerator
        cpu_only = (
            f" ({option} is a CPU-only setting)" if option.startswith(("threads", "open")) else ""
        )
        return (
            f"chosen on CPU{cpu_only}: this server has no GPU; if the model serves on a GPU, "
            "re-tune on the serving GPU with tdk tune --url"
        )

    def budget_ok(self, point: Point) -> bool:
        return point.within(self.settings.budget_ms)

    @property
    def improves(self) -> bool:
        """Whether the choice is a config other than the shipped one (worth writing)."""
        choice = self.choice
        return choice is not None and choice.knobs.canonical() != self.shipped.canonical()

    @property
    def front(self) -> list[Point]:
        return pareto_front([*self.shipped_points, *self.search.points])

    @property
    def measurements(self) -> int:
        return len(self.search.points)

    def to_dict(self) -> dict[str, Any]:
        choice, shipped = self.choice, self.shipped_best
        return {
            "target": self.server,
            "model": self.model,
            "search": self.mode.value,
            "latency_budget_ms": self.settings.budget_ms,
            "duration_s": self.settings.duration_s,
            "concurrency": list(self.settings.concurrency),
            "interrupted": self.search.interrupted,
            "elapsed_s": round(self.search.elapsed_s, 2),
            "configs_measured": self.search.configs_done,
            "measurements": self.measurements,
            "shipped": self.shipped.to_dict(),
            "shipped_best": shipped.to_dict() if shipped else None,
            "shipped_points": [p.to_dict() for p in self.shipped_points],
            "choice": choice.to_dict() if choice else None,
            "improves": self.improves,
            "speedup": round(choice.throughput_rps / shipped.throughput_rps, 3)
            if choice and shipped and shipped.throughput_rps
            else None,
            "skipped": [{"option": s.option, "reason": s.reason} for s in self.skipped],
            "stability_percentage": self.settings.stability.percentage,
            "max_windows": self.settings.stability.max_windows,
            "processes": self.settings.processes,
            **self.settings.placement.to_dict(),
            "client_bound": any(
                p.client_bound for p in [*self.shipped_points, *self.search.points]
            ),
            "unstable_points": sum(
                not p.stable for p in [*self.shipped_points, *self.search.points]
            ),
            "inside_noise": self.inside_noise,
            "drift": round(self.drift, 4),
            "repeats_rps": [round(p.throughput_rps, 2) for p in self.repeats],
            "pairs": self.settings.pairs,
            "duels": [
                d.to_dict() for d in [*self.search.duels, *([self.duel] if self.duel else [])]
            ],
            "notes": self.notes,
            "pareto_front": [p.to_dict() for p in self.front],
            "points": [p.to_dict() for p in self.search.points],
        }


def model_of(config: Any, ranges: Mapping[str, tuple[int, int]] | None = None) -> ManifestModel:
    """A manifest entry describing ``config``'s signature, to encode requests for it;
    ``ranges``: the values integer inputs accept (``packager.onnx_signature.input_ranges``)."""

    def specs(tensors: Any) -> tuple[TensorSpec, ...]:
        return tuple(
            TensorSpec(
                t.name,
                datatype_name(t.data_type),
                tuple(int(d) for d in t.dims),
                range=(ranges or {}).get(t.name),
            )
            for t in tensors
        )

    name = str(config.name)
    return ManifestModel(
        target_model=name,
        name=name,
        source=name,
        copy=0,
        sha256="",
        size=0,
        archive="",
        backend=backend_of(config),
        platform=str(config.platform),
        max_batch_size=int(config.max_batch_size),
        inputs=specs(config.input),
        outputs=specs(config.output),
    )


def requests_for(model: ManifestModel, settings: Settings) -> list[dict[str, Any]]:
    """What every point sends, in turn: the sample requests (``settings.samples``) or the
    example inputs, each with the ``--input`` tensors replacing theirs."""
    from infra.clients.inputs import example_inputs, sample_requests, with_overrides

    if settings.samples is not None:
        found = sample_requests(model, settings.samples)
    else:
        found = [example_inputs(model, 1)]
    return [with_overrides(model, arrays, list(settings.inputs)) for arrays in found]


class TuneServer(Protocol):
    """A Triton holding the tuned model: where to send requests and how to load a config."""

    @property
    def url(self) -> str: ...

    @property
    def opener(self) -> Opener | None: ...  # connections to it (None: a TCP connect to url)

    base_config: Any  # the config as this server serves it; knobs are applied to it
    capabilities: Capabilities
    metrics: Callable[[], dict[str, float]] | None  # GPU figures after each window, if known

    def load(self, config: Any) -> None: ...


def model_space(space: Space, config: Any, caps: Capabilities) -> tuple[Space, list[Skipped]]:
    """``space`` narrowed and widened for this model on this server."""
    options, skipped = options_for(config, caps)
    space = space.for_model(int(config.max_batch_size), batch_limit(config))
    space = space.with_shipped(shipped_knobs(config))
    if space.auto_accelerators:
        space = replace(space, accelerators=options)
    else:
        unknown = [a for a in space.accelerators if a not in options]
        skipped += [Skipped(a, "not offered for this model on this server") for a in unknown]
        kept = tuple(a for a in space.accelerators if a in options)
        space = replace(space, accelerators=kept or ("",))
    return space, skipped


def run_tune(
    open_server: Callable[[], AbstractContextManager[TuneServer]],
    shipped_config: Any,
    settings: Settings,
    space: Space,
    mode: SearchMode,
    progress: Progress,
    server_label: str = "local",
    ranges: Mapping[str, tuple[int, int]] | None = None,
) -> TuneReport:
    """Measure the shipped config, then search; an interrupt returns what was measured.
    Requests carry example inputs (integers within ``ranges``), ``settings.inputs`` replacing
    the tensors they name."""
    from infra.perf.tune.server import PerThreadSender, SenderFactory

    space.check()
    shipped = shipped_knobs(shipped_config)
    name = str(shipped_config.name)
    report = TuneReport(name, mode, settings, shipped, Search(settings), server_label)
    with terminations_interrupt():
        try:
            with open_server() as server:
                space, report.skipped = model_space(space, shipped_config, server.capabilities)
                report.gpu = server.capabilities.gpu
                model = model_of(server.base_config, ranges)
                arrays = requests_for(model, settings)
                reach = (server.url, model, arrays, server.opener)
                sender = PerThreadSender(*reach)
                driver = open_driver(SenderFactory(*reach), settings, sender)

                def prepare(knobs: Knobs) -> None:
                    sender.close()
                    # the shipped config is loaded exactly as it is, not rebuilt from its knobs
                    base = server.base_config
                    server.load(base if knobs == shipped else apply_knobs(base, knobs))

                def measure(knobs: Knobs, concurrency: int) -> Point:
                    return measure_point(
                        knobs, concurrency, driver, sender, settings, server.metrics
                    )

                try:
                    _search(report, space, prepare, measure, progress)
                finally:
                    driver.close()
                    sender.close()
        except KeyboardInterrupt as exc:
            report.search.interrupted = True
            report.signal = exc.signum if isinstance(exc, Terminated) else signal.SIGINT
    return report


def tune_local(
    model_dir: Path,
    config: Any,
    settings: Settings,
    space: Space,
    mode: SearchMode,
    progress: Progress,
) -> TuneReport:
    """Tune ``model_dir`` (already checked) on a private local Triton in a temp dir; integer
    inputs are drawn within what its ONNX graph accepts."""
    from infra.perf.tune.server import LocalTriton
    from packager.onnx_signature import model_input_ranges

    @contextmanager
    def open_server() -> Iterator[TuneServer]:
        with (
            tempfile.TemporaryDirectory(prefix="tdk-tune-") as work,
            LocalTriton(model_dir, Path(work), settings.placement.server) as triton,
        ):
            yield triton

    ranges = model_input_ranges(model_dir, config)
    return run_tune(open_server, config, settings, space, mode, progress, ranges=ranges)


def tune_remote(
    url: str,
    model: str,
    settings: Settings,
    space: Space,
    mode: SearchMode,
    progress: Progress,
    metrics_url: str | None = None,
    headers: tuple[tuple[str, str], ...] = (),
) -> TuneReport:
    """Tune ``model`` on the user's Triton at ``url`` (``headers`` sent with each call to its
    repository and config APIs); its config is restored afterwards."""
    from infra.perf.tune.remote import RemoteTriton

    remote = RemoteTriton(url, model, metrics_url, headers)
    remote.refuse_unfinished()
    original = remote.fetch_config()
    return run_tune(lambda: remote, original, settings, space, mode, progress, url)


def restore_remote(url: str, model: str, headers: tuple[tuple[str, str], ...] = ()) -> None:
    """Load the config a killed ``tdk tune --url`` recorded before its first change."""
    from infra.perf.tune.remote import RemoteTriton

    RemoteTriton(url, model, headers=headers).restore_recorded()


def _search(
    report: TuneReport,
    space: Space,
    prepare: Callable[[Knobs], None],
    measure: Callable[[Knobs, int], Point],
    progress: Progress,
) -> None:
    search = report.search
    shipped = Search(report.settings)
    try:
        sweep(shipped, report.shipped, prepare, measure, early_stop=False)
        probe_drift(shipped, measure)
        search.drift = shipped.drift
        if report.mode is SearchMode.full:
            full_search(search, space, prepare, measure, progress)
        else:
            quick_search(search, space, report.shipped, prepare, measure, progress)
        if shipped.again:
            # once more after the search: the choice is compared with a point measured minutes
            # before it, so the drift must span the search too
            prepare(report.shipped)
            probe_drift(shipped, measure, times=1)
            carry_drift(search, shipped.drift)
        _settle(report, shipped, prepare, measure)
    finally:
        report.shipped_best = typical(shipped)
        report.shipped_points = list(shipped.points)
        report.repeats = list(shipped.again)


def _settle(
    report: TuneReport,
    shipped: Search,
    prepare: Callable[[Knobs], None],
    measure: Callable[[Knobs, int], Point],
) -> None:
    """The best candidate beat the shipped config inside the noise: a duel decides (with
    ``settings.pairs``; the shipped config is loaded when its drift was measured last)."""
    search, found, kept = report.search, report.search.best(), typical(shipped)
    if found is None or kept is None or report.settings.pairs < 1:
        return
    if found.knobs.canonical() == report.shipped.canonical():
        return
    if not inside_noise(found, kept, KEEP_MARGIN):
        return
    loaded = report.shipped if shipped.again else None
    filed = (shipped.points, search.points)
    final = duel(search, kept, found, prepare, measure, loaded, KEEP_MARGIN, filed)
    # the climb may have duelled the same two configs: one comparison, one result of all its
    # pairs ("won 1 of 1" in the climb, then "won 0 of 1" at the end, said both)
    for earlier in [d for d in search.duels if d.same(kept.knobs, found.knobs)]:
        search.duels.remove(earlier)
        if earlier.said in search.notes:
            search.notes.remove(earlier.said)
        final = earlier.then(final)
    report.duel = final


def open_driver(factory: Any, settings: Settings, sender: Any) -> Driver:
    """``settings.processes`` generator processes, or this process's threads for one."""
    if settings.processes > 1:
        return Processes(factory, settings.processes, settings.placement.client)
    return InProcess(sender, settings.placement.client)


def instance_falls(points: list[Point], fits: Callable[[Point], bool]) -> list[str]:
    """Notes for configs where more instances served less than fewer on one GPU: separate
    processes (Triton's Python backend runs one per instance) time-slice the GPU."""
    best: dict[Knobs, Point] = {}
    for point in points:
        if fits(point) and (
            point.knobs not in best or point.throughput_rps > best[point.knobs].throughput_rps
        ):
            best[point.knobs] = point
    notes = []
    for knobs, point in sorted(best.items()):
        fewer = [
            other
            for other_knobs, other in best.items()
            if replace(other_knobs, instances=knobs.instances) == knobs
            and other_knobs.instances < knobs.instances
            and beats(other, point, 1.0)
        ]
        for other in fewer:
            notes.append(
                f"{knobs.instances} instances served {point.throughput_rps:.1f} rps against "
                f"{other.throughput_rps:.1f} for {other.knobs.instances} ({knobs.label()}): "
                "instances on one GPU are separate processes for the Python backend (one per "
                "instance), and separate processes time-slice a GPU rather than share it"
            )
    return notes
