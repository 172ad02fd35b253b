"""``tdk local up --replicas N``'s HAProxy listens on a socket the kit bound itself and hands over
(``bind fd@N``). HAProxy binds with SO_REUSEPORT: a port that another listener of the same user
holds with SO_REUSEPORT (another set's HAProxy, picked free by both) was shared silently, the
kernel spreading one set's requests over both. A set's port is now its own, or the start fails
naming the port and the fix."""

from __future__ import annotations

import shutil
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from infra.targets.local.options import EndpointOptions
from infra.targets.local.replicas import ReplicaSet
from tdk.errors import TdkError


@pytest.fixture()
def squatter() -> Iterator[int]:
    """A listener on a free port with SO_REUSEPORT, as another HAProxy of this user holds it."""
    if shutil.which("haproxy", path="/usr/sbin:/usr/bin:/sbin") is None:
        pytest.skip("haproxy is not installed (make setup)")
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield int(sock.getsockname()[1])


def test_a_port_another_listener_holds_is_refused_not_shared(squatter: int, tmp_path: Path) -> None:
    group = ReplicaSet(EndpointOptions(release="file:///nowhere", port=squatter), 1, tmp_path)
    try:
        with pytest.raises(TdkError) as refused:
            group._start_proxy()  # the proxy alone: no replica needed to claim the port
    finally:
        group.stop()
    assert f"--port {squatter}" in str(refused.value)
    assert "--port 0" in refused.value.hint
    assert group.proxy is None  # HAProxy never started on the shared port


def test_a_free_port_is_the_sets_own_and_haproxy_answers_on_it(tmp_path: Path) -> None:
    if shutil.which("haproxy", path="/usr/sbin:/usr/bin:/sbin") is None:
        pytest.skip("haproxy is not installed (make setup)")
    group = ReplicaSet(EndpointOptions(release="file:///nowhere", port=0), 1, tmp_path)
    try:
        group._start_proxy()
        assert group.port > 0
        with pytest.raises(urllib.error.HTTPError) as answer:  # no replica yet: HAProxy's 503
            urllib.request.urlopen(f"{group.url}/invocations", timeout=30)
        assert answer.value.code == 503
        with socket.socket() as other:  # nobody else can bind it, SO_REUSEPORT or not
            other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            with pytest.raises(OSError):
                other.bind(("127.0.0.1", group.port))
    finally:
        group.stop()
    assert group.proxy is not None and group.proxy.poll() is not None
