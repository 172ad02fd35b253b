"""The local endpoint's own cost, measured against its baseline: Triton's HTTP API directly.

Both paths use the same HTTP client (``http.client`` keep-alive) and the same binary+json body,
so the difference is the front's. The front's CPU per request against Triton's is reported for
two models side by side, as the product serves both kinds: the small sample image classifier
(a 600 KB body, little arithmetic) and a BERT-shaped encoder (``bench/bert_onnx.py``, a 3 KB
body; all-MiniLM-L6-v2's shape by default). Run: ``.venv/bin/python bench/invoke.py [--json]``.
"""

from __future__ import annotations

import argparse
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
sys.path.insert(0, str(ROOT / "bench"))  # front_cost, bert_onnx: run as a script

import numpy as np  # noqa: E402
from bert_onnx import EncoderShape, write_model_dir  # noqa: E402
from front_cost import descendants, front_cost, pin  # noqa: E402

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


def make_release(work: Path, bert: EncoderShape | None = None) -> Path:
    """The sample models, and the BERT-shaped encoder ``bert`` (as ``bert``), 3 copies each."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("generate", ROOT / "model_repos" / "generate.py")
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    generator.generate(work / "repo")
    from packager.publish import publish
    from packager.stores import open_store

    repos = [work / "repo"]
    if bert is not None:
        repos.append(write_model_dir(work / "bert-repo", "bert", shape=bert).parent)
    publish(repos, open_store(str(work / "store")), copies=3)
    return work / "store"


def bert_inputs(shape: EncoderShape, seq: int) -> dict[str, np.ndarray]:
    """One sequence of ``seq`` tokens, all attended, one segment (a request BERT serves)."""
    ids = np.random.default_rng(0).integers(0, shape.vocab, (1, seq), dtype=np.int64)
    return {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": ids * 0}


def model_costs(
    ports: tuple[int, int],
    pids: tuple[int, int],
    costed: list[tuple[str, ManifestModel, PreparedRequest]],
    windows: int,
    seconds: float,
) -> dict[str, Any]:
    """``front_cost`` for each (prefix, model, request): the first unprefixed (the small
    sample, as before), the others' keys prefixed, each labelled by its model."""
    front_port, triton_port = ports
    figures: dict[str, Any] = {"cost_windows": windows}
    for prefix, model, request in costed:

        def through_front(m: ManifestModel = model, r: PreparedRequest = request) -> Any:
            return lambda c=Path_(front_port, front=True): c.post(m, r)

        def direct(m: ManifestModel = model, r: PreparedRequest = request) -> Any:
            return lambda c=Path_(triton_port, front=False): c.post(m, r)

        cost = front_cost(through_front, direct, pids, rps, windows, seconds)
        figures.update({f"{prefix}{key}": value for key, value in cost.items()})
    return figures


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


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quick", action="store_true", help="short loops: a smoke run")
    parser.add_argument(
        "--pin",
        action="store_true",
        help="the front on CPU 0, Triton, its stubs and the client on CPU 1 (taskset)",
    )
    bert = EncoderShape()
    parser.add_argument("--no-bert", action="store_true", help="cost the small sample only")
    parser.add_argument("--bert-layers", type=int, default=bert.layers)
    parser.add_argument("--bert-hidden", type=int, default=bert.hidden)
    parser.add_argument("--bert-heads", type=int, default=bert.heads)
    parser.add_argument("--bert-seq", type=int, default=128, help="tokens per request")
    args = parser.parse_args()
    if args.quick:  # a smoke run: a small encoder, short sequences
        args.bert_layers, args.bert_hidden, args.bert_heads, args.bert_seq = 2, 128, 4, 32
    return args


