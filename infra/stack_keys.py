"""Stack keys ``Pulumi.yaml`` does not declare: ignored by every reader (the default applies),
so a misspelt key (``kubernetesVersion`` for ``eksKubernetesVersion``) is named with the
closest declared key. ``tdk validate --stack``, ``tdk doctor`` and the program all warn."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path

from infra.config import PROJECT, _as_config_string, _load_yaml, deprecated_keys, qualify

#: the project root holding Pulumi.yaml (``main: infra/`` points one level below it)
PROJECT_DIR = Path(__file__).resolve().parents[1]


def declared_keys(project_dir: Path) -> list[str]:
    """The keys ``Pulumi.yaml`` declares in the project namespace (unqualified)."""
    config = _load_yaml(project_dir / "Pulumi.yaml").get("config") or {}
    return [str(key) for key in config if ":" not in str(key)]


def stack_file_keys(project_dir: Path, stack: str) -> list[str]:
    """The keys ``Pulumi.<stack>.yaml`` sets, qualified as Pulumi reads them."""
    config = _load_yaml(project_dir / f"Pulumi.{stack}.yaml").get("config") or {}
    return [str(key) if ":" in str(key) else f"{PROJECT}:{key}" for key in config]


def undeclared(project_dir: Path, keys: Iterable[str]) -> list[str]:
    """One warning per key of the project namespace that ``Pulumi.yaml`` does not declare,
    naming the closest declared key (difflib) when one is close."""
    declared = declared_keys(project_dir)
    found = []
    for key in sorted(set(keys)):
        namespace, _, name = key.rpartition(":")
        if namespace != PROJECT or name in declared:
            continue
        close = difflib.get_close_matches(name, declared, n=1, cutoff=0.6)
        if not close:  # a misspelt suffix (kubernetesVersion for eksKubernetesVersion)
            close = [d for d in declared if d.lower().endswith(name.lower())][:1]
        guess = f"; did you mean {PROJECT}:{close[0]}?" if close else ""
        found.append(
            f"{key} is not a key Pulumi.yaml declares: it is ignored and its default applies{guess}"
        )
    return found


def deprecated_in_file(project_dir: Path, stack: str) -> list[str]:
    """One warning per deprecated key ``Pulumi.<stack>.yaml`` sets (Pulumi.yaml still
    declares them for a release, so :func:`undeclared` leaves them alone)."""
    config = _load_yaml(project_dir / f"Pulumi.{stack}.yaml").get("config") or {}
    values = {qualify(str(key)): _as_config_string(value) for key, value in config.items()}
    return deprecated_keys(values.get)
