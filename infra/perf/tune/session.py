"""``tdk tune``'s library calls, each taking what the one before gave: ``prepare`` checks a
``TuneRequest`` (every option, input and output path, before anything is measured), ``run``
searches on the local or the user's Triton, ``keep`` writes the choice and draws the plot
where asked. The command only parses its options into the request and prints (``cli/tune.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from infra.perf.tune.request import TuneRequest, settings_and_space
from infra.perf.tune.search import Progress, Settings
from infra.perf.tune.space import Space
from tdk.errors import UsageError

if TYPE_CHECKING:  # the search and its load generation load when a tune runs, not at start-up
    from infra.perf.tune.tuneio import Written
    from infra.perf.tune.tuner import SearchMode, TuneReport


@dataclass(frozen=True)
class Prepared:
    """A checked request: what the search measures, and the model's config (None: a model
    named by ``--url`` and ``--model`` alone)."""

    request: TuneRequest
    settings: Settings
    space: Space
    config: Any
    #: sent with each call to the user's Triton (``--header-file``)
    headers: tuple[tuple[str, str], ...] = ()

    @property
    def mode(self) -> SearchMode:
        from infra.perf.tune.tuner import SearchMode

        return SearchMode(self.request.search)

    def describe(self) -> str:
        """What the search will measure, said before it starts."""
        settings = self.settings
        what = (
            "full: every config of the grid"
            if self.request.search == "full"
            else "quick: a hill climb from the shipped config, measuring only the configs it visits"
        )
        levels = ",".join(str(c) for c in settings.concurrency)
        return (
            f"tune: {what}; each at concurrency {levels}, in {settings.duration_s:g} s windows "
            f"until the last 3 agree within {settings.stability.percentage:g}% "
            f"(at most {settings.stability.max_windows}), {settings.processes} generator "
            f"process(es); the shipped best measured {settings.repeats} more time(s) to learn "
            f"the drift; a gain inside the noise settled by {settings.pairs} back-to-back "
            f"pair(s); {settings.placement.label()}"
        )


def prepare(request: TuneRequest) -> Prepared:
    """Every option, input and path of ``request`` checked (a UsageError names the first
    wrong one), before anything starts."""
    from infra.perf.tune.tuneio import check_out, check_write, read_model
    from infra.perf.tune.tuner import model_of, requests_for

    settings, space = settings_and_space(request)
    model_dir, out_dir, write = request.model_dir, request.out_dir, request.write
    if write and out_dir is not None:
        raise UsageError("--write and --out both given", hint="choose one")
    if model_dir is None and (request.url is None or request.model is None):
        raise UsageError(
            "give MODEL_DIR, or --url with --model", hint="e.g. tdk tune --url URL --model bert"
        )
    if model_dir is None and (write or out_dir is not None):
        raise UsageError("--write and --out need MODEL_DIR", hint="give the model's directory")
    headers = _headers(request)
    config = read_model(model_dir) if model_dir is not None else None
    if out_dir is not None and model_dir is not None:
        check_out(model_dir, out_dir)
    if write and model_dir is not None:
        check_write(model_dir)
    if config is not None:  # every --input and sample names an input of the model and parses
        requests_for(model_of(config), settings)
    return Prepared(request, settings, space, config, headers)


def _headers(request: TuneRequest) -> tuple[tuple[str, str], ...]:
    """What ``--header-file`` holds (the key of the user's Triton's restricted APIs)."""
    from infra.clients.header_file import read_header_file

    if request.header_file is None:
        return ()
    if request.url is None:
        raise UsageError("--header-file needs --url", hint="it is sent to the Triton at --url")
    return read_header_file(request.header_file)


def run(prepared: Prepared, progress: Progress) -> TuneReport:
    """The search on the user's Triton (``--url``) or on a private local one."""
    from infra.perf.tune.tuner import tune_local, tune_remote

    r, settings, space, config = (
        prepared.request,
        prepared.settings,
        prepared.space,
        prepared.config,
    )
    if r.url is not None:
        name = r.model or str(config.name if config is not None else "")
        return tune_remote(
            r.url, name, settings, space, prepared.mode, progress, r.metrics_url, prepared.headers
        )
    assert r.model_dir is not None and config is not None
    return tune_local(r.model_dir, config, settings, space, prepared.mode, progress)


def keep(prepared: Prepared, report: TuneReport) -> Written | None:
    """The choice written where asked (``--write``, ``--out``) when it beats the shipped config
    and the search ran to its end; the plot drawn (``--plot``)."""
    from infra.perf.tune.tuneio import write_tuned
    from packager.config import CONFIG_NAME, load_config

    r, choice = prepared.request, report.choice
    written = None
    wanted = (r.write or r.out_dir is not None) and not report.search.interrupted
    if wanted and report.improves and choice is not None and r.model_dir is not None:
        from infra.perf.tune.space import apply_knobs

        tuned = apply_knobs(load_config(r.model_dir / CONFIG_NAME), choice.knobs)
        written = write_tuned(r.model_dir, tuned, None if r.write else r.out_dir)
    if r.plot is not None:
        from infra.perf.tune.plot import tune_plot

        tune_plot(report, r.plot)
    return written


def restore(request: TuneRequest) -> None:
    """``--restore``: load the config a killed ``tdk tune --url`` recorded on that server."""
    from infra.perf.tune.tuner import restore_remote

    if request.url is None or request.model is None:
        raise UsageError("--restore needs --url and --model", hint="the server and model tuned")
    restore_remote(request.url, request.model, _headers(request))
