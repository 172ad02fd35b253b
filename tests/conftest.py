"""Fixtures shared by every test area."""

from __future__ import annotations

import importlib.util
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from tests.local.local_helpers import Endpoint

ROOT = Path(__file__).resolve().parent.parent


def load_generator() -> ModuleType:
    """``model_repos/generate.py`` as a module (model_repos/ is a script folder, not a package)."""
    name = "tdk_model_repos_generate"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "model_repos" / "generate.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture(scope="session", autouse=True)
def _private_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """One ``$TDK_CACHE_DIR`` for the test run (digest cache, staging): the developer's
    ``~/.cache/tdk`` is neither read nor grown, and a run starts from an empty cache as CI's
    does. A test that needs its own sets it again with monkeypatch."""
    import os

    before = os.environ.get("TDK_CACHE_DIR")
    os.environ["TDK_CACHE_DIR"] = str(tmp_path_factory.mktemp("tdk-cache"))
    yield
    if before is None:
        os.environ.pop("TDK_CACHE_DIR", None)
    else:
        os.environ["TDK_CACHE_DIR"] = before


@pytest.fixture(scope="session")
def model_repos_generate() -> ModuleType:
    """The sample repository generator module (``generate(out) -> list[Path]``)."""
    return load_generator()


@pytest.fixture(scope="session")
def sample_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample repository (text_classifier, image_classifier, tokenizer, text_pipeline),
    generated once per session. Treat it as read-only: copy it before changing anything."""
    out = tmp_path_factory.mktemp("samples") / "repo"
    load_generator().generate(out)
    return out


@pytest.fixture(scope="session")
def bert_onnx(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A BERT-shaped ONNX classifier file (tests/bert_onnx.py): input_ids, attention_mask,
    token_type_ids with dynamic batch and sequence, a 2-row token-type table. Read-only."""
    from tests.bert_onnx import write_bert_onnx

    return write_bert_onnx(tmp_path_factory.mktemp("bert") / "model.onnx")


@pytest.fixture(scope="module")
def llm_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Endpoint]:
    """A real local endpoint (front + Triton) serving one copy of the sample LLM
    (tests/model_repos/llm_repo.py), one per test module; skipped without the Triton runtime."""
    from tests.local.conftest import _runtime_or_skip
    from tests.local.local_helpers import make_release, start_endpoint
    from tests.model_repos.llm_repo import llm_repo

    _runtime_or_skip()
    store = tmp_path_factory.mktemp("llm-store")
    make_release(llm_repo(tmp_path_factory.mktemp("llm-repo")), store, 1)
    running = start_endpoint(store, tmp_path_factory.mktemp("llm-state"))
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def bystander() -> Iterator[subprocess.Popen[bytes]]:
    """An unrelated process of ours (``sleep 60``), standing where a reused pid would point;
    killed at the end."""
    proc = subprocess.Popen(["sleep", "60"])
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()


@pytest.fixture
def repo(sample_repo: Path, tmp_path: Path) -> Path:
    """A private, writable copy of the sample repository."""
    import shutil

    return Path(shutil.copytree(sample_repo, tmp_path / "repo"))


@pytest.fixture
def edit_config(repo: Path) -> Callable[..., Path]:
    """``edit_config(model, change)``: apply ``change(config)`` to repo/<model>/config.pbtxt
    through the ModelConfig protobuf and write it back; returns the config path."""
    from packager.config import dump_config, load_config

    def edit(model: str, change: Callable[[Any], object]) -> Path:
        path = repo / model / "config.pbtxt"
        config = load_config(path)
        change(config)
        path.write_text(dump_config(config), encoding="utf-8")
        return path

    return edit


