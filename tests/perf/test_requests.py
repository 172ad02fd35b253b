"""The library takes the request (issue 39 item 4): ``tdk tune``, ``tdk bench`` and ``tdk plan``
build one request from their options and hand it to ``infra.perf``, which checks it; these
call the library with a request directly, no command in between."""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from infra.perf.bench.genrequest import GenRequest
from infra.perf.bench.request import LOAD, Arrival, LoadRequest, tensor_load
from infra.perf.plan.request import PlanRequest
from infra.perf.tune import session
from infra.perf.tune.request import TuneRequest
from tdk.errors import UsageError


def _defaults(kind: type[Any], **given: Any) -> Any:
    """A request with every field None (or False), then ``given``."""
    empty = {f.name: None for f in dataclasses.fields(kind)}
    return kind(**{**empty, **given})


def _tune(**given: Any) -> TuneRequest:
    base = {"search": "quick", "write": False, "accelerators": "auto", "server_cpus": "auto",
            "client_cpus": "auto", "restore": False, "inputs": (), "json": False}  # fmt: skip
    return _defaults(TuneRequest, **{**base, **given})


def test_tune_prepare_checks_the_request_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--latency-budget-ms is required"):
        session.prepare(_tune(model_dir=tmp_path))
    with pytest.raises(UsageError, match="--write and --out both given"):
        session.prepare(_tune(latency_budget_ms=50.0, model_dir=tmp_path, write=True,
                              out_dir=tmp_path / "out"))  # fmt: skip
    with pytest.raises(UsageError, match="give MODEL_DIR, or --url with --model"):
        session.prepare(_tune(latency_budget_ms=50.0))
    with pytest.raises(UsageError, match="--restore needs --url and --model"):
        session.restore(_tune(restore=True, url="http://127.0.0.1:1"))


def test_tune_prepared_says_what_it_will_measure(sample_repo: Path) -> None:
    request = _tune(latency_budget_ms=50.0, model_dir=sample_repo / "image_classifier",
                    concurrency="1,2", repeats=2)  # fmt: skip
    prepared = session.prepare(request)
    assert prepared.settings.concurrency == (1, 2) and prepared.settings.repeats == 2
    assert prepared.config is not None and prepared.mode.value == "quick"
    said = prepared.describe()
    assert said.startswith("tune: quick: a hill climb") and "concurrency 1,2" in said


def test_bench_load_is_read_from_the_request() -> None:
    load = tensor_load(LoadRequest(concurrency="4,1", duration=0.5, arrival=Arrival.poisson))
    assert load.concurrency == (4, 1) and load.duration_s == 0.5 and load.poisson
    assert tensor_load(LoadRequest()).concurrency == LOAD.concurrency
    with pytest.raises(UsageError, match="--concurrency '0,2': expected positive integers"):
        tensor_load(LoadRequest(concurrency="0,2"))
    assert GenRequest(prompt="hi").generates and not GenRequest().generates


def test_plan_request_reads_its_numbers_exactly() -> None:
    request = _defaults(PlanRequest, safety_factor="0.5", peak_rps="1e2", slo_ms=None)
    assert request.safety == Decimal("0.5") and request.peak == Decimal(100)
    assert request.budget_ms is None
    with pytest.raises(UsageError, match="--safety-factor"):
        _ = _defaults(PlanRequest, safety_factor="half").safety
