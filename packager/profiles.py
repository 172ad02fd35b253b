"""TensorRT optimization profiles from a model's config and ``--shape`` options.

An engine built with a dynamic dimension accepts only shapes inside the profile it was built
with, so the profile must cover what Triton sends: the batch dimension from 1 to the config's
``max_batch_size`` (optimized for ``opt``), and each other dynamic dimension (``-1`` in
``dims``) from ``--shape NAME:MIN,OPT,MAX``. The result is what trtexec takes
(``--minShapes/--optShapes/--maxShapes=name:1x16,...``; TensorRT's trtexec documentation).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from tdk.errors import UsageError

SHAPE_HINT = "e.g. --shape input_ids:16,128,512 (min,opt,max of its dynamic dims; AxB for two)"
_SHAPE = re.compile(r"^([^:]+):([0-9x]+),([0-9x]+),([0-9x]+)$")


@dataclass(frozen=True)
class TensorShapes:
    """One input's full shapes (batch dimension included) at the profile's min, opt and max."""

    name: str
    min: tuple[int, ...]
    opt: tuple[int, ...]
    max: tuple[int, ...]


@dataclass(frozen=True)
class Profile:
    """Every input's shapes; empty when the model has no dynamic dimension."""

    inputs: tuple[TensorShapes, ...]

    def trtexec_args(self) -> list[str]:
        """``--minShapes='a':1x16,'b':1x16`` and the opt and max counterparts ([] when static;
        trtexec strips the quotes, which let a name hold ``:`` or ``,``)."""
        if not self.inputs:
            return []
        return [
            f"--{which}Shapes="
            + ",".join(f"'{t.name}':{_dims(getattr(t, which))}" for t in self.inputs)
            for which in ("min", "opt", "max")
        ]

    def describe(self) -> str:
        """Canonical text of the profile (part of the engine cache key)."""
        return " ".join(self.trtexec_args()) or "static"

    def at(self, which: str) -> dict[str, tuple[int, ...]]:
        """Input name -> its shape at ``which`` (``min``, ``opt`` or ``max``)."""
        return {t.name: getattr(t, which) for t in self.inputs}


def _dims(shape: tuple[int, ...]) -> str:
    return "x".join(str(d) for d in shape)


def parse_shape(text: str) -> tuple[str, tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """``input_ids:16,128,512`` -> (name, (16,), (128,), (512,)); ``x:8x8,16x16,32x32`` too."""
    match = _SHAPE.match(text.strip())
    if not match:
        raise UsageError(f"--shape {text!r} is not NAME:MIN,OPT,MAX", hint=SHAPE_HINT)
    name, *parts = match.groups()
    try:
        lo, mid, hi = (tuple(int(d) for d in part.split("x")) for part in parts)
    except ValueError:
        raise UsageError(f"--shape {text!r}: dimensions are integers", hint=SHAPE_HINT) from None
    if not len(lo) == len(mid) == len(hi):
        raise UsageError(f"--shape {text!r}: MIN, OPT and MAX differ in rank", hint=SHAPE_HINT)
    if not all(1 <= a <= b <= c for a, b, c in zip(lo, mid, hi, strict=True)):
        raise UsageError(f"--shape {text!r}: needs 1 <= MIN <= OPT <= MAX", hint=SHAPE_HINT)
    return name, lo, mid, hi


def profile_from_config(
    config: Any, shapes: list[str], opt_batch: int | None = None, source: str = "config.pbtxt"
) -> Profile:
    """The profile of ``config`` (a ModelConfig): batch 1 / ``opt_batch`` (default: the
    largest preferred batch size, else ``max_batch_size``) / ``max_batch_size``, and the
    other dynamic dimensions from ``shapes``. A UsageError names what is missing or unknown."""
    given = {}
    for text in shapes:
        name, lo, mid, hi = parse_shape(text)
        if name in given:
            raise UsageError(f"--shape {name} is given twice", hint="give each input once")
        given[name] = (lo, mid, hi)
    batch = config.max_batch_size
    batches = _batches(config, opt_batch) if batch > 0 else None
    found = []
    names = [tensor.name for tensor in config.input]
    for tensor in config.input:
        found.append(_tensor_shapes(tensor.name, list(tensor.dims), given, batches, source))
    unknown = sorted(set(given) - set(names))
    if unknown:
        raise UsageError(
            f"--shape names {', '.join(unknown)}, not an input of the model",
            hint=f"inputs in {source}: {', '.join(names)}",
        )
    dynamic = [t for t in found if t.min != t.max]
    return Profile(tuple(found) if dynamic else ())


def _batches(config: Any, opt_batch: int | None) -> tuple[int, int, int]:
    top = config.max_batch_size
    preferred = list(config.dynamic_batching.preferred_batch_size)
    opt = opt_batch if opt_batch is not None else max(preferred, default=top)
    if not 1 <= opt <= top:
        raise UsageError(
            f"--opt-batch {opt} is outside 1..max_batch_size ({top})",
            hint=f"use a batch size from 1 to {top}",
        )
    return 1, opt, top


def _tensor_shapes(
    name: str,
    dims: list[int],
    given: dict[str, tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]],
    batches: tuple[int, int, int] | None,
    source: str,
) -> TensorShapes:
    dynamic = [i for i, d in enumerate(dims) if d < 0]
    if dynamic and name not in given:
        example = ",".join("x".join(["16"] * len(dynamic)) for _ in range(3))
        raise UsageError(
            f"input {name!r} has {len(dynamic)} dynamic dimension(s) in {source} (dims "
            f"{dims}): an engine needs their range",
            hint=f"add --shape {name}:{example} (min,opt,max)",
        )
    ranges = given.get(name, ((), (), ()))
    if len(ranges[0]) != len(dynamic):
        raise UsageError(
            f"--shape {name} gives {len(ranges[0])} dimension(s); {source} declares "
            f"{len(dynamic)} dynamic one(s) (dims {dims})",
            hint=SHAPE_HINT,
        )
    shapes = []
    for index, part in enumerate(ranges):
        values = iter(part)
        full = [next(values) if d < 0 else d for d in dims]
        if batches is not None:
            full.insert(0, batches[index])
        shapes.append(tuple(full))
    return TensorShapes(name, shapes[0], shapes[1], shapes[2])
