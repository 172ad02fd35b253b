"""Extras install as they work in a clone (issue 49 item 5): `make extra EXTRA=NAME` installs
the extra's packages and never the kit itself (a reinstall under a running local endpoint broke
its next model load), torch from PyTorch's CPU index; the docs and hints say so."""

from __future__ import annotations

import re
import subprocess

import pytest

from tdk.extras import main, requirements
from tests.docs.doc_blocks import ROOT


@pytest.mark.parametrize("extra", ["import", "infra", "build"])
def test_make_extra_installs_the_extras_packages_not_the_kit(extra: str) -> None:
    done = subprocess.run(
        ["make", "-n", "extra", f"EXTRA={extra}"], cwd=ROOT, capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    plan = done.stdout.replace("\\\n", " ")
    install = next(line for line in plan.splitlines() if "pip install" in line)
    assert f"-r .venv/.extra-{extra}.txt" in install
    assert " -e " not in install and " . " not in f"{install} " and "'.[" not in install
    assert ("download.pytorch.org/whl/cpu" in install) == (extra == "import")


def test_the_extras_are_pyprojects_own(capsys: pytest.CaptureFixture[str]) -> None:
    assert any(r.startswith("torch") for r in requirements("import"))
    assert main(["import"]) == 0 and "transformers" in capsys.readouterr().out
    assert main(["no-such"]) == 2 and "import" in capsys.readouterr().err


def test_no_page_or_hint_installs_from_a_package_index_the_kit_is_not_on() -> None:
    paths = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "packager").rglob("*.py")]
    paths += list((ROOT / "infra").rglob("*.py"))
    for path in paths:
        assert "pip install 'triton-deploy-kit[" not in path.read_text(encoding="utf-8"), path
    # after `make demo` the kit runs an endpoint: the README adds the extra beside it
    assert "make extra EXTRA=infra" in (ROOT / "README.md").read_text(encoding="utf-8")
    assert "pip install -e '.[infra]'" not in (ROOT / "README.md").read_text(encoding="utf-8")


# `pip install -e .`, `pip install -e '.[infra]'`, `pip install '.[import]'`, `pip install .[build]`
EDITABLE_OR_EXTRA = re.compile(r"pip install\b[^\n`]*?(?:\s-e\s|\s--editable\b|\.\[|\[\w+\])")


def test_no_page_tells_users_to_pip_install_an_extra_over_the_kit() -> None:
    """docs/azure.md, sagemaker.md and kubernetes.md said `.venv/bin/pip install -e '.[infra]'`:
    the kit reinstalled under a running local endpoint (issue 49 item 5). Every page, README and
    hint says `make extra EXTRA=NAME` instead."""
    pages = [*ROOT.glob("*.md"), *(ROOT / "docs").rglob("*.md"), ROOT / "model_repos" / "README.md"]
    sources = [p for d in ("packager", "infra", "cli", "tdk") for p in (ROOT / d).rglob("*.py")]
    found = [
        f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, match.start()) + 1}: {match.group(0)}"
        for path in [*pages, *sources]
        for text in [path.read_text(encoding="utf-8")]
        for match in EDITABLE_OR_EXTRA.finditer(text)
    ]
    assert not found, "\n".join(found)
    for name in ("azure.md", "sagemaker.md", "kubernetes.md"):
        assert "make extra EXTRA=infra" in (ROOT / "docs" / name).read_text(encoding="utf-8")


def test_the_pattern_catches_each_way_of_saying_it() -> None:
    said = ["pip install -e '.[infra]'", ".venv/bin/pip install -e .", "pip install '.[import]'"]
    said += ["pip install 'triton-deploy-kit[build]'", "pip install --editable ."]
    assert all(EDITABLE_OR_EXTRA.search(each) for each in said)
    fine = ["pip install 'pkg==1.2'", "pip install --no-index --find-links wheels --target deps x"]
    assert not any(EDITABLE_OR_EXTRA.search(each) for each in fine)


def test_the_azurite_walkthrough_is_what_the_tests_run() -> None:
    """az:// with Azurite was not explained for users (issue 49 item 7): docs/azure.md starts
    the Azurite that `make azurite` installs, with the tests' flags, and points the store at it
    with the connection string the tests use (their account and key, the port it listens on)."""
    from tests.conftest import AZURITE_ACCOUNT, AZURITE_KEY, azurite_connection

    text = (ROOT / "docs" / "azure.md").read_text(encoding="utf-8")
    block = text[text.index("## Trying `az://` on this machine with Azurite") :]
    block = block[: block.index("\n## ")]
    assert "make azurite" in block and ".node/node_modules/.bin/azurite-blob" in block
    assert "--skipApiVersionCheck --loose" in block and "--blobPort 10000" in block
    assert f"AZURE_STORAGE_CONNECTION_STRING='{azurite_connection('127.0.0.1:10000')}'" in block
    assert f"--release az://{AZURITE_ACCOUNT}/releases/v1" in block and AZURITE_KEY in block
    assert "AZURE_STORAGE_CONNECTION_STRING" in (ROOT / "packager/stores/azaccount.py").read_text()
