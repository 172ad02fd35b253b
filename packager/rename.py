"""Lay out N uniquely renamed copies of a release: directory, ``name:`` and ensemble steps.

Copy ``i`` of a model is named from a template (default ``{model}-{i}``). An ensemble copy
carries its composing models inside its archive (SageMaker MME loads one archive per
TargetModel), renamed ``<ensemble copy>.<composing model>`` so that no two archives ever hold
the same Triton model name; with ``share_composing`` they keep their source names instead and
every ensemble copy uses the one shared copy.
"""

from __future__ import annotations

import copy as copylib
import re
import string
from dataclasses import dataclass
from typing import Any

from packager.engines import with_engine_metrics
from packager.names import MAX_NAME_LENGTH, name_problem
from packager.repository import ModelDir
from tdk.errors import UsageError, ValidationFailed
from tdk.text import as_text

DEFAULT_TEMPLATE = "{model}-{i}"


@dataclass(frozen=True)
class Member:
    """One Triton model inside a copy's archive: its new name, source and rewritten config."""

    name: str
    source: ModelDir
    config: Any  # inference.ModelConfig with name and ensemble steps rewritten


@dataclass(frozen=True)
class CopyLayout:
    """One TargetModel of the release: the served model and everything its archive holds."""

    name: str
    source: ModelDir
    index: int
    members: tuple[Member, ...]  # composing models first, the served model last

    @property
    def target_model(self) -> str:
        return f"{self.name}.tar.gz"

    @property
    def served(self) -> Member:
        return self.members[-1]


def _parse_template(template: str) -> list[tuple[str, str]]:
    """(field, format spec) of each replacement field; UsageError when the template is not a
    format string or a spec could make a name longer than any valid one (``{i:>999999999}``
    formats gigabytes before a length check could refuse it)."""
    hint = 'use "{model}" and "{i}", e.g. "{model}-{i}" (write a literal brace as {{ or }})'
    try:
        parsed = [
            (n, spec or "") for _, n, spec, _ in string.Formatter().parse(template) if n is not None
        ]
    except ValueError as exc:
        raise UsageError(f"--name-template {template!r}: {exc}", hint=hint) from None
    for name, spec in parsed:
        if "{" in spec:
            raise UsageError(
                f"--name-template {template!r}: {{{name}}} nests a field in its format", hint=hint
            )
        if any(int(run) > MAX_NAME_LENGTH for run in re.findall(r"\d+", spec)):
            raise UsageError(
                f"--name-template {template!r}: the format of {{{name}}} ({spec!r}) would "
                f"make names longer than {MAX_NAME_LENGTH} characters",
                hint=hint,
            )
    return parsed


def check_template(template: str) -> None:
    """The template must use ``{i}`` (or copies collide) and only ``{model}`` / ``{i}``."""
    fields = {name for name, _ in _parse_template(template)}
    unknown = fields - {"model", "i"}
    if unknown or "i" not in fields:
        raise UsageError(
            f"--name-template {template!r}: "
            + (
                f"unknown field(s) {as_text(sorted(unknown))}"
                if unknown
                else "has no {i}, so copies collide"
            ),
            hint='use "{model}" and "{i}", e.g. "{model}-{i}"',
        )


def lay_out_copies(
    models: list[ModelDir],
    copies: int,
    template: str = DEFAULT_TEMPLATE,
    share_composing: bool = False,
) -> list[CopyLayout]:
    """``copies`` copies of every model; raises ValidationFailed on bad or colliding names."""
    if copies < 1:
        raise UsageError(f"--copies {copies}: must be at least 1", hint="use --copies 1 or more")
    check_template(template)
    by_name = {model.name: model for model in models}
    layouts = [
        _lay_out_one(model, index, template, by_name, share_composing)
        for model in models
        for index in range(copies)
    ]
    _refuse_collisions(layouts)
    return layouts


