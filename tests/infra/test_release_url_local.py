"""A release on this machine's disk (``file://``, a path) is refused by every deployable
target's ``releaseUrl`` with why (its servers never see this disk) and the fix (publish to one
of the stores it reads), not only a list of schemes."""

from __future__ import annotations

import pytest

from infra.config import parse_release_url
from infra.targets import load_target
from tdk.errors import ConfigError
from tests.registry_lists import deployable_targets


@pytest.mark.parametrize("target", deployable_targets())
@pytest.mark.parametrize("url", ["file:///srv/releases/v1", "/srv/releases/v1", "./out/v1"])
def test_a_local_release_is_refused_with_why_and_the_fix(target: str, url: str) -> None:
    schemes = load_target(target).release_schemes
    with pytest.raises(ConfigError) as raised:
        parse_release_url("releaseUrl", url, schemes)
    message = raised.value.message
    assert "triton-deploy-kit:releaseUrl" in message
    assert "this machine's disk cannot be read by the deployment's servers" in message
    assert f"tdk package --release {schemes[0]}://my-bucket/releases/v1" in message
    assert all(f"{scheme}://" in message for scheme in schemes)


def test_another_scheme_keeps_the_plain_message() -> None:
    with pytest.raises(ConfigError) as raised:
        parse_release_url("releaseUrl", "gs://bucket/v1", ["s3"])
    assert "its scheme must be one of s3://" in raised.value.message
    assert "disk" not in raised.value.message
