"""``tdk local``: a SageMaker multi-model endpoint on this machine, backed by a real Triton."""

from __future__ import annotations

import math
import shlex
import time
from collections.abc import Callable
from contextlib import closing
from dataclasses import asdict
from typing import Annotated, Any

import typer
from rich.markup import escape

from cli.common import EndpointUrlOpt, JsonOpt, ReleaseOpt
from cli.output import Output
from infra.targets.local.control import fetch_status, request_switch
from infra.targets.local.options import (
    NETNS_MODES,
    EndpointOptions,
    default_of,
    help_of,
    local_command,
)
from packager.stores import absolute_url
from tdk.errors import UsageError

app = typer.Typer(
    help="Run a SageMaker multi-model endpoint on this machine.", no_args_is_help=True
)

NameOpt = Annotated[str, typer.Option("--endpoint", help=help_of("name"))]
PortOpt = Annotated[int, typer.Option("--port", help=help_of("port"))]
MaxLoadedOpt = Annotated[int, typer.Option("--max-loaded-models", "-k", help=help_of("max_loaded"))]
CacheOpt = Annotated[
    float, typer.Option("--cache-gb", help="Disk cache bound for extracted models (GB).")
]
MaxBodyOpt = Annotated[int, typer.Option("--max-body-bytes", help=help_of("max_body"))]
BodyTimeoutOpt = Annotated[float, typer.Option("--body-timeout", help=help_of("body_timeout"))]
DetachOpt = Annotated[bool, typer.Option("--detach", "-d", help="Run in the background.")]
NetnsOpt = Annotated[
    str,
    typer.Option(
        "--triton-netns", help=help_of("triton_netns"), metavar="[" + "|".join(NETNS_MODES) + "]"
    ),
]
ReplicasOpt = Annotated[
    int,
    typer.Option(
        "--replicas",
        help="Front+Triton pairs behind HAProxy hashing the TargetModel header (as a Kubernetes "
        "mme stack's Envoy); more than 1 runs in the foreground.",
    ),
]
GB = 1024**3

TIMERS = (
    "ModelLatency",
    "OverheadLatency",
    "ModelLoadingWaitTime",
    "ModelDownloadingTime",
    "ModelLoadingTime",
    "ModelUnloadingTime",
)
COUNTS = (
    "LoadedModelCount",
    "Invocations",
    "ModelUnloads",
    "Invocation4XXErrors",
    "Invocation5XXErrors",
    "ModelLoadFailures",
)


MAX_CACHE_GB = 1024.0**2  # 1 PiB: beyond any disk, and far from float overflow


def _cache_bytes(cache_gb: float) -> int:
    """``--cache-gb`` in bytes; a UsageError for nan, inf, 0 or less, or beyond 1 PiB."""
    if not (math.isfinite(cache_gb) and 0 < cache_gb <= MAX_CACHE_GB) or int(cache_gb * GB) < 1:
        raise UsageError(
            f"--cache-gb {cache_gb:g}: expected a number of GB > 0 and at most {MAX_CACHE_GB:g}",
            hint=f"e.g. --cache-gb {default_of('cache_bytes') / GB:g}",
        )
    return int(cache_gb * GB)


@app.command("up")
def up(
    release: ReleaseOpt,
    name: NameOpt = default_of("name"),
    port: PortOpt = default_of("port"),
    max_loaded_models: MaxLoadedOpt = default_of("max_loaded"),
    cache_gb: CacheOpt = default_of("cache_bytes") / GB,
    max_body_bytes: MaxBodyOpt = default_of("max_body"),
    body_timeout: BodyTimeoutOpt = default_of("body_timeout"),
    detach: DetachOpt = False,
    endpoint_url: EndpointUrlOpt = None,
    triton_netns: NetnsOpt = default_of("triton_netns"),
    replicas: ReplicasOpt = 1,
    json: JsonOpt = False,
) -> None:
    """Start the endpoint: boto3 `sagemaker-runtime` with endpoint_url=http://127.0.0.1:PORT."""
    from infra.targets.local import endpoint_state, serve
    from infra.targets.local.front import StartInterrupted
    from infra.triton_runtime.runtime import find_runtime

    out = Output(json_mode=json)
    options = EndpointOptions(
        release=absolute_url(release),  # the server runs elsewhere: resolve the path here
        name=name,
        port=port,
        max_loaded=max_loaded_models,
        cache_bytes=_cache_bytes(cache_gb),
        max_body=max_body_bytes,
        body_timeout=body_timeout,
        store_endpoint_url=endpoint_url,
        triton_netns=triton_netns,
    )
    find_runtime()
    if replicas != 1:
        _up_replicas(options, replicas, detach, out)
        return
    if detach:
        state = serve.spawn(options)
        if json:
            out.json(shown_state(state))
        else:
            out.info(f"local endpoint [bold]{name}[/bold] at {state.url} (pid {state.pid})")
            stop = escape(local_command("down", name))
            out.info(f"  release {state.release}; log {state.log}; stop with `{stop}`")
        return
    if endpoint_state.read_state(name) is not None:
        raise UsageError(
            f"a local endpoint named {name!r} is already running",
            hint=f"stop it with `{local_command('down', name)}`, or pick another --endpoint",
        )
    out.info(
        f"starting local endpoint {name} on 127.0.0.1:{port or '(free port)'}; Ctrl-C stops it"
    )
    try:
        serve.run(
            options, announce=lambda url: out.info(f"ready: {url}/endpoints/{name}/invocations")
        )
    except StartInterrupted as exc:  # Ctrl-C while it started: stopped, cleaned up; say so
        out.error(exc.message, exc.hint)
        serve.leave_now(130)


