"""Build a TensorRT engine with trtexec, run it on the parity inputs, compare with ONNX Runtime.

This file runs where the engine is built: inside NVIDIA's TensorRT container on the target GPU
(the ``tdk build`` Kubernetes Job runs ``python3 pod_build.py /work``) or here with
``--local``. It needs only the Python standard library, numpy, ``trtexec`` and ``nvidia-smi``
(all in ``nvcr.io/nvidia/tensorrt:<yy.mm>-py3``), so it imports nothing of tdk; the comparison
is unit-tested on CPU with arrays.

The work directory holds what ``tdk build`` staged (``infra.tensorrt_engines.stage``):
``model.onnx``, ``inputs/<i>.bin`` (raw input tensors at the parity shapes), ``reference.npz``
(ONNX Runtime's outputs on them) and ``build.json`` (the trtexec arguments, the tolerance, the
cache key). It writes ``model.plan``, ``outputs.json`` (trtexec ``--exportOutput``),
``plan.json`` (the record ``packager.tensorrt.engines.EngineRecord`` reads) and
``model.plan.sha256`` / ``plan.json.sha256`` for the upload; an engine outside the tolerance or
built on another GPU gets no record.

trtexec's ``--exportOutput`` JSON is a list of ``{"name", "dimensions": "AxB", "values"}``
(NVIDIA/TensorRT ``samples/common/sampleReporting.cpp`` ``exportJSONOutput``, checked
2026-11-27).
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

_TRT_VERSION = re.compile(r"TensorRT version: (\d+\.\d+(?:\.\d+)*)")
#: trtexec's banner ``[TensorRT v101303]``: major*10000 + minor*100 + patch
_TRT_BANNER = re.compile(r"\[TensorRT v(\d+)\]")
EPSILON = 1e-12


def compare(
    outputs: dict[str, np.ndarray], reference: dict[str, np.ndarray], atol: float, rtol: float
) -> dict[str, Any]:
    """The engine's ``outputs`` against ONNX Runtime's ``reference``: the max absolute and
    relative error over every output, and whether each element is within
    ``atol + rtol * |reference|`` (numpy's ``allclose`` rule). A missing output or another
    shape fails."""
    problems = []
    max_abs = max_rel = 0.0
    within = True
    for name, want in sorted(reference.items()):
        got = outputs.get(name)
        if got is None:
            problems.append(f"output {name!r} missing from the engine's outputs")
            continue
        if got.size != want.size:
            problems.append(f"output {name!r} has {got.size} values; ONNX Runtime gave {want.size}")
            continue
        got = got.reshape(want.shape).astype(np.float64)
        ref = want.astype(np.float64)
        diff = np.abs(got - ref)
        if diff.size:
            max_abs = max(max_abs, float(diff.max()))
            max_rel = max(max_rel, float((diff / np.maximum(np.abs(ref), EPSILON)).max()))
            within = within and bool(np.all(diff <= atol + rtol * np.abs(ref)))
    return {
        "max_abs": max_abs,
        "max_rel": max_rel,
        "atol": atol,
        "rtol": rtol,
        "passed": within and not problems,
        "problems": problems,
    }


def read_trtexec_outputs(path: Path) -> dict[str, np.ndarray]:
    """trtexec ``--exportOutput`` JSON -> output name -> values shaped by its dimensions."""
    found = {}
    for item in json.loads(path.read_text()):
        dims = [int(d) for d in str(item["dimensions"]).split("x") if d]
        values = np.asarray(item["values"], dtype=np.float64)
        found[str(item["name"])] = values.reshape(dims) if dims else values
    return found


def gpu_compute() -> str:
    """The first GPU's compute capability (``8.6``) as ``nvidia-smi`` reports it."""
    done = subprocess.run(
        ["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    return done.stdout.strip().splitlines()[0].strip()


def _trtexec(args: list[str], work: Path, log: str) -> str:
    """Run trtexec in ``work``, keep its log, return it; a failure exits with its status."""
    done = subprocess.run(["trtexec", *args], capture_output=True, text=True, check=False, cwd=work)
    text = done.stdout + done.stderr
    (work / log).write_text(text)
    if done.returncode != 0:
        sys.stderr.write(text[-4000:])
        raise SystemExit(done.returncode)
    return text


def tensorrt_version(log: str) -> str:
    """The TensorRT version trtexec's log names (``10.13.3``); SystemExit when it names none:
    a record must say what built the engine."""
    found = _TRT_VERSION.search(log)
    if found:
        return found.group(1)
    banner = _TRT_BANNER.search(log)
    if banner:
        number = int(banner.group(1))
        return f"{number // 10000}.{number // 100 % 100}.{number % 100}"
    raise SystemExit("trtexec's log names no TensorRT version; the engine cannot be recorded")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    path.with_name(path.name + ".sha256").write_text(digest + "\n")
    return digest


def built_for(compute: str, hardware: str, tensorrt: str, release: str) -> str:
    """``packager.tensorrt.engines.BuiltFor``'s text form: ``8.6:10.13@26.05`` or
    ``ampere+:10.13``."""
    major_minor = ".".join(tensorrt.split(".")[:2])
    text = f"{hardware or compute}:{major_minor}"
    return f"{text}@{release}" if release else text


def build(work: Path) -> dict[str, Any]:
    """Build, run and compare as ``work/build.json`` says; the record (also written to
    ``plan.json`` when the engine passes)."""
    spec = json.loads((work / "build.json").read_text())
    compute = gpu_compute()
    if not spec["hardware"] and compute != spec["key"]["compute"]:
        raise SystemExit(
            f"this GPU has compute capability {compute}; the engine is for {spec['key']['compute']}"
        )
    log = _trtexec(spec["build_args"], work, "build.log")
    _trtexec(spec["run_args"], work, "run.log")
    tensorrt = tensorrt_version(log)
    with np.load(work / "reference.npz") as data:
        reference = {name: data[name] for name in data.files}
    outputs = read_trtexec_outputs(work / "outputs.json")
    parity = compare(outputs, reference, spec["atol"], spec["rtol"])
    problems = parity.pop("problems")
    record = {
        "key": spec["key"],
        "built_for": built_for(compute, spec["hardware"], tensorrt, spec["release"]),
        "plan_sha256": _sha256(work / "model.plan"),
        "parity": parity,
        "tensorrt_full": tensorrt,
        "extra": {"problems": problems, "gpu_compute": compute},
    }
    if parity["passed"]:
        (work / "plan.json").write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
        _sha256(work / "plan.json")
    return record


def main(argv: list[str]) -> int:
    """``python3 pod_build.py WORKDIR``: 0 when the engine passed parity, 1 when it did not."""
    work = Path(argv[0])
    record = build(work)
    shown = record["parity"] | {"built_for": record["built_for"]}
    if record["parity"]["passed"]:  # tdk build endorses the uploaded record only if it is this
        shown["plan_json_sha256"] = hashlib.sha256((work / "plan.json").read_bytes()).hexdigest()
    sys.stdout.write(json.dumps(shown) + "\n")
    if not record["parity"]["passed"]:
        sys.stderr.write(
            f"parity failed: max abs {record['parity']['max_abs']:.3g}, max rel "
            f"{record['parity']['max_rel']:.3g} ({'; '.join(record['extra']['problems'])})\n"
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
