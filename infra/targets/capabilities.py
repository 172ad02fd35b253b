"""What a target may refuse, each with a ``Refused(reason)``, the one refusal shape: asked as
``TargetEntry.refused(what)`` (``infra.targets.entry``)."""

from dataclasses import dataclass

#: the ports of an entry (``deploy``, ``plan``, ``validate``); rendering and building
#: engines are the deploy contract's own ports (``Target.render``, ``Target.build``)
DEPLOY, PLAN, VALIDATE = "deploy", "plan", "validate"
#: the compare port: ``tdk plan --components RELEASE`` (a unit per model copy, priced beside
#: the plan's options)
COMPARE = "compare model copies"
#: a capability with no methods: serving decoupled models (several responses per request)
DECOUPLED = "serve decoupled models"
#: a capability with no methods: running an LLM engine (vLLM, TensorRT-LLM), which needs the
#: Triton image flavour that carries it (``infra.facts.llm.serving_image``)
LLM_ENGINES = "serve vLLM or TensorRT-LLM models"
#: what a target's runtime may not serve (``TargetEntry.cannot_serve``; the other three are
#: ports, each the port or a refusal)
SERVING = (DECOUPLED, LLM_ENGINES)


@dataclass(frozen=True)
class Refused:
    """What a target cannot do, and why a user is told (the one refusal shape of a port)."""

    reason: str

    def __post_init__(self) -> None:
        if not self.reason.strip():
            raise TypeError("a refusal needs a reason")
