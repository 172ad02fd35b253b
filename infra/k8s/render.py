"""Render a gke/eks stack's Kubernetes manifests from its committed stack file, no Pulumi needed.

The stack file and ``Pulumi.yaml`` defaults are read the way the Pulumi CLI merges them, the
target's own config checks run, and the same pure builders Pulumi applies produce the YAML.
Values only a deployment knows (the EKS role ARN, the AMP workspace) come from
``pulumi stack output --json``, or stay ``${name}`` placeholders for envsubst.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from infra.k8s.manifests import Manifest
from tdk.errors import UsageError

#: stack output name -> its value (or a ``${name}`` placeholder)
OutputValue = Callable[[str], str]


@dataclass(frozen=True)
class Rendered:
    """What a render produced: the manifests in apply order and any placeholders left in."""

    stack: str
    target: str
    manifests: list[Manifest]
    placeholders: list[str] = field(default_factory=list)


def render_settings(
    target: str,
    stack: str,
    render: Callable[[OutputValue], list[Manifest]],
    outputs: Mapping[str, Any] | None = None,
) -> Rendered:
    """What ``render(output)`` produces for ``stack``: ``output(name)`` gives a stack output
    from ``outputs``, or a ``${name}`` placeholder that the result lists."""
    known = dict(outputs or {})
    placeholders: list[str] = []

    def output(name: str) -> str:
        if name in known:
            return str(known[name])
        placeholders.append(name)
        return "${" + name + "}"

    return Rendered(stack, target, render(output), placeholders)


def file_name(index: int, manifest: Manifest) -> str:
    """``03-service-tdk-gke-dev.yaml``: apply order, kind, name."""
    return f"{index:02d}-{manifest['kind'].lower()}-{manifest['metadata']['name']}.yaml"


def manifest_yaml(manifest: Manifest) -> str:
    return yaml.safe_dump(manifest, sort_keys=False, default_flow_style=False)


def yaml_stream(rendered: Rendered) -> str:
    """Every manifest as one ``---`` separated YAML stream (``kubectl apply -f -``)."""
    return "---\n".join(manifest_yaml(m) for m in rendered.manifests)


def write_manifests(rendered: Rendered, out_dir: Path) -> tuple[list[Path], list[Path]]:
    """One YAML document per file under ``out_dir``, numbered in apply order; the written
    paths and the stale files kept because they were edited since the last render.

    Only files the previous render of this stack recorded in its ledger are removed when the
    stack no longer has them, so a person's files and other stacks' manifests stay.
    """
    from infra.k8s.ledger import check_writes, commit

    if out_dir.exists() and not out_dir.is_dir():
        raise UsageError(
            f"--out {out_dir} is a file, not a directory",
            hint="pass a directory (created if missing), or --out - for one YAML stream on stdout",
        )
    contents = {
        file_name(i, m): manifest_yaml(m).encode() for i, m in enumerate(rendered.manifests)
    }
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        stale_files = check_writes(out_dir, rendered.stack, contents)
        return commit(out_dir, rendered.stack, contents, stale_files), stale_files.kept
    except OSError as exc:
        raise UsageError(
            f"--out {out_dir}: cannot write there ({exc.strerror or exc})",
            hint="choose a writable directory",
        ) from None
