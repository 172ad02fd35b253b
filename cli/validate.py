"""``tdk validate PATH...``: check Triton repositories before anything is deployed."""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cli.common import STORE_SCHEMES, JsonOpt
from cli.locate import ProjectDirOpt, TargetName
from cli.output import Output, terminal_safe
from infra.targets import registry
from infra.targets.capabilities import VALIDATE

if TYPE_CHECKING:
    from packager.validate.findings import Finding

PathsArg = Annotated[
    list[Path],
    typer.Argument(help="Triton repositories or single model directories.", metavar="PATH"),
]
FormatOpt = Annotated[
    str,
    typer.Option(
        "--format",
        metavar="[human|sarif|github]",
        help="human (path:line:col: CODE message), sarif (SARIF 2.1.0) or github "
        "(workflow annotations); JSON is --json.",
    ),
]
InstanceOpt = Annotated[
    str, typer.Option("--instance-type", help="Instance type (ml.g5.xlarge, g5.xlarge).")
]
GpuOpt = Annotated[str, typer.Option("--gpu", help="GKE accelerator type (nvidia-l4).")]
#: only the targets that can validate are offered (the choices stay the registry's, so
#: every command parses the same --target values; ``local`` is refused with its reason)
_CAN_VALIDATE = [entry.name for entry in registry.entries() if entry.refused(VALIDATE) is None]
ValidateTargetOpt = Annotated[
    TargetName | None,
    typer.Option(
        "--target",
        metavar="[" + "|".join(_CAN_VALIDATE) + "]",
        help="The deployment target to check against (the local endpoint: `tdk local check`).",
    ),
]
ImageOpt = Annotated[
    str,
    typer.Option(
        "--image",
        help="Triton image or version, e.g. 25.09 (default: the image the stack deploys, the "
        "newest SageMaker Triton image the installed sagemaker-core lists).",
    ),
]
StackOpt = Annotated[
    str | None,
    typer.Option(
        "--stack",
        "-s",
        help="Also check for this committed stack: its target, instance/GPU and image "
        "(Pulumi.<stack>.yaml in --project-dir).",
    ),
]
BuiltForOpt = Annotated[
    str,
    typer.Option(
        "--trt-built-for",
        help="What the TensorRT engines were built for, <compute capability>:<TensorRT>, e.g. "
        "8.6:10.4 (default: the manifest of --release).",
    ),
]
ReleaseOpt = Annotated[
    str,
    typer.Option("--release", help=f"A release ({STORE_SCHEMES}) whose manifest to use."),
]
ShowConfigOpt = Annotated[
    bool,
    typer.Option(
        "--show-config",
        help="Also print the config Triton completes for each model without config.pbtxt "
        "(an ONNX model: its ONNX Runtime backend's auto-complete).",
    ),
]
CopiesOpt = Annotated[
    int, typer.Option("--copies", min=1, help="Copies `tdk package` will make (working set).")
]


def validate(
    paths: PathsArg,
    fmt: FormatOpt = "human",
    json: JsonOpt = False,
    target: ValidateTargetOpt = None,
    instance_type: InstanceOpt = "",
    gpu: GpuOpt = "",
    image: ImageOpt = "",
    stack: StackOpt = None,
    project_dir: ProjectDirOpt = Path("."),
    copies: CopiesOpt = 1,
    trt_built_for: BuiltForOpt = "",
    release: ReleaseOpt = "",
    show_config: ShowConfigOpt = False,
) -> None:
    """Check layout, config semantics, ensembles, ONNX graphs and names, as Triton would.

    Exit 0 when valid (warnings allowed), 1 when any model is invalid, 2 for usage errors.
    """
    from packager import __version__
    from packager.validate.report import render
    from packager.validate.runner import has_errors, validate_paths

    fmt = "json" if json else fmt
    _check_options(fmt, show_config, stack is not None and bool(instance_type or gpu or image))
    if target is None and stack is None:
        findings = validate_paths(paths)
    else:
        built_for = trt_built_for or (_release_built_for(release) if release else "")
        against = _Against(
            target.value if target is not None else None,
            {"instance_type": instance_type, "gpu": gpu, "image": image},
            _stack(stack, project_dir) if stack is not None else None,
            Path(project_dir),
            copies,
            built_for,
        )
        findings = _with_target(paths, against)
    Output().text(render(fmt, findings, __version__))
    if show_config:
        _show_completed(paths)
    if has_errors(findings):
        raise typer.Exit(1)


def _check_options(fmt: str, show_config: bool, unit_with_stack: bool) -> None:
    """A UsageError for options that do not go together (before anything is read)."""
    from packager.validate.report import FORMATS
    from tdk.errors import UsageError
    from tdk.text import as_text

    if fmt not in FORMATS:
        raise UsageError(f"--format {fmt!r} is not a format", hint=f"use one of {as_text(FORMATS)}")
    if show_config and fmt != "human":
        raise UsageError(
            f"--show-config prints config text; --format {fmt} is a machine format",
            hint="drop --show-config, or use --format human",
        )
    if unit_with_stack:
        raise UsageError(
            "--stack reads the instance type, GPU and image from the stack",
            hint="drop --instance-type/--gpu/--image, or use --target with them instead",
        )


