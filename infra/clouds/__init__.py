"""One package per cloud that targets share (``infra/clouds/<cloud>/``): its CLI and
credentials (``machine``), its guardrails. A target's entry names its cloud
(``TargetEntry.cloud``); shared code asks the target, never one of these."""
