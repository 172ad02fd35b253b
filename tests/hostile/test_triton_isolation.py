"""Every Triton the kit starts, as another local user sees it (issue 47 items 1, 3, 6): the
repository secret is never on a command line (``--triton-netns off``, the fallback without
namespaces, and ``tdk tune``: test_tune_isolation.py covers its namespace); where the kernel
allows a mount namespace, the Python backend's shared memory is never in this machine's
``/dev/shm`` and a release's code sees the file system read-only but for the work dir; where it
does not, the endpoint says so once, naming what that exposes."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.triton_runtime.netns import PLACEHOLDER
from tests.hostile.endpoint_helpers import NO_NAMESPACES, no_namespaces_or_skip
from tests.hostile.other_user import python_for_other_user, watching
from tests.local.conftest import _runtime_or_skip
from tests.local.local_helpers import (
    Endpoint,
    infer_sleeper,
    make_release,
    python_endpoint,
    start_endpoint,
    wait_for,
    write_python_model,
)

pytestmark = pytest.mark.e2e
RULES = ("--http-restricted-api=", "--grpc-restricted-protocol=")
#: a directory outside the work dir and /tmp that this user may write in
OUTSIDE = "/var/tmp"


def _other_user_or_skip() -> None:
    _runtime_or_skip()
    if os.geteuid() != 0 or python_for_other_user() is None:
        pytest.skip("needs root (CI) to watch as another local user (uid 65534)")


def _mount_namespace_or_skip(endpoint: Endpoint) -> None:
    if "mount" not in endpoint.triton()["protections"]:
        pytest.skip("this kernel refuses Triton a mount namespace")


def _values(seen: list[str]) -> set[str]:
    """The values of Triton's restriction rules among the arguments another user saw (of
    this test's processes only: other Tritons may run on this machine)."""
    return {arg.split("=", 1)[1] for arg in seen if arg.startswith(RULES)}


@pytest.mark.parametrize("wrapper", [(), NO_NAMESPACES], ids=["netns-off", "no-namespaces-at-all"])
def test_another_user_never_sees_the_secret_while_the_endpoint_starts(
    tmp_path: Path, wrapper: tuple[str, ...]
) -> None:
    _other_user_or_skip()
    if wrapper:
        no_namespaces_or_skip()
    off = ("--triton-netns", "off")
    with (
        watching(str(tmp_path)) as seen,
        python_endpoint(tmp_path, "sleeper", args=off, wrapper=wrapper) as endpoint,
    ):
        assert infer_sleeper(endpoint) == [0.0]
        secret = endpoint.triton()["repository_header"][1]
    assert seen["scans"] > 0
    assert _values(seen["watch"]) == {PLACEHOLDER}, seen  # Triton was seen, never its secret
    assert not any(secret in arg for arg in seen["watch"])


def test_another_user_never_sees_the_secret_during_a_tune(
    sample_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _other_user_or_skip()
    model = Path(shutil.copytree(sample_repo / "image_classifier", tmp_path / "image_classifier"))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(work))  # tune's Triton works in there
    args = [str(model), "--latency-budget-ms", "2000", "--duration", "0.2"]
    args += ["--max-batch-sizes", "8", "--accelerators", "none", "--max-windows", "1"]
    args += ["--processes", "1", "--repeats", "1", "-c", "1", "--instances", "1"]
    args += ["--queue-delays-us", "0", "--search", "full"]
    with watching(str(work)) as seen:
        result = CliRunner().invoke(app, ["tune", *args])
    assert result.exit_code == 0, result.output
    assert _values(seen["watch"]) == {PLACEHOLDER}, seen  # tune's Triton: seen, never its secret


@pytest.fixture(scope="module")
def contained(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Endpoint]:
    """``--triton-netns off``: Triton on this machine's loopback, still in a mount namespace
    (a model that tries to write outside the work dir, and records how that went)."""
    _runtime_or_skip()
    root = tmp_path_factory.mktemp("contained")
    outside = Path(tempfile.mkdtemp(dir=OUTSIDE))  # not /tmp: the Python backend writes there
    attempt = (
        "import tempfile\n"
        f"        for where in ({str(outside)!r}, args['model_repository']):\n"
        "            try:\n"
        "                open(os.path.join(where, 'escaped'), 'w').close(); outcome = 'written'\n"
        "            except OSError as exc:\n"
        "                outcome = exc.strerror\n"
        "            with tempfile.NamedTemporaryFile('w', delete=False, suffix='.out') as out:\n"
        "                out.write(where + ':' + outcome)\n"
    )
    write_python_model(root / "repo", "sleeper", initialize=attempt)
    make_release(root / "repo", root / "store", copies=1)
    running = start_endpoint(root / "store", root / "state", "--triton-netns", "off")
    try:
        yield running
    finally:
        running.stop()
        shutil.rmtree(outside)


def test_shared_memory_is_never_in_this_machines_dev_shm(contained: Endpoint) -> None:
    _mount_namespace_or_skip(contained)
    assert infer_sleeper(contained) == [0.0]  # a Python model loaded and answered
    pid = contained.triton()["pid"]
    inside = list(Path(f"/proc/{pid}/root/dev/shm").iterdir())
    assert inside, "the Python backend's regions are in Triton's own /dev/shm"
    assert not list(Path("/dev/shm").glob(f"tdk{contained.proc.pid}_*"))  # never here: no window


def test_a_releases_code_writes_only_in_the_work_dir(contained: Endpoint) -> None:
    _mount_namespace_or_skip(contained)
    assert infer_sleeper(contained) == [0.0]
    work = contained.state_dir / "local-local"
    records = sorted(path.read_text() for path in (work / "tmp").glob("*.out"))
    outside = next(r.split(":")[0] for r in records if r.startswith(OUTSIDE))
    assert f"{outside}:Read-only file system" in records, records
    assert not Path(outside, "escaped").exists()
    assert any(r.endswith(":written") and r.startswith(str(work)) for r in records), records


def test_without_namespaces_the_endpoint_says_once_what_is_exposed(tmp_path: Path) -> None:
    _runtime_or_skip()
    no_namespaces_or_skip()
    with python_endpoint(tmp_path, "sleeper", wrapper=NO_NAMESPACES) as running:
        assert infer_sleeper(running) == [0.0]
        assert running.triton()["protections"] == ["argv"]
        os.killpg(os.getpgid(running.status()["triton_pid"]), signal.SIGKILL)
        wait_for(lambda: running.status()["triton_restarts"] == 1, 60, "Triton's restart")
        assert infer_sleeper(running) == [0.0]
        log = running.log.read_text()
    assert log.count("Triton runs with less isolation than it could") == 1, log
    for exposed in ("other local users reach its health", "0644 from their creation",
                    "can write wherever you can"):  # fmt: skip
        assert exposed in log
    assert "command line until" not in log  # the secret stayed off it
