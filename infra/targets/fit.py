"""How many copies of a model stay loaded at once on one unit of a target: the working set
``tdk validate --target`` prints (``infra.targets.checks``, ``infra.targets.engine_memory``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Fit:
    """How many copies of a model fit loaded at once on one instance of the target."""

    model: str
    config_path: str
    weight_bytes: int  # the model's files and, for an ensemble, its composing models' files
    gpu_copies: int | None  # None on a CPU instance
    disk_copies: int | None  # None when the target does not say its disk size
    composing: tuple[str, ...] = ()
    #: an engine model: where its weights' size comes from ("" for a model's own files)
    weights_from: str = ""
    #: an engine model: the tokens of context its KV cache holds at most (None: unknown,
    #: ``kv_from`` says why) and how one token's size was found
    kv_tokens: int | None = None
    kv_from: str = ""

    def describe(self, label: str) -> str:
        """The working-set line of ``tdk validate --target``, in plain words."""
        if self.weights_from:
            return self._describe_engine(label)
        what = f"{self.model} ({self.weight_bytes / 1e6:.1f} MB"
        what += f" with {', '.join(self.composing)})" if self.composing else ")"
        places = [("in GPU memory", self.gpu_copies), ("on disk", self.disk_copies)]
        short = [place for place, n in places if n == 0]
        if short:
            return f"working set on {label}: {what} does not fit {' or '.join(short)}"
        counts = [f"{_count(n)} {place}" for place, n in places if n is not None]
        return f"working set on {label}: {what}: copies loaded at once: {', '.join(counts)}"

    def _describe_engine(self, label: str) -> str:
        if self.gpu_copies is None:
            return f"working set on {label}: {self.model}: weights {self.weights_from}"
        size = f"{self.weight_bytes / 1e9:.1f} GB ({self.weights_from})"
        if self.gpu_copies == 0:
            return f"working set on {label}: {self.model}: weights {size} do not fit"
        line = (
            f"working set on {label}: {self.model}: weights {size}; engine replicas loaded "
            f"at once: {self.gpu_copies}"
        )
        if self.kv_tokens is not None:
            return f"{line}; KV cache: at most {self.kv_tokens} tokens of context ({self.kv_from})"
        return f"{line}; KV cache: not sized ({self.kv_from})" if self.kv_from else line


def _count(n: int) -> str:
    return "over 1000" if n > 1000 else str(n)