def _up_replicas(options: EndpointOptions, replicas: int, detach: bool, out: Output) -> None:
    from infra.targets.local import replicas as replica_set
    from infra.triton_runtime.private import state_dir

    if detach:
        from infra.targets.local import replica_daemon

        state = replica_daemon.spawn(options, replicas)
        if out.json_mode:
            out.json(shown_state(state))
        else:
            out.info(
                f"{replicas} replicas of [bold]{options.name}[/bold] behind HAProxy at {state.url}"
            )
            stop = escape(local_command("down", options.name))
            out.info(f"  log {state.log}; stop them all with `{stop}`")
        return
    replica_set.find_haproxy()
    work = state_dir() / f"local-{options.name}-replicas"
    out.info(f"starting {replicas} replicas of {options.name} behind HAProxy; Ctrl-C stops them")
    replica_set.serve_foreground(
        options,
        replicas,
        work,
        lambda url: out.info(f"ready: {url}/endpoints/{options.name}/invocations"),
    )


def _running(name: str) -> Any:
    from infra.targets.local.endpoint_state import running_state

    return running_state(name)


def metric_rows(figures: dict[str, Any]) -> list[tuple[str, str]]:
    """SageMaker-named figures for a table: counts, then timers (ms: avg / p50 / max, count)."""
    rows = [(name, str(figures.get(name, 0))) for name in COUNTS]
    samples = figures.get("ModelCacheHitSamples", 0)
    rows.append(("ModelCacheHit", f"{figures.get('ModelCacheHit', 0.0):.3f}  (n={samples})"))
    for name in TIMERS:
        timer = figures.get(name) or {}
        if timer.get("count"):
            ms = [timer[key] / 1000 for key in ("avg", "p50", "max")]
            rows.append((name, f"{ms[0]:.2f} / {ms[1]:.2f} / {ms[2]:.2f} ms  (n={timer['count']})"))
        else:
            rows.append((name, "-"))
    return rows


def shown_state(state: Any) -> dict[str, Any]:
    """The state file's fields as ``--json`` shows them, less the switch token: only who can
    read the state file may switch releases, and stdout ends up in CI logs and pastes."""
    shown = asdict(state)
    shown.pop("control", None)
    return shown


@app.command("status")
def status(name: NameOpt = "local", json: JsonOpt = False) -> None:
    """Loaded models and SageMaker's MME metrics of a running endpoint."""
    out = Output(json_mode=json)
    state = _running(name)
    document = fetch_status(state.url)
    if json:
        out.json({"endpoint": shown_state(state), **document})
        return
    out.info(
        f"local endpoint [bold]{name}[/bold] at {state.url} (pid {state.pid}), "
        f"release {document.get('release', state.release)}"
    )
    loaded = ", ".join(document["loaded"]) or "none"
    out.info(f"loaded ({len(document['loaded'])}/{document['max_loaded_models']}): {loaded}")
    out.table("metrics (avg / p50 / max)", ["metric", "value"], metric_rows(document["metrics"]))


def stop_endpoint(
    name: str, timeout: float = 30.0, on_wait: Callable[[str], None] | None = None
) -> int:
    """Stop the running endpoint ``name`` (SIGTERM, then SIGKILL after ``timeout``); its pid.
    ``on_wait`` hears once what a stop that takes over a second waits for."""
    from infra.targets.local.serve import stop

    state = _running(name)
    stop(state, timeout, on_wait)
    return int(state.pid)


@app.command("switch")
def switch(
    release: ReleaseOpt,
    name: NameOpt = "local",
    endpoint_url: EndpointUrlOpt = None,
    json: JsonOpt = False,
) -> None:
    """Serve another release (e.g. an earlier one: rollback) without stopping: requests in
    flight finish on the old models, the next ones use the new release. A release that does
    not verify is refused and the endpoint keeps serving its own."""
    out = Output(json_mode=json)
    state = _running(name)
    release = absolute_url(release)  # against this directory, not the server's
    answer = request_switch(state, release, endpoint_url)
    if json:
        out.json({"name": name, **answer})
    else:
        out.info(f"local endpoint {name} now serves {release} ({len(answer['models'])} models)")


