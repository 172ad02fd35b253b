"""``tdk render k8s``: a Kubernetes stack's manifests as plain YAML, for GitOps."""

from __future__ import annotations

import json as jsonlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cli.common import JsonOpt
from cli.output import Output
from tdk.errors import ConfigError, UsageError

if TYPE_CHECKING:
    from infra.config import ConfigReader

app = typer.Typer(help="Write deployable artifacts without deploying them.", no_args_is_help=True)

StackOpt = Annotated[
    str, typer.Option("--stack", "-s", help="Stack whose committed Pulumi.<stack>.yaml to render.")
]
OutOpt = Annotated[
    str,
    typer.Option(
        "--out",
        metavar="PATH",
        help="Directory the YAML files are written to, or - for one stream on stdout.",
    ),
]
RulesOutOpt = Annotated[
    Path | None,
    typer.Option(
        "--rules-out",
        help="Prometheus rule file to write (default: <out>.alerts.rules.yaml beside --out, so "
        "the manifest directory holds only Kubernetes objects; none with --out -).",
    ),
]
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


ModelsOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--models",
        help="Repository the release is packaged from (repeatable): LLM models pick the image "
        "flavour with their engine, /dev/shm, the startup budget, and are checked against "
        "k8sGpusPerPod. The stack key k8sModels does the same for pulumi up (and for render).",
    ),
]


@app.command("k8s")
def k8s(
    stack: StackOpt,
    out: OutOpt,
    project_dir: ProjectDirOpt = Path("."),
    outputs: OutputsOpt = None,
    rules_out: RulesOutOpt = None,
    models: ModelsOpt = None,
    json: JsonOpt = False,
) -> None:
    """Render ServiceAccount, Deployment, Service, PDB, KEDA scaling and monitoring manifests."""
    from infra.k8s.render import yaml_stream
    from infra.targets import stacks

    printer = Output(json_mode=json)
    if out == "-" and json:
        raise UsageError("--out - and --json both use stdout", hint="drop one of them")
    known = _read_outputs(outputs) if outputs else None
    settings = stacks.load_stack(project_dir, stack)
    if models:
        rendered, config = _fitted_render(settings, models, known)
    else:
        rendered, config = settings.render(known), settings.config
    alerts = _alerts(settings, config)
    if out == "-":
        if rules_out is not None:
            _write_alert_rules(alerts, rendered.manifests, rules_out)
        sys.stdout.write(yaml_stream(rendered))
        sys.stdout.flush()
        _warn_placeholders(printer, stack, rendered.placeholders)
        _warn_stack_placeholders(printer, settings, project_dir, yaml_stream(rendered))
        return
    _render_dir(printer, settings.reader, alerts, rendered, Path(out), rules_out, json)
    _warn_stack_placeholders(printer, settings, project_dir, yaml_stream(rendered))


def _alerts(settings: Any, config: Any) -> Any:
    """The alert thresholds of the stack's (model-fitted) workload; a target with no
    Kubernetes workload of the kit's gets the ``k8s*`` keys as read."""
    from infra.k8s.common import KubernetesTarget
    from infra.k8s.config import read_workload_config

    if isinstance(settings.program, KubernetesTarget):
        return config.workload.alerts
    return read_workload_config(settings.reader).alerts


def _warn_stack_placeholders(printer: Output, settings: Any, project_dir: Path, text: str) -> None:
    """Warn (never silently write) when a stack's example values reach the manifests, e.g.
    ``my-gcp-project`` in the ServiceAccount's Workload Identity annotation, however the
    target writes them (its render port says: a release URL may be written in parts)."""
    from infra.placeholders import describe, fix_hint, scan_stack
    from infra.targets.base import render_port

    port, stack = render_port(settings.program, settings.entry.name), settings.name
    written = [
        p
        for p in scan_stack(project_dir, stack)
        if any(form and form in text for form in port.written_forms(p.key, p.value))
    ]
    if written:
        where = f"{describe(stack, written)} and they are in the manifests"
        printer.warn(f"{where}: {fix_hint(stack, written)}, then render again")


