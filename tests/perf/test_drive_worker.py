"""A generator process whose parent stopped listening (tune or bench interrupted) ends quietly:
no BrokenPipeError traceback on the user's terminal."""

from __future__ import annotations

import multiprocessing
import signal
import threading
from collections.abc import Iterator

import pytest

from infra.perf.drive import _worker


@pytest.fixture(autouse=True)
def _keep_sigint() -> Iterator[None]:
    before = signal.getsignal(signal.SIGINT)  # _worker ignores SIGINT, as a child process does
    yield
    signal.signal(signal.SIGINT, before)


def test_a_parent_gone_before_ready_ends_the_worker() -> None:
    parent, child = multiprocessing.Pipe()
    parent.close()
    _worker(lambda: lambda: None, child)  # raised BrokenPipeError before the fix


def test_a_parent_gone_mid_window_ends_the_worker() -> None:
    parent, child = multiprocessing.Pipe()
    closed = threading.Event()

    def parent_side() -> None:
        assert parent.recv() == ("ready", "")
        parent.send(("run", 1, 0.01))
        parent.close()  # interrupted while the window runs
        closed.set()

    def send() -> None:  # the window's requests wait until the parent has closed its end
        closed.wait(timeout=30)

    thread = threading.Thread(target=parent_side)
    thread.start()
    _worker(lambda: send, child)  # its "done" meets a closed pipe: raised before the fix
    thread.join()
    assert closed.is_set()
