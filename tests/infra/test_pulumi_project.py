"""The Pulumi project contract: Pulumi.yaml declares every key once; stack files only set them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from infra.config import ConfigReader, read_stack_config
from infra.targets.sagemaker.target import TARGET
from tests.infra.pulumi_harness import PROJECT, ROOT, stack_config

PY_TYPES: dict[str, tuple[type, ...]] = {"string": (str,), "integer": (int,), "boolean": (bool,)}
STACK_FILES = sorted(ROOT.glob("Pulumi.*.yaml"))


def _declared() -> dict[str, dict[str, Any]]:
    project = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())
    config: dict[str, dict[str, Any]] = project["config"]
    return config


def _matches(kind: str, value: Any) -> bool:
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, PY_TYPES.get(kind, (list,)))


def test_project_file_names_the_program() -> None:
    project = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())
    assert project["name"] == PROJECT
    assert project["runtime"]["name"] == "python"
    assert project["runtime"]["options"]["virtualenv"] == ".venv"
    assert project["main"] == "infra/"
    assert (ROOT / "infra" / "__main__.py").is_file()


def test_every_key_has_type_default_and_description() -> None:
    for key, decl in _declared().items():
        assert ":" not in key, f"{key}: project keys are declared unqualified"
        assert decl.get("description"), f"{key} has no description"
        assert decl.get("type") in ("string", "integer", "boolean", "array"), key
        assert "default" in decl, f"{key} has no default (the CLI would demand it on every stack)"
        assert _matches(decl["type"], decl["default"]), f"{key}: default is not {decl['type']}"


@pytest.mark.parametrize("stack_file", STACK_FILES, ids=lambda p: Path(p).name)
def test_stack_files_set_only_declared_keys_with_the_declared_type(stack_file: Path) -> None:
    declared = _declared()
    values = yaml.safe_load(stack_file.read_text())["config"]
    for key, value in values.items():
        namespace, _, name = key.partition(":")
        if namespace != PROJECT:
            continue  # provider keys (aws:region, gcp:project) belong to their providers
        assert name in declared, f"{stack_file.name}: {key} is not declared in Pulumi.yaml"
        kind = declared[name]["type"]
        assert _matches(kind, value), f"{stack_file.name}: {key}={value!r} is not {kind}"


def test_sagemaker_reads_every_sagemaker_key() -> None:
    values = stack_config("sagemaker-dev")
    read: set[str] = set()

    def source(key: str) -> str | None:
        read.add(key)
        return values.get(key)

    reader = ConfigReader(source)
    TARGET.read_config(reader, read_stack_config(reader, "sagemaker", ("s3",)))
    sagemaker_keys = {
        f"{PROJECT}:{k}"
        for k in _declared()
        if k.startswith("sagemaker") and not k.startswith("sagemakerIc")  # sagemaker-ic's own
    }
    assert sagemaker_keys <= read, f"declared but never read: {sorted(sagemaker_keys - read)}"


def test_every_declared_key_is_read_by_some_target() -> None:
    """A key declared in Pulumi.yaml that no target reads is a setting that silently does
    nothing (the keys of every target, shared and common ones included)."""
    from infra.targets import load_target, registry
    from infra.targets.capabilities import DEPLOY

    read: set[str] = set()
    for name in registry.able(DEPLOY):
        values = stack_config(f"{name}-dev")

        def source(key: str, values: dict[str, str] = values) -> str | None:
            read.add(key)
            return values.get(key)

        target = load_target(name)
        reader = ConfigReader(source)
        reader.string("target")
        target.read_config(reader, read_stack_config(reader, name, target.release_schemes))
    declared = {f"{PROJECT}:{key}" for key in _declared()}
    assert declared <= read, f"declared but never read: {sorted(declared - read)}"
