"""``tdk bench``'s tensor measurement as library calls on an opened client: ``prepare`` builds
the requests a ``BenchRequest`` asks for (example inputs or ``--samples``, ``--input`` /
``--text`` replacing tensors) and how each load thread gets a client, ``run`` measures
(``infra.perf.bench.measure.run_bench``). Locating and opening the target is the command's
(``infra.targets.deployment.open_deployment``): the planner never imports the targets."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from infra.clients.base import InferenceTarget, PreparedRequest
from infra.clients.triton_http import TritonHttpTarget
from infra.perf.bench.measure import Load, RunsOn
from infra.perf.bench.request import BenchRequest
from packager.manifest import ManifestModel


@dataclass(frozen=True)
class Prepared:
    """What one tensor bench sends, to whom, at which load, recorded as running on what."""

    model: ManifestModel
    make: Callable[[], InferenceTarget]
    request: PreparedRequest
    more: tuple[PreparedRequest, ...]
    load: Load
    runs_on: RunsOn
    rows: int  # inferences per request

    @property
    def steps(self) -> int:
        """Progress steps: the cold/warm probe, then each level (one for an open loop)."""
        return 1 + (1 if self.load.rate is not None else len(self.load.concurrency))


def prepare(
    request: BenchRequest, load: Load, client: InferenceTarget, located: tuple[str, ManifestModel]
) -> Prepared:
    """The requests ``request`` asks for, prepared by ``client``, for the model of the target
    ``located`` (its name, the manifest's model); an HTTP Triton gets a connection per load
    thread (and ``--processes``), a boto3 client is shared (thread-safe, pooled)."""
    target, model = located
    # example inputs (or --samples), any tensor given with --input / --text replacing its own
    every = _requests(model, request)
    binary = not request.json_body
    first = client.prepare(model, every[0], binary=binary)
    more = tuple(client.prepare(model, one, binary=binary) for one in every[1:])
    make: Callable[[], InferenceTarget]
    if isinstance(client, TritonHttpTarget):  # one keep-alive connection per thread
        make = partial(TritonHttpTarget, client.url, request.grpc, request.timeout)
        load = replace(load, processes=request.processes)  # each process its own connections
    else:
        make = partial(_same, client)
    runs_on = RunsOn(target, request.instance_type, request.gpu)
    rows = _rows(model.max_batch_size, every[0])
    return Prepared(model, make, first, more, load, runs_on, rows)


def run(prepared: Prepared, progress: Callable[[int], None]) -> dict[str, Any]:
    """The ``tdk bench --json`` record of ``prepared`` (``progress(1)`` after each step)."""
    from infra.perf.bench.measure import run_bench

    p = prepared
    return run_bench(p.make, p.model, p.request, p.load, p.runs_on, p.rows, progress, p.more)


def _requests(model: ManifestModel, request: BenchRequest) -> list[dict[str, Any]]:
    """What bench sends, in turn: the sample requests or the example inputs (at ``--batch``),
    each with the tensors --input / --text give replacing theirs."""
    from infra.clients.inputs import example_inputs, sample_requests, with_overrides

    r = request
    if r.samples is None:
        return [with_overrides(model, example_inputs(model, r.batch), list(r.inputs), r.text)]
    return [
        with_overrides(model, s, list(r.inputs), r.text)
        for s in sample_requests(model, r.samples, r.batch)
    ]


def _rows(max_batch_size: int, arrays: dict[str, Any]) -> int:
    """Inferences per request: the batch dimension of the inputs (1 for a model without one)."""
    if max_batch_size <= 0 or not arrays:
        return 1
    return int(next(iter(arrays.values())).shape[0])


def _same(client: InferenceTarget) -> InferenceTarget:
    return client
