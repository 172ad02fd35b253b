"""``tdk local up --replicas N``: HAProxy's configuration, routed as the cloud's Envoy (issue 46
item 6). The replicas joining and leaving under load are driven by bench/mme_k8s.py's smoke run
(tests/bench/test_smoke_mme_k8s.py)."""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.planning.routing import HAPROXY_HASH_BALANCE_FACTOR
from infra.targets.local import endpoint_state
from infra.targets.local.replicas import check_config, haproxy_config
from tdk.errors import TdkError
from tests.local.conftest import _runtime_or_skip

needs_haproxy = pytest.mark.skipif(
    shutil.which("haproxy", path="/usr/sbin:/usr/bin:/sbin") is None,
    reason="haproxy is not installed (make setup)",
)


@needs_haproxy
def test_config_hashes_the_target_model_and_haproxy_accepts_it(tmp_path: Path) -> None:
    with socket.socket() as listener:  # the kit binds loopback only and hands the socket over
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        fd = listener.fileno()
        text = haproxy_config(f"fd@{fd}", tmp_path / "admin.sock", [18081, 18082, None], "shop")
        lines = [line.strip() for line in text.splitlines()]
        assert "balance hdr(X-Amzn-SageMaker-Target-Model)" in lines
        assert "hash-type consistent" in lines
        assert f"hash-balance-factor {HAPROXY_HASH_BALANCE_FACTOR}" in lines
        assert f"bind fd@{fd}" in lines and not any(":18080" in line for line in lines)
        assert "server r2 127.0.0.1:1 disabled" in lines  # a spare slot for a joining replica
        assert r"http-request replace-path ^/endpoints/shop/invocations$ /invocations" in lines
        path = tmp_path / "haproxy.cfg"
        path.write_text(text)
        check_config(path, (fd,))  # `haproxy -c`: raises on anything HAProxy 2.6 refuses


@needs_haproxy
def test_a_config_haproxy_refuses_is_an_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "haproxy.cfg"
    with socket.socket() as listener:  # a real listener: only the nonsense line is refused
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        fd = listener.fileno()
        path.write_text(
            haproxy_config(f"fd@{fd}", tmp_path / "a.sock", [18081]) + "    balance x\n"
        )
        with pytest.raises(TdkError, match=r"HAProxy refused(.|\n)*balance"):
            check_config(path, (fd,))


@needs_haproxy
def test_detached_replicas_serve_and_down_stops_the_whole_set(
    release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`tdk local up --replicas 2 --detach`: one state file names the set; an invocation
    through HAProxy answers; `tdk local down` leaves no HAProxy, front or Triton behind."""
    _runtime_or_skip()
    monkeypatch.setenv("TDK_STATE_DIR", str(tmp_path / "state"))
    runner = CliRunner()
    up = ["local", "up", "--release", str(release), "--endpoint", "set", "--replicas", "2"]
    result = runner.invoke(app, [*up, "--port", "0", "--detach", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["url"].startswith("http://127.0.0.1:")
    replicas = [endpoint_state.read_state(f"set-r{index}") for index in range(2)]
    try:
        assert all(replicas), "each replica writes its own state file"
        supervisor = endpoint_state.read_state("set")
        assert supervisor is not None
        pids = {state.pid for state in replicas if state} | {supervisor.pid}
        # the supervisor's session holds HAProxy; each replica's, its front, Triton and stubs
        for leader in [supervisor, *replicas]:
            pids |= endpoint_state.session_processes(leader.pid) if leader else set()
        assert len(pids) > 5, pids
        assert "set" in endpoint_state.running_names()
        again = runner.invoke(app, [*up, "--detach"])
        assert again.exit_code != 0 and "already running" in again.output
        invoke = ["invoke", "--endpoint", "set", "--target-model", "tokenizer-0.tar.gz"]
        invoke += ["--text", "hello world", "--json"]
        answer = runner.invoke(app, invoke)
        assert answer.exit_code == 0, answer.output
        assert json.loads(answer.output)["outputs"]["token_ids"]["shape"] == [1, 128]
    finally:
        down = runner.invoke(app, ["local", "down", "--endpoint", "set"])
    assert down.exit_code == 0, down.output
    assert endpoint_state.running_names() == []
    left = [pid for pid in pids if endpoint_state.process_identity(pid)]
    assert left == [], f"still running after down: {left}"
