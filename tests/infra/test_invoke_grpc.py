"""``--grpc`` on a target whose API has no gRPC (SageMaker, the local endpoint) is refused with
a message, not silently dropped; targets that speak Triton's own API still take it."""

from __future__ import annotations

import pytest

from infra.targets.deployment import locator
from tdk.errors import UsageError
from tests.registry_lists import api_targets, kubernetes_targets


@pytest.mark.parametrize("target", api_targets())
def test_grpc_is_refused_where_the_api_has_none(target: str) -> None:
    with pytest.raises(UsageError, match="--grpc") as caught:
        locator(target, {"endpoint": "e"}).inference(True, 1.0)
    assert target in caught.value.message and "leave out --grpc" in caught.value.hint


@pytest.mark.parametrize("target", kubernetes_targets())
def test_grpc_is_taken_where_triton_answers_it(target: str) -> None:
    client = locator(target, {"url": "http://127.0.0.1:1"}).inference(True, 1.0)
    assert client is not None
