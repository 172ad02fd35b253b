"""``tdk front serve`` hands its flags to the front as a pod's defaults say (issue 46): room for
one model kept free, growing to four while cold loads outpace unloads; each flag reaches the
endpoint's options, and a bad pair is refused before anything starts."""

from __future__ import annotations

from typing import Any

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.targets.local import serve
from infra.targets.local.options import (
    POD_HEADROOM_MAX_MODELS,
    POD_HEADROOM_MODELS,
    EndpointOptions,
)

runner = CliRunner()
POD = ["front", "serve", "--release", "file:///r", "--triton-url", "http://127.0.0.1:8000",
       "--model-dir", "/models", "--cache-dir", "/cache"]  # fmt: skip


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[EndpointOptions]:
    """The options ``tdk front serve`` would start the front with (nothing starts)."""
    seen: list[EndpointOptions] = []

    def run_front(options: EndpointOptions, **_: Any) -> None:
        seen.append(options)

    monkeypatch.setattr(serve, "run_front", run_front)
    return seen


def test_a_pods_front_keeps_room_that_grows(started: list[EndpointOptions]) -> None:
    done = runner.invoke(app, POD)
    assert done.exit_code == 0, done.output
    (options,) = started
    assert (options.headroom_models, options.headroom_max) == (1, 4)
    assert (POD_HEADROOM_MODELS, POD_HEADROOM_MAX_MODELS) == (1, 4)


def test_the_rooms_flags_reach_the_front(started: list[EndpointOptions]) -> None:
    done = runner.invoke(app, [*POD, "--headroom-models", "2", "--headroom-max-models", "6"])
    assert done.exit_code == 0, done.output
    assert (started[0].headroom_models, started[0].headroom_max) == (2, 6)


def test_a_maximum_below_the_floor_is_refused(started: list[EndpointOptions]) -> None:
    done = runner.invoke(app, [*POD, "--headroom-models", "3", "--headroom-max-models", "2"])
    assert done.exit_code != 0 and "--headroom-max-models 2" in done.output
    assert not started


def test_the_grpc_listener_reaches_the_front(started: list[EndpointOptions]) -> None:
    """Loads go to Triton's gRPC port when named (the rendered pod names it); unset, over HTTP."""
    done = runner.invoke(app, [*POD, "--triton-grpc", "127.0.0.1:8001"])
    assert done.exit_code == 0, done.output
    done = runner.invoke(app, POD)
    assert done.exit_code == 0, done.output
    assert [options.triton_grpc for options in started] == ["127.0.0.1:8001", None]


@pytest.mark.parametrize("address", ["", "8001", "127.0.0.1:", "127.0.0.1:0", "host:99999", ":80"])
def test_a_grpc_listener_that_is_not_host_port_is_refused(
    started: list[EndpointOptions], address: str
) -> None:
    done = runner.invoke(app, [*POD, "--triton-grpc", address])
    assert done.exit_code != 0 and "--triton-grpc" in done.output and "HOST:PORT" in done.output
    assert not started


def test_grpc_needs_the_external_triton() -> None:
    from tdk.errors import UsageError

    with pytest.raises(UsageError, match="--triton-grpc needs --triton-url"):
        EndpointOptions(release="file:///r", triton_grpc="127.0.0.1:8001")
