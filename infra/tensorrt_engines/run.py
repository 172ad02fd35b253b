"""Run an engine build: on the stack's GPU pool (a Kubernetes Job, applied and awaited with
kubectl), or here (``--local``, where trtexec and an NVIDIA GPU are).

The cache is consulted first: a key already in the store builds nothing. A Job's inputs are
uploaded to ``<entry>/input/`` before it is applied; the Job itself writes the engine and its
record with the workload's identity, and prints the record's sha256 in its log; tdk endorses
the record (``packager.tensorrt.trust``) only when the store holds those very bytes. kubectl is
driven through argument lists (``apply_argv``/``status_argv``/``logs_argv``) so a test sees the
exact command lines.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infra.tensorrt_engines.stage import EngineBuild
from packager.stores.base import Store, sha256_file
from packager.tensorrt.engines import ENGINE_FILE, RECORD_FILE, EngineRecord, cached, store_engine
from packager.tensorrt.trust import endorse
from tdk.errors import TdkError, UsageError

#: seconds between two looks at a running Job
POLL_SECONDS = 10.0
#: what the Job's deadline leaves kubectl to notice the end
WAIT_MARGIN_SECONDS = 120


@dataclass(frozen=True)
class JobRef:
    """An engine-build Job in the cluster."""

    namespace: str
    name: str


def job_name(build: EngineBuild) -> str:
    """``tdk-build-<onnx sha256 8>-<build digest 8>``: a DNS label, stable per key."""
    digest = hashlib.sha256(build.key.prefix.encode()).hexdigest()[:8]
    return f"tdk-build-{build.key.onnx_sha256[:8]}-{digest}"


def require_kubectl() -> str:
    """kubectl's path, or a UsageError saying what to do without it."""
    found = shutil.which("kubectl")
    if found is None:
        raise UsageError(
            "tdk build --stack runs the build Job with kubectl, which is not on PATH",
            hint="install kubectl and point it at the stack's cluster, or write the Job with "
            "--render DIR and apply it yourself (kubectl apply -f DIR)",
        )
    return found


def apply_argv(kubectl: str, manifest: Path) -> list[str]:
    return [kubectl, "apply", "-f", str(manifest)]


def status_argv(kubectl: str, job: JobRef) -> list[str]:
    return [kubectl, "-n", job.namespace, "get", "job", job.name, "-o", "json"]


def logs_argv(kubectl: str, job: JobRef) -> list[str]:
    return [kubectl, "-n", job.namespace, "logs", f"job/{job.name}", "-c", "build", "--tail=40"]


def job_state(status: dict[str, Any]) -> str:
    """``Complete``, ``Failed`` or ``Running`` from a Job's ``kubectl get -o json``."""
    for condition in status.get("status", {}).get("conditions", []) or []:
        if condition.get("status") == "True" and condition.get("type") in ("Complete", "Failed"):
            return str(condition["type"])
    return "Running"


Runner = Callable[[list[str]], str]


def run_kubectl(argv: list[str]) -> str:
    """Run one kubectl command; a failure is a TdkError with its message."""
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=120)
    if done.returncode != 0:
        raise TdkError(
            f"{' '.join(argv[1:4])}... failed: {done.stderr.strip()[-500:]}",
            hint="check kubectl's context points at the stack's cluster (kubectl config "
            "current-context)",
        )
    return done.stdout