def _lay_out_one(
    model: ModelDir,
    index: int,
    template: str,
    by_name: dict[str, ModelDir],
    share_composing: bool,
) -> CopyLayout:
    try:
        name = template.format(model=model.name, i=index)
    except (ValueError, TypeError) as exc:  # a format that does not fit: {model:d}, {i:s}
        raise UsageError(
            f"--name-template {template!r}: {exc}",
            hint='use "{model}" and "{i}", e.g. "{model}-{i}" or "{model}-{i:03d}"',
        ) from None
    members: list[Member] = []
    if model.is_ensemble:
        renames = {}
        for composing in _composing(model, by_name):
            new = composing.name if share_composing else f"{name}.{composing.name}"
            renames[composing.name] = new
            members.append(Member(new, composing, _renamed(composing.config, new, {})))
        served = Member(name, model, _renamed(model.config, name, renames))
    else:
        served = Member(name, model, _renamed(model.config, name, {}))
    return CopyLayout(name=name, source=model, index=index, members=(*members, served))


def _composing(ensemble: ModelDir, by_name: dict[str, ModelDir]) -> list[ModelDir]:
    """Composing models of ``ensemble``, nested ensembles expanded, dependencies first.

    An iterative depth-first walk that visits each model once: linear in the steps, however
    deep the nesting or however often a model is reused.
    """
    ordered: dict[str, ModelDir] = {}
    trail = [ensemble.name]  # the ensembles being expanded, outermost first
    work = [(ensemble, _step_names(ensemble))]
    while work:
        model, pending = work[-1]
        if not pending:
            work.pop()
            trail.pop()
            if work:
                ordered.setdefault(model.name, model)
            continue
        name = pending.pop(0)
        if name in trail:
            raise UsageError(
                f"{model.config_path}: ensemble_scheduling.step model_name "
                f"{name!r} forms a cycle ({' -> '.join((*trail, name))})",
                hint="remove the cycle; run `tdk validate` for details",
            )
        target = by_name.get(name)
        if target is None:
            raise UsageError(
                f"{model.config_path}: ensemble_scheduling.step model_name "
                f"{name!r} is not in the repositories given",
                hint="add the repository that holds it to the command line",
            )
        if name in ordered:
            continue
        if target.is_ensemble:
            trail.append(name)
            work.append((target, _step_names(target)))
        else:
            ordered[name] = target
    return list(ordered.values())


def _step_names(model: ModelDir) -> list[str]:
    return list(dict.fromkeys(step.model_name for step in model.config.ensemble_scheduling.step))


def _renamed(config: Any, name: str, renames: dict[str, str]) -> Any:
    """A copy of ``config`` with ``name`` set and ensemble step references rewritten."""
    new = copylib.deepcopy(config)
    new.name = name
    with_engine_metrics(new)  # KEDA scales vLLM on the metrics this turns on
    for step in new.ensemble_scheduling.step:
        step.model_name = renames.get(step.model_name, step.model_name)
    return new


def _refuse_collisions(layouts: list[CopyLayout]) -> None:
    """Each Triton name must be one model: same name twice is an error unless it is shared."""
    from packager.validate.findings import Finding

    seen: dict[str, Member] = {}
    findings: list[Finding] = []
    for layout in layouts:
        for member in layout.members:
            problem = name_problem(member.name)
            if problem:
                findings.append(
                    Finding(
                        file=str(member.source.config_path),
                        field="name",
                        message=f"copy name {member.name!r} {problem}",
                        fix="rename the model or change --name-template",
                        model=member.source.name,
                    )
                )
            previous = seen.setdefault(member.name, member)
            if previous.source.path != member.source.path:
                findings.append(
                    Finding(
                        file=str(member.source.config_path),
                        field="name",
                        message=f"copy name {member.name!r} is also produced by "
                        f"{previous.source.config_path}",
                        fix="choose a --name-template that keeps copies of different models apart",
                        model=member.source.name,
                    )
                )
    if findings:
        raise ValidationFailed(
            f"{len(findings)} naming problem(s) in the copies to publish",
            findings,
            hint="fix the names above; nothing was published",
        )
