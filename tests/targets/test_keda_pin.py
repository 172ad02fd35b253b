"""The KEDA chart pin (``k8sKedaChartVersion``) is read in one place (issue 50: one place per
thing): ``infra.k8s.config.read_keda_chart``, which every Kubernetes target whose cluster minor
is configured goes through, so they pin, default and refuse alike."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from infra.config import ConfigReader, qualify
from infra.facts import kubernetes as kf
from infra.k8s import config as k8s_config
from infra.k8s.config import read_keda_chart
from tdk.errors import ConfigError
from tests.registry_lists import kubernetes_targets, read_dev

ROOT = Path(__file__).resolve().parents[2]
KEY = "k8sKedaChartVersion"


@pytest.fixture(autouse=True)
def _today(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TDK_TODAY", "2026-12-07")


def _pinning() -> list[str]:
    """Kubernetes targets whose stacks name their cluster's minor (one that follows a release
    channel instead takes KEDA's chart for the channel's newest minor)."""
    return [t for t in kubernetes_targets() if hasattr(read_dev(t), "kubernetes_version")]


def _reading_the_key(path: Path) -> bool:
    """Whether ``path`` holds the string ``k8sKedaChartVersion`` outside a docstring."""
    tree = ast.parse(path.read_text(), str(path))
    docs = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.FunctionDef | ast.ClassDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    return any(
        isinstance(node, ast.Constant) and node.value == KEY and id(node) not in docs
        for node in ast.walk(tree)
    )


def test_only_read_keda_chart_reads_the_pin() -> None:
    reading = [p for p in sorted((ROOT / "infra").rglob("*.py")) if _reading_the_key(p)]
    assert reading == [Path(k8s_config.__file__).resolve()], (
        f"read {KEY} with infra.k8s.config.read_keda_chart, not in "
        f"{[str(p.relative_to(ROOT)) for p in reading]}"
    )


def test_some_targets_name_their_minor() -> None:
    assert len(_pinning()) >= 3, "the parametrized test below would check too few targets"


@pytest.mark.parametrize("target", _pinning())
def test_every_target_defaults_and_refuses_a_pin_alike(target: str) -> None:
    minor = read_dev(target).kubernetes_version
    assert read_dev(target).keda_version == kf.keda_for(minor).version
    fit = kf.keda_for(minor).version
    assert read_dev(target, {KEY: fit}).keda_version == fit
    with pytest.raises(ConfigError) as raised:
        read_dev(target, {KEY: "0.0.1"})
    values: dict[str, Any] = {qualify(KEY): "0.0.1"}
    with pytest.raises(ConfigError) as shared:
        read_keda_chart(ConfigReader(values.get), minor)
    assert (raised.value.message, raised.value.hint) == (shared.value.message, shared.value.hint)
    assert "does not support Kubernetes" in raised.value.message and fit in str(raised.value.hint)
