"""Whether a (stack config, models) pair can deploy: the one feasibility path.

``tdk validate --target/--stack``, ``tdk plan``, ``tdk doctor`` and the Pulumi program all ask
``feasible`` (SkyPilot's lesson: one ``get_feasible_launchable_resources`` serves launch and
the optimiser alike). In order: the target's own config parsing (refusals, name rules, value
checks: ``Target.read_config``), its capacity (``Target.capacity``), what one serving unit
offers (``Target.offer``) against each model (the image's backends, disk, GPU memory, the
working set of ``copies``: ``checks.check_target``, ``checks.working_set``), each model's
placement needs (``packager.requirements``: GPUs per replica, GPU memory fractions,
decoupled), and the LLM engines' files against the image's vLLM / TensorRT-LLM
(``engine_files``). Every refusal is a finding with a reason and a fix. ``validate --target X
--instance-type Y`` builds a stack from its flags (``flag_stack``) over the project's
``Pulumi.yaml`` defaults and takes the same path.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from infra.facts import llm
from infra.targets.base import Shortfall
from infra.targets.capabilities import DECOUPLED, LLM_ENGINES
from infra.targets.checks import TargetSpec, check_target, working_set
from infra.targets.engine_driver import driver_findings
from infra.targets.entry import TargetEntry
from infra.targets.fit import Fit
from infra.targets.loading import RELEASE_EXCEEDS_UNIT, loading_findings
from infra.targets.ports import PlanUnit, ValidatePort
from infra.targets.registry import able, plan_port, validate_port
from infra.targets.stacks import StackSettings, settings
from packager.repository import ModelDir
from packager.requirements import Requirements, requirements
from packager.validate.engines.args import VllmImage
from packager.validate.findings import Finding, finding, has_errors
from packager.validate.runner import image_findings
from tdk.errors import ConfigError, TdkError, UsageError

WEIGHTS_EXCEED_GPU = "TDK904"  # packager/validate/rules.py: one model larger than the unit
STACK_REFUSED = "TDK910"
CAPACITY_AT_CREATION = "TDK911"
CAPACITY_AT_MAXIMUM = "TDK912"
GPUS_PER_REPLICA = "TDK913"
GPU_MEMORY_FRACTIONS = "TDK914"
DECOUPLED_REFUSED = "TDK915"
ENGINE_REFUSED = "TDK916"
#: what every stack built from flags sets that ``Pulumi.yaml`` leaves to the user (never
#: deployed: a flag stack only answers whether the models fit)
FLAG_PLACEHOLDERS = {"alertEmail": "tdk-validate@example.com"}


@dataclass(frozen=True)
class Feasibility:
    """The answer for one stack: its findings (errors refuse it), the working set each model
    allows, and what one serving unit offers (None when the config itself was refused)."""

    stack: str
    target: str
    findings: list[Finding]
    fits: list[Fit] = field(default_factory=list)
    spec: TargetSpec | None = None

    @property
    def ok(self) -> bool:
        return not has_errors(self.findings)

    def first_refusal(self) -> Finding | None:
        return next((f for f in self.findings if f.severity == "error"), None)


def feasible(
    stack: StackSettings,
    models: Sequence[ModelDir] | None = None,
    trt_built_for: str = "",
    where: str = "",
    copies: int = 1,
) -> Feasibility:
    """Whether ``stack`` can deploy ``models`` (None: the models the stack itself names, its
    ``k8sModels``; none: the stack alone); ``where`` is what the stack's findings point at
    (default ``Pulumi.<stack>.yaml``); ``copies``: how many copies of each model ``tdk
    package`` makes (the working set, TDK905). The unit's image is fitted to the models' LLM
    engine by ``llm.serving_image``, the one decision render and the program take too, and the
    engine files are checked against that image's vLLM / TensorRT-LLM."""
    where = where or f"Pulumi.{stack.name}.yaml"
    entry = stack.entry
    try:
        config = stack.config
        deploy = stack.program
        shortfalls = list(deploy.capacity(config))
        spec = deploy.offer(config)
        models = stack.models if models is None else models
    except TdkError as exc:
        refused = finding(STACK_REFUSED, where, "stack config", exc.message, exc.hint or "")
        return Feasibility(stack.name, entry.name, [refused])
    needs = [(model, requirements(model)) for model in models]
    found = [_shortfall(where, s) for s in shortfalls]
    engine_findings, spec = engine_image(entry, needs, spec, where)
    if engine_findings:
        found += engine_findings + engine_files(models, spec)
        return Feasibility(stack.name, entry.name, found, [], spec)
    found += driver_findings(spec, where)
    model_findings, fits = check_target(models, spec, trt_built_for)
    loading, fits = loading_findings(spec, models, fits, copies)
    if any(f.code == WEIGHTS_EXCEED_GPU for f in model_findings):  # one model alone: said
        loading = [f for f in loading if f.code != RELEASE_EXCEEDS_UNIT]  # mme cannot help
    found += model_findings + loading + placement_of(entry, needs, spec)
    if spec.loading is None or spec.loading.on_demand:  # all at start: TDK919 says it
        found += working_set(fits, copies)
    found += engine_files(models, spec)
    return Feasibility(stack.name, entry.name, found, fits, spec)


