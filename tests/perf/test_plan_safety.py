"""`tdk plan --write-stack` (issue 18 item 8): written last, atomically, through symlinks,
keeping CRLF; the bench's batch size counts; keys measured on another unit need --force."""

from __future__ import annotations

import json
import os
from pathlib import Path

from typer.testing import CliRunner

from cli.main import app
from tests.perf.test_plan import _stack, files  # noqa: F401 - the fixture is used by name

runner = CliRunner()


def _args(files: dict[str, Path], stack: Path, *extra: str) -> list[str]:  # noqa: F811
    return [
        "plan", str(files["bench"]), "--latency-budget-ms", "50", "--prices", str(files["prices"]),
        "--traffic", str(files["traffic"]), "--write-stack", str(stack), *extra,
    ]  # fmt: skip


def test_symlinked_stack_stays_a_symlink_and_keeps_crlf(
    files: dict[str, Path],  # noqa: F811
    tmp_path: Path,
) -> None:
    real = _stack(tmp_path, "Pulumi.sagemaker-dev.yaml")
    real.write_bytes(real.read_bytes().replace(b"\n", b"\r\n"))
    linked = tmp_path / "link" / "Pulumi.sagemaker-dev.yaml"
    linked.parent.mkdir()
    os.symlink(real, linked)
    result = runner.invoke(app, _args(files, linked))
    assert result.exit_code == 0, result.output
    assert linked.is_symlink() and linked.resolve() == real.resolve()
    data = real.read_bytes()
    assert b"sagemakerMaxInstances: 7\r\n" in data
    assert data.count(b"\n") == data.count(b"\r\n")  # every line ending kept
    assert data.startswith(b"#")  # the header comment survives


def test_stack_is_not_written_when_the_plot_fails(
    files: dict[str, Path],  # noqa: F811
    tmp_path: Path,
) -> None:
    stack = _stack(tmp_path, "Pulumi.sagemaker-dev.yaml")
    before = stack.read_bytes()
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = runner.invoke(app, _args(files, stack, "--plot", str(blocker / "cost.png")))
    assert result.exit_code != 0
    assert "--plot" in result.output and "Traceback" not in result.output
    assert stack.read_bytes() == before


def test_batch_size_of_the_bench_scales_the_unit(files: dict[str, Path]) -> None:  # noqa: F811
    base = [
        "plan",
        str(files["bench"]),
        "--latency-budget-ms",
        "50",
        "--prices",
        str(files["prices"]),
    ]
    single = runner.invoke(app, [*base, "--peak-rps", "2400", "--json"])
    record = json.loads(files["bench"].read_text())
    record["batch"] = 8
    files["bench"].write_text(json.dumps(record))
    batched = runner.invoke(app, [*base, "--peak-rps", "2400", "--json"])
    assert single.exit_code == batched.exit_code == 0, single.output + batched.output
    assert json.loads(single.stdout)["measured_unit_rps"] == "300"
    assert json.loads(batched.stdout)["measured_unit_rps"] == "2400"


def test_keys_measured_on_another_instance_type_need_force(
    files: dict[str, Path],  # noqa: F811
    tmp_path: Path,
) -> None:
    stack = _stack(tmp_path, "Pulumi.sagemaker-dev.yaml")
    before = stack.read_bytes()
    record = json.loads(files["bench"].read_text())
    record["instance_type"] = "ml.g5.xlarge"
    files["bench"].write_text(json.dumps(record))
    refused = runner.invoke(app, _args(files, stack))
    assert refused.exit_code == 2, refused.output
    assert "ml.g5.xlarge" in refused.output and "--force" in refused.output
    assert stack.read_bytes() == before
    forced = runner.invoke(app, _args(files, stack, "--force"))
    assert forced.exit_code == 0, forced.output
    assert stack.read_bytes() != before
