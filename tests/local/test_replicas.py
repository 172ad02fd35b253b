"""``tdk local up --replicas N``: HAProxy's configuration, routed as the cloud's Envoy (issue 46
item 6). The replicas joining and leaving under load are driven by bench/mme_k8s.py's smoke run
(tests/bench/test_smoke_mme_k8s.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.targets.local.replicas import check_config, haproxy_config
from tdk.errors import TdkError

needs_haproxy = pytest.mark.skipif(
    shutil.which("haproxy", path="/usr/sbin:/usr/bin:/sbin") is None,
    reason="haproxy is not installed (make setup)",
)


@needs_haproxy
def test_config_hashes_the_target_model_and_haproxy_accepts_it(tmp_path: Path) -> None:
    text = haproxy_config(18080, tmp_path / "admin.sock", [18081, 18082, None], name="shop")
    lines = [line.strip() for line in text.splitlines()]
    assert "balance hdr(X-Amzn-SageMaker-Target-Model)" in lines
    assert "hash-type consistent" in lines
    assert "hash-balance-factor 150" in lines
    assert "bind 127.0.0.1:18080" in lines  # loopback only, as the local endpoint
    assert "server r2 127.0.0.1:1 disabled" in lines  # a spare slot for a joining replica
    assert r"http-request replace-path ^/endpoints/shop/invocations$ /invocations" in lines
    path = tmp_path / "haproxy.cfg"
    path.write_text(text)
    check_config(path)  # `haproxy -c`: raises on anything HAProxy 2.6 refuses


@needs_haproxy
def test_a_config_haproxy_refuses_is_an_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "haproxy.cfg"
    path.write_text(haproxy_config(18080, tmp_path / "a.sock", [18081]) + "    balance nonsense\n")
    with pytest.raises(TdkError, match="HAProxy refused"):
        check_config(path)


def test_replicas_run_in_the_foreground_only(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["local", "up", "--release", str(tmp_path), "--replicas", "2", "--detach"]
    )
    assert result.exit_code != 0
    assert "--replicas runs in the foreground" in result.output