def engine_files(models: Sequence[ModelDir], spec: TargetSpec) -> list[Finding]:
    """The LLM engines' files against the vLLM and TensorRT-LLM of the release ``spec``
    deploys (``model.json`` names and values, ``model.yaml`` names, the engine-based
    repositories' last release): what ``tdk validate PATH`` alone checks against its fallback
    lists."""
    release = spec.image.version
    image = VllmImage(release, llm.vllm_version(release), llm.trtllm_version(release))
    return image_findings(models, image)


def engine_image(
    entry: TargetEntry,
    needs: Sequence[tuple[ModelDir, Requirements]],
    spec: TargetSpec,
    where: str,
) -> tuple[list[Finding], TargetSpec]:
    """``spec`` with the image that carries the models' LLM engine (``llm.serving_image``),
    or the findings that refuse it: a target that runs no engine image, two engines, a
    release before the flavour's first."""
    engines = [(model, need) for model, need in needs if need.engine]
    if not engines:
        return [], spec
    refused = entry.refused(LLM_ENGINES)
    if refused is not None:
        return [
            finding(
                ENGINE_REFUSED, _source(model, need), "backend",
                f"{model.name} runs the {need.engine} engine; the {entry.name} target cannot "
                f"serve it: {refused.reason}",
                f"serve it with --target {' / '.join(able(LLM_ENGINES))} (the kit picks the "
                "Triton image flavour that carries the engine)",
                model.name,
            )
            for model, need in engines
        ], spec  # fmt: skip
    try:
        image = llm.serving_image(spec.image_name, [need.engine for _, need in engines])
    except TdkError as exc:
        return [finding(STACK_REFUSED, where, "image", exc.message, exc.hint or "")], spec
    return [], replace(spec, image_name=image)


def require_feasible(stack: StackSettings, models: Sequence[ModelDir] | None = None) -> Feasibility:
    """The gate of the Pulumi program, ``tdk render --models`` and ``tdk plan --write-stack``:
    the config's own ConfigError as it is, else a ConfigError for the stack's first refusal
    (with ``models``, default the models the stack names); the answer when it can deploy."""
    stack.config  # noqa: B018 (a refused config raises its own ConfigError here)
    result = feasible(stack, models)
    refusal = result.first_refusal()
    if refusal is not None:
        raise ConfigError(f"stack {stack.name} cannot deploy: {refusal.message}", hint=refusal.fix)
    return result


def _shortfall(where: str, short: Shortfall) -> Finding:
    code = CAPACITY_AT_CREATION if short.blocking else CAPACITY_AT_MAXIMUM
    return finding(code, where, short.key, short.message, short.fix)


def placement(entry: TargetEntry, models: Sequence[ModelDir], spec: TargetSpec) -> list[Finding]:
    """What each model asks of the hardware (``packager.requirements``) against one serving
    unit: decoupled where the target cannot serve it, GPUs per replica, and, where models
    share a Triton's GPUs, their engines' memory fractions summed per GPU."""
    return placement_of(entry, [(model, requirements(model)) for model in models], spec)


def placement_of(
    entry: TargetEntry, needs: Sequence[tuple[ModelDir, Requirements]], spec: TargetSpec
) -> list[Finding]:
    """``placement`` for needs already read (each model with its ``Requirements``)."""
    found = [f for model, need in needs for f in _model_placement(entry, model, need, spec)]
    fractions = [(m, n) for m, n in needs if n.gpu_memory_fraction is not None]
    total = sum(n.gpu_memory_fraction or 0.0 for _, n in fractions)
    if spec.shares_gpus and spec.gpu is not None and total > 1.0:
        parts = " + ".join(f"{n.model} {n.gpu_memory_fraction:g}" for _, n in fractions)
        model, need = fractions[-1]
        found.append(
            finding(
                GPU_MEMORY_FRACTIONS, _source(model, need), "gpu_memory_utilization",
                f"one Triton on {spec.label} loads these engines on the same GPU: their "
                f"memory fractions add up to {parts} = {total:g} of one {spec.gpu.kind}",
                "lower gpu_memory_utilization so they sum to 1 or less, or serve the models "
                "on separate stacks",
                model.name,
            )
        )  # fmt: skip
    return found


