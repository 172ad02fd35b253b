"""The ``tdk`` command line: one module per command group, thin over the library.

Ctrl-C while the command line loads (the first ~0.2 s of every command, nothing started yet)
exits with one line and no traceback. The handler is set here, before any other import, with
the built-in ``_signal`` module: ``signal`` itself imports ``enum``, and an interrupt during that
import would otherwise print a traceback. ``cli.main`` puts the previous handler back once loaded.
"""

import _signal
import os
import sys


def _interrupted_while_loading(signum: int, frame: object) -> None:
    """Ctrl-C while the command line loads: a line, no traceback."""
    sys.stderr.write("\ninterrupted\n")
    os._exit(128 + signum)


def _hold_interrupts() -> object | None:
    """Set the loading handler when this is the main thread and Ctrl-C is not ignored (nohup,
    a shell's `cmd &`: tdk then ignores it from start to end, as every program does); the
    handler it replaced, else None."""
    if _signal.getsignal(_signal.SIGINT) == _signal.SIG_IGN:
        return None
    try:
        before = _signal.signal(_signal.SIGINT, _interrupted_while_loading)
    except ValueError:  # not the main thread (a test runner's worker): nothing to hold
        return None
    return _signal.default_int_handler if before is None else before


#: the SIGINT handler before loading, or None when the loading handler was not set
BEFORE_LOADING = _hold_interrupts()
