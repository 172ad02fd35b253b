"""How a serving unit holds a release's models, checked on the one feasibility path.

A unit that loads every model at start (a Kubernetes pod in ``all`` mode) needs the whole
release to fit its memory; one that loads each copy on its first request and unloads the least
recently used (a pod in ``mme`` mode, SageMaker's multi-model semantics) needs each copy to be
loadable alone, and its memory budget says how many copies of each model it holds at once.
The unit says which it is (``TargetSpec.loading``, the target's words for the switch
included); this module never names a target.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from infra.facts.hardware import GIB, MIB
from infra.targets.fit import Fit
from infra.values.offer import ModelLoading, TargetSpec
from packager.repository import ModelDir
from packager.validate.findings import Finding, finding

RELEASE_EXCEEDS_UNIT = "TDK919"
STEPS_NOT_IN_RELEASE = "TDK920"


def loading_findings(
    spec: TargetSpec, models: Sequence[ModelDir], fits: Sequence[Fit], copies: int
) -> tuple[list[Finding], list[Fit]]:
    """The findings of ``spec``'s way of loading for the release's ``models`` (each packaged
    ``copies`` times), and the fits as that way holds them (on demand: the copies of each
    model the budget holds at once)."""
    loading = spec.loading
    if loading is None:
        return [], list(fits)
    if loading.on_demand:
        return _steps_not_in_release(models), [_on_budget(fit, loading) for fit in fits]
    return _release_exceeds(spec, loading, models, fits, copies), list(fits)


def _on_budget(fit: Fit, loading: ModelLoading) -> Fit:
    if fit.weights_from:  # an engine model: its own replica sizing stands
        return fit
    return replace(fit, gpu_copies=loading.budget_bytes // max(fit.weight_bytes, 1))


def _release_exceeds(
    spec: TargetSpec,
    loading: ModelLoading,
    models: Sequence[ModelDir],
    fits: Sequence[Fit],
    copies: int,
) -> list[Finding]:
    """TDK919 when every copy of every model, loaded at start, exceeds the unit's budget."""
    composing = {name for fit in fits for name in fit.composing}
    own = [fit for fit in fits if fit.model not in composing]  # an ensemble counts its steps
    total = sum(fit.weight_bytes for fit in own) * copies
    if not own or total <= loading.budget_bytes:
        return []
    where = models[0].config_path if models else ""
    return [
        finding(
            RELEASE_EXCEEDS_UNIT, where, "release",
            f"{len(own)} model(s) x {copies} cop{'y' if copies == 1 else 'ies'} take "
            f"{_size(total)} loaded at once; one serving unit ({spec.label}) holds "
            f"{_size(loading.budget_bytes)} and {loading.mode} loads every model at start",
            f"{loading.switch} (each copy loads on its first request, the least recently used "
            "idle one is unloaded), or a unit with more memory",
        )
    ]  # fmt: skip


def _size(size: int) -> str:
    return f"{size / GIB:.1f} GiB" if size >= GIB else f"{size / MIB:.1f} MiB"


def _steps_not_in_release(models: Sequence[ModelDir]) -> list[Finding]:
    """TDK920 for an ensemble whose steps are not in the release: loaded copy by copy, its
    steps must be there to load with it."""
    names = {model.name for model in models}
    found = []
    for model in models:
        steps = sorted({s.model_name for s in model.config.ensemble_scheduling.step} - names)
        if steps:
            found.append(
                finding(
                    STEPS_NOT_IN_RELEASE, model.config_path, "ensemble_scheduling.step",
                    f"ensemble {model.name} runs {', '.join(steps)}, which the release does not "
                    "hold: loaded on its first request, it cannot load its steps with it",
                    "package the steps with the ensemble (tdk package with their repository)",
                    model.name,
                )
            )  # fmt: skip
    return found
