"""Triton's ModelConfig schema loads once, whole, whichever thread asks first (the local
endpoint parses configs on worker threads while requests arrive)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = textwrap.dedent(
    """
    import importlib.machinery, sys, time
    from concurrent.futures import ThreadPoolExecutor

    slow = importlib.machinery.SourceFileLoader.exec_module

    def exec_module(self, module):
        if module.__name__.endswith("_pb2"):
            time.sleep(0.3)  # widens the window in which a half-loaded module could be seen
        return slow(self, module)

    importlib.machinery.SourceFileLoader.exec_module = exec_module
    from packager.config import new_config

    with ThreadPoolExecutor(8) as pool:
        names = list(pool.map(lambda _: type(new_config()).__name__, range(8)))
    assert names == ["ModelConfig"] * 8, names
    assert "tritonclient.grpc" not in sys.modules  # the package's heavy init never ran
    import tritonclient.grpc
    from tritonclient.grpc import model_config_pb2
    assert type(new_config()) is model_config_pb2.ModelConfig  # one schema, one class
    print("ok")
    """
)


def test_schema_loads_whole_under_concurrent_first_use() -> None:
    result = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
