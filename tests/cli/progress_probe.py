"""Drive ``Output.progress`` as a command would (a test helper run on a pseudo-terminal).

``python tests/cli/progress_probe.py AFTER_S WORK_S [--json]``: ten steps of WORK_S/10 seconds
of work each (the work a publish does), under bars that may appear after AFTER_S seconds.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from cli.output import Output


def main() -> None:
    after_s, work_s = float(sys.argv[1]), float(sys.argv[2])
    out = Output(json_mode="--json" in sys.argv)
    with out.progress(after_s=after_s) as start:
        advance = start("uploading-archives", 10)
        for _ in range(10):
            time.sleep(work_s / 10)  # stands for the work; the bars refresh on their own
            advance(1)
    out.info("done")


if __name__ == "__main__":
    main()
