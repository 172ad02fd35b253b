"""What the user reads about the targets keeps up with the registry: no sentence in the README,
Pulumi.yaml, the CLI's help or the docs speaks of the Kubernetes targets as two (gke and eks,
written before a third was registered), and Pulumi.yaml's ``target`` key names every
deployable one."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from infra.targets import registry
from infra.targets.capabilities import DEPLOY
from tests.registry_lists import kubernetes_targets

ROOT = Path(__file__).resolve().parents[2]
#: a list of two of the Kubernetes targets, written as one ("GKE or EKS", "gke/eks")
STALE_PAIR = re.compile(r"gke or eks|gke/eks", re.IGNORECASE)


def _read_by_users() -> list[Path]:
    return [
        ROOT / "README.md",
        ROOT / "Pulumi.yaml",
        *sorted((ROOT / "cli").rglob("*.py")),
        *sorted((ROOT / "docs").rglob("*.md")),
    ]


def test_no_sentence_speaks_of_gke_and_eks_as_the_kubernetes_targets() -> None:
    assert len(kubernetes_targets()) > 2  # two of them are not the whole list
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in _read_by_users()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if STALE_PAIR.search(line)
    ]
    assert not found, "say 'Kubernetes targets' (or name them all):\n" + "\n".join(found)


def test_the_target_key_names_every_deployable_target() -> None:
    project = yaml.safe_load((ROOT / "Pulumi.yaml").read_text(encoding="utf-8"))
    description = project["config"]["target"]["description"]
    named = set(re.findall(r"[a-z][a-z-]*[a-z]", description.split(" - ", 1)[1]))
    assert set(registry.able(DEPLOY)) <= named, (description, registry.able(DEPLOY))
