"""What ``tdk tune`` varies: batching and instance knobs, their search space, and their effect
on a Triton ``ModelConfig`` (edited through the protobuf, never as text)."""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from infra.perf.tune.accel import apply_option
from tdk.errors import UsageError

CLIMB_ORDER = (
    "dynamic_batching",
    "instances",
    "max_batch_size",
    "accelerator",
    "max_queue_delay_us",
    "preferred",
)


@dataclass(frozen=True, order=True)
class Knobs:
    """One configuration tried. ``preferred`` is empty or ``(max_batch_size,)``."""

    instances: int
    max_batch_size: int
    dynamic_batching: bool
    max_queue_delay_us: int = 0
    preferred: tuple[int, ...] = ()
    accelerator: str = ""  # an option of infra.perf.tune.accel ("" as shipped)

    def canonical(self) -> Knobs:
        """Without dynamic batching the queue delay and preferred sizes mean nothing."""
        if not self.dynamic_batching:
            return replace(self, max_queue_delay_us=0, preferred=())
        if self.preferred:
            return replace(self, preferred=(self.max_batch_size,))
        return self

    def label(self) -> str:
        batching = (
            f"dyn {self.max_queue_delay_us}us" + (" pref" if self.preferred else "")
            if self.dynamic_batching
            else "no dyn"
        )
        extra = f", {self.accelerator}" if self.accelerator else ""
        return f"inst {self.instances}, mbs {self.max_batch_size}, {batching}{extra}"

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["preferred"] = list(self.preferred)
        return data


@dataclass(frozen=True)
class Space:
    """The values each knob may take; ``grid()`` is every distinct configuration."""

    instances: tuple[int, ...] = (1, 2, 4)
    max_batch_size: tuple[int, ...] = (8, 16, 32)
    dynamic_batching: tuple[bool, ...] = (False, True)
    max_queue_delay_us: tuple[int, ...] = (0, 500, 2000)
    preferred: tuple[bool, ...] = (False, True)
    accelerators: tuple[str, ...] = ("",)
    auto_accelerators: bool = True  # replaced by what the model and server offer (accel.py)
    shipped_delay: bool = True  # the shipped queue delay joins the delays (unless they are given)

    def with_shipped(self, shipped: Knobs) -> Space:
        """The shipped queue delay joins the delays tried, so the climb starts at the shipped
        config itself and a delay the search did not decide is written back unchanged."""
        if not self.shipped_delay or not shipped.dynamic_batching:
            return self
        delays = tuple(sorted({*self.max_queue_delay_us, shipped.max_queue_delay_us}))
        return replace(self, max_queue_delay_us=delays)

    def for_model(self, shipped_max_batch_size: int, batch_limit: int | None = None) -> Space:
        """A model that does not batch (``max_batch_size: 0``) only varies its instances; a
        TensorRT engine's batch sizes stay within its profile (``batch_limit``)."""
        if shipped_max_batch_size <= 0:
            return replace(self, max_batch_size=(0,), dynamic_batching=(False,))
        if batch_limit is not None:
            sizes = tuple(s for s in self.max_batch_size if s <= batch_limit) or (batch_limit,)
            return replace(self, max_batch_size=sizes)
        return self

    def dimensions(self) -> list[tuple[str, Sequence[Any]]]:
        return [
            ("instances", self.instances),
            ("max_batch_size", self.max_batch_size),
            ("dynamic_batching", self.dynamic_batching),
            ("max_queue_delay_us", self.max_queue_delay_us),
            ("preferred", self.preferred),
            ("accelerator", self.accelerators),
        ]

    def knobs(self, index: Sequence[int]) -> Knobs:
        """The configuration at one index per dimension."""
        values = [dim[i] for (_, dim), i in zip(self.dimensions(), index, strict=True)]
        instances, mbs, dynamic, delay, preferred, accelerator = values
        pref = (mbs,) if preferred else ()
        return Knobs(instances, mbs, dynamic, delay, pref, accelerator).canonical()

    def grid(self) -> list[Knobs]:
        """Every distinct configuration (canonical, sorted, no duplicates)."""
        ranges = [range(len(values)) for _, values in self.dimensions()]
        return sorted({self.knobs(index) for index in itertools.product(*ranges)})

    def neighbours(self, index: Sequence[int]) -> Iterator[tuple[int, ...]]:
        """Indexes one step away along one dimension (the hill climb's moves), the knobs that
        move throughput most first: turning the dynamic batcher on, instances, batch size. A step
        that changes nothing (a queue delay or preferred size without the dynamic batcher) is no
        move."""
        names = [name for name, _ in self.dimensions()]
        order = sorted(range(len(names)), key=lambda axis: CLIMB_ORDER.index(names[axis]))
        here = self.knobs(index)
        for axis in order:
            values = self.dimensions()[axis][1]
            for step in (1, -1):
                moved = index[axis] + step
                if 0 <= moved < len(values):
                    there = (*index[:axis], moved, *index[axis + 1 :])
                    if self.knobs(there) != here:
                        yield there

    def nearest(self, knobs: Knobs) -> tuple[int, ...]:
        """The grid index closest to ``knobs`` (the hill climb starts at the shipped config)."""
        wanted = [
            knobs.instances,
            knobs.max_batch_size,
            knobs.dynamic_batching,
            knobs.max_queue_delay_us,
            bool(knobs.preferred),
            knobs.accelerator,
        ]
        return tuple(
            _closest(values, want)
            for (_, values), want in zip(self.dimensions(), wanted, strict=True)
        )

    def check(self) -> None:
        for name, values in self.dimensions():
            if not values:
                raise UsageError(f"search space: {name} has no values", hint="give at least one")
        if min(self.instances) < 1:
            raise UsageError("search space: instance counts must be >= 1", hint="e.g. 1,2,4")
        if min(self.max_batch_size) < 0 or min(self.max_queue_delay_us) < 0:
            raise UsageError("search space: sizes and delays must be >= 0", hint="e.g. 0,500")


