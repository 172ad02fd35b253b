"""What the planner (``infra.perf``) and the targets (``infra.targets``) share: the plan's
types and its price table. It imports neither, so neither imports the other."""
