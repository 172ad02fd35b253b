"""Options declared once per group (issue 50 item 4): ``cli.groups.grouped`` expands an option
group into the command's options and hands the command the group; the deployment options are
one group, reused by invoke, bench, metrics and endpoint; bench and tune are short commands
over their groups."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import pytest
import typer
from typer.testing import CliRunner

from cli.groups import grouped, option_group
from cli.main import build_app


@option_group
@dataclass(frozen=True)
class Pair:
    first: Annotated[str, typer.Option("--first")] = "a"
    second: Annotated[int, typer.Option("--second")] = 1


def test_a_group_becomes_options_and_arrives_as_one_object() -> None:
    seen: list[object] = []

    @grouped
    def command(pair: Pair, verbose: Annotated[bool, typer.Option("--verbose")] = False) -> None:
        seen.append((pair, verbose))

    app = typer.Typer()
    app.command()(command)
    app.command("other")(lambda: None)  # two commands: typer keeps the command's name
    result = CliRunner().invoke(app, ["command", "--second", "7", "--verbose"])
    assert result.exit_code == 0, result.output
    assert seen == [(Pair("a", 7), True)]
    assert list(inspect.signature(command).parameters) == ["first", "second", "verbose"]


@option_group
@dataclass(frozen=True)
class Again:
    first: Annotated[str, typer.Option("--first")] = "b"


def test_two_groups_that_share_an_option_are_refused() -> None:
    def command(pair: Pair, again: Again) -> None:
        del pair, again

    with pytest.raises(TypeError, match="option groups share first"):
        grouped(command)


def _options(command: str, *group: str) -> set[str]:
    app = typer.main.get_command(build_app())
    found = app.commands[command]  # type: ignore[attr-defined]
    for name in group:
        found = found.commands[name]
    return {opt for param in found.params for opt in param.opts}


def test_every_command_that_locates_a_deployment_takes_the_same_options() -> None:
    where = {"--endpoint", "--target", "--stack", "--outputs", "--url", "--project-dir", "--region"}
    for command in (("endpoint", "status"), ("endpoint", "wait"), ("metrics",)):
        assert where <= _options(*command), command
    for command in (("invoke",), ("bench", "tensors"), ("bench", "generate")):
        assert where | {"--release", "--s3-endpoint-url"} <= _options(*command), command


@pytest.mark.parametrize(
    ("module", "name"), [("bench", "bench"), ("bench", "generate"), ("tune", "tune")]
)
def test_bench_and_tune_are_short_commands(module: str, name: str) -> None:
    """The command functions only build the request and hand it on (under 40 lines)."""
    import importlib

    command = getattr(importlib.import_module(f"cli.{module}"), name)
    lines, _ = inspect.getsourcelines(inspect.unwrap(command))
    assert len(lines) < 40, f"cli/{module}.py: {name}() is {len(lines)} lines"


def test_the_release_is_decided_once_flag_over_stack(tmp_path: Path) -> None:
    """``open_deployment``: the release given wins over the stack's; the stack's is used when
    none is given; a target without either and no default is told to pass --release."""
    from infra.targets.deployment import Given, open_deployment
    from tdk.errors import UsageError

    root = Path(__file__).resolve().parents[2]
    outputs = tmp_path / "outputs.json"
    outputs.write_text("{}")
    stack = Given(stack="gke-dev", project_dir=root, outputs=outputs)
    assert open_deployment(stack).release == "gs://my-tdk-releases/releases/v1"
    given = Given(stack="gke-dev", project_dir=root, outputs=outputs, release="file:///r")
    assert open_deployment(given).release == "file:///r"
    bare = open_deployment(Given(target="sagemaker", endpoint="e"))
    with pytest.raises(UsageError, match="--target sagemaker needs --release"):
        _ = bare.release
