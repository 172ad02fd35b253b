"""Render a gke/eks stack's Kubernetes manifests from its committed stack file, no Pulumi needed.

The stack file and ``Pulumi.yaml`` defaults are read the way the Pulumi CLI merges them, the
target's own config checks run, and the same pure builders Pulumi applies produce the YAML.
Values only a deployment knows (the EKS role ARN, the AMP workspace) come from
``pulumi stack output --json``, or stay ``${name}`` placeholders for envsubst.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from infra.config import ConfigReader, ConfigSource, qualify, read_stack_config
from infra.k8s import manifests
from infra.k8s.manifests import Manifest
from tdk.errors import UsageError

K8S_TARGETS = ("gke", "eks")


@dataclass(frozen=True)
class Rendered:
    """What a render produced: the manifests in apply order and any placeholders left in."""

    stack: str
    target: str
    manifests: list[Manifest]
    placeholders: list[str] = field(default_factory=list)


def _as_string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | dict):
        return json.dumps(value)
    return str(value)


def _load_yaml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise UsageError(
            f"{path} does not exist",
            hint="run from the project root (where Pulumi.yaml is) or pass --project-dir",
        )
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise UsageError(f"{path}: not valid YAML ({exc})", hint="fix the file") from exc
    if not isinstance(data, dict):
        raise UsageError(f"{path}: expected a mapping at the top", hint="fix the file")
    return data


def stack_source(project_dir: Path, stack: str) -> ConfigSource:
    """Pulumi.yaml defaults overlaid with Pulumi.<stack>.yaml, as qualified key -> string."""
    project = _load_yaml(project_dir / "Pulumi.yaml")
    values: dict[str, str] = {}
    for key, decl in (project.get("config") or {}).items():
        if isinstance(decl, dict) and ("default" in decl or "value" in decl):
            values[qualify(key)] = _as_string(decl.get("default", decl.get("value")))
        elif not isinstance(decl, dict):
            values[qualify(key)] = _as_string(decl)
    stack_file = _load_yaml(project_dir / f"Pulumi.{stack}.yaml")
    for key, value in (stack_file.get("config") or {}).items():
        values[qualify(key)] = _as_string(value)
    return values.get


def render_stack(
    project_dir: Path, stack: str, outputs: Mapping[str, Any] | None = None
) -> Rendered:
    """The manifests of ``stack`` (a gke or eks stack), validated like ``pulumi up`` would."""
    from infra.targets import load_target

    reader = ConfigReader(stack_source(project_dir, stack))
    target_name = reader.string("target")
    if target_name not in K8S_TARGETS:
        raise UsageError(
            f"stack {stack!r} deploys to {target_name!r}; only gke and eks stacks have "
            "Kubernetes manifests",
            hint="pass --stack gke-dev or --stack eks-dev",
        )
    target = load_target(target_name)
    common = read_stack_config(reader, target.name, target.release_schemes)
    config = target.read_config(reader, common)
    known = dict(outputs or {})
    placeholders: list[str] = []

    def value(name: str) -> str:
        if name in known:
            return str(known[name])
        placeholders.append(name)
        return "${" + name + "}"

    if target_name == "gke":
        from infra.targets.gke.config import triton_spec as gke_spec

        spec = gke_spec(config)
        extra: list[Manifest] = []
    else:
        from infra.targets.eks.builders import amp_query_url
        from infra.targets.eks.config import triton_spec as eks_spec
        from infra.targets.eks.monitoring import scraper_rbac

        region = reader.string("aws:region")
        prometheus_url = amp_query_url(region, value("ampWorkspaceId"))
        spec = eks_spec(config, value("tritonRoleArn"), prometheus_url)
        extra = scraper_rbac()
    rendered = [manifests.namespace(spec), *manifests.workload_manifests(spec), *extra]
    return Rendered(stack, target_name, rendered, placeholders)


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
