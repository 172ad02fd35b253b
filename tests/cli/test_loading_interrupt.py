"""Ctrl-C while the command line loads exits with one line, at any moment after tdk's code runs."""

import subprocess
import sys

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


def test_once_loaded_ctrl_c_is_the_interpreter_s_again() -> None:
    code = "import signal, cli.main\nprint(signal.getsignal(2) is signal.default_int_handler)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "True", proc.stderr
