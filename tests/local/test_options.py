"""The local endpoint's options: declared once, the same for `tdk local up`, the background
child's argv and the manager."""

from __future__ import annotations

import inspect
from dataclasses import fields

import pytest

from cli import local as cli_local
from infra.targets.local.options import EndpointOptions, default_of
from tdk.errors import UsageError


def test_argv_round_trip_gives_the_same_options() -> None:
    options = EndpointOptions(
        release="s3://bucket/release",
        name="my-endpoint-2",
        port=0,
        max_loaded=3,
        cache_bytes=123456,
        max_body=1000,
        body_timeout=2.5,
        invocation_timeout=7.0,
        capacity_timeout=9.0,
        min_residency=0.0,
        headroom_models=1,
        headroom_max=3,
        keep_alive=3.0,
        workdir="/tmp/tdk-work",
        store_endpoint_url="http://127.0.0.1:9000",
    )
    parsed, ns = EndpointOptions.from_argv([*options.to_argv(), "--log", "x.log"])
    assert parsed == options and ns.log == "x.log"
    assert EndpointOptions.from_argv(["--release", "s"])[0] == EndpointOptions(release="s")


def test_cli_defaults_are_the_declared_ones() -> None:
    parameters = inspect.signature(cli_local.up).parameters
    assert parameters["name"].default == default_of("name")
    assert parameters["port"].default == default_of("port")
    assert parameters["max_loaded_models"].default == default_of("max_loaded")
    assert parameters["max_body_bytes"].default == default_of("max_body")
    assert parameters["body_timeout"].default == default_of("body_timeout")
    assert parameters["cache_gb"].default * cli_local.GB == default_of("cache_bytes")
    assert len({item.metadata["flag"] for item in fields(EndpointOptions)}) == len(
        fields(EndpointOptions)
    )


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"name": "/../../../tmp/x"}, "not a valid endpoint name"),
        ({"name": "a/b"}, "not a valid endpoint name"),
        ({"name": ""}, "not a valid endpoint name"),
        ({"name": "a" * 64}, "not a valid endpoint name"),
        ({"name": "-a"}, "not a valid endpoint name"),
        ({"port": 70000}, "--port 70000"),
        ({"max_loaded": 0}, "--max-loaded-models 0"),
        ({"max_body": -1}, "--max-body-bytes -1"),
        ({"keep_alive": 0.0}, "--keep-alive-timeout 0.0"),
        ({"min_residency": -1.0}, "--min-residency"),
        ({"headroom_models": -1}, "--headroom-models -1"),
        ({"headroom_models": 2, "headroom_max": 1}, "--headroom-max-models 1 is below"),
        ({"headroom_max": -1}, "--headroom-max-models -1 is below"),
        ({"release": ""}, "--release is empty"),
    ],
)
def test_invalid_options_name_the_flag(change: dict[str, object], fragment: str) -> None:
    values: dict[str, object] = {"release": "file:///r", **change}
    with pytest.raises(UsageError) as info:
        EndpointOptions(**values)  # type: ignore[arg-type]
    assert fragment in info.value.message and info.value.hint


def test_valid_names_follow_sagemakers_rule() -> None:
    for name in ("a", "local", "a-b", "a--b", "A1", "a" * 63):
        assert EndpointOptions(release="s", name=name).name == name
