"""bench/invoke.py --pin moves every thread of Triton's process tree, not only each main one.

``sched_setaffinity(pid)`` moves the one thread whose id is ``pid``: pinning Triton's pid and its
stubs' had left their worker threads on the front's CPU, so the "front on a core of its own"
comparison shared that core with Triton (issue 46).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.front_cost import descendants, pin

#: a process on CPU argv[2] with three idle threads and, as "parent", a child alike; prints
#: "ready" once all are started and exits when its stdin closes
_TREE = """
import os, subprocess, sys, threading
os.sched_setaffinity(0, {int(sys.argv[2])})
stop = threading.Event()
for _ in range(3):
    threading.Thread(target=stop.wait, daemon=True).start()
if sys.argv[1] == "parent":
    child = subprocess.Popen(
        [sys.executable, "-c", sys.argv[3], "leaf", sys.argv[2], ""],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
    )
    child.stdout.readline()
print("ready", flush=True)
sys.stdin.read()
"""


def _affinities(pids: list[int]) -> dict[int, set[int]]:
    return {
        int(task.name): os.sched_getaffinity(int(task.name))
        for pid in pids
        for task in Path(f"/proc/{pid}/task").iterdir()
    }


def test_pin_moves_every_thread_of_every_process() -> None:
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("needs two CPUs to move threads between")
    start, target = cpus[0], cpus[1]
    tree = subprocess.Popen(
        [sys.executable, "-c", _TREE, "parent", str(start), _TREE],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert tree.stdout is not None and tree.stdout.readline() == "ready\n"
        pids = descendants(tree.pid)
        assert len(pids) == 2
        before = _affinities(pids)
        assert len(before) >= 8 and all(found == {start} for found in before.values())

        assert pin(pids, {target}) == len(before)

        assert _affinities(pids) == {tid: {target} for tid in before}
    finally:
        tree.kill()  # its child reads EOF on its stdin then, and exits
        tree.wait()
