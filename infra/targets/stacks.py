"""One config read path: a stack's settings (``Pulumi.yaml`` with ``Pulumi.<stack>.yaml`` over
it), the registered target its ``target`` key names, and what a stack name may be."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from infra.targets import registry
from infra.targets.capabilities import DEPLOY
from infra.targets.entry import TargetEntry
from tdk.errors import UsageError

if TYPE_CHECKING:
    from infra.config import ConfigReader, StackConfig
    from infra.k8s.render import Rendered
    from infra.targets.base import Target
    from packager.repository import ModelDir


@dataclass(frozen=True)
class StackSettings:
    """One stack's configuration, read once: ``Pulumi.yaml`` declarations with
    ``Pulumi.<stack>.yaml`` over them (as the Pulumi CLI merges them), or the Pulumi program's
    own config; ``config`` is the target's typed, validated config, built on first use."""

    name: str
    reader: ConfigReader
    entry: TargetEntry

    def get(self, key: str) -> str:
        """A key's value as the program reads it (the declared default when unset)."""
        return self.reader.string(key)

    @cached_property
    def program(self) -> Target[Any]:
        """The stack's target's Pulumi program (its deploy contract)."""
        return registry.deploy_port(self.entry)

    @cached_property
    def common(self) -> StackConfig:
        from infra.config import read_stack_config

        return read_stack_config(self.reader, self.entry.name, self.program.release_schemes)

    @cached_property
    def config(self) -> Any:
        """The target's typed config, validated as ``pulumi up`` validates it."""
        return self.program.read_config(self.reader, self.common)

    @cached_property
    def models(self) -> list[ModelDir]:
        """The models of the repositories the stack names (``k8sModels``; none for a target
        whose stack names none), for the one feasibility path."""
        from packager.repository import discover

        repos = self.program.model_repositories(self.reader)
        return [model for repo in repos for model in discover(repo)]

    def render(self, outputs: Mapping[str, Any] | None = None) -> Rendered:
        """The stack's Kubernetes manifests (``tdk render k8s``), validated like ``pulumi up``
        would; a target without a Kubernetes workload refuses, naming why."""
        from infra.k8s.render import render_settings
        from infra.targets.base import render_port

        return render_settings(
            self.entry.name,
            self.name,
            lambda output: render_port(self.program, self.entry.name).manifests(
                self.config, output
            ),
            outputs,
        )


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
