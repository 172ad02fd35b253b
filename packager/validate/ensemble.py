"""Ensemble rules: steps name present models, maps connect, data flows without cycles,
and data types and shapes agree between the steps."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packager.config import datatype_name
from packager.repository import ModelDir
from packager.validate.findings import WILDCARD, Sink


@dataclass(frozen=True)
class Spec:
    """An ensemble tensor as one side declares it: dtype, dims, and the full shape (with the
    batch dimension as -1 when that side batches)."""

    dtype: int
    dims: tuple[int, ...]
    shape: tuple[int, ...]
    origin: str

    def describe(self) -> str:
        return f"{datatype_name(self.dtype)} {list(self.shape)} ({self.origin})"


def _spec(tensor: Any, batching: bool, origin: str, own: bool = False) -> Spec:
    """``own``: the ensemble's own input/output, whose reshape (if any) Triton uses."""
    dims = tuple(tensor.reshape.shape if own and tensor.HasField("reshape") else tensor.dims)
    return Spec(int(tensor.data_type), dims, (WILDCARD,) * batching + dims, origin)


def _wild_equal(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    return len(a) == len(b) and all(x == y or WILDCARD in (x, y) for x, y in zip(a, b, strict=True))


def _agree(a: Spec, b: Spec) -> bool:
    """Core ValidateTensorConsistency: same dtype; dims or full shapes equal up to -1 (so a
    non-batching [-1, 4] meets a batching [4], and so does a non-batching [4])."""
    return a.dtype == b.dtype and (_wild_equal(a.dims, b.dims) or _wild_equal(a.shape, b.shape))


def check_ensembles(models: Sequence[ModelDir], sinks: dict[Path, Sink]) -> None:
    """Check every ensemble among ``models`` against the other models given."""
    by_name: dict[str, ModelDir] = {}
    for model in models:
        by_name.setdefault(model.name, model)
    for model in models:
        if model.is_ensemble:
            _Ensemble(model, by_name, sinks[model.path]).check()
    _check_nesting(models, by_name, sinks)


class _Ensemble:
    """The data flow of one ensemble: who produces and who consumes each ensemble tensor."""

    def __init__(self, model: ModelDir, by_name: dict[str, ModelDir], sink: Sink) -> None:
        self.model, self.by_name, self.sink = model, by_name, sink
        self.config = model.config
        self.steps = list(self.config.ensemble_scheduling.step)
        batching = self.config.max_batch_size > 0
        self.produced: dict[str, Spec | None] = {
            t.name: _spec(t, batching, "ensemble input", own=True) for t in self.config.input
        }
        self.step_outputs: set[str] = set()

    def check(self) -> None:
        if not self.steps:
            self.sink.report(
                "TDK401",
                "ensemble_scheduling.step",
                "the ensemble has no steps",
                "add at least one step naming a model and its input_map/output_map",
            )
            return
        for index, step in enumerate(self.steps):
            self._check_step(index, step)
        for index, step in enumerate(self.steps):
            self._check_inputs(index, step)
        self._check_flow()

    def _where(self, index: int, step: Any) -> str:
        return f"ensemble_scheduling.step[{index}] ({step.model_name})"

    def _target(self, step: Any) -> ModelDir | None:
        return self.by_name.get(step.model_name)

    def _check_step(self, index: int, step: Any) -> None:
        where, target = self._where(index, step), self._target(step)
        if not step.model_name:
            self.sink.report(
                "TDK402", where + ".model_name", "step has no model_name", "name a model"
            )
        elif target is None:
            self.sink.report(
                "TDK402",
                where + ".model_name",
                f"model {step.model_name!r} is not in the repositories given",
                "add the model's directory to the repository, or fix model_name",
            )
        else:
            self._check_target(where, step, target)
        for field in ("input_map", "output_map"):
            if not getattr(step, field):
                self.sink.report(
                    "TDK403",
                    f"{where}.{field}",
                    f"{field} is empty",
                    f"map the step's tensors in {field}",
                )
        outputs = {t.name: t for t in target.config.output} if target else {}
        batching = bool(target and target.config.max_batch_size > 0)
        for key in sorted(step.output_map):
            value = step.output_map[key]
            if target and key not in outputs:
                self.sink.report(
                    "TDK404",
                    f"{where}.output_map[{key}]",
                    f"{step.model_name!r} has no output {key!r}",
                    f"use one of its outputs: {sorted(outputs)}",
                )
            if value in self.produced:
                self.sink.report(
                    "TDK405",
                    f"{where}.output_map[{key}]",
                    f"ensemble tensor {value!r} is already produced by "
                    f"{self._origin(value)}; a tensor must have one producer",
                    "map this output to a new ensemble tensor name",
                )
                continue
            spec = outputs.get(key)
            origin = f"output {key!r} of {step.model_name!r}"
            self.produced[value] = _spec(spec, batching, origin) if spec is not None else None
            self.step_outputs.add(value)

    def _origin(self, tensor: str) -> str:
        spec = self.produced.get(tensor)
        return spec.origin if spec else "another step"

    def _check_target(self, where: str, step: Any, target: ModelDir) -> None:
        version = step.model_version
        if version != -1 and str(version) not in {str(int(v)) for v in target.versions()}:
            self.sink.report(
                "TDK406",
                where + ".model_version",
                f"{step.model_name!r} has no version {version} (has {target.versions()})",
                "use model_version: -1 (latest) or an existing version",
            )
        ensemble_batch, step_batch = self.config.max_batch_size, target.config.max_batch_size
        # a batching ensemble may contain non-batching models (max_batch_size 0); a negative
        # max_batch_size is the step model's own error (reported on its config), not this one
        if 0 < step_batch < ensemble_batch:
            self.sink.report(
                "TDK407",
                where,
                f"the ensemble allows batches of {ensemble_batch} but {step.model_name!r} "
                f"only {step_batch}",
                f"lower the ensemble's max_batch_size to {step_batch} or raise the model's",
            )

    def _check_inputs(self, index: int, step: Any) -> None:
        where, target = self._where(index, step), self._target(step)
        inputs = {t.name: t for t in target.config.input} if target else {}
        batching = bool(target and target.config.max_batch_size > 0)
        for key in sorted(step.input_map):
            value, field = step.input_map[key], f"{where}.input_map[{key}]"
            if target and key not in inputs:
                self.sink.report(
                    "TDK408",
                    field,
                    f"{step.model_name!r} has no input {key!r}",
                    f"use one of its inputs: {sorted(inputs)}",
                )
            if value not in self.produced:
                self.sink.report(
                    "TDK409",
                    field,
                    f"ensemble tensor {value!r} is neither an ensemble input nor any step's output",
                    "map it from an ensemble input or a step's output_map value",
                )
                continue
            source = self.produced[value]
            if source is not None and key in inputs:
                self._compare(field, source, _spec(inputs[key], batching, f"input {key!r}"))
        for name, tensor in sorted(inputs.items()):
            if name not in step.input_map and not tensor.optional:
                self.sink.report(
                    "TDK410",
                    f"{where}.input_map",
                    f"required input {name!r} of {step.model_name!r} is not mapped",
                    f"add input_map {{ key: {name!r} value: <ensemble tensor> }}",
                )

    def _compare(self, field: str, source: Spec, sink_spec: Spec) -> None:
        if not _agree(source, sink_spec):
            self.sink.report(
                "TDK411",
                field,
                f"{source.describe()} does not match {sink_spec.describe()}",
                "make the data types and dims agree between the two sides",
            )

    def _check_flow(self) -> None:
        consumed = {v for step in self.steps for v in step.input_map.values()}
        outputs = {t.name for t in self.config.output}
        for tensor in self.config.input:
            if tensor.name not in consumed:
                self.sink.report(
                    "TDK412",
                    f"input ({tensor.name})",
                    f"ensemble input {tensor.name!r} is not used by any step",
                    "map it in a step's input_map or remove the input",
                )
        for tensor in sorted(self.step_outputs - consumed - outputs):
            self.sink.report(
                "TDK413",
                "ensemble_scheduling.step.output_map",
                f"ensemble tensor {tensor!r} is produced but never used; Triton rejects this",
                "consume it in a later step, declare it as an ensemble output, or drop it",
            )
        batching = self.config.max_batch_size > 0
        # an ensemble input that a step consumes may also be returned as an output
        passthrough = {t.name for t in self.config.input} & consumed
        for index, tensor in enumerate(self.config.output):
            field = f"output[{index}] ({tensor.name})"
            if tensor.name not in self.step_outputs | passthrough:
                self.sink.report(
                    "TDK414",
                    field,
                    f"ensemble output {tensor.name!r} is not produced by any step",
                    "map a step output to it in output_map",
                )
                continue
            source = self.produced[tensor.name]
            if source is not None:
                self._compare(field, source, _spec(tensor, batching, "ensemble output", own=True))
        self._check_cycles()

    def _check_cycles(self) -> None:
        """Run the steps in data-flow order, as Triton does, labelling each tensor with the
        decoupled step it descends from: a step fed from two decoupled branches is refused."""
        labels = {t.name: 0 for t in self.config.input}
        pending = dict(enumerate(self.steps))
        progress, decoupled = True, 0
        while pending and progress:
            runnable = [i for i, s in pending.items() if set(s.input_map.values()) <= set(labels)]
            for index in runnable:
                step = pending.pop(index)
                origins = {labels[v] for v in step.input_map.values()}
                if len(origins) > 1:
                    self.sink.report(
                        "TDK417",
                        self._where(index, step),
                        f"step {step.model_name!r} receives inputs that originate from different "
                        "decoupled models; Triton refuses the ensemble",
                        "feed the step from one decoupled branch (or make the models "
                        "non-decoupled)",
                    )
                target = self._target(step)
                label = min(origins, default=0)
                if target is not None and target.config.model_transaction_policy.decoupled:
                    decoupled += 1
                    label = decoupled
                labels.update(dict.fromkeys(step.output_map.values(), label))
            progress = bool(runnable)
        stuck = [i for i, s in pending.items() if set(s.input_map.values()) <= set(self.produced)]
        if stuck:
            names = ", ".join(f"step[{i}] ({self.steps[i].model_name})" for i in stuck)
            self.sink.report(
                "TDK415",
                "ensemble_scheduling.step",
                f"{names} can never run: their inputs depend on each other's outputs (a cycle)",
                "break the cycle so every step's inputs come from ensemble inputs or earlier steps",
            )


def _check_nesting(
    models: Sequence[ModelDir], by_name: dict[str, ModelDir], sinks: dict[Path, Sink]
) -> None:
    """An ensemble may contain ensembles, but never itself (directly or through others).

    Linear in the number of steps and iterative: a ladder of ensembles that each use the one
    below twice, or a cycle thousands deep, is checked as fast as a flat repository.
    """
    graph = {
        m.name: list(dict.fromkeys(s.model_name for s in m.config.ensemble_scheduling.step))
        for m in by_name.values()
        if m.is_ensemble
    }
    cyclic = {name for component in _cyclic_components(graph) for name in component}
    for model in models:
        if model.is_ensemble and model.name in cyclic:
            trail = _trail_back(model.name, graph, cyclic)
            sinks[model.path].report(
                "TDK416",
                "ensemble_scheduling.step.model_name",
                f"ensemble {model.name!r} contains itself: {_show_trail(trail)}",
                "remove the step that leads back to this ensemble",
            )


def _cyclic_components(graph: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components, iteratively; only those on a cycle (more than
    one ensemble, or one that lists itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, child_at = work.pop()
            if child_at == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            children = [c for c in graph[node] if c in graph]
            if child_at < len(children):
                work.append((node, child_at + 1))
                child = children[child_at]
                if child not in index:
                    work.append((child, 0))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph[node]:
                    found.append(component)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return found


def _trail_back(start: str, graph: dict[str, list[str]], cyclic: set[str]) -> list[str]:
    """The shortest trail from ``start`` back to itself (breadth first, inside its cycle)."""
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for child in graph[node]:
            if child == start:
                trail = [node]
                while trail[-1] != start:
                    trail.append(came_from[trail[-1]])
                return [*reversed(trail), start]
            if child in cyclic and child not in came_from:
                came_from[child] = node
                queue.append(child)
    return [start, start]  # unreachable for a member of a cycle; keeps the message whole


def _show_trail(trail: list[str], keep: int = 4) -> str:
    """``a -> b -> a``; a long trail keeps its ends and says how many it leaves out."""
    if len(trail) <= 2 * keep + 1:
        return " -> ".join(trail)
    left_out = len(trail) - 2 * keep
    return " -> ".join([*trail[:keep], f"... ({left_out} more)", *trail[-keep:]])
