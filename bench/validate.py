"""Benchmark `tdk validate` on a large repository, and the start-up time of `tdk --version`.

Repository: N (default 1,000) models, renamed copies of the sample repository's ONNX and Python
models (``model_repos/generate.py``), so every ONNX graph is read and compared.
Ours: `tdk validate REPO --format json` as a user runs it (a fresh process), median of R runs.
Baseline for start-up: a bare `python -c pass` (the interpreter alone); for validate, the same
command run from another checkout with ``--baseline-root`` (e.g. the main branch).
Prints models, validate_s (median), models_per_s, version_s (median), python_s, ratios.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("text_classifier", "image_classifier", "tokenizer")


def make_repo(root: Path, count: int) -> Path:
    """``count`` renamed copies of the sample models (directory and ``name:`` agree)."""
    spec = importlib.util.spec_from_file_location("generate", ROOT / "model_repos" / "generate.py")
    assert spec is not None and spec.loader is not None
    generate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generate)
    samples = root / "samples"
    generate.generate(samples)
    repo = root / "repo"
    repo.mkdir()
    for index in range(count):
        source = SOURCES[index % len(SOURCES)]
        copy = repo / f"{source}-{index}"
        shutil.copytree(samples / source, copy)
        config = copy / "config.pbtxt"
        config.write_text(config.read_text().replace(f'"{source}"', f'"{source}-{index}"', 1))
    return repo


def timed(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{command} failed ({done.returncode}): {done.stderr[-2000:]}")
    return elapsed, done.stdout


def median_of(runs: int, command: list[str], cwd: Path, env: dict[str, str]) -> float:
    return statistics.median(timed(command, cwd, env)[0] for _ in range(runs))


def tdk(root: Path) -> tuple[list[str], dict[str, str]]:
    """Run the CLI of the checkout at ``root`` with this interpreter (run it with cwd=root:
    ``python -c`` puts the working directory first on sys.path)."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    return [sys.executable, "-c", "from cli.main import main; main()"], env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline-root", type=Path, help="another checkout to compare with")
    parser.add_argument("--json", action="store_true", help="print one JSON object last")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="tdk-bench-validate-") as tmp:
        repo = make_repo(Path(tmp), args.models)
        command, env = tdk(ROOT)
        _, out = timed([*command, "validate", str(repo), "--format", "json"], ROOT, env)
        errors = [f for f in json.loads(out) if f["severity"] == "error"]
        if errors:
            raise SystemExit(f"the generated repository is invalid: {errors[:3]}")
        ours = median_of(args.runs, [*command, "validate", str(repo), "--json"], ROOT, env)
        version = median_of(5, [*command, "--version"], ROOT, env)
        python = median_of(5, [sys.executable, "-c", "pass"], ROOT, env)
        result = {
            "models": args.models,
            "validate_s": round(ours, 3),
            "models_per_s": round(args.models / ours, 1),
            "version_s": round(version, 3),
            "python_s": round(python, 3),
            "version_over_python": round(version / python, 2),
        }
        if args.baseline_root:
            base_command, base_env = tdk(args.baseline_root.resolve())
            base_root = args.baseline_root.resolve()
            base = median_of(
                args.runs, [*base_command, "validate", str(repo), "--json"], base_root, base_env
            )
            result["baseline_validate_s"] = round(base, 3)
            result["ours_over_baseline"] = round(ours / base, 2)
    for key, value in result.items():
        print(f"{key:22s} {value}")
    if args.json:
        print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
