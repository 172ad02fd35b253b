"""`tdk validate` output formats through the real CLI: human (path:line:col: CODE), JSON,
SARIF 2.1.0 (checked against the schema) and GitHub workflow annotations; and positions."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

from cli.main import app
from packager.validate.locate import Locations
from packager.validate.rules import RULES

SCHEMA = Path(__file__).with_name("sarif-2.1.0-required.schema.json")
Edit = Callable[[str, Callable[[Any], object]], Path]


@pytest.fixture
def in_tmp(tmp_path: Path) -> Iterator[Path]:
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(cwd)


@pytest.fixture
def broken(repo: Path, edit_config: Edit, in_tmp: Path) -> Path:
    """The sample repo with an out-of-range preferred batch size (line 25 of the config)."""
    edit_config("text_classifier", lambda c: c.dynamic_batching.preferred_batch_size.append(64))
    return repo


def run(*args: str) -> Any:
    return CliRunner().invoke(app, ["validate", *args])


def _line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def test_human_format_is_path_line_col_code_message_then_hint(broken: Path) -> None:
    result = run(str(broken))
    assert result.exit_code == 1
    config = broken / "text_classifier" / "config.pbtxt"
    line = _line_of(config, "preferred_batch_size: 64")
    rel = os.path.relpath(config)
    first, hint = result.stdout.splitlines()[:2]
    assert first.startswith(f"{rel}:{line}:3: TDK301 dynamic_batching.preferred_batch_size")
    assert "preferred batch size 64" in first
    assert hint.strip().startswith("hint: ") and "raise max_batch_size" in hint
    assert result.stdout.rstrip().endswith("1 error(s), 0 warning(s)")


def test_json_format_carries_code_and_position(broken: Path) -> None:
    result = run(str(broken), "--json")
    findings = json.loads(result.stdout)
    [finding] = findings
    assert finding["code"] == "TDK301" and finding["line"] > 1 and finding["col"] == 3


def test_sarif_output_matches_the_schema(broken: Path) -> None:
    result = run(str(broken), "--format", "sarif")
    assert result.exit_code == 1
    log = json.loads(result.stdout)
    jsonschema.validate(
        log, json.loads(SCHEMA.read_text()), format_checker=jsonschema.FormatChecker()
    )
    [run_] = log["runs"]
    [res] = run_["results"]
    rules = run_["tool"]["driver"]["rules"]
    assert rules[res["ruleIndex"]]["id"] == res["ruleId"] == "TDK301"
    region = res["locations"][0]["physicalLocation"]["region"]
    assert region["startLine"] > 1 and region["startColumn"] == 3
    assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == (
        "repo/text_classifier/config.pbtxt"
    )


def test_schema_rejects_a_broken_log() -> None:
    schema = json.loads(SCHEMA.read_text())
    bad = {"version": "2.1.0", "runs": [{"tool": {"driver": {}}, "results": []}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)


def test_github_annotations(broken: Path, edit_config: Edit) -> None:
    edit_config("tokenizer", lambda c: setattr(c.instance_group[0], "kind", 1))  # KIND_GPU
    result = run(str(broken), "--format", "github")
    lines = result.stdout.splitlines()
    pattern = r"::(error|warning) file=([^,]+),line=(\d+),col=(\d+),title=(TDK\d{3})::(.+)"
    parsed = [re.fullmatch(pattern, line) for line in lines]
    assert all(parsed), lines
    kinds = {(m.group(1), m.group(5)) for m in parsed if m}
    assert kinds == {("error", "TDK301"), ("warning", "TDK213")}
    assert all("%0A" not in m.group(2) and "\n" not in m.group(6) for m in parsed if m)


def test_unknown_format_is_a_usage_error(broken: Path) -> None:
    result = run(str(broken), "--format", "xml")
    assert result.exit_code == 2 and "xml" in result.output


def test_unparseable_config_points_at_the_parser_position(repo: Path, in_tmp: Path) -> None:
    (repo / "tokenizer" / "config.pbtxt").write_text('name: "tokenizer"\nmax_batch_size: x\n')
    findings = json.loads(run(str(repo), "--json").stdout)
    [finding] = [f for f in findings if f["code"] == "TDK102"]
    assert (finding["line"], finding["col"]) == (2, 17)


TEXT = """# a comment { not a field
name: "m"
input [
  { name: "a" dims: [ 1, 2 ] },
  { name: "b"
    dims: 3 }
]
ensemble_scheduling {
  step { model_name: "x" input_map { key: "in" value: "a" } }
  step {
    model_name: "y"
    input_map { key: "k2" value: "v" }
  }
}
"""


@pytest.mark.parametrize(
    ("path", "where"),
    [
        ("name", (2, 1)),
        ("input[1]", (5, 3)),
        ("input[1] (b).dims", (6, 5)),
        ("input[0].dims[1]", (4, 26)),
        ("ensemble_scheduling.step[1] (y).model_name", (11, 5)),
        ("ensemble_scheduling.step[1] (y).input_map[k2]", (12, 5)),
        ("ensemble_scheduling.step[0].input_map[in]", (9, 26)),
        ("max_batch_size", (1, 1)),  # absent: the top of the file
        ("input[7].dims", (3, 1)),  # nearest enclosing field
    ],
)
def test_field_paths_map_to_line_and_column(path: str, where: tuple[int, int]) -> None:
    assert Locations(TEXT).find(path) == where


def test_every_rule_is_documented_with_a_source() -> None:
    assert all(rule.triton and rule.fix and rule.source for rule in RULES.values())


def test_file_findings_name_the_file_without_a_position(repo: Path, in_tmp: Path) -> None:
    (repo / "image_classifier" / "1" / "model.onnx").rename(repo / "image_classifier" / "1" / "x")
    result = run(str(repo))
    first = result.stdout.splitlines()[0]
    assert first.startswith("repo/image_classifier/1/model.onnx: TDK113 "), first
