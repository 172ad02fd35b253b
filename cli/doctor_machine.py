"""``tdk doctor``'s machine and placeholder sections: the tools, state backend and credentials
each stack's deploy needs on this machine, per cloud what works and what to fix (SkyPilot's
``sky check`` is the bar), and every placeholder value left in a stack file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cli.output import Output

PROJECT_PREFIX = "triton-deploy-kit:"  # the project's own keys are set without it


def needs(project_dir: Path, stacks: list[str]) -> list[Any]:
    """What each deployable stack needs from this machine, asked of its registered target."""
    from infra.facts.machine import Needs
    from infra.k8s.entry import KubernetesEntry
    from infra.targets.capabilities import DEPLOY
    from infra.targets.stacks import load_stack

    found = []
    for name in stacks:
        entry = load_stack(project_dir, name).entry
        if entry.refused(DEPLOY) is None:
            found.append(Needs(name, entry.name, entry.cloud, isinstance(entry, KubernetesEntry)))
    return found


def registered_clouds() -> list[Any]:
    """Every registered target's cloud, once each, in registry order."""
    from infra.targets import registry

    found = {e.cloud.name: e.cloud for e in registry.entries() if e.cloud is not None}
    return list(found.values())


def machine_report(project_dir: Path, stacks: list[str], online: bool) -> dict[str, Any]:
    """The machine checks, the per-cloud summary and the placeholders, as one document."""
    from infra.facts.machine import cloud_summary, survey
    from infra.placeholders import scan_stack

    wanted = needs(project_dir, stacks)
    checks = survey(wanted, online=online, clouds=registered_clouds())
    per_cloud = cloud_summary(wanted, checks)
    return {
        "online": online,
        "machine": [c.to_json() for c in checks],
        "clouds": [
            dict(zip(("cloud", "status", "stacks", "fix"), row, strict=True)) for row in per_cloud
        ],
        "placeholders": {s: [p.to_json() for p in scan_stack(project_dir, s)] for s in stacks},
    }


def show(out: Output, report: dict[str, Any]) -> None:
    """The machine checks, the per-cloud lines and their fixes, then the placeholders."""
    checks = report["machine"]
    rows = [(f"{c['scope']} {c['check']}", c["status"], c["value"]) for c in checks]
    where = "with --online" if report["online"] else "no network call; --online verifies"
    out.table(f"this machine ({where})", ("check", "status", "value"), rows)
    for cloud in report["clouds"]:
        missing = f" - missing: {cloud['fix']}" if cloud["fix"] else ""
        out.info(f"{cloud['cloud']}: {cloud['status']} for {cloud['stacks']}{missing}")
    fixes = [c for c in checks if c["fix"] and c["status"] == "missing"]
    if fixes:
        out.info("to fix:")
    for check in fixes:
        out.info(f"  {check['scope']} {check['check']}: {check['fix']}")
    placeholders = [
        (stack, p["key"].removeprefix(PROJECT_PREFIX), p["value"], p["why"])
        for stack, found in report["placeholders"].items()
        for p in found
    ]
    if placeholders:
        title = "placeholders to replace before `pulumi up`: pulumi config set KEY VALUE -s STACK"
        out.table(title, ("stack", "key", "value", "why"), placeholders, whole=(0, 1), drop=(3,))