def run(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """Every figure, against one endpoint serving the sample release (and the encoder)."""
    from packager.manifest import Manifest

    layers, hidden, heads = args.bert_layers, args.bert_hidden, args.bert_heads
    shape = None if args.no_bert else EncoderShape(layers, hidden, heads)
    store = make_release(work, shape)
    manifest = Manifest.from_json((store / "manifest.json").read_text())
    proc, url = start_endpoint(store, work / "state", "0" if args.pin else None)
    try:
        figures: dict[str, Any] = dict(cold_and_raw(url, manifest, work / "state"))
        known = triton_of(work / "state")
        ports = (int(url.rsplit(":", 1)[1]), int(known["http_port"]))
        figures.update(measure(url, manifest, ports[1], 0.05 if args.quick else 1.0))
        image = manifest.by_target_model("image_classifier-0.tar.gz")
        request = FrontTarget(ports[0]).prepare(image, example_inputs(image))
        costed = [("", image, request)]
        figures["front_cost_model"] = f"{image.name}: ONNX CNN, {len(request.body)}-byte body"
        # the front's cost of a request whose body is small: what it spends per request, beside
        # what a large body adds (the image's cost less this one's)
        text = manifest.by_target_model("text_classifier-0.tar.gz")
        small = FrontTarget(ports[0]).prepare(text, example_inputs(text))
        costed.append(("text_", text, small))
        kind = "ONNX, BERT-like inputs"
        figures["text_front_cost_model"] = f"{text.name}: {kind}, {len(small.body)}-byte body"
        if shape is not None:
            bert = manifest.by_target_model("bert-0.tar.gz")
            request = FrontTarget(ports[0]).prepare(bert, bert_inputs(shape, args.bert_seq))
            for path in (Path_(ports[0], front=True), Path_(ports[1], front=False)) * 5:
                path.post(bert, request)  # loaded, its session warm
            costed.append(("bert_", bert, request))
            figures["bert_front_cost_model"] = (
                f"{bert.name}: {shape.label}, {args.bert_seq} tokens, {len(request.body)}-byte body"
            )
        if args.pin:
            pin([*descendants(int(known["pid"])), os.getpid()], {1})  # every thread
        windows, seconds = (3, 0.3) if args.quick else (5, 3.0)
        pids = (proc.pid, int(known["pid"]))
        figures.update(model_costs(ports, pids, costed, windows, seconds))
        fixed = figures["text_front_cpu_ms_per_request"]
        megabytes = (len(costed[0][2].body) - len(small.body)) / 1e6
        figures["front_cpu_ms_per_mb"] = (figures["front_cpu_ms_per_request"] - fixed) / megabytes
        # Triton's CPU per small request at which the front's own cost is 10 % of it
        figures["front_cpu_10pct_from_triton_ms"] = 10 * fixed
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    return figures


def cost_targets(figures: dict[str, Any]) -> dict[str, bool]:
    """Issue 46's goals for the front, in every pod's request path: for each costed model."""
    met = {}
    for prefix in ("", "bert_") if "bert_front_cost_model" in figures else ("",):
        ratio, over = f"{prefix}front_cpu_over_triton", f"{prefix}pinned_front_over_direct"
        met[f"{ratio} <= 0.10"] = figures[ratio] <= 0.10
        met[f"{over} >= 0.9"] = figures[over] >= 0.9
    overhead = figures["front_p50_ms"] - figures["direct_p50_ms"]
    met["front_p50_ms - direct_p50_ms <= 1.0"] = overhead <= 1.0
    return met


def main() -> int:
    args = arguments()
    work = Path(tempfile.mkdtemp(prefix="tdk-bench-"))
    try:
        figures = run(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rounded = {k: round(v, 3) if isinstance(v, float) else v for k, v in figures.items()}
    report = {"baseline": "Triton HTTP API direct, same client and body", **rounded}
    report["targets_met"] = targets(figures)
    report["pinned"] = args.pin
    report["load_average_1m"] = round(os.getloadavg()[0], 2)  # other processes share the cores
    report["front_cost_targets_met"] = cost_targets(figures)
    if args.json:
        print(json.dumps(report))
    else:
        for key, value in report.items():
            print(f"{key:50s} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
