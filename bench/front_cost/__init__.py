"""Parts of bench/invoke.py (not a bench script of its own): what the front costs per request
beside what Triton costs, in CPU time, and its c8 throughput against Triton directly.

CPU time is each process's own clock (``clock_getcpuclockid(3)``: nanoseconds, every thread,
those that exited too), not the 10 ms ticks of ``/proc/<pid>/stat``: on a BERT-shaped model a
window serves a hundred requests, and the front's share of them is a few ticks.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: a factory of senders (one per client thread), and the closed loop that drives them:
#: ``rps(factory, concurrency, seconds)`` -> requests per second
Factory = Callable[[], Callable[[], object]]
Rate = Callable[[Factory, int, float], float]

_LIBC = ctypes.CDLL(None, use_errno=True)


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system) the process ``pid`` has used, all its threads."""
    clock = ctypes.c_int()
    if _LIBC.clock_getcpuclockid(pid, ctypes.byref(clock)) == 0:
        with contextlib.suppress(OSError):
            return time.clock_gettime(clock.value)
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


def pin(pids: list[int], cpus: set[int]) -> int:
    """Pin every thread of each process in ``pids`` to ``cpus``; the number of threads pinned.

    ``sched_setaffinity(pid)`` moves one thread, the one whose id is ``pid``: the threads a
    process started before keep the CPUs they inherited. Triton, started by a front pinned to
    CPU 0, has its HTTP and model threads there, and each Python stub its own: pinning the pids
    alone had left them on the front's core (issue 46's pinned c8 comparison).
    """
    pinned = 0
    for pid in pids:
        with contextlib.suppress(OSError):  # a process that exited
            for task in Path(f"/proc/{pid}/task").iterdir():
                with contextlib.suppress(OSError):  # a thread that exited
                    os.sched_setaffinity(int(task.name), cpus)
                    pinned += 1
    return pinned


def tree_cpu_s(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError, ValueError, IndexError):  # a stub that exited
            total += cpu_s(pid)
    return total


def wait_s(pid: int) -> float:
    """Seconds the threads of ``pid`` spent runnable but waiting for a CPU (the run queue's
    delay, ``/proc/<pid>/task/<tid>/schedstat``'s second field): what a front on a core that
    other processes share loses beside its own CPU time."""
    total = 0
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError, IndexError, ValueError):
                total += int((task / "schedstat").read_text().split()[1])
    return total / 1e9


def front_cost(
    through_front: Factory,
    direct: Factory,
    pids: tuple[int, int],
    rate: Rate,
    windows: int,
    seconds: float,
) -> dict[str, Any]:
    """The front's CPU time per request against Triton's (Triton and its stubs) while c8
    clients go through the front, the time the front waited for a CPU meanwhile, and the c8
    throughput through the front against Triton directly, window by window (medians and
    spread)."""
    front_pid, triton_pid = pids
    tree = descendants(triton_pid)
    ratios, front_ms, triton_ms, front_rates, direct_rates = [], [], [], [], []
    waited_ms = []
    for _ in range(windows):
        before = cpu_s(front_pid), tree_cpu_s(tree), wait_s(front_pid)
        result_rate = rate(through_front, 8, seconds)
        after = cpu_s(front_pid), tree_cpu_s(tree), wait_s(front_pid)
        served = max(1.0, result_rate * seconds)
        front_used, triton_used = after[0] - before[0], after[1] - before[1]
        front_ms.append(front_used / served * 1000)
        triton_ms.append(triton_used / served * 1000)
        waited_ms.append((after[2] - before[2]) / served * 1000)
        ratios.append(front_used / triton_used if triton_used else 0.0)
        front_rates.append(result_rate)
        direct_rates.append(rate(direct, 8, seconds))
    ratio = [f / d for f, d in zip(front_rates, direct_rates, strict=True) if d]
    return {
        "front_cpu_ms_per_request": statistics.median(front_ms),
        "triton_cpu_ms_per_request": statistics.median(triton_ms),
        "front_cpu_wait_ms_per_request": statistics.median(waited_ms),
        "front_cpu_over_triton": statistics.median(ratios),
        "front_cpu_over_triton_spread": max(ratios) - min(ratios),
        "pinned_front_rps_c8": statistics.median(front_rates),
        "pinned_direct_rps_c8": statistics.median(direct_rates),
        "pinned_front_over_direct": statistics.median(ratio) if ratio else 0.0,
        "pinned_front_over_direct_spread": max(ratio) - min(ratio) if ratio else 0.0,
    }
