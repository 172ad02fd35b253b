"""What a target may refuse: each capability a ``cannot`` key of its ``TargetEntry``
(``infra.targets.registry``), with the reason as the value."""

#: what a target may refuse, each a ``cannot`` key (rendering is refused by the deploy
#: contract itself: ``Target.cannot_render``)
DEPLOY, PLAN, VALIDATE = "deploy", "plan", "validate"
#: a capability with no methods: serving decoupled models (several responses per request)
DECOUPLED = "serve decoupled models"
#: a capability with no methods: running an LLM engine (vLLM, TensorRT-LLM), which needs the
#: Triton image flavour that carries it (``infra.facts.llm.serving_image``)
LLM_ENGINES = "serve vLLM or TensorRT-LLM models"
CAPABILITIES = (DEPLOY, PLAN, VALIDATE, DECOUPLED, LLM_ENGINES)
