"""Benchmark `tdk package` against the public SageMaker MME examples' method.

Repository: one model whose weight file is 200 MB of random bytes; N = 5 copies.
Baseline: for each copy, `cp -r` the model, set its `name:`, then
`tar -C copy_i -czf name_i.tar.gz .` (what the public notebooks do).
Ours: `tdk package REPO --copies 5 --release file://...` (archives, repository tree, manifest).
Republish (issue 20), each against the first publish (cold digest cache): the same publish
again with nothing changed (no-op), and again after one model's config changed. The repository
also holds a small model ``tiny``; it is the one changed, so bert's large copies stay unchanged.
Prints ours_s, baseline_s, speedup, ours_bytes, baseline_bytes, republish_uploaded_bytes,
noop_s, noop_ratio, one_changed_s, one_changed_ratio (medians of --repeat runs).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from packager.publish import publish
from packager.stores import open_store

CONFIG = """name: "bert"
backend: "python"
max_batch_size: 8
input {{ name: "x" data_type: TYPE_FP32 dims: [ 4 ] }}
output {{ name: "y" data_type: TYPE_FP32 dims: [ 4 ] }}
"""


def make_repo(root: Path, weight_mb: int) -> Path:
    small = root / "repo" / "tiny"
    (small / "1").mkdir(parents=True)
    (small / "config.pbtxt").write_text(CONFIG.format().replace('"bert"', '"tiny"'))
    (small / "1" / "model.py").write_text("class TritonPythonModel:\n    pass\n")
    model = root / "repo" / "bert"
    (model / "1").mkdir(parents=True)
    (model / "config.pbtxt").write_text(CONFIG.format())
    (model / "1" / "model.py").write_text("class TritonPythonModel:\n    pass\n")
    rng = os.urandom  # random bytes: the incompressible worst case for both methods
    with (model / "1" / "weights.bin").open("wb") as out:
        for _ in range(weight_mb):
            out.write(rng(1024 * 1024))
    return root / "repo"


def baseline(repo: Path, work: Path, copies: int) -> tuple[float, int]:
    out = work / "baseline"
    out.mkdir()
    os.sync()  # start each method with no dirty pages from the previous one
    start = time.perf_counter()
    for i in range(copies):
        copy = out / f"bert-{i}"
        shutil.copytree(repo / "bert", copy)
        config = copy / "config.pbtxt"
        config.write_text(config.read_text().replace('name: "bert"', f'name: "bert-{i}"'))
        subprocess.run(
            ["tar", "-C", str(copy), "-czf", str(out / f"bert-{i}.tar.gz"), "."], check=True
        )
    elapsed = time.perf_counter() - start
    size = sum((out / f"bert-{i}.tar.gz").stat().st_size for i in range(copies))
    shutil.rmtree(out)
    return elapsed, size


def _timed_publish(repo: Path, dest: Path, copies: int) -> tuple[float, int]:
    os.sync()
    start = time.perf_counter()
    result = publish([repo], open_store(f"file://{dest}"), copies)
    return time.perf_counter() - start, result.uploaded_bytes


def ours(repo: Path, dest: Path, copies: int) -> dict[str, float]:
    """First publish, no-op republish, then republish with one (small) model's config bumped."""
    first_s, _ = _timed_publish(repo, dest, copies)
    size = sum(p.stat().st_size for p in (dest / "mme").iterdir() if p.name.startswith("bert"))
    noop_s, noop_bytes = _timed_publish(repo, dest, copies)
    config = repo / "tiny" / "config.pbtxt"
    original = config.read_text()
    config.write_text(original.replace("max_batch_size: 8", "max_batch_size: 4"))
    try:
        changed_s, _ = _timed_publish(repo, dest, copies)
    finally:
        config.write_text(original)
    return {
        "first_s": first_s,
        "bytes": size,
        "noop_s": noop_s,
        "noop_bytes": noop_bytes,
        "changed_s": changed_s,
    }


def _summary(
    args: argparse.Namespace, runs: list[dict[str, float]], runs_base: list[float], base: int
) -> dict[str, float]:
    def median(name: str) -> float:
        return statistics.median(run[name] for run in runs)

    first = median("first_s")
    ours_bytes = int(runs[-1]["bytes"])
    return {
        "weight_mb": args.weight_mb,
        "copies": args.copies,
        "ours_s": round(first, 3),
        "baseline_s": round(statistics.median(runs_base), 3),
        "speedup": round(statistics.median(runs_base) / first, 2),
        "ours_bytes": ours_bytes,
        "baseline_bytes": base,
        "bytes_ratio": round(ours_bytes / base, 4),
        "republish_uploaded_bytes": int(max(run["noop_bytes"] for run in runs)),
        "noop_s": round(median("noop_s"), 3),
        "noop_ratio": round(median("noop_s") / first, 3),  # goal <= 0.1
        "one_changed_s": round(median("changed_s"), 3),
        "one_changed_ratio": round(median("changed_s") / first, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weight-mb", type=int, default=200)
    parser.add_argument("--copies", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3, help="runs; medians are reported")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=os.environ.get("TDK_BENCH_DIR")) as tmp:
        work = Path(tmp)
        repo = make_repo(work, args.weight_mb)
        runs: list[dict[str, float]] = []
        runs_base = []
        with tempfile.TemporaryDirectory() as cache:
            os.environ["TDK_CACHE_DIR"] = cache  # a cold digest cache for the first publish
            for run in range(args.repeat):
                dest = work / f"release-{run}"
                runs.append(ours(repo, dest, args.copies))
                shutil.rmtree(dest)
                shutil.rmtree(cache, ignore_errors=True)
                base_s, base_bytes = baseline(repo, work, args.copies)
                runs_base.append(base_s)
    result = _summary(args, runs, runs_base, base_bytes)
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>26}: {value}")


if __name__ == "__main__":
    main()
