"""What one serving unit of a target offers a model (``TargetSpec``: GPU, disk, Triton image,
shared memory, node driver, how it holds models) and the facts of a Triton image: the values each
cloud's ``offer`` fills and the targets' contract reads, below both."""

from __future__ import annotations

from dataclasses import dataclass

from infra.facts import hardware as facts
from infra.facts import llm
from infra.facts.drivers import NodeDriver
from infra.facts.triton import default_checked_image
from tdk.errors import UsageError


@dataclass(frozen=True)
class ShmLimit:
    """The /dev/shm a unit's container has for the Python backend's stubs, what each instance
    takes, and the stack key that changes it (SageMaker MME: ``infra/clouds/aws/offer.py``)."""

    container: str
    available: int
    per_instance: int
    key: str


@dataclass(frozen=True)
class ModelLoading:
    """How a serving unit holds a release's models: all at start (the release must fit
    ``budget_bytes``) or each copy on its first request (``on_demand``: the least recently used
    idle copy is unloaded beyond ``budget_bytes``); ``mode`` and ``switch`` are the target's
    words for its setting and for the one that loads on demand (``infra/targets/loading.py``)."""

    on_demand: bool
    budget_bytes: int
    mode: str
    switch: str


@dataclass(frozen=True)
class TargetSpec:
    """What one serving unit of a deploy target offers a model: GPU (None on CPU), disk,
    image, MME or not, the GPUs one Triton sees, and whether its models share those GPUs
    (one Triton for every model) or each model gets its own (one container per copy)."""

    target: str
    label: str
    gpu: facts.Gpu | None
    disk_gb: int
    image: facts.Image
    mme: bool
    gpus: int = 1
    shares_gpus: bool = True
    #: the image reference the unit runs (an NGC tag, or a version): its flavour adds the
    #: LLM engines' backends (``infra.facts.llm.serving_image`` fits it to the models)
    image_name: str = ""
    #: the Python backend's shared memory in the unit's container, where it is bounded
    python_shm: ShmLimit | None = None
    #: the NVIDIA driver of the unit's GPU nodes, with its source (None: the target records
    #: none), against which the engine image is checked (``infra.facts.drivers``)
    node_driver: NodeDriver | None = None
    #: how the unit holds the release's models, where the target says (``ModelLoading``)
    loading: ModelLoading | None = None

    @property
    def backends(self) -> frozenset[str]:
        """The backends this unit's image serves on its GPU (or CPU)."""
        base = self.image.gpu_backends if self.gpu else self.image.cpu_backends
        return llm.image_backends(self.image_name, base)


def image_facts(image: str = "") -> facts.Image:
    """The facts of Triton ``image`` (a tag, a URI or a version; empty: the checked default)."""
    version = facts.image_version(image) if image else default_checked_image()
    found = facts.IMAGES.get(version)
    if found is None:
        what = repr(image) if image else "the image the stacks deploy"
        raise UsageError(
            f"Triton image {what} (version {version}) is not a published release in tdk's "
            "image facts: its CUDA, backends and limits cannot be checked",
            hint=f"add its row to infra/facts/hardware.py from {facts.TRITON_RELEASE_NOTES}, "
            f"or check against one of {', '.join(sorted(facts.IMAGES))} with --image",
        )
    return found