def _model_placement(
    entry: TargetEntry, model: ModelDir, need: Requirements, spec: TargetSpec
) -> list[Finding]:
    found = []
    refused = entry.refused(DECOUPLED)
    if need.decoupled and refused is not None:
        found.append(
            finding(
                DECOUPLED_REFUSED, model.config_path, "model_transaction_policy.decoupled",
                f"{model.name} is decoupled; the {entry.name} target cannot serve decoupled "
                f"models: {refused.reason}",
                f"serve it with --target {' / '.join(able(DECOUPLED))}, or set decoupled: "
                "false if it answers each request once",
                model.name,
            )
        )  # fmt: skip
    if need.gpus_per_replica > 1 and need.gpus_per_replica > spec.gpus:
        has = f"{spec.gpus} GPU{'s' if spec.gpus != 1 else ''}"
        found.append(
            finding(
                GPUS_PER_REPLICA, _source(model, need), "tensor/pipeline parallel",
                f"one replica of {model.name} needs {need.gpus_per_replica} GPUs; one "
                f"serving unit of {spec.target} ({spec.label}) gives Triton {has}",
                "pick an instance or node (and GPUs per pod) with that many GPUs, or lower "
                "the tensor/pipeline parallel size",
                model.name,
            )
        )  # fmt: skip
    return found


def _source(model: ModelDir, need: Requirements) -> Path:
    path = model.path / need.source
    return path if path.is_file() else model.config_path


def flag_stack(
    entry: TargetEntry,
    flags: Mapping[str, str],
    models: Sequence[ModelDir],
    project_dir: Path,
) -> StackSettings:
    """A stack of ``entry`` built from ``tdk validate --target`` flags (and, for a target whose
    stack lists its models, ``models``) over the project's ``Pulumi.yaml`` defaults."""
    from infra.config import ConfigReader, merged_stack_config

    port = validate_port(entry)
    project = _project(project_dir)
    values = {"target": entry.name, **FLAG_PLACEHOLDERS, **port.model_values(list(models))}
    values.update(port.flag_values(entry.name, flags))
    merged = merged_stack_config(project, None, values)
    return settings(ConfigReader(merged.get), f"{entry.name} (from --target flags)")


def unit_stack(
    entry: TargetEntry, unit: PlanUnit, committed: tuple[Path, str] | None = None
) -> StackSettings:
    """A stack of ``entry`` that deploys ``unit`` (a ``tdk plan`` candidate, in its region):
    the planned stack (``committed``: project dir, stack name) with the unit swapped in, else
    the flag placeholders over the project's ``Pulumi.yaml`` defaults, as ``flag_stack``."""
    from infra.config import ConfigReader, merged_stack_config

    plan = plan_port(entry)
    values = {**plan.unit_values(unit), plan.region_key: unit.region}
    project, name = committed if committed is not None else (_project(Path(".")), None)
    if committed is None:
        flags = entry.validate
        defaults = flags.flag_defaults if isinstance(flags, ValidatePort) else {}
        values = {"target": entry.name, **FLAG_PLACEHOLDERS, **defaults, **values}
    merged = merged_stack_config(project, name, values)
    return settings(ConfigReader(merged.get), f"{entry.name} {unit.instance} (a plan candidate)")


def check_candidate(
    entry: TargetEntry,
    unit: PlanUnit,
    committed: tuple[Path, str] | None = None,
    models: Sequence[ModelDir] = (),
) -> None:
    """A UsageError naming the candidate and its first refusal when ``entry`` cannot deploy
    ``unit`` (``committed``: in the planned stack, with its ``models``): what ``tdk plan``
    asks of every candidate before it prices it."""
    stack = unit_stack(entry, unit, committed)
    refusal = feasible(stack, models, where=f"--instance-type {unit.instance}").first_refusal()
    if refusal is not None:
        raise UsageError(
            f"--instance-type {unit.instance}: the {entry.name} target cannot deploy it: "
            f"{refusal.message}",
            hint=refusal.fix or "plan a unit the target can deploy",
        )


def _project(project_dir: Path) -> Path:
    """``project_dir`` when it holds ``Pulumi.yaml``, else the kit's own project (a source
    checkout), else a UsageError saying where the defaults come from."""
    from infra.config import missing_project_hint

    if (project_dir / "Pulumi.yaml").is_file():
        return project_dir
    kit = Path(__file__).resolve().parents[2]
    if (kit / "Pulumi.yaml").is_file():
        return kit
    raise UsageError(
        f"{project_dir / 'Pulumi.yaml'} does not exist: --target builds a stack over the "
        "project's Pulumi.yaml defaults",
        hint=missing_project_hint(project_dir),
    )