def _show_completed(paths: list[Path]) -> None:
    """Print the config Triton completes for each model under ``paths`` that has none."""
    from packager.config import CONFIG_NAME, dump_config
    from packager.repository import discover_all

    completed = [m for path in paths for m in discover_all(path).models if m.completed]
    if not completed:
        sys.stdout.write("every model has its config.pbtxt: nothing is completed\n")
    for model in completed:
        sys.stdout.write(
            f"\n# {model.path / CONFIG_NAME}: not there; Triton's {model.completed} backend "
            "completes it at load as:\n" + dump_config(model.config)
        )
        if model.completed == "tensorrt":
            sys.stdout.write("# + max_batch_size, input, output: the engine's (read by TensorRT)\n")


@dataclass(frozen=True)
class _Against:
    """What ``--target``/``--stack`` checks the models against: the target and its unit flags,
    or the committed stack (project dir, name); the copies packaged; what the engines were
    built for."""

    target: str | None
    flags: dict[str, str]
    stack: tuple[Path, str] | None
    project_dir: Path
    copies: int
    built_for: str


def _with_target(paths: list[Path], against: _Against) -> list[Finding]:
    """The one feasibility path: the committed stack, or a stack built from the flags, with
    the repository's own checks; the engine files are checked against the image that stack
    deploys by the feasibility path (when the stack itself is refused: by the fallback lists)."""
    from infra.targets import registry, stacks
    from infra.targets.feasibility import feasible, flag_stack
    from packager.repository import discover_all
    from packager.validate.runner import validate_paths

    models = [m for path in paths for m in discover_all(path).models]
    stack, flags = against.stack, against.flags
    if stack is not None:
        settings = stacks.load_stack(*stack)
        where = str(stack[0] / f"Pulumi.{stack[1]}.yaml")
        _warn_placeholders(*stack)
        _warn_undeclared(*stack)
    else:
        entry = registry.get(str(against.target))
        settings = flag_stack(entry, flags, models, against.project_dir)
        _say_defaults(registry.validate_port(entry).flag_keys, flags, settings)
        where = f"--target {entry.name}"
    result = feasible(settings, models, against.built_for, where, against.copies)
    findings = result.findings
    if stack is None:  # the user typed flags, not a stack file: tell them as the flags
        keys = registry.validate_port(registry.get(str(against.target))).flag_keys
        findings = [_as_flag(found, keys, flags) for found in findings]
    local = validate_paths(paths, image_rules=result.spec is None)  # else the target's
    if result.spec is not None and result.spec.gpu is not None:
        local = [f for f in local if f.code != "TDK213"]  # the local-endpoint KIND_GPU caveat
    for fit in result.fits:
        _say(fit.describe(result.spec.label if result.spec else "") + "\n")
    return local + findings


def _as_flag(found: Finding, keys: Mapping[str, str], flags: Mapping[str, str]) -> Finding:
    """A finding about a stack key that a ``--target`` flag set, told as that flag: the
    user typed no stack file, so the message names the flag and the hint the flag's fix."""
    from infra.config import qualify

    for flag, key in keys.items():
        if not flags.get(flag) or qualify(key) not in found.message:
            continue
        option = "--" + flag.replace("_", "-")
        message = found.message.replace(f"{qualify(key)} is ", "")
        suggested = re.search(rf"pulumi config set {re.escape(qualify(key))} (\S+?)`", found.fix)
        fix = f"pass `{option} {suggested.group(1)}` instead" if suggested else found.fix
        field = option if found.field == "stack config" else found.field
        return replace(found, field=field, message=message.replace(qualify(key), option), fix=fix)
    return found


def _say_defaults(keys: Mapping[str, str], flags: Mapping[str, str], settings: Any) -> None:
    """Name each unit flag left out and the stack default checked instead (stderr)."""
    for flag, key in keys.items():
        if flag != "image" and not flags.get(flag):
            option = "--" + flag.replace("_", "-")
            _say(
                f"note: no {option}: checking the stack default {key} = {settings.get(key)!r} "
                f"(Pulumi.yaml); pass {option} to check another\n"
            )


def _warn_placeholders(project_dir: Path, stack: str) -> None:
    """A stack still holding example values validates, but never silently (stderr)."""
    from infra.placeholders import describe, fix_hint, scan_stack

    found = scan_stack(project_dir, stack)
    if found:
        _say(f"warning: {describe(stack, found)}: {fix_hint(stack, found)}\n")


def _warn_undeclared(project_dir: Path, stack: str) -> None:
    """A key Pulumi.yaml does not declare is ignored by every reader: say so (stderr)."""
    from infra.stack_keys import deprecated_in_file, stack_file_keys, undeclared

    for warning in [
        *undeclared(project_dir, stack_file_keys(project_dir, stack)),
        *deprecated_in_file(project_dir, stack),
    ]:
        _say(f"warning: Pulumi.{stack}.yaml: {warning}\n")


def _stack(stack: str, project_dir: str | Path) -> tuple[Path, str]:
    """(project dir, stack name); the old path form (``--stack Pulumi.gke-dev.yaml``) still
    works for one release, with a warning."""
    from infra.targets import registry, stacks

    if stack.endswith((".yaml", ".yml")):
        folder, name = stacks.stack_from_path(Path(stack))
        registry.on_deprecated(
            f"--stack takes a stack name now: use --stack {name} --project-dir {folder}"
        )
        return folder, name
    stacks.check_stack_name(stack)
    return Path(project_dir), stack


def _release_built_for(release: str) -> str:
    """``trt_built_for`` recorded by ``tdk package`` in the release's manifest."""
    from packager.stores import open_store
    from packager.stores.capped import read_manifest

    return read_manifest(open_store(release)).trt_built_for


def _say(text: str) -> None:
    """A note or warning on stderr, as written, its control characters escaped."""
    sys.stderr.write(terminal_safe(text))