@pytest.fixture(scope="session")
def _moto_server() -> Iterator[str]:
    """moto's threaded server on 127.0.0.1 (a free port), started once per session."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    port = server._server.server_port  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


@pytest.fixture
def moto_endpoint(_moto_server: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """moto's server URL: real HTTP for boto3 code under test.

    Fake credentials and a region are set for this test only (restored afterwards), so no real
    AWS is ever reached and no other test sees them.
    """
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    return _moto_server


@pytest.fixture(scope="session")
def _gcs_server() -> Iterator[str]:
    """gcp-storage-emulator on 127.0.0.1 (in memory), started once per session."""
    from gcp_storage_emulator.server import create_server

    port = _free_port()
    server = create_server("127.0.0.1", port, in_memory=True)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


@pytest.fixture
def gcs_emulator(_gcs_server: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The emulator's URL; STORAGE_EMULATOR_HOST points at it for this test only."""
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", _gcs_server)
    return _gcs_server


# Azurite's well-known development account (its README, "Default Storage Account"): a public
# test key, valid against the emulator only.
AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)
AZURITE_START_S = 60.0  # node starts Azurite in about a second here; far below this bound


def azurite_connection(endpoint: str) -> str:
    """A connection string for Azurite's development account at ``endpoint`` (host:port)."""
    return (
        f"DefaultEndpointsProtocol=http;AccountName={AZURITE_ACCOUNT};AccountKey={AZURITE_KEY};"
        f"BlobEndpoint=http://{endpoint}/{AZURITE_ACCOUNT};"
    )


@pytest.fixture(scope="session")
def _azurite_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Azurite's blob service (npm ``azurite``, installed by ``make setup`` into ``.node/``) on
    127.0.0.1 at a port it picks, storing in a temp dir, started once per session; its
    ``host:port``."""
    import shutil

    from tests.local.local_helpers import terminate

    binary = ROOT / ".node" / "node_modules" / ".bin" / "azurite-blob"
    found = str(binary) if binary.is_file() else shutil.which("azurite-blob")
    if found is None:
        pytest.fail(f"Azurite is not installed ({binary}): run `make setup` (or `make azurite`)")
    args = ["--blobHost", "127.0.0.1", "--blobPort", "0", "--silent", "--disableTelemetry"]
    # the SDK's API version may be newer than Azurite's; --loose ignores headers it lacks
    args += ["--skipApiVersionCheck", "--loose"]
    folder = tmp_path_factory.mktemp("azurite")
    proc = subprocess.Popen(
        [found, *args, "--location", str(folder)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        yield _azurite_endpoint(proc)
    finally:
        terminate(proc, 10)


def _azurite_endpoint(proc: Any) -> str:
    """The ``host:port`` Azurite prints once it listens, waited for up to AZURITE_START_S. A
    thread keeps reading its output to the end, so a chatty Azurite never blocks on the pipe."""
    import re
    import threading

    seen: list[str] = []
    listening = threading.Event()

    def drain() -> None:
        for line in proc.stdout:
            seen.append(line)
            if re.search(r"successfully listens on http://[0-9.]+:[0-9]+", line):
                listening.set()
        listening.set()  # it exited: stop waiting

    threading.Thread(target=drain, daemon=True).start()
    listening.wait(AZURITE_START_S)
    for line in seen:
        found = re.search(r"successfully listens on http://([0-9.]+:[0-9]+)", line)
        if found:
            return found.group(1)
    proc.kill()
    raise RuntimeError(f"Azurite did not start: {''.join(seen)[-2000:]}")


@pytest.fixture
def azurite(_azurite_server: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """Azurite's connection string; AZURE_STORAGE_CONNECTION_STRING holds it for this test only."""
    connection = azurite_connection(_azurite_server)
    monkeypatch.setenv("AZURE_STORAGE_CONNECTION_STRING", connection)
    return connection


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


