"""The aks target's locator: the Azure Monitor workspace's query URL comes from the stack's
outputs, and ``--prometheus-url`` wins (tests/prom/test_locators.py checks every target's
locator shape)."""

from __future__ import annotations

from pathlib import Path

from infra.targets import stacks
from infra.targets.deployment import locator

ROOT = Path(__file__).resolve().parents[3]


def test_the_stack_names_the_azure_monitor_query_url() -> None:
    settings = stacks.load_stack(ROOT, "aks-dev")
    url = "https://ws-1.eastus.prometheus.monitor.azure.com"
    named = locator("aks", {}, settings, {"prometheusQueryUrl": url})
    assert named.prometheus_url == url  # type: ignore[attr-defined]
    mine = locator("aks", {"prometheus_url": "http://127.0.0.1:9"}, settings, {})
    assert mine.prometheus_url == "http://127.0.0.1:9"  # type: ignore[attr-defined]
