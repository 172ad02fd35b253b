"""Where a local tune's processes run (``infra.perf.bench.placement``): CPU lists as the user writes
them, the split a small machine gets by default, and, on the real local Triton, that Triton, its
Python stubs and the generator processes really run where they were put."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.perf.bench import placement
from infra.perf.bench.drive import InProcess, Processes
from infra.perf.bench.loadgen import Stability
from infra.perf.bench.placement import Placement, auto, cpu_list, parse_cpus, resolve
from infra.perf.tune.search import Point, Search, Settings
from infra.perf.tune.space import Knobs, Space
from tdk.errors import UsageError
from tests.local.local_helpers import children
from tests.perf.test_measure import SleepSender

runner = CliRunner()
needs_pinning = pytest.mark.skipif(
    not placement.can_pin() or len(placement.allowed()) < 2,
    reason="pinning apart needs Linux and two CPUs this process may use",
)


def _cpus(*cpus: int) -> frozenset[int]:
    return frozenset(cpus)


@pytest.mark.parametrize(
    ("text", "cpus"),
    [("0", {0}), ("0-3", {0, 1, 2, 3}), ("0,2-3", {0, 2, 3}), (" 5 ", {5}), ("1,1", {1})],
)
def test_cpu_lists_are_read_as_taskset_reads_them(text: str, cpus: set[int]) -> None:
    assert parse_cpus("--server-cpus", text) == frozenset(cpus)


@pytest.mark.parametrize("text", ["", "x", "3-1", "-1", "0-", "1,,2", "0-4096", "0.5", "auto"])
def test_a_bad_cpu_list_names_the_option_and_the_form(text: str) -> None:
    with pytest.raises(UsageError, match=r"--client-cpus .*expected a CPU list such as 0, 0-3"):
        parse_cpus("--client-cpus", text)


def test_all_is_unpinned_and_lists_are_written_back_in_short_form() -> None:
    assert parse_cpus("--server-cpus", "all") is None
    assert cpu_list(_cpus(0, 1, 2, 5, 7, 8)) == "0-2,5,7-8" and cpu_list(None) == "all"
    assert parse_cpus("--server-cpus", cpu_list(_cpus(0, 1, 2, 5, 7, 8))) == {0, 1, 2, 5, 7, 8}


def test_auto_keeps_a_quarter_for_the_generator_and_pins_nothing_on_one_cpu() -> None:
    assert auto(_cpus(0)) == Placement() and auto(frozenset()) == Placement()
    assert auto(_cpus(0, 1)) == Placement(_cpus(0), _cpus(1))
    assert auto(frozenset(range(16))) == Placement(frozenset(range(12)), frozenset(range(12, 16)))
    assert auto(_cpus(2, 5, 9)) == Placement(_cpus(2, 5), _cpus(9))  # a container's odd set


@pytest.fixture
def four_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(placement, "can_pin", lambda: True)
    monkeypatch.setattr(placement, "allowed", lambda: frozenset(range(4)))


@pytest.mark.usefixtures("four_cpus")
def test_what_the_options_resolve_to() -> None:
    assert resolve("auto", "auto", local=True) == Placement(_cpus(0, 1, 2), _cpus(3))
    assert resolve("all", "all", local=True) == Placement()
    assert resolve("0", "auto", local=True) == Placement(_cpus(0), _cpus(1, 2, 3))  # the rest
    assert resolve("auto", "0-1", local=True) == Placement(_cpus(2, 3), _cpus(0, 1))
    assert resolve("all", "auto", local=True) == Placement()  # nothing to keep apart from
    assert resolve("auto", "0-3", local=True) == Placement(None, _cpus(0, 1, 2, 3))
    # a remote server's CPUs are not ours: auto leaves the generator unpinned there
    assert resolve("auto", "auto", local=False) == Placement()
    assert resolve("auto", "1", local=False) == Placement(None, _cpus(1))


@pytest.mark.usefixtures("four_cpus")
@pytest.mark.parametrize(
    ("server", "client", "local", "message"),
    [
        ("0-2", "2-3", True, "share CPU 2"),
        ("7", "auto", True, "CPU 7 is not one this process may use"),
        ("auto", "3-5", True, "CPU 4-5 is not one"),
        ("0", "auto", False, "the server is remote"),
    ],
)
def test_placements_that_cannot_work_are_refused(
    server: str, client: str, local: bool, message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        resolve(server, client, local)


def test_a_platform_without_affinity_pins_nothing_and_refuses_a_list(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(placement, "can_pin", lambda: False)
    assert resolve("auto", "auto", local=True) == Placement()
    assert resolve("all", "auto", local=True) == Placement()
    with pytest.raises(UsageError, match="cannot pin processes"):
        resolve("0", "auto", local=True)


def test_the_cli_refuses_a_bad_placement_before_measuring(tmp_path: Path) -> None:
    """Exit 2 naming the option, before a model is read or a Triton started."""
    args = ["tune", str(tmp_path / "absent"), "--latency-budget-ms", "50"]
    for extra, named in (
        (["--server-cpus", "x"], "--server-cpus"),
        (["--client-cpus", "0-"], "--client-cpus"),
        (["--url", "http://127.0.0.1:9", "--model", "m", "--server-cpus", "0"], "remote"),
    ):
        result = runner.invoke(app, [*args, *extra])
        assert result.exit_code == 2 and named in result.output, result.output


def _affinity(pid: int) -> frozenset[int]:
    return frozenset(os.sched_getaffinity(pid))


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


@needs_pinning
def test_generator_processes_run_on_their_cpus() -> None:
    cpu = max(placement.allowed())
    before = children(os.getpid())
    driver = Processes(SleepSender(), 2, _cpus(cpu))
    try:
        workers = [p for p in children(os.getpid()) - before if "spawn_main" in _command(p)]
        assert len(workers) == 2
        assert all(_affinity(pid) == {cpu} for pid in workers)
        assert driver.window(2, 0.1).result.ok > 0
    finally:
        driver.close()


@needs_pinning
def test_in_process_threads_run_on_their_cpus_and_the_caller_is_restored() -> None:
    cpu, before = max(placement.allowed()), _affinity(0)
    seen: set[frozenset[int]] = set()

    def send() -> None:
        seen.add(_affinity(0))  # this window thread's own CPUs

    window = InProcess(send, _cpus(cpu)).window(3, 0.05)
    assert window.result.ok > 0 and seen == {_cpus(cpu)}
    assert _affinity(0) == before


@needs_pinning
@pytest.mark.e2e
def test_a_local_tune_runs_triton_its_stubs_and_the_generator_where_it_was_told(
    sample_repo: Path,
) -> None:
    """Checked while the tune runs (from its progress callback): Triton and the Python stubs it
    started on the server's CPU, the generator processes on the client's."""
    from infra.triton_runtime.runtime import RuntimeMissing, find_runtime

    try:
        find_runtime()
    except RuntimeMissing as exc:  # pragma: no cover - only without `make setup`
        pytest.skip(str(exc))
    from infra.perf.tune.tuner import SearchMode, tune_local
    from packager.config import CONFIG_NAME, load_config

    mine = sorted(placement.allowed())
    where = Placement(_cpus(mine[0]), _cpus(mine[-1]))
    settings = Settings(2000.0, (1,), 0.1, stability=Stability(50, 1), processes=2, repeats=0)
    settings = replace(settings, placement=where)
    seen: list[tuple[str, frozenset[int]]] = []
    me = os.getpid()

    def progress(done: int, total: int, best: Point | None) -> None:
        for pid in children(me):
            command = _command(pid)
            if "tritonserver" in command or "triton_python_backend_stub" in command:
                seen.append(("server", _affinity(pid)))
            elif "spawn_main" in command:
                seen.append(("generator", _affinity(pid)))

    model_dir = sample_repo / "image_classifier"
    space = Space((2,), (8,), (True,), (0,), (False,), auto_accelerators=False, shipped_delay=False)
    report = tune_local(
        model_dir, load_config(model_dir / CONFIG_NAME), settings, space, SearchMode.full, progress
    )
    assert report.search.points and report.to_dict()["server_cpus"] == str(mine[0])
    servers = [cpus for who, cpus in seen if who == "server"]
    generators = [cpus for who, cpus in seen if who == "generator"]
    assert len(servers) >= 3, seen  # Triton and two instances' stubs, at least once
    assert len(generators) >= 2, seen
    assert set(servers) == {where.server} and set(generators) == {where.client}


def test_the_report_says_where_the_processes_ran() -> None:
    from infra.perf.tune.tuner import SearchMode, TuneReport

    settings = Settings(50.0, placement=Placement(_cpus(0, 1), _cpus(3)))
    report = TuneReport("m", SearchMode.quick, settings, Knobs(1, 8, False), Search(settings))
    data = json.loads(json.dumps(report.to_dict()))
    assert data["server_cpus"] == "0-1" and data["client_cpus"] == "3"
