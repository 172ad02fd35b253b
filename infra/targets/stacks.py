"""One config read path: a stack's settings (``Pulumi.yaml`` with ``Pulumi.<stack>.yaml`` over
it), the registered target its ``target`` key names, and what a stack name may be."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from infra.targets import registry
from infra.targets.capabilities import DEPLOY
from infra.targets.registry import StackSettings
from tdk.errors import UsageError

if TYPE_CHECKING:
    from infra.config import ConfigReader


def settings(reader: ConfigReader, name: str) -> StackSettings:
    """The settings of the stack behind ``reader`` (its ``target`` key picks the entry)."""
    target = reader.choice("target", registry.able(DEPLOY))
    return StackSettings(name, reader, registry.get(target))


def load_stack(project_dir: Path | str, stack: str) -> StackSettings:
    """The settings of committed stack ``stack`` (``Pulumi.<stack>.yaml`` in ``project_dir``)."""
    from infra.config import ConfigReader, merged_stack_config

    check_stack_name(stack)
    values = merged_stack_config(Path(project_dir), stack)
    return settings(ConfigReader(values.get), stack)


def check_stack_name(stack: str) -> None:
    """``--stack`` is a stack name (``gke-dev``), never a path; ``--project-dir`` says where."""
    if not stack or "/" in stack or "\\" in stack or stack.endswith((".yaml", ".yml")):
        raise UsageError(
            f"--stack {stack!r} is not a stack name",
            hint="pass the stack's name (e.g. --stack gke-dev) and --project-dir for where "
            "Pulumi.yaml is",
        )


def stack_from_path(path: Path) -> tuple[Path, str]:
    """(project dir, stack name) of a ``Pulumi.<stack>.yaml`` path."""
    stem = path.name
    for suffix in (".yaml", ".yml"):
        stem = stem.removesuffix(suffix)
    if not path.name.startswith("Pulumi.") or stem == path.name or stem == "Pulumi":
        raise UsageError(
            f"{path}: expected a Pulumi.<stack>.yaml file",
            hint="e.g. Pulumi.sagemaker-dev.yaml, next to the project's Pulumi.yaml",
        )
    return path.parent, stem.removeprefix("Pulumi.")
