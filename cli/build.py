"""``tdk build``: a TensorRT engine for the GPU a stack serves on, parity-checked and cached."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cli.common import EndpointUrlOpt, JsonOpt
from cli.output import Output
from tdk.errors import UsageError

if TYPE_CHECKING:
    from infra.tensorrt_engines.stage import BuildTarget, EngineBuild

HARDWARE_HELP = (
    "TensorRT hardware compatibility: ampere+ builds one engine for every GPU of compute "
    "capability 8.0 or later. Its cost (TensorRT's HardwareCompatibilityLevel docs): kernels "
    "limited to 48 KiB of shared memory, fewer tactics, some fusions prevented, cuDNN/cuBLAS "
    "tactics off, so it can be slower (most for TF32). Needs an Ampere or later GPU to build."
)


def build(
    model: Annotated[
        Path, typer.Argument(help="ONNX model directory (config.pbtxt, 1/model.onnx).")
    ],
    stack: Annotated[
        str, typer.Option("--stack", "-s", help="Stack whose GPU and Triton release to build for.")
    ],
    project_dir: Annotated[
        Path, typer.Option("--project-dir", help="Directory holding Pulumi.yaml and stack files.")
    ] = Path("."),
    shape: Annotated[
        list[str] | None,
        typer.Option(
            "--shape",
            help="NAME:MIN,OPT,MAX of an input's dynamic dimensions other than batch "
            "(AxB for two), as trtexec's --minShapes/--optShapes/--maxShapes take them.",
        ),
    ] = None,
    opt_batch: Annotated[
        int | None,
        typer.Option(
            "--opt-batch", min=1, help="Batch size the profile is tuned for (default: max)."
        ),
    ] = None,
    fp16: Annotated[
        bool, typer.Option("--fp16", help="Allow FP16 kernels (trtexec --fp16).")
    ] = False,
    hardware: Annotated[str, typer.Option("--hardware-compatibility", help=HARDWARE_HELP)] = "",
    atol: Annotated[
        float | None, typer.Option("--atol", help="Parity: absolute tolerance (fp32 1e-3).")
    ] = None,
    rtol: Annotated[
        float | None, typer.Option("--rtol", help="Parity: relative tolerance (fp32 1e-3).")
    ] = None,
    store: Annotated[
        str | None,
        typer.Option(
            "--store", help="Store holding the engine cache (default: the stack's releaseUrl)."
        ),
    ] = None,
    render: Annotated[
        Path | None,
        typer.Option(
            "--render",
            help="Write the build Job (and its staged inputs) to DIR instead of running it.",
        ),
    ] = None,
    local: Annotated[
        bool, typer.Option("--local", help="Build here (needs trtexec and an NVIDIA GPU).")
    ] = False,
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout", min=60, metavar="SECONDS", help="Seconds the build Job may take."
        ),
    ] = 3600.0,
    endpoint_url: EndpointUrlOpt = None,
    json: JsonOpt = False,
) -> None:
    """Build MODEL's TensorRT engine for the stack's GPU: on its GPU pool (a Kubernetes Job),
    or --local; compare it with ONNX Runtime; cache it in the release store."""
    from infra.targets.base import build_port
    from infra.tensorrt_engines.stage import BuildOptions, engine_build

    out = Output(json_mode=json)
    if render is not None and local:
        raise UsageError("--render and --local both say where to build", hint="drop one")
    if local:  # what cannot work here at all, before shapes, stacks or store credentials
        from infra.tensorrt_engines.run import require_local_gpu

        require_local_gpu()
    settings, target = _target(project_dir, stack)
    if target.base_note:
        out.warn(
            f"Triton {target.release} is {target.base_note}: an engine built in the TensorRT "
            f"{target.container_release} container may not load there"
        )
    if not local:
        build_port(settings.program, settings.entry.name)  # why not, before anything is built
    options = BuildOptions(tuple(shape or ()), opt_batch, fp16, hardware, atol, rtol)
    wanted = engine_build(model, target, options)
    url = store or _release_url(settings, stack)
    if render is not None:
        _render_store(url)
        _render(out, settings, wanted, url, render, timeout)
        return
    from packager.stores import open_store

    where = open_store(url, endpoint_url=endpoint_url)
    from infra.tensorrt_engines.run import cached_record

    record = cached_record(where, wanted)
    if record is None:
        record = _run(out, settings, wanted, where, local, timeout)
        built = True
    else:
        built = False
    _report(out, wanted, where.describe(wanted.key.prefix), record, built)


def _target(project_dir: Path, stack: str) -> tuple[Any, BuildTarget]:
    from infra.targets import stacks
    from infra.tensorrt_engines.stage import stack_target

    settings = stacks.load_stack(project_dir, stack)
    return settings, stack_target(settings, stack)


def _release_url(settings: Any, stack: str) -> str:
    release = settings.common.release
    if release is None:
        raise UsageError(
            f"stack {stack} has no releaseUrl: the engine cache lives in the release store",
            hint="pass --store URL, or set the stack's releaseUrl",
        )
    return str(release.url)


def _job(
    settings: Any, wanted: EngineBuild, url: str, timeout: float, strict: bool = True
) -> list[dict[str, Any]]:
    """The build Job's manifests; ``strict``: a value only the deployed stack knows that the
    Job would carry is an error instead of a ``${name}`` placeholder. The workload's spec asks
    for such values (the identities' ARNs or client ids, the metrics URL) but the Job carries
    none: its cloud identity is on the build ServiceAccount `pulumi up` applied."""
    from infra.targets.base import EngineJob, build_port
    from infra.tensorrt_engines.run import job_name

    job = EngineJob(
        job_name(wanted), f"{url.rstrip('/')}/{wanted.key.prefix}",
        wanted.target.tensorrt_image, int(timeout),
    )  # fmt: skip
    placeholders: list[str] = []

    def output(name: str) -> str:
        placeholders.append(name)
        return "${" + name + "}"

    port = build_port(settings.program, settings.entry.name)
    manifests = list(port.engine_job(settings.config, output, job))
    written = json.dumps(manifests)
    needed = [name for name in placeholders if "${" + name + "}" in written]
    if needed and strict:
        raise UsageError(
            f"the build Job needs the deployed stack's {', '.join(needed)}",
            hint="run `pulumi up` first, or use --render and substitute them",
        )
    return manifests


def _render_store(url: str) -> None:
    """A rendered Job reads and writes the engine cache from its pod: a store on this machine
    (``file://``, a path) is one it cannot reach, so no Job is written for it."""
    from packager.stores import local_path, scheme_list

    if local_path(url) is not None:
        raise UsageError(
            f"--render: the Job would read the engine cache at {url}, a folder on this machine "
            "that its pod cannot reach",
            hint=f"pass --store with a bucket the cluster reads ({scheme_list()}), or build "
            "here with --local on a GPU machine",
        )


def _render(
    out: Output, settings: Any, wanted: EngineBuild, url: str, where: Path, timeout: float
) -> None:
    """The Job's YAML and its staged inputs under ``where``; nothing touches the cloud."""
    from infra.k8s.render import manifest_yaml
    from infra.tensorrt_engines.run import job_name
    from infra.tensorrt_engines.stage import stage

    job = job_name(wanted)
    manifests = _job(settings, wanted, url, timeout, strict=False)
    if where.exists() and not where.is_dir():
        raise UsageError(f"--render {where} is a file", hint="name a directory")
    inputs, path = where / f"{job}-input", where / f"{job}.yaml"
    with _staged(where) as staging:  # all of it, or nothing: a failed stage leaves no folder
        stage(wanted, staging / inputs.name)
        (staging / path.name).write_text("---\n".join(manifest_yaml(m) for m in manifests))
    entry = f"{url.rstrip('/')}/{wanted.key.prefix}"
    if out.json_mode:
        out.json({"job": str(path), "inputs": str(inputs), "entry": entry, "key": _key(wanted)})
        return
    out.info(f"wrote {path} (Job {job}) and its inputs in {inputs}")
    out.info(f"copy {inputs}/ to {entry}input/, then: kubectl apply -f {path}")


@contextmanager
def _staged(where: Path) -> Iterator[Path]:
    """A hidden folder beside ``where`` to write in; on success its entries replace those of
    the same names in ``where`` (made if absent), on failure it goes and ``where`` is as it was."""
    parent = where.parent if not where.exists() else where
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".tdk-render-", dir=parent))
    try:
        yield staging
        if not where.exists():
            os.rename(staging, where)
            return
        for entry in staging.iterdir():
            old = where / entry.name
            if old.is_dir() and not old.is_symlink():
                shutil.rmtree(old)
            elif old.exists() or old.is_symlink():
                old.unlink()
            os.rename(entry, old)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _run(
    out: Output, settings: Any, wanted: EngineBuild, where: Any, local: bool, timeout: float
) -> Any:
    from infra.tensorrt_engines import run
    from infra.tensorrt_engines.stage import stage

    with tempfile.TemporaryDirectory(prefix="tdk-build-") as tmp:
        work = Path(tmp)
        if local:
            stage(wanted, work, release="")
            return run.build_here(wanted, work, where)
        manifests = _job(settings, wanted, where.url, timeout)
        kubectl = run.require_kubectl()
        stage(wanted, work / "input")
        run.upload_inputs(where, wanted, work / "input")
        path = work / "job.yaml"
        from infra.k8s.render import manifest_yaml

        path.write_text("---\n".join(manifest_yaml(m) for m in manifests))
        run.run_kubectl(run.apply_argv(kubectl, path))
        meta = manifests[0]["metadata"]
        out.info(f"applied Job {meta['namespace']}/{meta['name']}; waiting for the build")
        job = run.JobRef(meta["namespace"], meta["name"])
        run.await_job(kubectl, job, timeout + run.WAIT_MARGIN_SECONDS)
        log = run.run_kubectl(run.logs_argv(kubectl, job))
    return run.endorse_job_output(where, wanted, log)


def _key(wanted: EngineBuild) -> dict[str, str]:
    from dataclasses import asdict

    return asdict(wanted.key)


def _report(out: Output, wanted: EngineBuild, entry: str, record: Any, built: bool) -> None:
    parity = record.parity
    if out.json_mode:
        out.json(
            {
                "model": wanted.name,
                "built": built,
                "entry": entry,
                "key": _key(wanted),
                "built_for": record.built_for,
                "parity": {"max_abs": parity.max_abs, "max_rel": parity.max_rel,
                           "atol": parity.atol, "rtol": parity.rtol},
            }
        )  # fmt: skip
        return
    what = "built" if built else "cached (the same key builds nothing)"
    out.info(
        f"{wanted.name}: engine {what} for {wanted.target.gpu} ({record.built_for}) at {entry}; "
        f"parity max abs {parity.max_abs:.3g}, max rel {parity.max_rel:.3g}"
    )
