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


def _fake_runtime(venv: Path, numpy: list[str]) -> Path:
    """A runtime venv with every path find_runtime checks, and these numpy dist-infos."""
    packages = venv / "lib" / "python3.11" / "site-packages"
    server = packages / "pytriton" / "tritonserver"
    for folder in (
        server / "bin", packages / "nvidia_pytriton.libs", server / "backends" / "python",
        server / "python_backend_stubs" / "3.11",
    ):  # fmt: skip
        folder.mkdir(parents=True)
    (server / "bin" / "tritonserver").touch()
    (server / "python_backend_stubs" / "3.11" / "triton_python_backend_stub").touch()
    for version in numpy:
        (packages / f"numpy-{version}.dist-info").mkdir()
    return venv


def test_a_runtime_with_numpy_1_is_found(tmp_path: Path) -> None:
    venv = _fake_runtime(tmp_path / "rt", ["1.26.4"])
    assert runtime.find_runtime(venv).venv == venv


@pytest.mark.parametrize(
    ("numpy", "said"),
    [
        (["2.1.0"], "numpy 2.1.0 in the Triton runtime"),  # stub answers empty outputs
        ([], "needs one numpy, found none"),
        (["1.26.4", "2.0.0"], "needs one numpy"),  # two installs: which one loads is a guess
    ],
)
def test_a_runtime_whose_numpy_the_stub_cannot_use_is_refused(
    tmp_path: Path, numpy: list[str], said: str
) -> None:
    venv = _fake_runtime(tmp_path / "rt", numpy)
    with pytest.raises(runtime.RuntimeMissing) as raised:
        runtime.find_runtime(venv)
    assert said in str(raised.value) and "'numpy>=1.26,<2'" in str(raised.value.hint)


def test_the_checkout_root_is_the_repository_root() -> None:
    """``REPO_ROOT`` counts parents from the module's own file: a move must keep it the root."""
    assert (runtime.REPO_ROOT / "pyproject.toml").is_file()
    assert (runtime.REPO_ROOT / "infra" / "triton_runtime" / "runtime.py").is_file()