def await_job(
    kubectl: str,
    job: JobRef,
    deadline_s: float,
    run: Runner = run_kubectl,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Wait until ``job`` completes; a failed Job is a TdkError carrying its build log, and
    one still running at ``deadline_s`` seconds is a TdkError naming how to look."""
    end = clock() + deadline_s
    while True:
        state = job_state(json.loads(run(status_argv(kubectl, job))))
        if state == "Complete":
            return
        if state == "Failed":
            log = run(logs_argv(kubectl, job))
            raise TdkError(
                f"the build Job {job.namespace}/{job.name} failed (an engine outside the parity "
                f"tolerance is never uploaded):\n{log.strip()}",
                hint=f"kubectl -n {job.namespace} describe job {job.name}",
            )
        if clock() >= end:
            raise TdkError(
                f"the build Job {job.namespace}/{job.name} did not finish in {deadline_s:.0f} s",
                hint=f"kubectl -n {job.namespace} get pods -l job-name={job.name} (a GPU node "
                "may still be starting); rerun tdk build to wait again",
            )
        sleep(POLL_SECONDS)


def upload_inputs(store: Store, build: EngineBuild, work: Path) -> list[str]:
    """Copy the staged work directory to ``<entry>input/``; the keys written."""
    keys = []
    for path in sorted(p for p in work.rglob("*") if p.is_file()):
        key = build.key.prefix + "input/" + path.relative_to(work).as_posix()
        store.put_file(key, path, sha256_file(path))
        keys.append(key)
    return keys


def require_local_gpu() -> None:
    """``--local`` needs trtexec and an NVIDIA GPU here; else a UsageError naming where."""
    missing = [tool for tool in ("trtexec", "nvidia-smi") if shutil.which(tool) is None]
    if missing:
        raise UsageError(
            f"--local builds where TensorRT and an NVIDIA GPU are; {' and '.join(missing)} "
            "not found here",
            hint="run tdk build --local inside nvcr.io/nvidia/tensorrt:<base>-py3 (the base "
            "release of the stack's Triton image: infra/facts/hardware.py) on a "
            "machine with the target's GPU, or build on the stack's GPU pool: tdk build "
            "--stack <gke or eks stack>",
        )


def build_here(build: EngineBuild, work: Path, store: Store) -> EngineRecord:
    """Build in ``work`` with the local trtexec and GPU, check parity, cache the engine."""
    from infra.tensorrt_engines.pod_build import build as pod_build

    record = EngineRecord.from_json(json.dumps(pod_build(work)), str(work / "plan.json"))
    target = build.target.tensorrt
    built = record.built_for.split(":")[1].split("@")[0]
    if target is not None and built != f"{target[0]}.{target[1]}":
        raise TdkError(
            f"this machine's TensorRT is {record.tensorrt_full}; Triton {build.target.release} "
            f"runs TensorRT {target[0]}.{target[1]}: the engine would not load there",
            hint=f"run inside {build.target.tensorrt_image}",
        )
    if not record.parity.passed:
        raise TdkError(
            f"the engine is outside the parity tolerance: max abs {record.parity.max_abs:.3g}, "
            f"max rel {record.parity.max_rel:.3g} (atol {record.parity.atol}, rtol "
            f"{record.parity.rtol})",
            hint="build without --fp16, or pass --atol/--rtol if that error is acceptable",
        )
    store_engine(store, record, (work / "model.plan").read_bytes())
    return record


def cached_record(store: Store, build: EngineBuild) -> EngineRecord | None:
    return cached(store, build.key)


def logged_record_sha256(log: str) -> str | None:
    """The sha256 of ``plan.json`` that the Job's build step printed (``pod_build.main``)."""
    for line in reversed(log.splitlines()):
        try:
            found = json.loads(line)
        except ValueError:
            continue
        if isinstance(found, dict) and isinstance(found.get("plan_json_sha256"), str):
            return str(found["plan_json_sha256"])
    return None


def endorse_job_output(store: Store, build: EngineBuild, log: str) -> EngineRecord:
    """Endorse the record the Job uploaded, once the store holds the very bytes the Job's own
    log names (no writer of the store can alter that log) and the engine the record names."""
    prefix = build.key.prefix
    where = store.describe(prefix)
    if store.sha256_of(prefix + RECORD_FILE) is None:
        raise TdkError(
            f"the build Job finished but {where} holds no engine",
            hint="kubectl logs job/<name> -c upload shows what the upload did",
        )
    raw = store.get_bytes(prefix + RECORD_FILE)
    record = EngineRecord.from_json(raw, where + RECORD_FILE)
    logged = logged_record_sha256(log)
    if logged != hashlib.sha256(raw).hexdigest():
        raise TdkError(
            f"{where}{RECORD_FILE} is not the record the build Job printed in its log "
            f"({logged or 'none printed'}): something else wrote engines/ meanwhile; it is not "
            "endorsed and will not be served",
            hint="delete that entry and run tdk build again",
        )
    if (
        record.key != build.key
        or not record.parity.passed
        or store.sha256_of(prefix + ENGINE_FILE) != record.plan_sha256
    ):
        raise TdkError(
            f"{where}: the record the Job wrote does not name this build's key, a passing "
            "parity and the engine beside it; it is not endorsed",
            hint="delete that entry and run tdk build again",
        )
    endorse(store, prefix, raw)
    return record
