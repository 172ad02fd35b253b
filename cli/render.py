"""``tdk render k8s``: a gke/eks stack's Kubernetes manifests as plain YAML, for GitOps."""

from __future__ import annotations

import json as jsonlib
from pathlib import Path
from typing import Annotated, Any

import typer

from cli.common import JsonOpt
from cli.output import Output
from tdk.errors import UsageError

app = typer.Typer(help="Write deployable artifacts without deploying them.", no_args_is_help=True)

StackOpt = Annotated[
    str, typer.Option("--stack", "-s", help="Stack whose committed Pulumi.<stack>.yaml to render.")
]
OutOpt = Annotated[Path, typer.Option("--out", help="Directory the YAML files are written to.")]
ProjectDirOpt = Annotated[
    Path, typer.Option("--project-dir", help="Directory holding Pulumi.yaml and the stack files.")
]
OutputsOpt = Annotated[
    Path | None,
    typer.Option(
        "--outputs",
        help="`pulumi stack output --json` of the deployed stack (fills the EKS role ARN and "
        "AMP workspace); without it they stay ${name} placeholders.",
    ),
]


@app.command("k8s")
def k8s(
    stack: StackOpt,
    out: OutOpt,
    project_dir: ProjectDirOpt = Path("."),
    outputs: OutputsOpt = None,
    json: JsonOpt = False,
) -> None:
    """Render ServiceAccount, Deployment, Service, PDB, KEDA scaling and monitoring manifests."""
    from infra.k8s.render import render_stack, write_manifests

    printer = Output(json_mode=json)
    known = _read_outputs(outputs) if outputs else None
    rendered = render_stack(project_dir, stack, known)
    paths = write_manifests(rendered, out)
    files = [
        {"path": str(path), "kind": m["kind"], "name": m["metadata"]["name"]}
        for path, m in zip(paths, rendered.manifests, strict=True)
    ]
    rules = _write_alert_rules(project_dir, stack, rendered.manifests, out)
    if json:
        printer.json(
            {
                "stack": stack,
                "target": rendered.target,
                "out": str(out),
                "files": files,
                "alert_rules": str(rules),
                "placeholders": rendered.placeholders,
            }
        )
    else:
        rows = [(Path(f["path"]).name, f["kind"], f["name"]) for f in files]
        title = f"tdk render k8s ({stack}, {rendered.target}) -> {out}"
        printer.table(title, ["file", "kind", "name"], rows)
        printer.info(f"alert rules (Prometheus rule file, `promtool check rules`): {rules}")
    if rendered.placeholders:
        names = ", ".join("${" + p + "}" for p in rendered.placeholders)
        printer.warn(
            f"left {names} in the manifests: pass --outputs with `pulumi stack output -s {stack} "
            "--json`, or substitute them (envsubst) before applying"
        )


def _write_alert_rules(
    project_dir: Path, stack: str, rendered: list[dict[str, Any]], out: Path
) -> Path:
    """The stack's alert rules as a plain Prometheus rule file next to the manifests."""
    from infra.config import ConfigReader, merged_stack_config
    from infra.k8s.alerts import RULE_FILE, alert_rules, rules_yaml
    from infra.k8s.config import read_workload_config

    alerts = read_workload_config(ConfigReader(merged_stack_config(project_dir, stack).get)).alerts
    [workload] = [m["metadata"] for m in rendered if m["kind"] == "Deployment"]
    rules = alert_rules(
        workload["namespace"],
        workload["name"],
        alerts.latency_slo_ms,
        alerts.error_rate_percent,
        alerts.queue_ratio,
    )
    path = out / RULE_FILE
    path.write_text(rules_yaml(rules))
    return path


def _read_outputs(path: Path) -> dict[str, object]:
    try:
        data = jsonlib.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise UsageError(
            f"--outputs {path}: cannot read it as JSON ({exc})",
            hint=f"write it with `pulumi stack output --json > {path}`",
        ) from exc
    if not isinstance(data, dict):
        raise UsageError(f"--outputs {path}: expected a JSON object", hint="use --json output")
    return data
