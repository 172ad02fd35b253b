"""A newcomer's first day, round 2 (issue 27): tables and help that never split a name or a
number at 80 and 100 columns, loud plan warnings, consistent defaults and exit codes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from cli.main import app
from cli.output import Output

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = str(ROOT / "docs" / "examples" / "g4dn.json")
PLAN = ["plan", EXAMPLE, "--latency-budget-ms", "50", "--baseline", "inf2.xlarge:2756rps:0.76"]
TOKEN = re.compile(r"[\w.$/*():-]+")


def _cells(output: str) -> list[str]:
    """Every word inside a table's cells (box-drawing borders removed)."""
    return TOKEN.findall(re.sub(r"[│┃┏┓┗┛┡┩└┘┌┐━─┳┻╇╈┼┬┴]", " ", output))


@pytest.mark.parametrize("columns", ["80", "100"])
def test_plan_tables_keep_names_and_numbers_whole(columns: str, tmp_path: Path) -> None:
    traffic = tmp_path / "traffic.csv"
    traffic.write_text("time,rps\n0,4000\n1,600\n")
    runner = CliRunner(env={"COLUMNS": columns})
    result = runner.invoke(app, [*PLAN, "--traffic", str(traffic)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines if line[:1] in "┏┃┡│└") <= int(columns)
    words = _cells(result.stdout)
    document = json.loads(runner.invoke(app, [*PLAN, "--traffic", str(traffic), "--json"]).stdout)
    for row in document["options"]:
        for key in ("peak_usd_per_hour", "average_usd_per_hour", "usd_per_million"):
            assert row[key] in words, (row[key], result.stdout)
    for whole in ("ml.g4dn.xlarge", "ml.g5.xlarge", "2630.8", "inst."):
        assert whole in words, (whole, result.stdout)
    assert "instan" not in words and "None" not in result.stdout


def test_components_table_has_readable_headers_and_no_none(
    sample_repo: Path, tmp_path: Path
) -> None:
    dest = f"file://{tmp_path / 'r'}"
    assert CliRunner().invoke(app, ["package", str(sample_repo), "--release", dest]).exit_code == 0
    for columns in ("80", "100"):
        args = [*PLAN, "--peak-rps", "4000", "--components", dest, "--hot-models", "2"]
        result = CliRunner(env={"COLUMNS": columns}).invoke(app, args)
        assert result.exit_code == 0, result.output
        assert "usd_per_hour_peak" not in result.stdout and "None" not in result.stdout
        assert "$/h peak" in result.stdout.replace("\n", " ") or "$/h" in result.stdout
        for line in result.stdout.splitlines():
            assert len(line) <= int(columns) or not line.startswith(("│", "┃")), line


def test_a_too_narrow_table_turns_vertical_instead_of_splitting(
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = Output()
    out.console.width = 30
    rows = [("image_classifier-0.tar.gz", "123456789.125", "loaded from the store")]
    out.table("t", ("TargetModel", "bytes", "what happened"), rows)
    printed = capsys.readouterr().out
    assert "TargetModel: image_classifier-0.tar.gz" in printed
    assert "  bytes: 123456789.125" in printed


def test_a_long_note_is_never_squeezed_to_a_word_a_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`plan --components` at 100 columns gave its note 8 columns: 15 lines of one word each.
    Long text keeps MIN_WRAP columns, else the table turns vertical."""
    from cli.output import MIN_WRAP

    note = "4 copies of 2 hot models, whole GPUs each; 18 idle models scaled to zero"
    rows = [("ml.g4dn.xlarge inference components", "4", "2.95", note)]
    columns = ("option", "inst. peak", "$/h peak", "note")
    for width in (70, 100):
        out = Output()
        out.console.width = width
        out.table("t", columns, rows)
        printed = capsys.readouterr().out
        lines = [line for line in printed.splitlines() if line.startswith("│")]
        assert printed.count(f"note: {note}") == 1 or all(
            len(line.split("│")[4]) >= MIN_WRAP + 2 for line in lines
        ), printed
        assert len(lines) <= 4 or f"note: {note}" in printed, printed


def test_plan_says_loudly_what_was_not_measured_and_when_there_is_no_traffic() -> None:
    result = CliRunner(env={"COLUMNS": "100"}).invoke(app, [*PLAN, "--peak-rps", "4000"])
    assert result.exit_code == 0, result.output
    assert "NOT MEASURED: ml.g5.xlarge" in result.stderr and "ml.g4dn.xlarge" in result.stderr
    assert "trough 0 rps" not in result.stdout
    assert "no --traffic: the average is the peak" in result.stdout


def test_plan_on_a_local_measurement_says_no_candidate_was_measured(tmp_path: Path) -> None:
    record = json.loads(Path(EXAMPLE).read_text())
    record.update(target="local", instance_type=None, gpu=None)
    local = tmp_path / "local.json"
    local.write_text(json.dumps(record))
    args = ["plan", str(local), "--latency-budget-ms", "50", "--peak-rps", "100"]
    result = CliRunner(env={"COLUMNS": "100"}).invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "NOT MEASURED (every candidate)" in result.stderr
    assert "measured on the local target" in result.stderr


def _help(args: list[str], columns: str) -> str:
    result = CliRunner(env={"COLUMNS": columns}).invoke(app, [*args, "--help"])
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("columns", ["80", "100"])
def test_help_shows_choices_whole_and_numeric_metavars(columns: str) -> None:
    from infra.targets import registry

    plan = _help(["plan"], columns)
    words = _cells(plan)
    for name in registry.names():
        assert name in words, (name, plan)  # never `sagemaker-i` + `c`
    assert "…" not in plan and "inf2.xlarge:2756rps:0.76" in words
    assert re.search(r"--latency-budget-ms\s+FLOAT", plan)
    validate = _help(["validate"], columns)
    assert "[human | sarif | github]" in validate


def test_validate_format_metavar_is_the_formats() -> None:
    from packager.validate.report import FORMATS

    shown = [f for f in FORMATS if f != "json"]  # JSON is --json (--format json: deprecated)
    assert "[" + " | ".join(shown) + "]" in _help(["validate"], "200")


def _commands(command: object, path: str = "tdk") -> list[tuple[str, object]]:
    found = [(path, command)]
    for name, sub in getattr(command, "commands", {}).items():
        found += _commands(sub, f"{path} {name}")
    return found


def test_no_help_text_is_eaten_as_rich_markup() -> None:
    """`[the traffic maximum]` in a help string is a rich style tag: help showed `Peak inferences/s
    .` with the default gone. Every option's help must render as written."""
    from rich.text import Text

    eaten = [
        f"{path} {param.opts[0]}: {param.help!r}"
        for path, command in _commands(typer.main.get_command(app))
        for param in getattr(command, "params", [])
        if getattr(param, "help", None) and Text.from_markup(param.help).plain != param.help
    ]
    assert not eaten, eaten


def test_tune_help_shows_the_search_modes_and_numeric_lists() -> None:
    from infra.perf.tune.tuner import SearchMode

    shown = _help(["tune"], "100")
    assert "[" + " | ".join(m.value for m in SearchMode) + "]" in shown
    for option in ("--concurrency", "--instances", "--max-batch-sizes", "--queue-delays-us"):
        assert re.search(rf"{option}\s+(-\w\s+)?INTEGER,\.\.\.", shown), (option, shown)
    assert re.search(r"--peak-rps\s+FLOAT", _help(["plan"], "100"))
    assert re.search(r"--concurrency\s+-c\s+INTEGER,\.\.\.", _help(["bench", "tensors"], "100"))
    assert re.search(r"--repeats\s+INTEGER", shown)


def test_validate_offers_only_targets_that_validate_and_names_the_image_default() -> None:
    from infra.facts.triton import default_checked_image
    from infra.targets import registry
    from infra.targets.capabilities import VALIDATE

    shown = _help(["validate"], "200")
    able = [e.name for e in registry.entries() if e.refused(VALIDATE) is None]
    assert "[" + " | ".join(able) + "]" in shown
    unable = [e.name for e in registry.entries() if e.refused(VALIDATE) is not None]
    assert unable and not any(f"| {name}]" in shown for name in unable)
    assert "24.09" not in shown and "newest SageMaker Triton" in shown
    assert default_checked_image() != "24.09"


@pytest.mark.parametrize(
    ("args", "missing"),
    [(["--target", "sagemaker"], "--instance-type"), (["--target", "gke"], "--gpu")],
)
def test_validate_target_without_its_unit_says_which_default_it_checks(
    sample_repo: Path, args: list[str], missing: str
) -> None:
    """Without the unit flag, the stack default from Pulumi.yaml is checked, and said so."""
    result = CliRunner().invoke(app, ["validate", str(sample_repo), *args])
    assert result.exit_code == 0, result.output
    assert f"note: no {missing}: checking the stack default" in result.stderr
    assert "''" not in result.output


def test_defaults_agree_on_local() -> None:
    """Every operation command leaves --target to --stack, else local (one default, declared in
    infra.targets.deployment and said in the help)."""
    from infra.targets.deployment import DEFAULT_TARGET

    assert DEFAULT_TARGET == "local"
    command = typer.main.get_command(app)
    for path in (
        ("invoke",),
        ("bench", "tensors"),
        ("bench", "generate"),
        ("metrics",),
        ("endpoint", "status"),
        ("endpoint", "wait"),
    ):
        found = command
        for name in path:
            found = found.commands[name]  # type: ignore[attr-defined]
        [target] = [p for p in found.params if "--target" in p.opts]
        assert target.default is None, (path, target.default)
        assert "the --stack's, else local" in (target.help or ""), path


def test_local_down_with_nothing_running_exits_0(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TDK_STATE_DIR", str(tmp_path / "state"))
    result = CliRunner().invoke(app, ["local", "down"])
    assert result.exit_code == 0, result.output
    assert "nothing to stop" in result.output
    again = CliRunner().invoke(app, ["local", "down", "--json"])
    assert again.exit_code == 0 and '"stopped": null' in again.stdout


def test_a_negative_step_batch_never_asks_for_max_batch_size_minus_one(repo: Path) -> None:
    config = repo / "tokenizer" / "config.pbtxt"
    config.write_text(config.read_text().replace("max_batch_size: 8", "max_batch_size: -1"))
    result = CliRunner().invoke(app, ["validate", str(repo), "--json"])
    assert result.exit_code == 1, result.output
    assert "max_batch_size to -1" not in result.output
    assert "tokenizer" in result.output  # the model's own config is what is reported


@pytest.mark.e2e
def test_demo_prints_one_table_and_a_next_line(
    sample_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.local.local_helpers import make_release

    monkeypatch.setenv("TDK_STATE_DIR", str(tmp_path / "state"))
    make_release(sample_repo, tmp_path / "store", copies=2, only=("tokenizer",))
    args = ["local", "demo", "--release", str(tmp_path / "store"), "-k", "1", "--warm", "2"]
    result = CliRunner(env={"COLUMNS": "80"}).invoke(app, args)
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().splitlines()
    assert result.stdout.count("┏") == 1, result.stdout  # one table, figures printed once
    assert "tokenizer-1.tar.gz: cold" not in result.stdout
    assert sum(" tokenizer-1.tar.gz " in line for line in lines) == 1, result.stdout
    assert lines[-1].startswith("next: ") and "tdk doctor" in lines[-1]
    # pasteable: the store just served and a TargetModel it holds, not URL / NAME
    assert f"--release {tmp_path / 'store'} --detach" in lines[-1]
    assert "--target-model tokenizer-0.tar.gz --example" in lines[-1]


def test_the_command_list_wraps_summaries_at_the_terminal_not_at_the_docstring() -> None:
    """typer's command list kept a docstring's line breaks (`tune ... reports the best` then
    `so far` at any width); each summary is one paragraph the terminal wraps."""
    from cli.help import one_paragraph

    shown = _help([], "300")
    root = typer.main.get_command(app)
    for name, command in root.commands.items():  # type: ignore[attr-defined]
        summary = one_paragraph(command.help or "")
        assert any(
            line.lstrip("│ ").startswith(name) and summary in line for line in shown.splitlines()
        ), (name, summary, shown)
    doctor = one_paragraph(root.commands["doctor"].help)  # type: ignore[attr-defined]
    assert "credentials" in doctor and "placeholders" in doctor


def test_plan_without_traffic_says_what_its_trough_column_is() -> None:
    """Issue 49 item 6: '3000 rps all the time' sat above a table whose trough was 1 unit."""
    result = CliRunner(env={"COLUMNS": "100"}).invoke(app, [*PLAN, "--peak-rps", "3000"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert not text.startswith("3000 rps all the time") and "peak 3000 rps" in text
    assert "the trough column is idle, no request" in text
    document = json.loads(CliRunner().invoke(app, [*PLAN, "--peak-rps", "3000", "--json"]).stdout)
    assert document["trough_rps"] == "0" and document["peak_rps"] == "3000"