@app.command("down")
def down(name: NameOpt = "local", json: JsonOpt = False) -> None:
    """Stop a running endpoint (and its Triton); exit 0 when none is running (idempotent)."""
    from infra.targets.local.endpoint_state import read_state

    out = Output(json_mode=json)
    if read_state(name) is None:
        if json:
            out.json({"name": name, "stopped": None})
        else:
            out.info(f"no local endpoint named {name} is running: nothing to stop")
        return
    pid = stop_endpoint(name, on_wait=out.note)
    if json:
        out.json({"name": name, "stopped": pid})
    else:
        out.info(f"stopped local endpoint {name} (pid {pid})")


@app.command("check")
def check(release: ReleaseOpt, endpoint_url: EndpointUrlOpt = None, json: JsonOpt = False) -> None:
    """Load every model of a release once on the local Triton; non-zero exit if any fails."""
    from infra.targets.local.check import check_release

    out = Output(json_mode=json)
    results = check_release(
        release,
        endpoint_url,
        report=lambda r: out.info(f"{'ok  ' if r.ok else 'FAIL'} {r.target_model}"),
    )
    failed = [r for r in results if not r.ok]
    if json:
        out.json({"release": release, "ok": not failed, "models": [asdict(r) for r in results]})
    else:
        rows = [
            (r.target_model, r.backend, "ok" if r.ok else "FAILED", f"{r.seconds:.2f}", r.error)
            for r in results
        ]
        out.table("tdk local check", ["TargetModel", "backend", "result", "s", "Triton says"], rows)
    if failed:
        raise typer.Exit(1)


@app.command("demo")
def demo(
    release: ReleaseOpt,
    max_loaded_models: MaxLoadedOpt = 3,
    warm: Annotated[int, typer.Option("--warm", min=1, help="Warm requests per model.")] = 5,
    json: JsonOpt = False,
) -> None:
    """Start an endpoint, invoke every TargetModel (cold, warm, LRU), print figures, stop it."""
    from infra.targets.local import endpoint_state, serve

    out = Output(json_mode=json)
    name = "demo"
    if endpoint_state.read_state(name) is not None:
        stop_endpoint(name)
    options = EndpointOptions(
        release=absolute_url(release), name=name, port=0, max_loaded=max_loaded_models
    )
    state = serve.spawn(options)
    out.info(
        f"local endpoint {name} at {state.url} (K = {max_loaded_models}), release {state.release}"
    )
    try:
        rows = _demo_rows(state, warm, out)
        figures = fetch_status(state.url)["metrics"]
    finally:
        stop_endpoint(name)
    if json:
        out.json({"models": rows, "metrics": figures})
        return
    columns = ["TargetModel", "cold ms", "warm p50 ms", "LRU unloaded", "outputs"]
    out.table(_demo_title(figures), columns, [list(row.values()) for row in rows], drop=(4,))
    out.info(demo_next(state.release, rows[0]["target_model"] if rows else "NAME"))


def demo_next(release: str, target_model: str) -> str:
    """The demo's last line: where a newcomer goes from here, as commands to paste."""
    return (
        "next: `source .venv/bin/activate`, then "
        f"`tdk local up --release {shlex.quote(release)} --detach` and "
        f"`tdk invoke --target-model {shlex.quote(target_model)} --example` (README, Local "
        "endpoint); to deploy: `tdk doctor` and the README's 'Deploy to a cloud'"
    )


def _demo_title(figures: dict[str, Any]) -> str:
    """The table's title: what SageMaker would put in CloudWatch, in one line."""
    shown = dict(metric_rows(figures))
    keys = ("Invocations", "ModelCacheHit", "ModelUnloads", "LoadedModelCount")
    return "local endpoint demo: " + ", ".join(f"{k} {shown[k]}" for k in keys if k in shown)


def _demo_rows(state: Any, warm: int, out: Output) -> list[dict[str, Any]]:
    import statistics

    from infra.clients.inputs import example_inputs, summarize
    from infra.clouds.aws.sagemaker.runtime import SageMakerRuntimeTarget
    from infra.targets.deployment import load_manifest

    manifest = load_manifest(state.release)
    target = SageMakerRuntimeTarget(state.name, endpoint_url=state.url, local=True)
    rows = []
    # a bar on a terminal only: each figure is printed once, in the table
    with closing(target), out.progress() as start:
        advance = start("invoking every TargetModel", len(manifest.models))
        for model in manifest.models:
            request = target.prepare(model, example_inputs(model))
            before = set(fetch_status(state.url)["loaded"])
            started = time.perf_counter()
            outputs = target.decode(model, target.send(model, request))
            cold = (time.perf_counter() - started) * 1000
            unloaded = sorted(before - set(fetch_status(state.url)["loaded"]))
            times = []
            for _ in range(warm):
                started = time.perf_counter()
                target.send(model, request)
                times.append((time.perf_counter() - started) * 1000)
            first = next(iter(outputs))
            rows.append(
                {
                    "target_model": model.target_model,
                    "cold_ms": round(cold, 1),
                    "warm_p50_ms": round(statistics.median(times), 2),
                    "lru_unloaded": ", ".join(unloaded),
                    "outputs": f"{first} {summarize(outputs[first])}",
                }
            )
            advance(1)
    return rows
