"""``tdk local check`` stopped by SIGTERM cleans up as Ctrl-C does: no Triton or Python stub
left running, no temp dir left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from infra.triton_runtime.runtime import SHM_DIR
from tests.local.local_helpers import alive, children, make_release, reaped, wait_for

TDK = str(Path(sys.executable).with_name("tdk"))


def test_sigterm_during_check_leaves_no_process_and_no_temp_dir(
    sample_repo: Path, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    make_release(sample_repo, store, copies=2, only=("tokenizer", "image_classifier"))
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = subprocess.Popen(
        [TDK, "local", "check", "--release", store.as_uri()],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=dict(os.environ, TMPDIR=str(tmp)),
    )
    with reaped(proc):
        # Triton and at least one Python stub are up: the check is loading a model
        family = wait_for(
            lambda: children(proc.pid) if len(children(proc.pid)) >= 2 else None,
            120,
            "Triton and a Python stub",
        )
        assert any(p.name.startswith("tdk-check-") for p in tmp.iterdir())
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode != 0 and b"Traceback" not in err
    assert not [pid for pid in family if alive(pid)]
    assert not list(SHM_DIR.glob(f"tdk{proc.pid}_*"))
    # tritonserver itself keeps a one-line ".ses" file in TMPDIR (also in /tmp): not ours
    assert [p.name for p in tmp.iterdir() if p.name != ".ses"] == []
