"""``tdk local up --replicas N``: every replica's Triton is isolated as ``tdk local up``'s (issue
47 item 1): in a network namespace of its own, none of its ports reachable from this machine's
network, another local user included, while HAProxy still reaches each replica's front."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from infra.clouds.aws.sagemaker.runtime import SageMakerRuntimeTarget
from infra.targets.local.options import EndpointOptions
from infra.targets.local.replicas import ReplicaSet
from packager.manifest import Manifest
from tests.hostile.endpoint_helpers import listening, netns_or_skip, tcp_tables
from tests.hostile.other_user import as_other_user, python_for_other_user
from tests.local.conftest import _runtime_or_skip
from tests.local.local_helpers import python_release

pytestmark = pytest.mark.e2e


def test_every_replicas_triton_is_in_a_network_namespace_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _runtime_or_skip()
    netns_or_skip()
    if shutil.which("haproxy", path="/usr/sbin:/usr/bin:/sbin") is None:
        pytest.skip("haproxy is not installed (make setup)")
    monkeypatch.setenv("TDK_STATE_DIR", str(tmp_path / "state"))
    store = python_release(tmp_path, "sleeper")
    manifest = Manifest.from_json((store / "manifest.json").read_text())
    options = EndpointOptions(release=store.as_uri(), port=0)  # HAProxy on a free port
    group = ReplicaSet(options, 2, tmp_path / "proxy")
    try:
        _answers(group.start(), manifest)  # through HAProxy to a replica, to its Triton
        known = [
            json.loads((Path(state.workdir) / "triton.json").read_text())
            for state in group.replicas().values()
        ]
        ports = [port for triton in known for port in (triton["http_port"], triton["grpc_port"])]
        host = tcp_tables()
        other = None
        if os.geteuid() == 0 and python_for_other_user() is not None:
            other = as_other_user({"connect": [["127.0.0.1", port] for port in ports]})
        insides = [tcp_tables(f"/proc/{triton['pid']}/net") for triton in known]
    finally:
        group.stop()
    assert len(known) == 2 and all(triton["netns"] is True for triton in known), known
    assert all(listening(inside, t["http_port"]) for inside, t in zip(insides, known, strict=True))
    assert not any(listening(host, port) for port in ports)
    if other is not None:
        assert other["connect"] == ["ConnectionRefusedError"] * len(ports), other


def _answers(url: str, manifest: Manifest) -> None:
    model = manifest.by_target_model("sleeper-0.tar.gz")
    target = SageMakerRuntimeTarget("local", endpoint_url=url, local=True, max_attempts=1)
    try:
        assert target.infer(model, {"x": np.array([0.0], np.float32)})["y"].tolist() == [0.0]
    finally:
        target.close()
