"""The operations contract: every target implements or refuses each operation, with a reason."""

from __future__ import annotations

from datetime import timedelta

import pytest
from typer.testing import CliRunner

from cli.main import app
from infra.targets import registry
from infra.targets.capabilities import Refused
from infra.targets.deployment import locator
from infra.targets.operations import (
    Operation,
    Reading,
    Status,
    TargetClient,
)
from tdk.errors import UsageError


def test_a_client_that_neither_implements_nor_refuses_is_rejected_when_defined() -> None:
    with pytest.raises(TypeError, match="neither implements nor refuses 'wait'"):

        class _NoWait(TargetClient):
            target = "x"

            def where(self) -> dict[str, str | None]:
                return {}

            def invoke(self) -> object:  # type: ignore[override]
                return object()

            def metrics(self, window: timedelta | None) -> list[Reading]:
                return []

            def status(self) -> Status:
                return Status("x", "x", "Ready", True)


def test_a_refusal_needs_a_reason_and_is_what_the_user_is_told() -> None:
    with pytest.raises(TypeError, match="a refusal needs a reason"):
        Refused(" ")
    with pytest.raises(TypeError, match="without a Refused\\(reason\\)"):

        class _Bare(TargetClient):
            target = "x"
            cannot = dict.fromkeys(Operation, "a bare string is not the refusal shape")

            def where(self) -> dict[str, str | None]:
                return {}

    class _Archive(TargetClient):
        target = "archive"
        cannot = dict.fromkeys(Operation, Refused("a release on disk serves nothing"))

        def where(self) -> dict[str, str | None]:
            return {}

    with pytest.raises(UsageError, match="archive target cannot metrics: a release on disk"):
        _Archive().metrics(None)
    assert Operation.WAIT in _Archive.cannot


@pytest.mark.parametrize("target", registry.names())
def test_every_target_has_a_client_keeping_the_contract(target: str) -> None:
    import inspect

    module = inspect.getmodule(registry.get(target).locator())
    assert module is not None
    clients = [
        c for c in vars(module).values()
        if isinstance(c, type) and issubclass(c, TargetClient) and c.__module__ == module.__name__
    ]  # fmt: skip
    [client] = clients
    assert "target" not in vars(client), "the client is told its name by its locator"
    assert locator(target, {}).target == target
    for op in Operation:
        implemented = getattr(client, op.value) is not getattr(TargetClient, op.value)
        assert implemented != (op in client.cannot), (target, op)


def test_clients_import_without_pulumi() -> None:
    import subprocess
    import sys

    modules = sorted({entry.locator().__module__ for entry in registry.entries()})  # every one
    assert len(modules) == len(registry.names())
    code = (
        "import sys\n"
        f"for m in {modules!r}:\n"
        "    __import__(m)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0].startswith('pulumi')))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_unknown_target_and_missing_locations_name_the_option() -> None:
    with pytest.raises(Exception, match="not a target"):
        locator("azure", {})
    for args, option in (
        (["metrics", "--target", "sagemaker"], "--endpoint"),
        (["metrics", "--target", "gke"], "--stack"),
        (["metrics", "--target", "eks", "--stack", "eks-dev"], "--workspace-id"),
        (["endpoint", "status", "--target", "gke", "--stack", "gke-dev"], "--url"),
        (["metrics", "--target", "gke", "--stack", "eks-dev"], "the stack deploys to eks"),
    ):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert option in result.output, (args, result.output)
