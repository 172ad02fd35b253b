"""Sample inputs the docs use, next to the sample models: ``image.npy`` (one image for
``image_classifier``) and ``traffic.csv`` (an hourly day of requests/s for ``tdk plan``).

Deterministic (a fixed seed), so the docs' figures do not move between runs. Written to their own
folder, never inside a model repository (``tdk validate`` would read them as models).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

PEAK_RPS = 4000
TROUGH_RPS = 600


def write_inputs(out: Path) -> list[Path]:
    """Write the sample inputs under ``out``; returns the files written."""
    out.mkdir(parents=True, exist_ok=True)
    image = out / "image.npy"
    rng = np.random.default_rng(21)
    np.save(image, rng.standard_normal((1, 3, 224, 224)).astype(np.float32))
    traffic = out / "traffic.csv"
    rows = ["time,rps"]
    for hour in range(24):  # a daily cycle: trough at 03:00, peak at 15:00
        share = (1 - math.cos(2 * math.pi * (hour - 3) / 24)) / 2
        rows.append(f"{hour:02d}:00,{round(TROUGH_RPS + share * (PEAK_RPS - TROUGH_RPS))}")
    traffic.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return [image, traffic]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("model_repos/inputs"))
    for path in write_inputs(parser.parse_args().out):
        print(path)


if __name__ == "__main__":
    main()
