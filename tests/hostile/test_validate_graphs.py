"""Issue 47 item 4 (validate): a model ONNX Runtime or Triton refuses was "valid": a cyclic ONNX
graph, an `If` without its branches (also inside a branch), a `Loop` without its body, dims of
2^62. Each is now a finding with its rule code, never a traceback; and where ONNX Runtime is
installed, the table is checked against it: what validate refuses, ORT refuses to load."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from tests.validate.helpers import make_repo, structured_onnx

runner = CliRunner(env={"COLUMNS": "200"})
CONFIG = """
name: "m"
backend: "onnxruntime"
max_batch_size: 4
input {{ name: "x" data_type: TYPE_FP32 dims: [ {dims} ] }}
output {{ name: "y" data_type: TYPE_FP32 dims: [ {dims} ] }}
"""

GRAPHS: list[tuple[str, str | None]] = [
    # (graph kind, the rule it breaks; None: valid)
    ("if", None),
    ("if-without-else", "TDK511"),
    ("if-branch-not-graph", "TDK511"),
    ("nested-if-without-else", "TDK511"),
    ("loop-without-body", "TDK511"),
    ("cycle", "TDK512"),
]


def _validate(repo: Path) -> tuple[int, str]:
    result = runner.invoke(app, ["validate", str(repo)])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    assert "Traceback" not in result.output
    return result.exit_code, result.output


@pytest.mark.parametrize(("kind", "code"), GRAPHS, ids=[g[0] for g in GRAPHS])
def test_a_malformed_graph_is_a_finding_as_onnx_runtime_refuses_it(
    kind: str, code: str | None, tmp_path: Path
) -> None:
    model = structured_onnx(kind)
    repo = make_repo(tmp_path / "repo", {"m": (CONFIG.format(dims=4), {"1/model.onnx": model})})
    status, output = _validate(repo)
    if code is None:
        assert status == 0, output
    else:
        assert status == 1 and code in output and "ONNX Runtime refuses" in output, output
    ort = pytest.importorskip("onnxruntime")
    try:
        ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    except Exception as exc:  # ORT raises its own Fail / InvalidGraph types
        assert code is not None, f"ORT refuses a graph validate accepts: {exc}"
    else:
        assert code is None, "validate refuses a graph ORT loads"


@pytest.mark.parametrize(
    ("dims", "max_batch_size"),
    [("4611686018427387904", 4), ("2147483648, 2147483648", 0), ("-1, 4611686018427387904", 1)],
    ids=["2^62", "2^31-squared-fp32", "variable-then-2^62"],
)
def test_dims_no_request_can_carry_are_a_finding(
    dims: str, max_batch_size: int, tmp_path: Path
) -> None:
    config = CONFIG.format(dims=dims).replace(
        "max_batch_size: 4", f"max_batch_size: {max_batch_size}"
    )
    repo = make_repo(tmp_path / "repo", {"m": (config, {"1/model.onnx": structured_onnx("if")})})
    status, output = _validate(repo)
    assert status == 1 and "TDK223" in output and "2^63-1 bytes" in output, output


def test_large_but_real_dims_are_no_finding(tmp_path: Path) -> None:
    config = CONFIG.format(dims="-1, 1048576")
    model = structured_onnx(
        "if", ("x", "FP32", ["b", "s", 1048576]), ("y", "FP32", ["b", "s", 1048576])
    )
    repo = make_repo(tmp_path / "repo", {"m": (config, {"1/model.onnx": model})})
    status, output = _validate(repo)
    assert status == 0 and "TDK223" not in output, output