#: The longest test files, longest first: seconds in one process (no -n) beside other work on
#: this 2-core machine, 2026-11-27. ``make test`` hands whole files to its processes in collection
#: order (``--dist loadfile --no-loadscope-reorder``); xdist's default order (most tests first)
#: left these one- and two-test files for last, one process busy while the others idled (a
#: replay of that schedule on these figures: 565 s against 511 s for this order, 510 s ideal).
#: Keep it to files over ~20 s; the other files with end-to-end tests follow, then the rest.
LONGEST_FIRST = (
    "tests/docs/test_docs_blocks.py",  # 157: every doc's runnable blocks
    "tests/bench/test_smoke_tune.py",  # 144: bench/tune.py --quick, SIGTERM during it
    "tests/perf/test_tune_cli.py",  # 105
    "tests/perf/test_tune_remote.py",  # 84
    "tests/bench/test_gpu_check_triton.py",  # ~60: three gpu_check runs to their tune step
    "tests/validate/test_docs_and_hooks.py",  # 53: pre-commit installs the kit
    "tests/perf/test_tune_safety.py",  # 47
    "tests/hostile/test_bad_endpoints.py",  # 47
    "tests/faults/test_publish_lock.py",  # 37
    "tests/local/test_bert_e2e.py",  # 34
    "tests/bench/test_smoke_invoke.py",  # 32
    "tests/bench/test_smoke_gpu_check.py",  # 28
    "tests/prom/test_live.py",  # 25
    "tests/local/test_stress.py",  # 24
)


def pytest_configure(config: Any) -> None:
    """Tests press Ctrl-C as a user at a terminal does, and a terminal leaves SIGINT to its
    default. A run started in the background (`make test &`, nohup) inherits SIGINT ignored,
    each child then ignores Ctrl-C as POSIX says it must, and a test waiting for the child to
    stop timed out (issue 45 item 3): give this process Python's default back, so that the
    children it starts get the terminal's disposition."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_modifyitems(items: list[Any]) -> None:
    """LONGEST_FIRST first, then the other files with end-to-end tests (a real Triton,
    subprocesses), then the rest; the order inside a file is kept. A listed file that no
    longer exists is an error, so a rename cannot silently send a long file to the end."""
    gone = [name for name in LONGEST_FIRST if not (ROOT / name).is_file()]
    if gone:
        raise pytest.UsageError(f"tests/conftest.py LONGEST_FIRST names missing files: {gone}")
    rank = {name: index for index, name in enumerate(LONGEST_FIRST)}
    heavy = {item.path for item in items if item.get_closest_marker("e2e") is not None}
    order = {id(item): index for index, item in enumerate(items)}
    items.sort(
        key=lambda item: (
            rank.get(item.nodeid.split("::", 1)[0], len(rank)),
            item.path not in heavy,
            order[id(item)],
        )
    )


def _counts(config: Any) -> list[int]:
    """This process's (releases built, make_release calls, Triton work dirs)."""
    helpers = sys.modules.get("tests.local.local_helpers")
    built = helpers.BUILD_COUNT[0] if helpers is not None else 0
    calls = helpers.CALL_COUNT[0] if helpers is not None else 0
    factory = getattr(config, "_tmp_path_factory", None)
    base = factory.getbasetemp() if factory is not None and factory._basetemp else None
    tritons = sum(1 for _ in base.rglob("triton.json")) if base is not None else 0
    return [built, calls, tritons]


_WORKER_COUNTS: list[list[int]] = []  # pytest-xdist: what each finished worker counted


def pytest_sessionfinish(session: Any) -> None:
    output = getattr(session.config, "workeroutput", None)
    if output is not None:  # an xdist worker: hand the counts to the controller
        output["tdk_counts"] = _counts(session.config)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    counts = getattr(node, "workeroutput", {}).get("tdk_counts")
    if counts is not None:
        _WORKER_COUNTS.append(list(counts))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Say what made the run slow, counted rather than timed: releases the publisher built for
    ``make_release`` (once per distinct input in each test process) and the Triton work
    directories (one per Triton started; a restart reuses its directory), over every worker."""
    # xdist's controller runs no test, and its basetemp holds the workers' own: count once
    rows = _WORKER_COUNTS or [_counts(terminalreporter.config)]
    built, calls, tritons = (sum(row[i] for row in rows) for i in range(3))
    terminalreporter.write_line(
        f"tdk: {built} release(s) published for {calls} make_release call(s), "
        f"{tritons} Triton work dir(s)"
    )


@pytest.fixture
def s3_release(moto_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> Callable[[Path], str]:
    """Uploads a release directory to a fresh bucket of the moto server: its s3:// URL, which
    a stack can name in releaseUrl (sagemaker-ic reads its manifest at declaration time)."""
    from tests.infra.ic_release import upload_release

    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_endpoint)
    return upload_release
