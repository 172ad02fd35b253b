"""One total deadline per request (connect, headers and the whole body), on every target.

A socket timeout bounds each read, so a server trickling one byte a second never trips it;
these helpers bound the whole exchange instead.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from types import TracebackType
from typing import TypeVar

from tdk.errors import UsageError

#: seconds one request may take when ``--timeout`` is not given
DEFAULT_TIMEOUT_S = 60.0

T = TypeVar("T")


class DeadlineExceeded(Exception):
    """The exchange took longer than its deadline."""


def check_timeout(seconds: float, option: str = "--timeout") -> float:
    """``seconds`` if it is a finite positive number; UsageError naming ``option`` otherwise."""
    if not math.isfinite(seconds) or seconds <= 0:
        raise UsageError(
            f"{option} {seconds}: expected a positive number of seconds",
            hint=f"e.g. {option} {DEFAULT_TIMEOUT_S:g}",
        )
    return seconds


class Watchdog:
    """Calls ``expire`` once when the ``with`` block is still running after ``seconds``
    (``expire`` unblocks it, e.g. by shutting the socket down); ``fired`` says it did."""

    def __init__(self, seconds: float, expire: Callable[[], None]) -> None:
        self._expire = expire
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True
        self.fired = False

    def _fire(self) -> None:
        self.fired = True
        self._expire()

    def __enter__(self) -> Watchdog:
        self._timer.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._timer.cancel()


def call_with_deadline(call: Callable[[], T], seconds: float) -> T:
    """``call()``'s result, or DeadlineExceeded after ``seconds``.

    For clients whose sockets we cannot reach (boto3): the call runs in a daemon thread that
    its own per-read timeouts end; the caller is not kept waiting for it.
    """
    box: dict[str, object] = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:  # handed to the caller below
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, daemon=True, name="tdk-request").start()
    if not done.wait(seconds):
        raise DeadlineExceeded(f"no complete answer within {seconds:g} s")
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]
