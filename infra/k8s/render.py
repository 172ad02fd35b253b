"""Render a gke/eks stack's Kubernetes manifests from its committed stack file, no Pulumi needed.

The stack file and ``Pulumi.yaml`` defaults are read the way the Pulumi CLI merges them, the
target's own config checks run, and the same pure builders Pulumi applies produce the YAML.
Values only a deployment knows (the EKS role ARN, the AMP workspace) come from
``pulumi stack output --json``, or stay ``${name}`` placeholders for envsubst.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from infra.config import ConfigReader, merged_stack_config, read_stack_config
from infra.k8s.manifests import Manifest


@dataclass(frozen=True)
class Rendered:
    """What a render produced: the manifests in apply order and any placeholders left in."""

    stack: str
    target: str
    manifests: list[Manifest]
    placeholders: list[str] = field(default_factory=list)


def render_stack(
    project_dir: Path, stack: str, outputs: Mapping[str, Any] | None = None
) -> Rendered:
    """The manifests of ``stack``, validated like ``pulumi up`` would; the target renders them
    (a target without a Kubernetes workload refuses, naming why)."""
    from infra.targets import MODULES, load_target

    reader = ConfigReader(merged_stack_config(project_dir, stack).get)
    target = load_target(reader.choice("target", MODULES))
    common = read_stack_config(reader, target.name, target.release_schemes)
    config = target.read_config(reader, common)
    known = dict(outputs or {})
    placeholders: list[str] = []

    def output(name: str) -> str:
        if name in known:
            return str(known[name])
        placeholders.append(name)
        return "${" + name + "}"

    return Rendered(stack, target.name, target.render(config, output), placeholders)


def file_name(index: int, manifest: Manifest) -> str:
    """``03-service-tdk-gke-dev.yaml``: apply order, kind, name."""
    return f"{index:02d}-{manifest['kind'].lower()}-{manifest['metadata']['name']}.yaml"


def write_manifests(rendered: Rendered, out_dir: Path) -> list[Path]:
    """One YAML document per file under ``out_dir``, numbered in apply order.

    Files an earlier render wrote (``NN-kind-name.yaml``) that this one does not are removed,
    so a GitOps tree never keeps a manifest the stack no longer has.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    wanted = {file_name(i, m) for i, m in enumerate(rendered.manifests)}
    for stale in out_dir.glob("[0-9][0-9]-*.yaml"):
        if stale.name not in wanted:
            stale.unlink()
    paths = []
    for index, manifest in enumerate(rendered.manifests):
        path = out_dir / file_name(index, manifest)
        path.write_text(yaml.safe_dump(manifest, sort_keys=False, default_flow_style=False))
        paths.append(path)
    return paths
