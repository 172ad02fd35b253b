"""bench/gpu_check.py starts its Triton as the kit starts every Triton (issue 47 item 1): through
``infra/triton_runtime``'s launcher, so the repository key is never on a command line and every
API but health and inference refuses a caller without it; a SIGKILLed check leaves no Triton or
Python stub behind (they die with it), and SIGTERM or Ctrl-C stop them and remove the work dir.

Each test runs the real check (``--cpu``, the runtime wheel's Triton) until its tune step has
begun (its record of the model's config is written: Triton is up and serving, models loaded),
then signals it. Before the fix, Triton ran unrestricted in a session of its own and outlived
the check."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from infra.triton_runtime.netns import PLACEHOLDER
from tests.hostile.other_user import python_for_other_user, watching
from tests.local.conftest import _runtime_or_skip
from tests.local.local_helpers import alive, children, wait_for

ROOT = Path(__file__).resolve().parents[2]
STUB = "triton_python_backend_stub"
RULES = ("--http-restricted-api=", "--grpc-restricted-protocol=")


@dataclass
class Check:
    """A running ``gpu_check.py --cpu`` whose tune step has begun."""

    proc: subprocess.Popen[bytes]
    tmp: Path  # its TMPDIR: the work directory lies in there
    triton: dict[str, Any]  # the launcher's record: pid, ports, the repository header

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.triton['http_port']}"

    def processes(self) -> tuple[int, set[int]]:
        """Triton's pid and its Python stubs' (descendants of the check)."""
        tree = children(self.proc.pid)
        stubs = {pid for pid in tree if STUB in _cmdline(pid)}
        return int(self.triton["pid"]), stubs


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _tune_began(tmp: Path) -> Path | None:
    """The work dir once the tune step recorded the model's config (its first act)."""
    records = list(tmp.glob("tdk-gpu-check-*/state/tune/*.json"))
    return records[0].parents[2] if records else None


@contextmanager
def running_check(tmp_path: Path) -> Iterator[Check]:
    """The check, in a process group of its own (as a terminal's foreground job), until its
    tune step began; killed at the end if the test left it running."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    log = (tmp_path / "check.log").open("wb")
    command = [sys.executable, str(ROOT / "bench" / "gpu_check.py"), "--cpu"]
    proc = subprocess.Popen(
        [*command, "--out", str(tmp_path / "check.json")],
        cwd=ROOT, env=dict(os.environ, TMPDIR=str(tmp)), stdout=log, stderr=log,
        start_new_session=True,
    )  # fmt: skip
    try:

        def began() -> Path | None:
            assert proc.poll() is None, (tmp_path / "check.log").read_text()[-3000:]
            return _tune_began(tmp)

        work = wait_for(began, 240, "gpu_check's tune step to begin")
        record = work / "triton" / "triton.json"
        assert record.exists(), "gpu_check's Triton was not started by the kit's launcher"
        yield Check(proc, tmp, json.loads(record.read_text()))
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        log.close()
        _kill_left_over(tmp)


def _kill_left_over(tmp: Path) -> None:
    """Whatever of this test still runs after a failure (its command line names ``tmp``)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and str(tmp) in _cmdline(int(entry.name)):
            with suppress(ProcessLookupError):
                os.kill(int(entry.name), signal.SIGKILL)


def _status(url: str, method: str = "GET", headers: dict[str, str] | None = None) -> int:
    data = b"{}" if method == "POST" else None
    request = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def _refuses_without_the_key(check: Check) -> None:
    name, key = check.triton["repository_header"]
    config = f"{check.url}/v2/models/gpu_mlp-0/config"
    assert _status(f"{check.url}/v2/health/live") == 200
    assert _status(f"{check.url}/v2/repository/models/gpu_echo-0/unload", "POST") == 403
    assert _status(f"{check.url}/v2/repository/index", "POST") == 403
    assert _status(config) == 403
    assert _status(config, headers={name: key}) == 200  # the key opens them: it is the one


def _key_never_shown(check: Check) -> None:
    key = check.triton["repository_header"][1]
    triton, stubs = check.processes()
    assert stubs, "the models' Python stubs run under Triton"
    for pid in (triton, *stubs):
        assert key not in _cmdline(pid)
    shown = [arg for arg in _cmdline(triton).split() if arg.startswith(RULES)]
    assert shown and all(arg.endswith(f"={PLACEHOLDER}") for arg in shown), shown


@pytest.mark.e2e
def test_another_user_never_sees_the_key_and_a_sigkilled_check_takes_triton_along(
    tmp_path: Path,
) -> None:
    _runtime_or_skip()
    with ExitStack() as stack:
        seen: dict[str, Any] | None = None
        if os.geteuid() == 0 and python_for_other_user() is not None:
            seen = stack.enter_context(watching(str(tmp_path)))  # uid 65534 reads /proc
        check = stack.enter_context(running_check(tmp_path))
        _refuses_without_the_key(check)
        _key_never_shown(check)
        triton, stubs = check.processes()
        check.proc.kill()  # SIGKILL: no handler runs
        check.proc.wait()
        wait_for(lambda: not any(map(alive, (triton, *stubs))), 60, "Triton and its stubs to go")
    if seen is not None:
        assert seen["scans"] > 0
        key = check.triton["repository_header"][1]
        assert not any(key in arg for arg in seen["watch"])
        values = {arg.split("=", 1)[1] for arg in seen["watch"] if arg.startswith(RULES)}
        assert values == {PLACEHOLDER}, values  # Triton was seen, never its key


@pytest.mark.e2e
@pytest.mark.parametrize("stop", ["SIGTERM", "Ctrl-C"])
def test_sigterm_and_ctrl_c_stop_triton_and_remove_the_work_dir(tmp_path: Path, stop: str) -> None:
    _runtime_or_skip()
    with running_check(tmp_path) as check:
        _refuses_without_the_key(check)
        triton, stubs = check.processes()
        if stop == "SIGTERM":
            check.proc.terminate()
        else:  # the terminal signals its foreground process group
            os.killpg(check.proc.pid, signal.SIGINT)
        assert check.proc.wait(120) == 130
        wait_for(lambda: not any(map(alive, (triton, *stubs))), 30, "Triton and its stubs to go")
        assert not list(check.tmp.glob("tdk-gpu-check-*"))
    log = (tmp_path / "check.log").read_text()
    assert "gpu_check: interrupted; Triton stopped" in log and "Traceback" not in log, log


def test_the_check_and_the_launcher_need_only_the_standard_library() -> None:
    """The GPU machine runs the check with a bare Python: no site-packages (``-S``), no
    PYTHONPATH (``-I``); every module it imports, the kit's Triton runtime included, loads."""
    script = str(ROOT / "bench" / "gpu_check.py")
    done = subprocess.run(
        [sys.executable, "-I", "-S", script, "--help"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0 and "--runtime" in done.stdout, done.stderr
