"""The front's memory allocator, set for relaying large bodies (issue 46: its CPU per request).

Each invocation allocates and frees body-sized buffers (the chunks the server reads, the
response). glibc's malloc serves a block over its mmap threshold (128 KiB at first) with a fresh
mapping, and gives the top of its heap back to the kernel past its trim threshold: every 600 KB
image body then cost page faults and zeroed pages, a quarter of the front's CPU per request
(``perf`` on ``bench/invoke.py --pin``'s front, 2026-12-07). Raising both thresholds keeps the
freed buffers for the next request; the front then holds up to ``KEEP_FREED`` bytes it no
longer uses. Setting either threshold turns glibc's dynamic adjustment off, so both are set;
M_MMAP_THRESHOLD is at most DEFAULT_MMAP_THRESHOLD_MAX, 32 MiB on 64-bit (glibc manual,
"Malloc Tunable Parameters", and mallopt(3), checked 2026-12-07:
https://www.gnu.org/software/libc/manual/html_node/Malloc-Tunable-Parameters.html).
"""

from __future__ import annotations

import ctypes
import platform

M_TRIM_THRESHOLD = -1  # glibc's malloc.h
M_MMAP_THRESHOLD = -3
#: blocks below this come from the heap, not a mapping of their own (InvokeEndpoint's 6 MB fit)
MMAP_FROM = 32 * 1024 * 1024
#: freed memory kept at the top of the heap before it goes back to the kernel
KEEP_FREED = 64 * 1024 * 1024


def keep_body_buffers() -> bool:
    """Set this process's malloc thresholds (above); False where the C library is not glibc,
    which is then left as it is."""
    if platform.libc_ver()[0] != "glibc":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_FROM)) and bool(
        mallopt(M_TRIM_THRESHOLD, KEEP_FREED)
    )
