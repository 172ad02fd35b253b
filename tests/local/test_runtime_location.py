"""Where tdk finds the Triton runtime venv: beside the kit's own venv when the kit is installed
non-editable (``make demo``), so the package's own path points into site-packages."""

from __future__ import annotations

from pathlib import Path

import pytest

from infra.triton_runtime import runtime


def test_a_non_editable_install_finds_the_runtime_beside_its_venv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkout = tmp_path / "checkout"
    (checkout / ".venv").mkdir(parents=True)
    (checkout / ".venv-triton").mkdir()
    site = checkout / ".venv" / "lib" / "python3.11" / "site-packages"
    monkeypatch.setattr(runtime, "REPO_ROOT", site)  # the package's own parents
    monkeypatch.setattr(runtime.sys, "prefix", str(checkout / ".venv"))
    monkeypatch.delenv(runtime.RUNTIME_ENV, raising=False)
    assert runtime._default_venv() == checkout / ".venv-triton"


def test_a_checkout_keeps_its_own_runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "repo" / ".venv-triton").mkdir(parents=True)
    (tmp_path / "elsewhere" / ".venv-triton").mkdir(parents=True)
    monkeypatch.setattr(runtime, "REPO_ROOT", tmp_path / "repo")
    monkeypatch.setattr(runtime.sys, "prefix", str(tmp_path / "elsewhere" / ".venv"))
    assert runtime._default_venv() == tmp_path / "repo" / ".venv-triton"


def test_the_checkout_root_is_the_repository_root() -> None:
    """``REPO_ROOT`` counts parents from the module's own file: a move must keep it the root."""
    assert (runtime.REPO_ROOT / "pyproject.toml").is_file()
    assert (runtime.REPO_ROOT / "infra" / "triton_runtime" / "runtime.py").is_file()
