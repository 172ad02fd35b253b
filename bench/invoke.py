"""The local endpoint's own cost, measured against its baseline: Triton's HTTP API directly.

Both paths use the same HTTP client (``http.client`` keep-alive) and the same binary+json body,
so the difference is the front's. Run: ``.venv/bin/python bench/invoke.py [--json]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from infra.clients.base import (  # noqa: E402
    InferenceTarget,
    PreparedRequest,
    RawResponse,
    header_length_from_content_type,
)
from infra.clients.inputs import example_inputs  # noqa: E402
from infra.clients.triton_errors import triton_error_text  # noqa: E402
from infra.clients.triton_http import TritonHttpTarget  # noqa: E402
from infra.perf.bench import loadgen  # noqa: E402
from packager.manifest import ManifestModel  # noqa: E402

BINARY = "application/vnd.sagemaker-triton.binary+json"


class Path_:
    """One way to reach a model: the front (SageMaker API) or Triton directly (KServe v2), both
    through the kit's one synchronous HTTP client (keep-alive ``http.client``)."""

    def __init__(self, port: int, front: bool) -> None:
        self.port = port
        self.front = front
        self.client = TritonHttpTarget(f"http://127.0.0.1:{port}")

    def post(self, model: ManifestModel, request: PreparedRequest) -> RawResponse:
        if self.front:
            path = "/endpoints/local/invocations"
            headers = {
                "Content-Type": request.content_type,
                "X-Amzn-SageMaker-Target-Model": model.target_model,
            }
        else:
            path = f"/v2/models/{model.name}/infer"
            headers = {"Content-Type": "application/octet-stream"}
            if request.header_length is not None:
                headers["Inference-Header-Content-Length"] = str(request.header_length)
        status, body, response = self.client.post(path, request.body, headers)
        if status != 200:
            raise RuntimeError(f"{status}: {triton_error_text(body, 300)}")
        length = response.getheader("Inference-Header-Content-Length")
        if length is None:
            length_int = header_length_from_content_type(response.getheader("Content-Type", ""))
        else:
            length_int = int(length)
        return RawResponse(body, length_int)


class FrontTarget(InferenceTarget):
    """An InferenceTarget over ``Path_`` (for the binary-vs-JSON codec comparison)."""

    def __init__(self, port: int) -> None:
        self.path = Path_(port, front=True)

    def send(self, model: ManifestModel, request: PreparedRequest) -> RawResponse:
        return self.path.post(model, request)


def p50_ms(fn: Any, count: int) -> float:
    times = []
    for _ in range(count):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def interleaved_p50(front: Any, direct: Any, rounds: int, count: int) -> tuple[float, float]:
    """Alternate blocks of front and direct requests so drift on a shared machine cancels."""
    f_times: list[float] = []
    d_times: list[float] = []
    for _ in range(rounds):
        for fn, times in ((front, f_times), (direct, d_times)):
            for _ in range(count):
                started = time.perf_counter()
                fn()
                times.append((time.perf_counter() - started) * 1000)
    return statistics.median(f_times), statistics.median(d_times)


def rps(make: Any, concurrency: int, seconds: float) -> float:
    local = {}

    def send() -> object:
        import threading

        ident = threading.get_ident()
        if ident not in local:
            local[ident] = make()
        return local[ident]()

    return loadgen.closed_loop(send, concurrency, seconds).throughput


def interleaved_rps(front: Any, direct: Any, rounds: int, seconds: float) -> tuple[float, float]:
    """Concurrency-8 throughput, alternating front and direct blocks so drift cancels."""
    front_rates: list[float] = []
    direct_rates: list[float] = []
    for _ in range(rounds):
        front_rates.append(rps(front, 8, seconds))
        direct_rates.append(rps(direct, 8, seconds))
    return statistics.fmean(front_rates), statistics.fmean(direct_rates)


