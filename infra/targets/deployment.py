"""Where a deployment is: what a command was told (``Given``: its options, the ``--stack``)
made into the target's own locator (``infra.targets.operations.Locator``). ``--stack`` names
the target, and the stack's config and, once deployed, its outputs (``pulumi stack output
--json``, or a file of it given as ``--outputs``) name what the target's locator reads from it.

One function, ``resolve``, for every command that takes ``--stack`` (metrics, endpoint
status/wait, invoke, bench). A flag given alongside the stack wins over what the stack says,
except for what names the deployment itself: a ``--target`` or ``--endpoint`` that disagrees
with the stack is an error naming both, never a silent choice; an option the target does not
take is refused, naming it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tdk.bounded import DocumentError, load_json
from tdk.errors import UsageError

if TYPE_CHECKING:
    from infra.targets.operations import Locator
    from infra.targets.stacks import StackSettings


@dataclass(frozen=True)
class Given:
    """What an operation command was told about where the deployment is: its options
    (``--endpoint`` -> value; None: not given), the ``--stack`` and its ``--project-dir``."""

    options: Mapping[str, Any]
    stack: str | None = None
    project_dir: Path = Path(".")


#: seconds ``pulumi stack output`` may take (it reads the state backend)
PULUMI_TIMEOUT_S = 60.0
#: where a target goes when neither ``--target`` nor ``--stack`` is given
DEFAULT_TARGET = "local"


def read_outputs(path: Path) -> dict[str, Any]:
    """A ``pulumi stack output --json`` file (``--outputs``) as a mapping."""
    try:
        data = load_json(path, "")
    except DocumentError as exc:
        raise UsageError(
            f"--outputs {path}: cannot read it as JSON ({exc.reason})",
            hint=f"write it with `pulumi stack output --json > {path}`",
        ) from None
    if not isinstance(data, dict):
        raise UsageError(
            f"--outputs {path}: expected a JSON object",
            hint=f"write it with `pulumi stack output --json > {path}`",
        )
    return data


def pulumi_outputs(project_dir: Path, stack: str) -> dict[str, Any]:
    """The deployed stack's outputs through the Pulumi CLI; empty when the CLI is missing or
    the stack is not deployed (its config then says what it can)."""
    pulumi = shutil.which("pulumi")
    if pulumi is None:
        return {}
    command = [pulumi, "stack", "output", "--json", "--stack", stack, "--cwd", str(project_dir)]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=PULUMI_TIMEOUT_S, check=False
        )
        data = json.loads(done.stdout) if done.returncode == 0 else {}
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return {}
    return data if isinstance(data, dict) else {}


def locator(
    target: str,
    options: Mapping[str, Any],
    stack: StackSettings | None = None,
    outputs: Mapping[str, Any] | None = None,
) -> Locator:
    """``target``'s own locator (its client module's ``LOCATOR``) from ``options`` over what
    ``stack`` and its ``outputs`` name; an option the target does not take is refused."""
    from infra.targets.operations import locator_type

    return locator_type(target).build(options, stack, outputs)


def resolve(target: str | None, given: Given, outputs: Path | None = None) -> Locator:
    """The locator a command uses: with ``given.stack``, the stack's target's, from what the
    stack names with the options over it (a conflicting ``--target`` or ``--endpoint`` is an
    error naming both); without, ``target``'s (local by default) from the options alone."""
    from infra.targets import registry, stacks

    if given.stack is None:
        if outputs is not None:
            raise UsageError("--outputs needs --stack", hint="pass the stack the outputs belong to")
        return locator(target or DEFAULT_TARGET, given.options)
    settings = stacks.load_stack(given.project_dir, given.stack)
    found = settings.entry.name
    if target is not None and registry.get(target).name != found:
        raise UsageError(
            f"--target {target} and --stack {given.stack} disagree: the stack deploys to {found}",
            hint=f"drop --target (the stack names its target), or pass a {target} stack",
        )
    values = read_outputs(outputs) if outputs else pulumi_outputs(given.project_dir, given.stack)
    return locator(found, given.options, settings, values)
