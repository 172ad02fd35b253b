"""SIGTERM and SIGHUP handled as Ctrl-C, so a command's ``finally`` blocks (stopping Triton,
removing temp dirs) run whichever way it is asked to stop."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

TERMINATIONS = (signal.SIGTERM, signal.SIGHUP)


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where Ctrl-C would be so the same cleanup runs."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"signal {signum}")
        self.signum = signum


@contextmanager
def terminations_interrupt() -> Iterator[None]:
    """Inside: SIGTERM and SIGHUP interrupt like Ctrl-C (once; repeats wait for the cleanup)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    fired: list[int] = []

    def handler(signum: int, frame: FrameType | None) -> None:
        if not fired:
            fired.append(signum)
            raise Terminated(signum)

    previous = {signum: signal.signal(signum, handler) for signum in TERMINATIONS}
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)
