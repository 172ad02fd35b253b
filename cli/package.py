"""``tdk package``: N renamed copies of each model, archived and published with a manifest."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer

from cli.common import STORE_SCHEMES, EndpointUrlOpt, JsonOpt
from cli.output import Output
from cli.validate import GpuOpt, ImageOpt, InstanceOpt, ValidateTargetOpt
from packager.archive import DEFAULT_LEVEL
from packager.publish import publish
from packager.rename import DEFAULT_TEMPLATE
from packager.stores import open_store
from packager.stores.lock import DEFAULT_LOCK_TIMEOUT
from packager.tensorrt.engines import BuiltFor
from tdk.errors import UsageError

PROGRESS_AFTER_S = 2.0  # a publish shorter than this shows no progress bars


def package(
    repos: Annotated[list[Path], typer.Argument(help="Triton repositories or model directories.")],
    release: Annotated[
        str,
        typer.Option(
            "--release",
            help=f"Release URL, a directory or prefix of its own: {STORE_SCHEMES}.",
        ),
    ],
    copies: Annotated[int, typer.Option("--copies", min=1, help="Copies of each model.")] = 1,
    name_template: Annotated[
        str, typer.Option("--name-template", help="Copy names; fields {model} and {i} (from 0).")
    ] = DEFAULT_TEMPLATE,
    share_composing: Annotated[
        bool,
        typer.Option(
            "--share-composing",
            help="Ensemble copies share one copy of each composing model (Kubernetes and the "
            "local endpoint) instead of carrying renamed copies of their own.",
        ),
    ] = False,
    level: Annotated[
        int, typer.Option("--level", min=0, max=3, help="Compression level (ISA-L, 0-3).")
    ] = DEFAULT_LEVEL,
    prune: Annotated[
        bool,
        typer.Option(
            "--prune",
            help="Delete what earlier tdk releases wrote under --release and this one no longer "
            "has (known from the release's ledger and manifest; nothing else is touched).",
        ),
    ] = False,
    endpoint_url: EndpointUrlOpt = None,
    json: JsonOpt = False,
    trt_built_for: Annotated[
        str,
        typer.Option(
            "--trt-built-for",
            help="Record in the manifest what the TensorRT engines were built for: "
            "<compute capability>:<TensorRT version>, optionally @<TensorRT container "
            "release>, e.g. 8.6:10.13 or 8.6:10.16@26.05 (ampere+ for a hardware-compatible "
            "engine).",
        ),
    ] = "",
    lock_timeout: Annotated[
        float,
        typer.Option(
            "--lock-timeout",
            min=0,
            help="Seconds to wait while another publish holds the destination's lock.",
        ),
    ] = DEFAULT_LOCK_TIMEOUT,
    stack: Annotated[
        str | None,
        typer.Option(
            "--stack",
            "-s",
            help="Serve each ONNX model with the TensorRT engine `tdk build` cached for this "
            "stack's GPU (named per compute capability); the manifest records built_for.",
        ),
    ] = None,
    project_dir: Annotated[
        Path, typer.Option("--project-dir", help="Directory holding Pulumi.yaml (with --stack).")
    ] = Path("."),
    engine_store: Annotated[
        str | None,
        typer.Option("--store", help="Store holding the engine cache (default: --release)."),
    ] = None,
    target: ValidateTargetOpt = None,
    instance_type: InstanceOpt = "",
    gpu: GpuOpt = "",
    image: ImageOpt = "",
) -> None:
    """Validate, rename, archive and publish REPOS to --release; the manifest is written last."""
    if trt_built_for:
        trt_built_for = str(BuiltFor.parse(trt_built_for))
    flags = {"instance_type": instance_type, "gpu": gpu, "image": image}
    if stack is not None and (target is not None or any(flags.values())):
        raise UsageError(
            "--stack names the target, instance type, GPU and image the engines are for",
            hint="drop --target/--instance-type/--gpu/--image, or drop --stack",
        )
    if target is None and any(flags.values()):
        raise UsageError(
            "--instance-type, --gpu and --image say where a --target serves",
            hint="add --target (e.g. --target sagemaker --instance-type ml.g5.xlarge)",
        )
    out = Output(json_mode=json)
    store = open_store(release, endpoint_url=endpoint_url)
    with tempfile.TemporaryDirectory(prefix="tdk-engines-") as work:
        built_for: dict[str, str] = {}
        if stack is not None or target is not None:
            cache = open_store(engine_store or release, endpoint_url=endpoint_url)
            where = _engine_target(repos, project_dir, stack, target and target.value, flags)
            repos, built_for = _served_by_engines(out, repos, cache, where, Path(work))
            if not trt_built_for and len(set(built_for.values())) == 1:
                trt_built_for = next(iter(built_for.values()))
        with out.progress(after_s=PROGRESS_AFTER_S) as phase:
            result = publish(
                repos,
                store,
                copies,
                name_template,
                share_composing,
                level,
                prune,
                phase=phase,
                trt_built_for=trt_built_for,
                lock_timeout=lock_timeout,
                built_for=built_for,
            )
    models = result.manifest.models
    for warning in result.warnings:
        out.warn(warning)
    if json:
        out.json(
            {
                "release": result.url,
                "manifest_written": result.manifest_written,
                "uploaded": result.uploaded,
                "uploaded_bytes": result.uploaded_bytes,
                "copied": result.copied,
                "copied_bytes": result.copied_bytes,
                "rebuilt": result.rebuilt,
                "hashed_bytes": result.hashed_bytes,
                "skipped": len(result.skipped),
                "stale": result.stale,
                "cleaned": result.cleaned,
                "warnings": result.warnings,
                "models": [
                    {
                        "target_model": m.target_model,
                        "name": m.name,
                        "sha256": m.sha256,
                        "size": m.size,
                    }
                    for m in models
                ],
            }
        )
        return
    out.table(
        f"release {result.url}",
        ["TargetModel", "Triton name", "backend", "size", "sha256"],
        [(m.target_model, m.name, m.backend, _size(m.size), m.sha256[:12]) for m in models],
        whole=(0, 1),
        drop=(4, 2),
    )
    copied = f"; copied {len(result.copied)} inside the store" if result.copied else ""
    out.info(
        f"{len(models)} model copies ({len(result.rebuilt)} rebuilt); uploaded "
        f"{len(result.uploaded)} object(s), {_size(result.uploaded_bytes)}{copied}; "
        f"{len(result.skipped)} unchanged"
        + ("" if result.manifest_written else "; manifest unchanged")
    )
    if result.cleaned:
        out.info(f"removed {len(result.cleaned)} leftover(s) of an interrupted earlier publish")
    if result.stale and not prune:
        out.warn(
            f"{len(result.stale)} object(s) of an earlier release remain under {result.url} "
            "(SageMaker MME can still load them); rerun with --prune to delete them"
        )


def _engine_target(
    repos: list[Path],
    project_dir: Path,
    stack: str | None,
    target: str | None,
    flags: dict[str, str],
) -> tuple[Any, str]:
    """Where the engines must run and the ``tdk build`` options that build for it: the stack's
    GPU and release, or those of a stack built from ``--target`` flags as validate builds it."""
    from infra.targets import registry, stacks
    from infra.tensorrt_engines.stage import stack_target

    if stack is not None:
        return stack_target(stacks.load_stack(project_dir, stack), stack), f"--stack {stack}"
    from infra.targets.feasibility import flag_stack
    from packager.repository import discover_all

    models = [m for path in repos for m in discover_all(path).models]
    settings = flag_stack(registry.get(str(target)), flags, models, project_dir)
    given = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in flags.items() if v)
    return stack_target(settings, f"--target {target} {given}".strip()), "--stack <a stack of it>"


def _served_by_engines(
    out: Output, repos: list[Path], cache: Any, where: tuple[Any, str], work: Path
) -> tuple[list[Path], dict[str, str]]:
    """``repos`` staged with the cached engines for the target's GPU; model -> built_for."""
    from packager.tensorrt.models import with_engines

    target, build_with = where
    staged, served = with_engines(repos, cache, target.cache_targets, target.compute_text, work)
    for model in served:
        out.info(
            f"{model.name}: served by its TensorRT engine for {target.gpu} ({model.built_for})"
        )
    if not served:
        out.warn(
            f"no cached TensorRT engine fits {target.gpu} on Triton {target.release}: the models "
            f"are packaged as they are (tdk build MODEL {build_with} builds one)"
        )
    return staged, {model.name: model.built_for for model in served}


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)
