"""Fixtures of the infra tests: the Pulumi mocks harness (see ``pulumi_harness``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tests.infra.pulumi_harness import StackRun, run_stack

__all__ = ["StackRun", "run_stack", "stack_runner"]  # test_*.py may import these from here


@pytest.fixture(scope="session")
def stack_runner() -> Iterator[Callable[..., StackRun]]:
    """``stack_runner("gke-dev", overrides={...})`` -> StackRun (see ``run_stack``)."""
    yield run_stack
