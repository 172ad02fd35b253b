"""The local endpoint under model churn: N clients x M requests over 5 models, K loaded slots.

Baseline (issue 8): 32 clients x 200 requests over 5 models with ``--max-loaded-models 2``:
10.7 req/s, p99 16 s, 0 errors. Each client sends keep-alive HTTP InvokeEndpoint requests and
moves to the next model every 50 requests, so loads and unloads happen all the time.

Run: ``.venv/bin/python bench/churn.py [--runs 3] [--json]``; ``--root DIR`` serves from another
checkout of the kit (to measure a before/after with the same script and release).
"""

from __future__ import annotations

import argparse
import http.client
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
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from invoke import make_release  # noqa: E402  (bench/invoke.py: the same sample release)

from infra.clients.inputs import example_inputs  # noqa: E402
from infra.clouds.aws.sagemaker.runtime import SageMakerRuntimeTarget  # noqa: E402
from packager.manifest import Manifest  # noqa: E402

MODELS = (
    "tokenizer-0.tar.gz",
    "tokenizer-1.tar.gz",
    "tokenizer-2.tar.gz",
    "text_classifier-0.tar.gz",
    "text_classifier-1.tar.gz",
)
SWITCH_EVERY = 50  # requests a client sends to one model before moving on


def start_endpoint(root: Path, store: Path, state: Path, k: int) -> tuple[Any, str]:
    env = dict(os.environ, TDK_STATE_DIR=str(state))
    args = ["--release", str(store), "--port", "0", "--max-loaded-models", str(k)]
    args += ["--capacity-timeout", "120"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "infra.targets.local.serve", *args],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    state_file = state / "local-local.json"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if state_file.exists():
            return proc, json.loads(state_file.read_text())["url"]
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    proc.kill()
    raise SystemExit("the local endpoint did not start")


def status(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"{url}/tdk/status", timeout=30) as response:
        return dict(json.loads(response.read()))


def bodies(manifest: Manifest) -> list[tuple[str, bytes, str]]:
    """(TargetModel, body, content type) per model, encoded with tdk's codec."""
    codec = SageMakerRuntimeTarget("local", endpoint_url="http://127.0.0.1:1", local=True)
    prepared = []
    for name in MODELS:
        model = manifest.by_target_model(name)
        request = codec.prepare(model, example_inputs(model))
        prepared.append((name, request.body, request.content_type))
    codec.close()
    return prepared


def client(
    port: int, worker: int, requests: int, prepared: list[Any]
) -> tuple[list[float], Counter[int]]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    latencies: list[float] = []
    codes: Counter[int] = Counter()
    for i in range(requests):
        name, body, kind = prepared[(worker + i // SWITCH_EVERY) % len(prepared)]
        headers = {"Content-Type": kind, "X-Amzn-SageMaker-Target-Model": name}
        started = time.perf_counter()
        conn.request("POST", "/endpoints/local/invocations", body, headers)
        response = conn.getresponse()
        response.read()
        latencies.append(time.perf_counter() - started)
        codes[response.status] += 1
    conn.close()
    return latencies, codes


def one_run(root: Path, store: Path, work: Path, args: argparse.Namespace) -> dict[str, float]:
    manifest = Manifest.from_json((store / "manifest.json").read_text())
    prepared = bodies(manifest)
    state = Path(tempfile.mkdtemp(prefix="state-", dir=work))
    proc, url = start_endpoint(root, store, state, args.k)
    port = int(url.rsplit(":", 1)[1])
    try:
        started = time.perf_counter()
        with ThreadPoolExecutor(args.clients) as pool:
            results = list(
                pool.map(lambda w: client(port, w, args.requests, prepared), range(args.clients))
            )
        elapsed = time.perf_counter() - started
        metrics = status(url)["metrics"]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    latencies = sorted(t for times, _ in results for t in times)
    codes: Counter[int] = sum((c for _, c in results), Counter())
    load = metrics.get("ModelLoadingTime", {})
    unload = metrics.get("ModelUnloadingTime", {})
    wait = metrics.get("ModelLoadingWaitTime", {})
    return {
        "requests": len(latencies),
        "errors": sum(n for code, n in codes.items() if code != 200),
        "req_per_s": len(latencies) / elapsed,
        "p50_s": latencies[len(latencies) // 2],
        "p99_s": latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))],
        "elapsed_s": elapsed,
        "unloads": metrics.get("ModelUnloads", 0),
        "load_avg_s": load.get("avg", 0.0) / 1e6,
        "unload_avg_s": unload.get("avg", 0.0) / 1e6,
        "loading_wait_p50_s": wait.get("p50", 0.0) / 1e6,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--requests", type=int, default=200, help="per client")
    parser.add_argument("--k", type=int, default=2, help="--max-loaded-models")
    parser.add_argument("--runs", type=int, default=1, help="report the median run")
    parser.add_argument("--root", type=Path, default=ROOT, help="checkout to serve from")
    parser.add_argument("--json", action="store_true", help="print one JSON object last")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tdk-churn-"))
    try:
        store = make_release(work)
        runs = [one_run(args.root.resolve(), store, work, args) for _ in range(args.runs)]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    median = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
    report: dict[str, Any] = {
        "baseline": "issue 8: 10.7 req/s, p99 16 s (32 clients x 200 requests, 5 models, K=2)",
        "clients": args.clients,
        "requests_per_client": args.requests,
        "k": args.k,
        "runs": args.runs,
        **{key: round(value, 3) for key, value in median.items()},
        "req_per_s_each_run": [round(run["req_per_s"], 2) for run in runs],
    }
    report["vs_baseline_req_per_s"] = round(median["req_per_s"] / 10.7, 2)
    for key, value in report.items():
        print(f"{key:28s} {value}")
    if args.json:
        print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
