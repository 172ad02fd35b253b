"""What only the deploy target can tell about a repository (``infra.targets.feasibility``).

Backends the target's Triton image provides, the unit's limits (Python-backend shared memory,
disk), weights against GPU memory (how many copies stay loaded at once), and TensorRT engines
against the target GPU. Facts come from ``infra.facts.hardware``; no cloud SDK. A target builds
its ``TargetSpec`` from its typed stack config (``Target.offer``), with its cloud's catalog
(``infra/clouds/<cloud>/offer.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from infra.facts import hardware as facts
from infra.targets.engine_memory import engine_fit
from infra.targets.fit import Fit
from infra.values.offer import TargetSpec, image_facts
from packager.config import autocomplete_backend
from packager.repository import ModelDir
from packager.tensorrt.engines import BuiltFor
from packager.validate.findings import Finding, Sink, finding


def cpu_spec(target: str, label: str, image: str = "") -> TargetSpec:
    """A Triton that runs on CPU (a pod of a CPU workload): no GPU, no disk limit."""
    return TargetSpec(
        target, label, None, 0, image_facts(image), mme=False, gpus=0, image_name=image
    )


def pod_spec(target: str, node: TargetSpec, gpus_per_pod: int, cpu: bool) -> TargetSpec:
    """One Kubernetes pod on ``node``: its GPUs (a CPU workload: none), no MME."""
    if cpu:
        return cpu_spec(target, node.label, node.image_name or node.image.version)
    return replace(node, gpus=gpus_per_pod)


def check_target(
    models: Sequence[ModelDir], spec: TargetSpec, trt_built_for: str = ""
) -> tuple[list[Finding], list[Fit]]:
    """Findings for ``models`` on ``spec``, and the working set each model allows.

    ``trt_built_for`` (``"8.6:10.4"``, ``"8.6:10.16@26.05"``, from ``--trt-built-for`` or a
    release's manifest) says what the TensorRT engines were built for; it is compared with the
    target's GPU and image.
    """
    models = [ModelDir(m.path, autocomplete_backend(m.config, m.path)) for m in models]
    sinks = {m.path: Sink(m.name, m.config_path) for m in models}
    by_name = {m.name: m for m in models}
    fits = []
    for model in models:
        sink = sinks[model.path]
        _check_backend(model, spec, sink)
        if model.backend == "tensorrt" and spec.gpu:
            _check_tensorrt_engines(spec, trt_built_for, sink)
        _check_python_shm(model, spec, sink)
        if spec.gpu is None:
            _check_gpu_groups(model, spec, sink)
        engine = engine_fit(model, spec, sink)
        fits.append(engine or _check_fit(model, _composing(model, by_name), spec, sink))
    return [f for m in models for f in sinks[m.path].found], fits


def _check_backend(model: ModelDir, spec: TargetSpec, sink: Sink) -> None:
    backends = spec.backends
    where = "GPU" if spec.gpu else "CPU"
    if model.backend not in backends:
        sink.report(
            "TDK901",
            "backend",
            f"backend {model.backend!r} is not in the Triton {spec.image.version} {where} image "
            f"of {spec.target} ({spec.label})",
            f"use one of {', '.join(sorted(backends))}, or a target whose image has it",
        )


def _check_tensorrt_engines(spec: TargetSpec, built_for: str, sink: Sink) -> None:
    """TDK906 when nothing says what the engines were built for (or it cannot be compared with
    the image), TDK907 when they were built for another GPU or TensorRT: errors both, as
    Triton fails to deserialize such an engine."""
    assert spec.gpu is not None
    gpu, trt, version, base = spec.gpu, spec.image.tensorrt, spec.image.version, spec.image.base
    cc = f"{gpu.compute[0]}.{gpu.compute[1]}"
    trt_text = f"TensorRT {trt[0]}.{trt[1]}" if trt else f"the TensorRT of the {version} release"
    want = f"compute capability {cc}, {trt_text}"
    rebuild = f"tdk build --stack <stack> (a {gpu.kind} with the TensorRT {base} container)"
    unknown = _unknown_facts(spec.image)
    if not built_for:
        sink.report(
            "TDK906",
            "backend",
            f"{spec.label} runs {gpu.kind} ({want}, Triton {version}); an engine built for "
            f"anything else fails to load, and nothing records what these engines were built "
            f"for{unknown}",
            f"{rebuild}, or record it: tdk package --trt-built-for "
            f"{cc}:{f'{trt[0]}.{trt[1]}' if trt else '<TensorRT>'}@{base}",
        )
        return
    record = BuiltFor.parse(built_for)
    if not record.runs_on(gpu.compute):
        where = record.hardware or f"{record.compute[0]}.{record.compute[1]}"
        sink.report(
            "TDK907",
            "backend",
            f"the engines were built for compute capability {where}, but {spec.label} has "
            f"{gpu.kind} ({want}): Triton cannot deserialize them",
            rebuild,
        )
        return
    if trt is not None and record.tensorrt != trt:
        sink.report(
            "TDK907",
            "backend",
            f"the engines were built with TensorRT {record.tensorrt[0]}.{record.tensorrt[1]}, but "
            f"{spec.label} runs Triton {version} ({want}): Triton cannot deserialize them",
            rebuild,
        )
    elif trt is None and record.release != base:
        built = f"in the TensorRT {record.release} container" if record.release else "elsewhere"
        sink.report(
            "TDK906",
            "backend",
            f"Triton {version}'s TensorRT version is not in tdk's facts (it is that of the "
            f"{base} release it is built on) and the engines were built {built}: nothing shows "
            f"they load on {spec.label}{unknown}",
            f"{rebuild}; or add its TensorRT to infra/facts/hardware.py from a source that "
            "gives it (NVIDIA's Frameworks Support Matrix)",
        )


def _unknown_facts(image: facts.Image) -> str:
    """What tdk's facts lack about ``image`` that an engine depends on, and which source lacks it
    (empty when its TensorRT and base release are known)."""
    gaps = [image.tensorrt_text()] * (image.tensorrt is None)
    gaps += [image.base_text()] * (not image.base_verified)
    return "".join(f"; {gap}" for gap in gaps)


def _check_gpu_groups(model: ModelDir, spec: TargetSpec, sink: Sink) -> None:
    for index, group in enumerate(model.config.instance_group):
        if type(group).Kind.Name(group.kind) == "KIND_GPU":
            sink.report(
                "TDK908",
                f"instance_group[{index}].kind",
                f"KIND_GPU on {spec.label}, which has no GPU: Triton refuses to load the model",
                "use KIND_AUTO (GPU when there is one) or KIND_CPU, or a GPU instance type",
            )


def _check_python_shm(model: ModelDir, spec: TargetSpec, sink: Sink) -> None:
    limit = spec.python_shm
    if limit is None or model.backend != "python":
        return
    instances = sum(max(g.count, 1) for g in model.config.instance_group) or 1
    need = instances * limit.per_instance
    if need > limit.available:
        sink.report(
            "TDK903",
            "instance_group",
            f"{instances} Python-backend instances need {need // facts.MIB} MiB of /dev/shm; "
            f"the {limit.container} has {limit.available // facts.MIB} MiB "
            '("Stub is unhealthy" / shared memory errors at load)',
            f"use at most {limit.available // limit.per_instance} instances, or lower {limit.key}",
        )


def _weights(model: ModelDir) -> int:
    return sum(
        p.stat().st_size for p in model.path.rglob("*") if p.is_file() and not p.is_symlink()
    )


def serving_units(models: Sequence[ModelDir]) -> list[tuple[ModelDir, int]]:
    """The models a release serves on their own (not only as another's ensemble step), each
    with the bytes it loads (an ensemble's files with its steps')."""
    by_name = {m.name: m for m in models}
    steps = {s.model_name for m in models for s in m.config.ensemble_scheduling.step}
    return [
        (m, _weights(m) + sum(_weights(c) for c in _composing(m, by_name)))
        for m in models
        if m.name not in steps
    ]


def _composing(model: ModelDir, by_name: dict[str, ModelDir]) -> list[ModelDir]:
    """The models an ensemble loads with it (those found next to it), nested ones included."""
    found: dict[str, ModelDir] = {}
    todo = [step.model_name for step in model.config.ensemble_scheduling.step]
    while todo:
        name = todo.pop()
        if name in found or name not in by_name or name == model.name:
            continue
        found[name] = by_name[name]
        todo += [step.model_name for step in by_name[name].config.ensemble_scheduling.step]
    return [found[name] for name in sorted(found)]


def _check_fit(model: ModelDir, composing: list[ModelDir], spec: TargetSpec, sink: Sink) -> Fit:
    weights = max(_weights(model) + sum(_weights(m) for m in composing), 1)
    disk = spec.disk_gb * 10**9
    disk_copies = int(disk // weights) if disk else None
    if disk and weights > disk:
        sink.report(
            "TDK902",
            "model directory",
            f"the model's files take {weights / 10**9:.1f} GB; {spec.label} has {spec.disk_gb} GB",
            "use an instance type with a larger disk",
            file=model.path,
        )
    gpu_copies = None
    if spec.gpu is not None:
        memory = spec.gpu.memory_gib * facts.GIB
        gpu_copies = int(memory // weights)
        if gpu_copies == 0:
            sink.report(
                "TDK904",
                "model directory",
                f"the weights take {weights / facts.GIB:.1f} GiB; the {spec.gpu.kind} has "
                f"{spec.gpu.memory_gib} GiB",
                "use a GPU with more memory or a smaller model",
                file=model.path,
            )
    names = tuple(m.name for m in composing)
    return Fit(model.name, str(model.config_path), weights, gpu_copies, disk_copies, names)


def working_set(fits: Sequence[Fit], copies: int) -> list[Finding]:
    """TDK905 when ``copies`` of a model would not all stay loaded on one instance."""
    found = []
    for fit in fits:
        limit = fit.gpu_copies if fit.gpu_copies is not None else fit.disk_copies or 0
        if limit and copies > limit:
            found.append(
                finding(
                    "TDK905",
                    file=fit.config_path,
                    field="name",
                    message=f"{copies} copies of {fit.model!r} are packaged but {limit} fit "
                    "loaded at once: the MME unloads and reloads them (LRU)",
                    fix="add instances, use a larger GPU, or package fewer copies",
                    model=fit.model,
                )
            )
    return found


if __name__ == "__main__":  # the rule table's docs: python -m packager.validate.rules
    import sys

    from packager.validate.rules import RULES, render_markdown

    sys.stdout.write(render_markdown(RULES.values()))