def _closest(values: Sequence[Any], wanted: Any) -> int:
    if isinstance(wanted, str):
        return list(values).index(wanted) if wanted in values else 0
    distances = [abs(int(value) - int(wanted)) for value in values]
    return distances.index(min(distances))


def shipped_knobs(config: Any) -> Knobs:
    """The knobs a config has as shipped (an absent instance group counts as one instance)."""
    groups = list(config.instance_group)
    instances = sum(max(1, int(g.count)) for g in groups) if groups else 1
    dynamic = config.HasField("dynamic_batching")
    batching = config.dynamic_batching
    return Knobs(
        instances=instances,
        max_batch_size=int(config.max_batch_size),
        dynamic_batching=dynamic,
        max_queue_delay_us=int(batching.max_queue_delay_microseconds) if dynamic else 0,
        preferred=tuple(int(s) for s in batching.preferred_batch_size) if dynamic else (),
    )


def apply_knobs(config: Any, knobs: Knobs) -> Any:
    """A copy of ``config`` with ``knobs`` set; every other field is kept as it was."""
    tuned = copy.deepcopy(config)
    tuned.max_batch_size = knobs.max_batch_size
    if knobs.dynamic_batching:
        tuned.dynamic_batching.SetInParent()
        tuned.dynamic_batching.max_queue_delay_microseconds = knobs.max_queue_delay_us
        del tuned.dynamic_batching.preferred_batch_size[:]
        tuned.dynamic_batching.preferred_batch_size.extend(knobs.preferred)
    else:
        tuned.ClearField("dynamic_batching")
    if not tuned.instance_group:
        tuned.instance_group.add()
    first = tuned.instance_group[0]
    del tuned.instance_group[1:]
    first.count = knobs.instances
    apply_option(tuned, knobs.accelerator)
    return tuned
