"""Run a tune end to end on the local Triton, and write the tuned config where it was asked.

The shipped configuration is measured in the same run as the search, so "tuned vs shipped" is
a like-for-like ratio. Ctrl-C ends the search, not the report: what was measured is kept, the
best so far is reported, and Triton is stopped on the way out.
"""

from __future__ import annotations

import difflib
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from infra.perf.space import Knobs, Space, apply_knobs, shipped_knobs
from infra.perf.tune import (
    Point,
    Progress,
    Search,
    Settings,
    full_search,
    measure_with,
    pareto_front,
    quick_search,
    sweep,
)
from packager.config import CONFIG_NAME, backend_of, datatype_name, dump_config, load_config
from packager.manifest import ManifestModel, TensorSpec
from tdk.errors import UsageError, ValidationFailed


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
    shipped_best: Point | None = None
    shipped_points: list[Point] = field(default_factory=list)

    @property
    def choice(self) -> Point | None:
        return self.search.best()

    @property
    def front(self) -> list[Point]:
        return pareto_front(self.search.points)

    @property
    def measurements(self) -> int:
        return len(self.search.points)

    def to_dict(self) -> dict[str, Any]:
        choice, shipped = self.choice, self.shipped_best
        return {
            "target": "local",
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
            "speedup": round(choice.throughput_rps / shipped.throughput_rps, 3)
            if choice and shipped and shipped.throughput_rps
            else None,
            "pareto_front": [p.to_dict() for p in self.front],
            "points": [p.to_dict() for p in self.search.points],
        }


def model_of(config: Any) -> ManifestModel:
    """A manifest entry describing ``config``'s signature, to encode requests for it."""

    def specs(tensors: Any) -> tuple[TensorSpec, ...]:
        return tuple(
            TensorSpec(t.name, datatype_name(t.data_type), tuple(int(d) for d in t.dims))
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


def run_tune(
    model_dir: Path,
    settings: Settings,
    space: Space,
    mode: SearchMode,
    progress: Progress,
    measure_shipped: bool = True,
) -> TuneReport:
    """Measure the shipped config, then search; Ctrl-C returns what was measured so far."""
    from infra.clients.inputs import example_inputs
    from infra.perf.server import LocalTriton, PerThreadSender

    config = _read(model_dir)
    space.check()
    space = space.for_model(int(config.max_batch_size))
    shipped = shipped_knobs(config)
    report = TuneReport(str(config.name), mode, settings, shipped, Search(settings))
    with (
        tempfile.TemporaryDirectory(prefix="tdk-tune-") as work,
        LocalTriton(model_dir, Path(work)) as triton,
    ):
        model = model_of(triton.base_config)
        sender = PerThreadSender(triton.url, model, example_inputs(model, 1))

        def prepare(knobs: Knobs) -> None:
            sender.close()
            triton.load(apply_knobs(triton.base_config, knobs))

        measure = measure_with(lambda knobs: sender, settings)
        try:
            _search(report, space, prepare, measure, progress, measure_shipped)
        except KeyboardInterrupt:
            report.search.interrupted = True
        finally:
            sender.close()
    return report


def _search(
    report: TuneReport,
    space: Space,
    prepare: Callable[[Knobs], None],
    measure: Callable[[Knobs, int], Point],
    progress: Progress,
    measure_shipped: bool,
) -> None:
    search = report.search
    if measure_shipped:
        shipped = Search(report.settings)
        sweep(shipped, report.shipped, prepare, measure, early_stop=False)
        report.shipped_best = shipped.best()
        report.shipped_points = list(shipped.points)
    if report.mode is SearchMode.full:
        full_search(search, space, prepare, measure, progress)
    else:
        quick_search(search, space, report.shipped, prepare, measure, progress)


def _read(model_dir: Path) -> Any:
    path = model_dir / CONFIG_NAME
    if not path.is_file():
        raise UsageError(
            f"{model_dir}: no {CONFIG_NAME} (tdk tune takes one model directory)",
            hint="e.g. tdk tune model_repos/samples/image_classifier --latency-budget-ms 50",
        )
    return load_config(path)


@dataclass(frozen=True)
class Written:
    """Where the tuned config went and the diff of its ``config.pbtxt``."""

    path: Path
    diff: str


def write_tuned(model_dir: Path, knobs: Knobs, out: Path | None) -> Written:
    """The model with ``knobs`` applied: a new model directory ``out/<model>`` (a repository
    Triton can load), or ``model_dir`` in place (``out`` None). The result is validated with
    ``tdk validate``'s rules before it lands."""
    from packager.validate.runner import require_valid

    config_path = model_dir / CONFIG_NAME
    before = config_path.read_text(encoding="utf-8")
    tuned = apply_knobs(load_config(config_path), knobs)
    after = dump_config(tuned)
    destination = out / model_dir.name if out is not None else model_dir
    if out is not None and destination.exists():
        raise UsageError(
            f"--out: {destination} already exists", hint="choose another --out or pass --write"
        )
    destination.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".tdk-tune-", dir=destination.parent))
    try:
        candidate = staging / model_dir.name
        shutil.copytree(model_dir, candidate, symlinks=True)
        (candidate / CONFIG_NAME).write_text(after, encoding="utf-8")
        try:
            require_valid([candidate])
        except ValidationFailed as exc:
            raise ValidationFailed(
                f"the tuned config for {model_dir} does not validate; nothing was written:\n"
                f"{exc.message}",
                exc.findings,
                hint="narrow the search space (e.g. --max-batch-sizes) to what the model allows",
            ) from exc
        if out is None:
            os.replace(candidate / CONFIG_NAME, config_path)
        else:
            candidate.rename(destination)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    diff = "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            str(config_path),
            str(destination / CONFIG_NAME),
        )
    )
    return Written(destination, diff)
