"""One TargetModel's life on a local endpoint, and what Triton's errors say about a model."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field

from packager.manifest import ManifestModel

#: what Triton 2.51's Python backend answers once a model instance's stub process has died
#: (measured 2026-11-27 with the runtime wheel: ``Stub process 'm_0_0' is not healthy.``)
_STUB_CRASHED = re.compile(r"Stub process '[^']*' is not healthy")


def stub_crashed(message: str) -> bool:
    """Whether Triton's error ``message`` says the model's Python stub process died."""
    return _STUB_CRASHED.search(message) is not None


#: what Triton 2.51 answers an inference for a model it does not hold (checked 2026-12-07 with
#: the runtime wheel: ``Request for unknown model: 'm' is not found``): a pod's Triton that
#: restarted between two of the front's health polls has forgotten every model
_FORGOTTEN = re.compile(r"Request for unknown model")


def forgotten(message: str) -> bool:
    """Whether Triton's error ``message`` says it does not hold the model (it restarted)."""
    return _FORGOTTEN.search(message) is not None


#: the phases of a load, in the order they happen (``ModelState``'s ``<phase>_s`` fields)
LOAD_PHASES = ("drain", "slot", "download", "extract", "unload", "load")

IDLE_GRACE = 0.2  # seconds without requests before a loaded model counts as idle


@dataclass
class ModelState:
    """One TargetModel's life on this endpoint."""

    entry: ManifestModel
    loaded: bool = False
    evicting: bool = False
    inflight: int = 0
    last_used: float = 0.0
    loaded_at: float = 0.0
    loading: asyncio.Future[None] | None = field(default=None, repr=False)
    #: why its last load failed (Triton's reason), until a load succeeds
    failed: str | None = None
    #: requests between ``acquire``'s lookup and their count in ``inflight``
    pending: int = 0
    #: left out of the release the endpoint switched to: unloaded once its requests finish
    retired: bool = False
    #: bytes it holds against the memory budget while loading or loaded (``budget``)
    memory: int = 0
    #: its last load: seconds fetching (0 when extracted already) and in Triton's load
    download_s: float = 0.0
    load_s: float = 0.0
    #: the rest of its last load, in seconds (``LOAD_PHASES``): waiting for its own eviction to
    #: end, for a slot (other models' evictions and unloads), extracting, and for Triton to
    #: finish unloading it
    drain_s: float = 0.0
    slot_s: float = 0.0
    extract_s: float = 0.0
    unload_s: float = 0.0
    #: the name Triton holds it under now, or held it under last: its own, or its alias while
    #: Triton still unloads it under its own (``alias``)
    triton_name: str = ""
    #: per Triton name, done once Triton reports that name's last unload finished; a load under
    #: a name Triton still unloads would be taken for that unload (``_unload``)
    unloads: dict[str, asyncio.Future[None]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.triton_name = self.triton_name or self.entry.name

    @property
    def aliased(self) -> bool:
        """Whether Triton holds it under its alias (its answers name the alias)."""
        return self.triton_name != self.entry.name

    def phases_ms(self) -> dict[str, float]:
        """Its last load's phases in milliseconds (``LOAD_PHASES``)."""
        return {phase: getattr(self, f"{phase}_s") * 1000 for phase in LOAD_PHASES}
