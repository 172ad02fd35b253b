"""What reaching tune's Triton through its namespace costs: the same sample model (the sample
``image_classifier``, as the README's small tune) served by two local Tritons at once, one with
its listeners on this machine's 127.0.0.1 reached by TCP connect (how ``tdk tune`` ran before
issue 47 item 1), one in a network namespace of its own reached through the launcher's connector
(how it runs now). Windows alternate between them (A B, then B A, ...), so both share the
machine's drift; each round's ratio (namespace / loopback) is taken within the round, and the
median of the ratios is the figure. Load comes from this process's threads, each with its own
keep-alive connection (tune's ``--processes 1``; two sets of generator processes cannot run side
by side: the first to close stops the resource tracker the other's still hold), pinned apart
from the Tritons as tune pins them.
Run: ``.venv/bin/python bench/tune_netns.py [--rounds 10] [--duration 1] [-c 2] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from infra.clients.inputs import example_inputs  # noqa: E402
from infra.perf.bench.drive import InProcess  # noqa: E402
from infra.perf.bench.placement import resolve  # noqa: E402
from infra.perf.tune.server import LocalTriton, PerThreadSender  # noqa: E402
from infra.perf.tune.tuner import model_of  # noqa: E402

SIDES = ("loopback", "namespace")


def _sample(work: Path) -> Path:
    """The sample models (model_repos/generate.py, a script folder: loaded from its file)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("generate", ROOT / "model_repos" / "generate.py")
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    generator.generate(work / "repo")
    return work / "repo" / "image_classifier"


def _rig(triton: LocalTriton, side: str, cpus: Any) -> InProcess:
    triton.load(triton.base_config)
    model = model_of(triton.base_config)
    opener = triton.opener if side == "namespace" else None  # loopback: a TCP connect to url
    return InProcess(PerThreadSender(triton.url, model, example_inputs(model, 1), opener), cpus)


def run(args: argparse.Namespace) -> dict[str, Any]:
    where = resolve("auto", "auto", local=True)
    rps: dict[str, list[float]] = {side: [] for side in SIDES}
    with tempfile.TemporaryDirectory(prefix="tdk-bench-netns-") as tmp:
        work = Path(tmp)
        model_dir = _sample(work)
        with (
            LocalTriton(model_dir, work / "a", where.server, netns="off") as loop,
            LocalTriton(model_dir, work / "b", where.server, netns="on") as spaced,
        ):
            drivers = {
                "loopback": _rig(loop, "loopback", where.client),
                "namespace": _rig(spaced, "namespace", where.client),
            }
            try:
                for side in SIDES:  # warm both: first windows after a load run slow
                    drivers[side].window(args.concurrency, args.duration)
                for turn in range(args.rounds):
                    for side in SIDES[:: 1 if turn % 2 == 0 else -1]:
                        window = drivers[side].window(args.concurrency, args.duration)
                        rps[side].append(window.result.throughput)
            finally:
                for driver in drivers.values():
                    driver.close()
    ratios = [n / b for n, b in zip(rps["namespace"], rps["loopback"], strict=True) if b]
    return {
        "concurrency": args.concurrency,
        "duration_s": args.duration,
        "rounds": args.rounds,
        "load_average": os.getloadavg()[0],
        **{f"{side}_rps": [round(v, 1) for v in rps[side]] for side in SIDES},
        **{f"{side}_median_rps": round(statistics.median(rps[side]), 1) for side in SIDES},
        "ratio_median": round(statistics.median(ratios), 3),
        "ratio_min": round(min(ratios), 3),
        "ratio_max": round(max(ratios), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--duration", type=float, default=1.0)
    parser.add_argument("-c", "--concurrency", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(args)
    for side in SIDES:
        print(f"{side:>9}: median {result[f'{side}_median_rps']} rps {result[f'{side}_rps']}")
    print(
        f"namespace/loopback per round: median {result['ratio_median']} "
        f"(min {result['ratio_min']}, max {result['ratio_max']}), load {result['load_average']}"
    )
    if args.json:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
