"""``tdk tune``'s Triton is isolated as ``tdk local up``'s (issue 47 item 1): in a network
namespace of its own where the kernel allows, no port of it is reachable from this machine's
network, another local user included; its load generators reach it through the launcher's
connector, which answers this user only; where namespaces are refused, the tune says so once,
naming what that exposes, and still measures."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.hostile.endpoint_helpers import (
    NO_NAMESPACES,
    listening,
    netns_or_skip,
    no_namespaces_or_skip,
    tcp_tables,
    wait_for,
)
from tests.hostile.other_user import as_other_user, python_for_other_user
from tests.local.conftest import _runtime_or_skip
from tests.local.local_helpers import ROOT

pytestmark = pytest.mark.e2e
#: the quickest tune the tests run: one config, one concurrency, one window per point
QUICK = ["--latency-budget-ms", "2000", "--duration", "0.2", "--max-batch-sizes", "8"]
QUICK += ["--accelerators", "none", "--max-windows", "1", "--repeats", "1", "-c", "1"]
QUICK += ["--instances", "1", "--queue-delays-us", "0", "--search", "full", "--json"]
WARNING = "Triton runs with less isolation than it could"


@contextmanager
def _tune(
    model: Path, work: Path, *args: str, wrapper: tuple[str, ...] = ()
) -> Iterator[subprocess.Popen[bytes]]:
    """``tdk tune --json`` of ``model`` as a process of its own, its temp dirs in ``work``;
    its stdout and stderr in ``work/../tune.out`` and ``tune.err``."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, TMPDIR=str(work), PYTHONPATH=path)
    command = [sys.executable, "-m", "cli", "tune", str(model), *QUICK, *args]
    with (work.parent / "tune.out").open("wb") as out, (work.parent / "tune.err").open("wb") as err:
        proc = subprocess.Popen([*wrapper, *command], stdout=out, stderr=err, env=env, cwd=ROOT)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGCONT)
            proc.kill()
        proc.wait(60)


def _finished(proc: subprocess.Popen[bytes], work: Path) -> dict[str, object]:
    """The tune's JSON report, once it exited 0."""
    code = proc.wait(300)
    errors = (work.parent / "tune.err").read_text()
    assert code == 0, errors
    report: dict[str, object] = json.loads((work.parent / "tune.out").read_text())
    return report


def _measured(report: dict[str, object]) -> None:
    shipped = report["shipped_best"]
    assert isinstance(shipped, dict) and shipped["throughput_rps"] > 0, report


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A directory another user may pass through (0711; pytest's own are 0700), so that what
    stops them is the kit's own directories."""
    path = Path(tempfile.mkdtemp(dir="/tmp", prefix="tdk-test-"))
    os.chmod(path, 0o711)
    try:
        yield path
    finally:
        shutil.rmtree(path)


def _model(sample_repo: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(sample_repo / "image_classifier", tmp_path / "image_classifier"))


def _triton_json(work: Path) -> dict[str, object]:
    found = wait_for(lambda: sorted(work.glob("tdk-tune-*/triton/triton.json")), 120, "Triton")
    known: dict[str, object] = json.loads(found[0].read_text())
    return known


def test_during_a_tune_no_triton_port_is_reachable_from_outside_its_namespace(
    sample_repo: Path, open_dir: Path
) -> None:
    _runtime_or_skip()
    if os.geteuid() != 0 or python_for_other_user() is None:
        pytest.skip("needs root (CI) to connect as another local user (uid 65534)")
    netns_or_skip()
    work = open_dir / "work"
    work.mkdir(mode=0o711)
    with _tune(_model(sample_repo, open_dir), work, "--processes", "2") as proc:
        known = _triton_json(work)
        assert known["netns"] is True, known  # the kernel allows one (netns_or_skip)
        os.kill(proc.pid, signal.SIGSTOP)  # the tune waits; Triton and its launcher listen on
        pid = int(str(known["pid"]))
        ports = [int(str(known[name])) for name in ("http_port", "grpc_port", "metrics_port")]
        connector = str(next(work.glob("tdk-tune-*/triton/triton.sock")))
        seen = as_other_user(
            {"connect": [["127.0.0.1", port] for port in ports], "ask": [connector]}
        )
        inside = tcp_tables(f"/proc/{pid}/net")  # Triton's namespace's (gRPC's is in tcp6)
        host = tcp_tables("/proc/net")
        os.kill(proc.pid, signal.SIGCONT)
        report = _finished(proc, work)
    assert seen["connect"] == ["ConnectionRefusedError"] * 3, seen
    assert seen["ask"] == ["PermissionError"], seen  # tune's work dirs are 0700
    assert all(listening(inside, port) for port in ports)  # Triton listened all the while
    assert not any(listening(host, port) for port in ports)
    _measured(report)  # its generators (2 processes) reached it through the connector


def test_without_namespaces_a_tune_says_once_what_is_exposed_and_measures(
    sample_repo: Path, tmp_path: Path
) -> None:
    _runtime_or_skip()
    no_namespaces_or_skip()
    work = tmp_path / "work"
    work.mkdir()
    with _tune(_model(sample_repo, tmp_path), work, "--processes", "2", wrapper=NO_NAMESPACES) as p:
        report = _finished(p, work)
    _measured(report)
    errors = (tmp_path / "tune.err").read_text()
    assert errors.count(WARNING) == 1, errors
    assert f"warning: {WARNING}" in errors
    for exposed in ("other local users reach its health", "0644 from their creation",
                    "can write wherever you can"):  # fmt: skip
        assert exposed in errors


def test_the_connector_answers_its_owner_only(sample_repo: Path, open_dir: Path) -> None:
    """Even where another user could reach the connector's socket (a directory opened by
    mistake), the launcher answers only peers of its own uid; a work dir longer than a Unix
    socket's address holds is no obstacle."""
    _runtime_or_skip()
    if os.geteuid() != 0 or python_for_other_user() is None:
        pytest.skip("needs root (CI) to connect as another local user (uid 65534)")
    from infra.perf.tune.server import LocalTriton

    deep = open_dir / ("d" * 100)
    deep.mkdir()
    with LocalTriton(sample_repo / "image_classifier", deep / "w") as triton:
        socket_file = deep / "w" / "triton" / "triton.sock"
        assert len(str(socket_file)) > 107
        assert stat.S_IMODE(socket_file.parent.stat().st_mode) == 0o700
        for folder in (deep, deep / "w", socket_file.parent):
            os.chmod(folder, 0o711)
        os.chmod(socket_file, 0o666)
        seen = as_other_user({"ask": [str(socket_file)]})
        mine = triton.opener()  # its owner is answered: a connection to Triton
        mine.close()
    assert seen["ask"][0] in ("closed", "BrokenPipeError", "ConnectionResetError"), seen
