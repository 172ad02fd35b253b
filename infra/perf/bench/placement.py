"""Where a local tune's processes run: the server (Triton and its backend stubs) on some CPUs,
the load generator on others.

On a small machine the scheduler otherwise moves Triton, its Python stubs and the generator
processes over the same cores, and where it puts them decides the figures: measured on a 2-core
VM, a two-instance config swung 1.39x between measurements unpinned and 1.10x with Triton on
CPU 0 and the generator on CPU 1 (docs/performance.md, "Where the processes run"). Pinning is
Linux's ``sched_setaffinity``; a child inherits its parent's CPU set, so Triton's stubs follow
Triton and the generator processes follow this one.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tdk.errors import UsageError
from tdk.numbers import ascii_int

AUTO, ALL = "auto", "all"
# auto: the generator gets a quarter of the CPUs (at least one), the server the rest
CLIENT_SHARE = 4
MAX_CPU = 4096  # CONFIG_NR_CPUS tops out here on common kernels: a bound on what a typo can cost


def can_pin() -> bool:
    """Whether this platform can pin a process to CPUs (Linux can; macOS cannot)."""
    return hasattr(os, "sched_setaffinity") and hasattr(os, "sched_getaffinity")


def allowed() -> frozenset[int]:
    """The CPUs this process may run on (a container's or ``taskset``'s set, not the machine's)."""
    if not can_pin():
        return frozenset()
    return frozenset(os.sched_getaffinity(0))


def cpu_list(cpus: frozenset[int] | None) -> str:
    """``cpus`` as Linux writes a CPU list (``0-3,6``); ``all`` for unpinned."""
    if cpus is None:
        return ALL
    ordered, runs = sorted(cpus), []
    start = prev = ordered[0]
    for cpu in [*ordered[1:], None]:
        if cpu is not None and cpu == prev + 1:
            prev = cpu
            continue
        runs.append(str(start) if start == prev else f"{start}-{prev}")
        if cpu is not None:
            start = prev = cpu
    return ",".join(runs)


def parse_cpus(option: str, text: str) -> frozenset[int] | None:
    """A CPU list as ``taskset -c`` takes it (``0``, ``0-3``, ``0,2,4-7``); ``all``: unpinned."""
    text = text.strip()
    if text == ALL:
        return None
    cpus: set[int] = set()
    for part in text.split(","):
        low, sep, high = part.strip().partition("-")
        first, last = ascii_int(low), ascii_int(high if sep else low)  # not "0_1"
        if first is None or last is None or not 0 <= first <= last < MAX_CPU:
            raise UsageError(
                f"{option} {text!r}: expected a CPU list such as 0, 0-3 or 0,2-3 (or all)",
                hint=f"this process may use CPUs {cpu_list(allowed()) if can_pin() else '?'}",
            )
        cpus.update(range(first, last + 1))
    return frozenset(cpus)


@dataclass(frozen=True)
class Placement:
    """The CPUs of the server and of the load generator; None: wherever the scheduler puts it."""

    server: frozenset[int] | None = None
    client: frozenset[int] | None = None

    @property
    def pinned(self) -> bool:
        return self.server is not None or self.client is not None

    def to_dict(self) -> dict[str, Any]:
        return {"server_cpus": cpu_list(self.server), "client_cpus": cpu_list(self.client)}

    def label(self) -> str:
        if not self.pinned:
            return "server and generator unpinned"
        return f"server on CPUs {cpu_list(self.server)}, generator on CPUs {cpu_list(self.client)}"


def auto(cpus: frozenset[int]) -> Placement:
    """Split ``cpus``: the highest quarter (at least one) for the generator, the rest for the
    server; one CPU (or none known) cannot be split, so nothing is pinned."""
    if len(cpus) < 2:
        return Placement()
    ordered = sorted(cpus)
    cut = len(ordered) - max(1, len(ordered) // CLIENT_SHARE)
    return Placement(frozenset(ordered[:cut]), frozenset(ordered[cut:]))


def resolve(server: str, client: str, local: bool) -> Placement:
    """``--server-cpus`` / ``--client-cpus`` as given (``auto``, ``all`` or a CPU list), checked
    against the CPUs this process may use. ``auto`` splits them for a local tune; a remote
    server's CPUs are not ours to place."""
    if not local and server not in (AUTO, ALL):
        raise UsageError(
            f"--server-cpus {server!r}: the server is remote (--url), its CPUs are not ours",
            hint="drop --server-cpus, or tune locally",
        )
    texts = {"--server-cpus": server, "--client-cpus": client}
    explicit = {option: text for option, text in texts.items() if text != AUTO}
    if not can_pin():
        if any(text != ALL for text in explicit.values()):
            raise UsageError(
                "this platform cannot pin processes to CPUs (no sched_setaffinity)",
                hint="drop --server-cpus and --client-cpus",
            )
        return Placement()
    mine = allowed()
    if not explicit:
        return auto(mine) if local else Placement()
    given = {option: _within(option, text, mine) for option, text in explicit.items()}
    return _apart(given, mine, local)


def _within(option: str, text: str, mine: frozenset[int]) -> frozenset[int] | None:
    cpus = parse_cpus(option, text)
    if cpus is not None and not cpus <= mine:
        raise UsageError(
            f"{option} {text!r}: CPU {cpu_list(cpus - mine)} is not one this process may use",
            hint=f"choose among CPUs {cpu_list(mine)}",
        )
    return cpus


def _apart(given: dict[str, frozenset[int] | None], mine: frozenset[int], local: bool) -> Placement:
    """The sides given; a side left auto beside a given list gets the CPUs that list left
    (none left, or the other unpinned: it is unpinned too). Two lists must not share a CPU."""
    server = given.get("--server-cpus") if local else None
    client = given.get("--client-cpus")
    if local and "--server-cpus" not in given:
        server = (mine - client) or None if client is not None else None
    if "--client-cpus" not in given:
        client = (mine - server) or None if server is not None else None
    if server is not None and client is not None and server & client:
        raise UsageError(
            f"--server-cpus {cpu_list(server)} and --client-cpus {cpu_list(client)} share CPU "
            f"{cpu_list(server & client)}",
            hint="give each its own CPUs, or all to leave one unpinned",
        )
    return Placement(server, client)


def pin(cpus: frozenset[int] | None) -> None:
    """Pin the calling thread (and what it starts from now on) to ``cpus``; None: leave it."""
    if cpus is not None:
        os.sched_setaffinity(0, cpus)


@contextlib.contextmanager
def pinned(cpus: frozenset[int] | None) -> Iterator[None]:
    """The calling thread on ``cpus`` for the block (threads and processes it starts inherit
    them), then back where it was."""
    if cpus is None:
        yield
        return
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, cpus)
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)