def start_endpoint(
    store: Path, state: Path, front_cpus: str | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    env = dict(os.environ, TDK_STATE_DIR=str(state))
    args = ["--release", str(store), "--port", "0", "--max-loaded-models", "16"]
    args += ["--triton-netns", "off"]  # the raw-Triton comparisons call its port directly
    pin = ["taskset", "-c", front_cpus] if front_cpus else []
    proc = subprocess.Popen(
        [*pin, sys.executable, "-m", "infra.targets.local.serve", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    state_file = state / "local-local.json"
    for _ in range(600):
        if state_file.exists():
            return proc, json.loads(state_file.read_text())["url"]
        time.sleep(0.1)
    proc.kill()
    raise SystemExit("the local endpoint did not start")


def status(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"{url}/tdk/status") as response:
        return dict(json.loads(response.read()))


def triton_of(state: Path) -> dict[str, Any]:
    """The endpoint's Triton (pid, ports, repository API header): a private file in its work
    dir; ``/tdk/status``, open to any local user, does not say."""
    return dict(json.loads((state / "local-local" / "triton.json").read_text()))


def make_release(work: Path) -> Path:
    import importlib.util

    spec = importlib.util.spec_from_file_location("generate", ROOT / "model_repos" / "generate.py")
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    generator.generate(work / "repo")
    from packager.publish import publish
    from packager.stores import open_store

    publish([work / "repo"], open_store(str(work / "store")), copies=3)
    return work / "store"


def cold_and_raw(url: str, manifest: Any, workdir: Path) -> dict[str, float]:
    """First invoke of never-loaded copies vs Triton's load of the same extracted model."""
    from packager.config import dump_config, load_config

    front_port = int(url.rsplit(":", 1)[1])
    known = triton_of(workdir)
    triton = Path_(known["http_port"], front=False)
    restricted = dict([known["repository_header"]])  # the repository API needs it
    colds, raws, downloads = [], [], []
    for index in (1, 2):
        model = manifest.by_target_model(f"text_classifier-{index}.tar.gz")
        request = FrontTarget(front_port).prepare(model, example_inputs(model))
        before = status(url)["metrics"]["ModelDownloadingTime"]
        started = time.perf_counter()
        Path_(front_port, front=True).post(model, request)
        colds.append((time.perf_counter() - started) * 1000)
        after = status(url)["metrics"]["ModelDownloadingTime"]
        downloads.append((after["avg"] * after["count"] - before["avg"] * before["count"]) / 1000)
        repository = workdir / "local-local" / "repository"
        raw = f"raw-{index}"
        shutil.copytree(repository / model.name, repository / raw)
        config = load_config(repository / raw / "config.pbtxt")
        config.name = raw
        (repository / raw / "config.pbtxt").write_text(dump_config(config))
        started = time.perf_counter()
        code, _, _ = triton.client.post(f"/v2/repository/models/{raw}/load", b"", restricted)
        raws.append((time.perf_counter() - started) * 1000)
        assert code == 200, code
        triton.client.post(f"/v2/repository/models/{raw}/unload", b"", restricted)
    return {
        "cold_ms": statistics.median(colds),
        "raw_load_ms": statistics.median(raws),
        "download_ms": statistics.median(downloads),
    }


def measure(url: str, manifest: Any, triton_port: int, scale: float = 1.0) -> dict[str, float]:
    """The figures; ``scale`` < 1 shortens every loop (``--quick``: a smoke run, not figures)."""
    from infra.clouds.aws.sagemaker.runtime import SageMakerRuntimeTarget

    front_port = int(url.rsplit(":", 1)[1])
    text = manifest.by_target_model("text_classifier-0.tar.gz")
    image = manifest.by_target_model("image_classifier-0.tar.gz")
    target = FrontTarget(front_port)
    text_req = target.prepare(text, example_inputs(text))
    image_req = target.prepare(image, example_inputs(image))
    front, direct = Path_(front_port, front=True), Path_(triton_port, front=False)
    figures: dict[str, float] = {"image_body_bytes": len(image_req.body)}
    for model, request in ((text, text_req), (image, image_req)):
        for _ in range(_n(30, scale)):  # warm: loaded, sessions and connections hot
            front.post(model, request)
            direct.post(model, request)
    figures["front_p50_ms"], figures["direct_p50_ms"] = interleaved_p50(
        lambda: front.post(text, text_req), lambda: direct.post(text, text_req), 5, _n(200, scale)
    )
    figures["front_p50_ms_image"], figures["direct_p50_ms_image"] = interleaved_p50(
        lambda: front.post(image, image_req),
        lambda: direct.post(image, image_req),
        5,
        _n(60, scale),
    )
    figures["front_rps_c8"], figures["direct_rps_c8"] = interleaved_rps(
        lambda: lambda c=Path_(front_port, front=True): c.post(image, image_req),
        lambda: lambda c=Path_(triton_port, front=False): c.post(image, image_req),
        rounds=3,
        seconds=2.0 * scale,
    )
    boto3 = SageMakerRuntimeTarget("local", endpoint_url=url, local=True)
    boto3.send(text, text_req)
    figures["boto3_p50_ms"] = p50_ms(lambda: boto3.send(text, text_req), _n(300, scale))
    arrays = example_inputs(image)

    def round_trip(binary: bool) -> None:
        target.decode(image, target.send(image, target.prepare(image, arrays, binary=binary)))

    binary_ms = p50_ms(lambda: round_trip(True), _n(40, scale))
    json_ms = p50_ms(lambda: round_trip(False), _n(8, scale))
    figures.update(binary_round_trip_ms=binary_ms, json_round_trip_ms=json_ms)
    figures["binary_vs_json_speedup"] = json_ms / binary_ms
    return figures


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system) ``pid`` has used, all its threads."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def descendants(root: int) -> list[int]:
    """``root`` and every process below it (Triton and its Python-backend stubs)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            parents.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += parents.get(pid, [])
    return found


def tree_cpu_s(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError, ValueError, IndexError):  # a stub that exited
            total += cpu_s(pid)
    return total


def front_cost(
    url: str, manifest: Any, pids: tuple[int, int], triton_port: int, windows: int, seconds: float
) -> dict[str, Any]:
    """The front's CPU time per request against Triton's (Triton and its stubs), and the c8
    throughput through the front against Triton directly, window by window (medians and
    spread). With ``--pin`` the front runs on CPU 0 and Triton, its stubs and this client on
    CPU 1: the front has a core of its own, as in a pod."""
    front_port = int(url.rsplit(":", 1)[1])
    front_pid, triton_pid = pids
    image = manifest.by_target_model("image_classifier-0.tar.gz")
    request = FrontTarget(front_port).prepare(image, example_inputs(image))
    tree = descendants(triton_pid)
    ratios, front_ms, triton_ms, front_rates, direct_rates = [], [], [], [], []
    for _ in range(windows):
        before = cpu_s(front_pid), tree_cpu_s(tree)
        result_rate = rps(
            lambda: lambda c=Path_(front_port, front=True): c.post(image, request), 8, seconds
        )
        after = cpu_s(front_pid), tree_cpu_s(tree)
        served = max(1.0, result_rate * seconds)
        front_used, triton_used = after[0] - before[0], after[1] - before[1]
        front_ms.append(front_used / served * 1000)
        triton_ms.append(triton_used / served * 1000)
        ratios.append(front_used / triton_used if triton_used else 0.0)
        front_rates.append(result_rate)
        direct_rates.append(
            rps(
                lambda: lambda c=Path_(triton_port, front=False): c.post(image, request),
                8,
                seconds,
            )
        )
    ratio = [f / d for f, d in zip(front_rates, direct_rates, strict=True) if d]
    return {
        "front_cpu_ms_per_request": statistics.median(front_ms),
        "triton_cpu_ms_per_request": statistics.median(triton_ms),
        "front_cpu_over_triton": statistics.median(ratios),
        "front_cpu_over_triton_spread": max(ratios) - min(ratios),
        "pinned_front_rps_c8": statistics.median(front_rates),
        "pinned_direct_rps_c8": statistics.median(direct_rates),
        "pinned_front_over_direct": statistics.median(ratio) if ratio else 0.0,
        "pinned_front_over_direct_spread": max(ratio) - min(ratio) if ratio else 0.0,
        "cost_windows": windows,
    }


def _n(count: int, scale: float) -> int:
    return max(3, int(count * scale))


def targets(f: dict[str, float]) -> dict[str, bool]:
    return {
        "front_p50_ms - direct_p50_ms <= 1.0": f["front_p50_ms"] - f["direct_p50_ms"] <= 1.0,
        "front_p50_ms_image - direct_p50_ms_image <= 1.5": f["front_p50_ms_image"]
        - f["direct_p50_ms_image"]
        <= 1.5,
        "front_rps_c8 >= 0.8 * direct_rps_c8": f["front_rps_c8"] >= 0.8 * f["direct_rps_c8"],
        "binary_vs_json_speedup >= 20": f["binary_vs_json_speedup"] >= 20,
        "cold_ms <= 1.3 * raw_load_ms + download_ms": f["cold_ms"]
        <= 1.3 * f["raw_load_ms"] + f["download_ms"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quick", action="store_true", help="short loops: a smoke run")
    parser.add_argument(
        "--pin",
        action="store_true",
        help="the front on CPU 0, Triton, its stubs and the client on CPU 1 (taskset)",
    )
    args = parser.parse_args()
    from packager.manifest import Manifest

    work = Path(tempfile.mkdtemp(prefix="tdk-bench-"))
    proc = None
    try:
        store = make_release(work)
        manifest = Manifest.from_json((store / "manifest.json").read_text())
        proc, url = start_endpoint(store, work / "state", "0" if args.pin else None)
        figures = cold_and_raw(url, manifest, work / "state")
        known = triton_of(work / "state")
        port = known["http_port"]
        figures.update(measure(url, manifest, port, 0.05 if args.quick else 1.0))
        if args.pin:
            for pid in descendants(int(known["pid"])):
                os.sched_setaffinity(pid, {1})
            os.sched_setaffinity(0, {1})
        windows, seconds = (3, 0.3) if args.quick else (5, 3.0)
        pids = (proc.pid, int(known["pid"]))
        cost = front_cost(url, manifest, pids, port, windows, seconds)
        figures.update(cost)
    finally:
        if proc is not None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)
        shutil.rmtree(work, ignore_errors=True)
    rounded = {key: round(value, 3) for key, value in figures.items()}
    report = {"baseline": "Triton HTTP API direct, same client and body", **rounded}
    report["targets_met"] = targets(figures)
    report["pinned"] = args.pin
    report["front_cost_targets_met"] = {  # issue 46: the front is in every pod's request path
        "front_cpu_over_triton <= 0.10": figures["front_cpu_over_triton"] <= 0.10,
        "pinned_front_over_direct >= 0.9": figures["pinned_front_over_direct"] >= 0.9,
        "front_p50_ms - direct_p50_ms <= 1.0": figures["front_p50_ms"] - figures["direct_p50_ms"]
        <= 1.0,
    }
    if args.json:
        print(json.dumps(report))
    else:
        for key, value in report.items():
            print(f"{key:50s} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
