"""The engine image against the node driver (issue 48 item 4): one answer for ``feasible``
(validate, plan, the Pulumi program) and ``tdk doctor``, from the target's node driver
(``Target.node_driver``) and ``infra.facts.drivers``."""

from __future__ import annotations

from typing import Any

from infra.facts import drivers, llm
from infra.targets.checks import TargetSpec
from packager.validate.findings import Finding, finding

DRIVER_TOO_OLD = "TDK917"
DRIVER_NOT_NATIVE = "TDK918"


def _node(spec: TargetSpec) -> drivers.NodeDriver:
    if spec.node_driver is not None:
        return spec.node_driver
    return drivers.NodeDriver(None, "", why=f"the {spec.target} target records no node driver")


def _kind(spec: TargetSpec) -> str:
    return spec.gpu.kind if spec.gpu is not None else ""


def driver_findings(spec: TargetSpec, where: str) -> list[Finding]:
    """TDK917 where the serving engine image cannot run on the node's driver, TDK918 where it
    runs only through CUDA minor version compatibility or nobody knows (forward compatibility on
    a data-center GPU included); none where it runs natively."""
    said = drivers.verdict(spec.image_name, _node(spec), _kind(spec))
    if said is None or said.native:
        return []
    if said.runs is False:
        fix = "use nodes whose NVIDIA driver is of the image's CUDA branch, or an older release"
        return [finding(DRIVER_TOO_OLD, where, "image", said.message, fix)]
    fix = "nothing to change if the engine loads; a newer node driver lifts the limits"
    return [finding(DRIVER_NOT_NATIVE, where, "image", said.message, fix)]


def driver_report(spec: TargetSpec) -> list[str]:
    """For ``tdk doctor``: each engine image of the stack's release on the node's driver."""
    node = _node(spec)
    lines = []
    for engine in sorted(llm.FLAVOURS):
        image = llm.engine_image(spec.image_name or f"x:{spec.image.version}-py3", engine)
        said = drivers.verdict(image, node, _kind(spec))
        if said is not None:
            lines.append(said.message)
    return lines


def stack_driver_report(project_dir: Any, name: str) -> list[str]:
    """``driver_report`` for committed stack ``name`` ([] where its config is refused: the
    feasibility verdict says why)."""
    from infra.targets import stacks
    from infra.targets.capabilities import LLM_ENGINES
    from tdk.errors import TdkError

    try:
        stack = stacks.load_stack(project_dir, name)
        if stack.entry.refused(LLM_ENGINES) is not None:
            return []  # the target runs no engine image
        return driver_report(stack.program.offer(stack.config))
    except TdkError:
        return []
