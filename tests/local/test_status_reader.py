"""One reader of a local endpoint's /tdk/status: LocalClient and the CLI share fetch_status, each
with its own error and hint (issue 50 item 3's leftover: LocalClient had a copy of it)."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from infra.targets.local.client import LocalClient
from infra.targets.local.control import fetch_status
from tdk.errors import EndpointError, TdkError


@pytest.fixture
def refusing_url() -> Iterator[str]:
    """A URL whose port is bound but not listening: a connection to it is refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


def test_client_reads_status_through_fetch_status(refusing_url: str) -> None:
    client = LocalClient("local", "tdk-local", refusing_url)
    with pytest.raises(EndpointError) as caught:
        client.release()
    assert f"cannot read {refusing_url}/tdk/status" in str(caught.value)
    assert caught.value.hint == (
        "check `tdk local status --endpoint tdk-local` and the endpoint's log"
    )


def test_cli_reader_keeps_its_error_and_hint(refusing_url: str) -> None:
    with pytest.raises(TdkError) as caught:
        fetch_status(refusing_url)
    assert type(caught.value) is TdkError
    assert caught.value.hint == "see the endpoint's log"
