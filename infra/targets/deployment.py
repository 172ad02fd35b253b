"""Where a stack's deployment is: ``--stack`` names the target, the endpoint, the region and the
release, read from the stack's config and, once deployed, its outputs (``pulumi stack output
--json``, or a file of it given as ``--outputs``).

One function, ``resolve``, for every command that takes ``--stack`` (metrics, endpoint
status/wait, invoke, bench). A flag given alongside the stack wins over what the stack says,
except for what names the deployment itself: a ``--target`` or ``--endpoint`` that disagrees
with the stack is an error naming both, never a silent choice.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from infra.targets.operations import Locator
from tdk.bounded import DocumentError, load_json
from tdk.errors import UsageError

#: the Locator fields a stack can name (what ``TargetEntry.stack_location`` returns)
LOCATED = ("endpoint", "region", "release", "url", "workspace_id")
#: the fields that name the deployment: a flag that disagrees with the stack is a conflict
IDENTITY = ("endpoint",)
#: the option each field is given with, for messages
OPTION = {
    "endpoint": "--endpoint",
    "region": "--region",
    "release": "--release",
    "url": "--url",
    "workspace_id": "--workspace-id",
}
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


def resolve(target: str | None, given: Locator, outputs: Path | None = None) -> tuple[str, Locator]:
    """The target and the Locator a command uses: with ``given.stack``, the stack's target and
    the fields it names, the flags in ``given`` over them (a conflicting ``--target`` or
    ``--endpoint`` is an error naming both); without, the flags alone."""
    from infra.targets import registry, stacks

    if given.stack is None:
        if outputs is not None:
            raise UsageError("--outputs needs --stack", hint="pass the stack the outputs belong to")
        return target or DEFAULT_TARGET, given
    settings = stacks.load_stack(Path(given.project_dir), given.stack)
    found = settings.entry.name
    if target is not None and registry.get(target).name != found:
        raise UsageError(
            f"--target {target} and --stack {given.stack} disagree: the stack deploys to {found}",
            hint=f"drop --target (the stack names its target), or pass a {target} stack",
        )
    project = Path(given.project_dir)
    values = read_outputs(outputs) if outputs else pulumi_outputs(project, given.stack)
    named = settings.entry.stack_location(settings, values)
    return found, merge(given, named)


def merge(given: Locator, named: Mapping[str, str | None]) -> Locator:
    """``given``'s flags over the stack's ``named`` fields; a flag that names another
    deployment than the stack (``IDENTITY``) is a UsageError naming both."""
    unknown = set(named) - {f.name for f in fields(Locator)}
    if unknown:
        raise TypeError(f"stack_location named fields Locator lacks: {sorted(unknown)}")
    changes: dict[str, str] = {}
    for key, value in named.items():
        flag = getattr(given, key)
        if not value:
            continue
        if flag and flag != value and key in IDENTITY:
            raise UsageError(
                f"{OPTION[key]} {flag} and --stack {given.stack} disagree: the stack's "
                f"{key} is {value}",
                hint=f"drop {OPTION[key]} (the stack names it), or pass the stack of {flag}",
            )
        if not flag:
            changes[key] = value
    return replace(given, **changes)
