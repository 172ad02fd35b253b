"""What ``tdk plan`` asks of the targets, through the one feasibility path: which target a plan
is for, whether each candidate unit can deploy before it is priced, and the scaling keys a
plan writes into a stack, checked against the whole stack before anything is written.

Plain data in (target names, instance types, the typed stack), so the CLI only parses and
renders; the planner itself (``infra.perf.plan``) never imports the targets.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tdk.errors import UsageError

if TYPE_CHECKING:
    from infra.planning.report import PlanReport
    from infra.targets.entry import TargetEntry
    from infra.targets.stacks import StackSettings
    from packager.repository import ModelDir


def plan_target(
    target: str | None, measured: str, stack: StackSettings | None, streams: bool = False
) -> TargetEntry:
    """The target to plan for: ``target`` (``--target``), else the stack's, else the one the
    measurement was taken on (``measured``), else the first registered target that plans (and,
    for a streamed model, serves decoupled models: a target that cannot is refused with its
    reason, never priced)."""
    from infra.targets import registry
    from infra.targets.capabilities import DECOUPLED, PLAN

    if stack is not None:
        if target is not None and registry.get(target).name != stack.entry.name:
            raise UsageError(
                f"--target {target} but the stack deploys {stack.entry.name}",
                hint="drop --target, or pass the stack file of that target",
            )
        target = stack.entry.name
    able = registry.able(PLAN)
    if streams:
        able = [name for name in able if registry.get(name).refused(DECOUPLED) is None]
        if target is None and measured in registry.names() and measured not in able:
            _unplanned(measured, able)
    if target is None:
        target = measured if measured in able else able[0]
    entry = registry.get(target)
    for need in (PLAN, DECOUPLED) if streams else (PLAN,):
        if entry.refused(need) is not None:
            raise registry.refusal(entry, need)
    return entry


def _unplanned(measured: str, able: list[str]) -> None:
    """A streamed measurement taken on a target that does not plan it: the target to price
    is the user's choice, never a silent default (an ml.* type is no GKE node)."""
    from infra.targets import registry
    from infra.targets.capabilities import DECOUPLED, PLAN

    entry = registry.get(measured)
    need = PLAN if entry.refused(PLAN) is not None else DECOUPLED
    refused = entry.refused(need)
    reason = refused.reason if refused is not None else "not supported"
    raise UsageError(
        f"the measurement was taken on {measured}, which cannot {need}: {reason}",
        hint=f"pass --target {' or '.join(able)} with its --instance-type; --components "
        "RELEASE compares SageMaker inference components at the same load",
    )


def check_candidates(
    entry: TargetEntry,
    specs: Sequence[str],
    region: str,
    gpus_per_node: int,
    committed: tuple[Path, str] | None = None,
    models: Sequence[ModelDir] = (),
) -> None:
    """Every candidate (``TYPE`` or ``TYPE:RPS``) through the one feasibility path before it
    is priced (in the planned stack ``committed``, with its ``models``, when one is given): a
    UsageError for the first the target cannot deploy."""
    from infra.targets.feasibility import check_candidate
    from infra.targets.ports import PlanUnit

    for spec in specs:
        unit = PlanUnit(region, spec.partition(":")[0], gpus_per_node)
        check_candidate(entry, unit, committed, models)


def checked_scaling_updates(
    entry: TargetEntry, report: PlanReport, instance: str, committed: tuple[Path, str]
) -> dict[str, int]:
    """The stack keys the plan's option ``instance`` sets (the target's plan port says which),
    once the committed stack with them merged in can deploy (a ConfigError naming its first
    refusal otherwise): what ``tdk plan --write-stack`` writes, checked before any write."""
    from infra.config import ConfigReader, merged_stack_config
    from infra.targets import stacks
    from infra.targets.feasibility import require_feasible
    from infra.targets.registry import plan_port

    option = next(o for o in report.options if o.name == instance)
    updates = plan_port(entry).scaling_updates(report, option)
    project_dir, name = committed
    merged = merged_stack_config(project_dir, name, updates)
    require_feasible(stacks.settings(ConfigReader(merged.get), name))
    return updates
