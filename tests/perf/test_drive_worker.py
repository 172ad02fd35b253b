"""A generator process whose parent stopped listening (tune or bench interrupted) ends quietly:
no BrokenPipeError traceback on the user's terminal."""

from __future__ import annotations

import multiprocessing
import signal
import threading
from collections.abc import Callable, Iterator

import pytest

from infra.perf.bench.drive import _worker


@pytest.fixture(autouse=True)
def _keep_sigint() -> Iterator[None]:
    before = signal.getsignal(signal.SIGINT)  # _worker ignores SIGINT, as a child process does
    yield
    signal.signal(signal.SIGINT, before)


def test_a_parent_gone_before_ready_ends_the_worker() -> None:
    parent, child = multiprocessing.Pipe()
    parent.close()
    built: list[str] = []

    def factory() -> Callable[[], None]:
        built.append("sender")
        return lambda: None

    _worker(factory, child)  # raised BrokenPipeError before the fix
    assert built == ["sender"]  # it got as far as telling the parent it was ready


def test_a_parent_gone_mid_window_ends_the_worker() -> None:
    parent, child = multiprocessing.Pipe()
    closed = threading.Event()

    def parent_side() -> None:
        assert parent.recv() == ("ready", "")
        parent.send(("run", 1, 0.01))
        parent.close()  # interrupted while the window runs
        closed.set()

    sent: list[bool] = []

    def send() -> None:  # the window's requests wait until the parent has closed its end
        sent.append(closed.wait(timeout=30))

    thread = threading.Thread(target=parent_side)
    thread.start()
    _worker(lambda: send, child)  # its "done" meets a closed pipe: raised before the fix
    thread.join()
    assert closed.is_set()
    assert sent and all(sent)  # the window ran, each request after the parent had gone
