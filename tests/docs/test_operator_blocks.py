"""The docs' operator blocks (status, wait, metrics) run under test: blocks marked
``<!-- doctest: moto -->`` against a SageMaker endpoint in moto named as the committed stack
names it, blocks marked ``<!-- doctest: triton -->`` against a Triton stand-in answering the
documented readiness, repository-index and Prometheus query shapes (issue 40). Each ``tdk``
command runs through the real CLI from the repository root, where the stack files are."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from cli.main import app
from tests.cli.sagemaker_moto import create_mme_endpoint, moto_aws
from tests.docs.doc_blocks import ROOT, commands, doc_files, marked
from tests.stand_ins import triton_stand_in

DOC_URL = "http://127.0.0.1:8000"


def _commands(mark: str) -> list[tuple[str, list[str]]]:
    found = [
        (block.where, args)
        for path in doc_files()
        for block in marked(path, mark)
        for line in block.text.replace("\\\n", " ").splitlines()
        for args in commands(line)
    ]
    assert found, f"no block is marked <!-- doctest: {mark} -->"
    return found


@pytest.fixture
def in_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("PATH", os.defpath)  # no pulumi CLI: the stack files alone


@pytest.fixture
def triton() -> Iterator[str]:
    with triton_stand_in(
        ready=True, index=[{"name": "bert-0", "version": "1", "state": "READY"}]
    ) as url:
        yield url


def test_sagemaker_operator_blocks_run_against_moto(
    in_root: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    with moto_aws(monkeypatch):
        create_mme_endpoint("tdk-sagemaker-dev")
        for where, args in _commands("moto"):
            result = CliRunner().invoke(app, args)
            assert result.exit_code == 0, f"{where}: tdk {' '.join(args)}\n{result.output}"


def test_kubernetes_operator_blocks_run_against_a_triton(in_root: None, triton: str) -> None:
    for where, args in _commands("triton"):
        args = [triton if a == DOC_URL else a for a in args]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, f"{where}: tdk {' '.join(args)}\n{result.output}"


@pytest.mark.parametrize(
    ("page", "must_say"),
    [
        ("sagemaker.md", ["AutoRollbackConfig", "5xx", "is **not** rolled back"]),
        ("kubernetes.md", ["**nothing**", "ProgressDeadlineExceeded", "crash-loop"]),
    ],
)
def test_the_docs_say_which_failures_roll_back_on_their_own(page: str, must_say: list[str]) -> None:
    """Issue 40, row 4: each cloud page says which failures roll back by themselves (and which
    do not: a model that fails to load), with the source it was checked against."""
    text = (ROOT / "docs" / page).read_text()
    start = text.index("What rolls back on its own:")
    paragraph = " ".join(text[start : text.index("\n\n", start)].split())
    assert all(phrase in paragraph for phrase in must_say), paragraph
    assert "https://" in paragraph and "checked 2026-" in paragraph