def _fitted_render(
    settings: Any, repos: list[Path], known: dict[str, Any] | None
) -> tuple[Any, Any]:
    """The stack rendered with its workload fitted to the models of ``repos`` (validated as
    ``tdk package`` validates them, and through the one feasibility path), and that config."""
    from infra.k8s.common import KubernetesTarget
    from infra.k8s.models import model_needs
    from infra.k8s.render import render_settings
    from infra.targets.base import render_port
    from infra.targets.feasibility import require_feasible
    from packager.publish import load_models

    deploy = settings.program
    if not isinstance(deploy, KubernetesTarget):
        raise ConfigError(
            "this stack has no Kubernetes workload to fit to the models",
            hint="render a stack of a Kubernetes target (e.g. --stack gke-dev)",
        )
    fitted = deploy.fit_models(settings.config, model_needs(repos))
    require_feasible(settings, load_models(repos))
    rendered = render_settings(
        settings.entry.name,
        settings.name,
        lambda output: render_port(deploy, settings.entry.name).manifests(fitted, output),
        known,
    )
    return rendered, fitted


def _render_dir(
    printer: Output,
    reader: ConfigReader,
    alerts: Any,
    rendered: Any,
    out: Path,
    rules_out: Path | None,
    json: bool,
) -> None:
    from infra.k8s.alerts import RULE_FILE
    from infra.k8s.render import write_manifests

    stack = rendered.stack
    where = out.resolve()
    rules_path = rules_out or where.parent / f"{where.name}.{RULE_FILE}"
    if rules_path.is_dir():  # checked before anything is written
        raise UsageError(f"--rules-out {rules_path} is a directory", hint="name a file")
    paths, kept = write_manifests(rendered, out)
    files = [
        {"path": str(path), "kind": m["kind"], "name": m["metadata"]["name"]}
        for path, m in zip(paths, rendered.manifests, strict=True)
    ]
    rules = _write_alert_rules(alerts, rendered.manifests, rules_path)
    for path in kept:
        printer.warn(f"kept {path}: an earlier render wrote it and it was edited since")
    if json:
        printer.json(
            {
                "stack": stack,
                "target": rendered.target,
                "out": str(out),
                "files": files,
                "alert_rules": str(rules),
                "kept": [str(p) for p in kept],
                "placeholders": rendered.placeholders,
            }
        )
    else:
        rows = [(Path(f["path"]).name, f["kind"], f["name"]) for f in files]
        title = f"tdk render k8s ({stack}, {rendered.target}) -> {out}"
        printer.table(title, ["file", "kind", "name"], rows)
        printer.info(f"alert rules (Prometheus rule file, `promtool check rules`): {rules}")
    _warn_placeholders(printer, stack, rendered.placeholders)


def _warn_placeholders(printer: Output, stack: str, placeholders: list[str]) -> None:
    if placeholders:
        names = ", ".join("${" + p + "}" for p in placeholders)
        printer.warn(
            f"left {names} in the manifests: pass --outputs with `pulumi stack output -s {stack} "
            "--json`, or substitute them (envsubst) before applying"
        )


def _write_alert_rules(alerts: Any, rendered: list[dict[str, Any]], path: Path) -> Path:
    """The (model-fitted) workload's alert rules as a plain Prometheus rule file at ``path``:
    the rules the stack deploys, LLM rules included."""
    from infra.k8s.alerts import rules_yaml, workload_rules
    from infra.k8s.ledger import write_atomic

    [workload] = [m["metadata"] for m in rendered if m["kind"] == "Deployment"]
    rules = workload_rules(workload["namespace"], workload["name"], alerts)
    if path.is_dir():
        raise UsageError(f"--rules-out {path} is a directory", hint="name a file")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, rules_yaml(rules).encode())
    except OSError as exc:
        raise UsageError(
            f"--rules-out {path}: cannot write it ({exc.strerror or exc})",
            hint="choose a writable path",
        ) from None
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
