"""``tdk local check``: load every model of a release once on the local runtime.

The same fetch, verify, extract and load path as the endpoint, without the HTTP front, so a CI
pipeline catches what static validation cannot (an ``initialize`` that raises, a model file
that does not match its config) before ``pulumi up``.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from infra.targets.local.errors import ApiError
from infra.targets.local.manager import ModelManager
from infra.targets.local.options import EndpointOptions
from infra.triton_runtime.runtime import find_runtime
from tdk.signals import terminations_interrupt


@dataclass(frozen=True)
class CheckResult:
    target_model: str
    model: str
    backend: str
    ok: bool
    seconds: float
    error: str = ""


async def _check(
    settings: EndpointOptions, report: Callable[[CheckResult], None]
) -> list[CheckResult]:
    manager = ModelManager(settings, find_runtime())
    await manager.start()
    results: list[CheckResult] = []
    try:
        for state in manager.models.values():
            entry = state.entry
            started = time.monotonic()
            error = ""
            try:
                manager.release(await manager.acquire(entry.target_model))
            except ApiError as exc:
                error = exc.original_message or exc.message
            result = CheckResult(
                entry.target_model,
                entry.name,
                entry.backend,
                not error,
                time.monotonic() - started,
                error,
            )
            results.append(result)
            report(result)
    finally:
        await manager.stop()
    return results


def check_release(
    release: str,
    store_endpoint_url: str | None = None,
    report: Callable[[CheckResult], None] = lambda _: None,
) -> list[CheckResult]:
    """Load each model of the release (one at a time) and report how each went."""
    find_runtime()  # a missing runtime is a clear error before anything is fetched
    workdir = Path(tempfile.mkdtemp(prefix="tdk-check-"))
    settings = EndpointOptions(
        release=release,
        workdir=str(workdir),
        name="check",
        max_loaded=1,
        store_endpoint_url=store_endpoint_url,
    )
    try:
        with terminations_interrupt():  # SIGTERM/SIGHUP stop Triton and remove workdir too
            return asyncio.run(_check(settings, report))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
