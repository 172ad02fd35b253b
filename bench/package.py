"""Benchmark `tdk package` against the public SageMaker MME examples' method.

Repository: one model whose weight file is 200 MB of random bytes; N = 5 copies.
Baseline: for each copy, `cp -r` the model, set its `name:`, then
`tar -C copy_i -czf name_i.tar.gz .` (what the public notebooks do).
Ours: `tdk package REPO --copies 5 --dest file://...` (archives, repository tree, manifest).
Prints ours_s, baseline_s, speedup, ours_bytes, baseline_bytes, republish_uploaded_bytes.
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


def ours(repo: Path, dest: Path, copies: int) -> tuple[float, int, int]:
    os.sync()
    start = time.perf_counter()
    publish([repo], open_store(f"file://{dest}"), copies)
    elapsed = time.perf_counter() - start
    size = sum(p.stat().st_size for p in (dest / "mme").iterdir())
    republish = publish([repo], open_store(f"file://{dest}"), copies)
    return elapsed, size, republish.uploaded_bytes


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
        runs_ours, runs_base = [], []
        for run in range(args.repeat):
            dest = work / f"release-{run}"
            ours_s, ours_bytes, republished = ours(repo, dest, args.copies)
            shutil.rmtree(dest)
            base_s, base_bytes = baseline(repo, work, args.copies)
            runs_ours.append(ours_s)
            runs_base.append(base_s)
    result = {
        "weight_mb": args.weight_mb,
        "copies": args.copies,
        "ours_s": round(statistics.median(runs_ours), 3),
        "baseline_s": round(statistics.median(runs_base), 3),
        "speedup": round(statistics.median(runs_base) / statistics.median(runs_ours), 2),
        "ours_bytes": ours_bytes,
        "baseline_bytes": base_bytes,
        "bytes_ratio": round(ours_bytes / base_bytes, 4),
        "republish_uploaded_bytes": republished,
    }
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>26}: {value}")


if __name__ == "__main__":
    main()
