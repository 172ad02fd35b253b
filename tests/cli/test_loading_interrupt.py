"""Ctrl-C while the command line loads exits with one line, at any moment after tdk's code runs."""

import signal
import subprocess
import sys
from pathlib import Path

# The interrupt arrives right after the package is imported, before `cli.main` and before the
# `signal` module (which imports enum): the moment a loaded machine hit in CI.
_INTERRUPT_WHILE_LOADING = """
import cli, os
os.kill(os.getpid(), 2)
import cli.main
print("loaded")
"""


def test_ctrl_c_right_after_the_package_loads_prints_one_line_and_exits_130() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _INTERRUPT_WHILE_LOADING], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 130, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip() == "interrupted"
    assert "loaded" not in proc.stdout


def test_a_tdk_started_with_ctrl_c_ignored_ignores_it_while_loading_too() -> None:
    """nohup or `tdk ... &` ignores SIGINT: the loading handler must not end such a run."""
    proc = subprocess.run(
        [sys.executable, "-c", _INTERRUPT_WHILE_LOADING],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "loaded"
    assert "interrupted" not in proc.stderr


def test_once_loaded_ctrl_c_is_the_interpreter_s_again() -> None:
    code = "import signal, cli.main\nprint(signal.getsignal(2) is signal.default_int_handler)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "True", proc.stderr


def test_a_test_run_started_in_the_background_still_presses_ctrl_c_as_a_terminal() -> None:
    """`make test &` (or nohup) starts pytest with SIGINT ignored and every child inherits that:
    tests/conftest.py gives the test processes the default back (issue 45 item 3, where CI's
    Ctrl-C tests failed so)."""
    test = f"{__file__}::test_once_loaded_ctrl_c_is_the_interpreter_s_again"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", test],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).resolve().parents[2],
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout
