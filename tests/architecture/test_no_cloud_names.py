"""A target owns its cloud (docs/targets.md); shared code names no cloud. Shared code is every
module of cli/, packager/, infra/ and bench/ outside what the registry says a target owns: each
registered target's folder and the package of the cloud its entry names (``TargetEntry.cloud``),
and each registered store kind's module (``packager.stores.KINDS``) with the helpers only it
imports.
It holds no provider identifier as a value (``"aws"``, ``"gcp"``, ``"azure"``, ``"gcloud"``,
a store scheme ``"s3"``), no cloud URL (``s3://``), no prefix dispatch on a unit's name
(``startswith("ml.")``) and reads no stack config's attributes by name
(``getattr(config, "kubernetes_version")``). Docstrings and comments may name clouds.

``DEBT`` lists what still does, each place with why and how many; the test fails when a place
names a cloud more (or less: then lower its count) than listed, so the list only shrinks."""

from __future__ import annotations

import ast
import re
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from infra.targets import catalogs, registry
from packager import stores

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("cli", "packager", "infra", "bench")
#: provider identifiers and store schemes, as a whole string value
IDENTIFIERS = frozenset(
    {"aws", "gcp", "google", "azure", "azurerm", "gcloud", "gsutil", "az", "s3", "gs", "ec2", "gce"}
)
#: a cloud storage URL inside any string
SCHEME = re.compile(r"\b(s3|gs|az|wasbs?|abfss?)://")
#: dispatch on the shape of a unit's name (a SageMaker type) or a registered target's name
PREFIX = re.compile("^(ml\\.|" + "|".join(re.escape(name) for name in registry.names()) + ")")
#: the receivers that hold a stack's config (``getattr(config, "x")``: dispatch by attribute name)
CONFIG = re.compile(r"(^|_)(config|stack|settings)$")

#: what still names a cloud in shared code: path -> (count, why); lower a count as its lines
#: move into the target (or cloud) that owns them. Empty: keep it so.
DEBT: dict[str, tuple[int, str]] = {}
#: the data files of a catalog (prices, generated tables): each lives with what owns it
CATALOG_DATA = ("*.json", "*.csv")
#: data files that are no cloud's catalog: the LLM engines' own argument tables (issue 48 item 3;
#: vLLM's as data since issue 50 item 6), the same on every target
ENGINE_DATA = frozenset(
    f"packager/validate/engines/{name}.json"
    for name in ("trtllm_args", "vllm_lists", "vllm_values")
)


def owned() -> list[str]:
    """The folders the registry says a target owns: each registered target's package and the
    package of its cloud (``TargetEntry.cloud``)."""
    folders = set()
    for entry in registry.entries():
        modules = [type(entry).__module__]
        if entry.cloud is not None:
            modules.append(entry.cloud.credentials.__module__)
        for module in modules:
            folder = Path(sys.modules[module].__file__ or "").parent
            if folder.is_relative_to(ROOT):
                folders.add(folder.relative_to(ROOT).as_posix() + "/")
    return sorted(folders)


def store_modules() -> list[str]:
    """Each registered store kind's module, and the ``packager.stores`` modules only it imports
    (its private helpers)."""
    kinds = [Path(sys.modules[k.open.__module__].__file__ or "") for k in stores.KINDS.values()]
    imported: dict[str, list[Path]] = {}
    for path in kinds:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("packager."):
                imported.setdefault(node.module or "", []).append(path)
    helpers = [m for m, users in imported.items() if len(set(users)) == 1]
    files = [*kinds, *(ROOT / (m.replace(".", "/") + ".py") for m in helpers)]
    return sorted(f.relative_to(ROOT).as_posix() for f in files)


def _docstrings(tree: ast.AST) -> set[int]:
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, kinds) and node.body and isinstance(node.body[0], ast.Expr):
            found.add(id(node.body[0].value))
    return found


def _receiver(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else ""


def offences(source: str, configs: bool = True) -> Iterator[tuple[int, str]]:
    """(line, what) for each way ``source`` names a cloud or dispatches on a name (on a
    stack config's attribute names too where ``configs``: infra and cli hold stack configs)."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    for node in ast.walk(tree):
        text = node.value if isinstance(node, ast.Constant) and id(node) not in docs else None
        if isinstance(text, str) and (text in IDENTIFIERS or SCHEME.search(text)):
            yield node.lineno, f"names a cloud: {text[:60]!r}"
        if not isinstance(node, ast.Call) or not node.args:
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else ""
        method = node.func.attr if isinstance(node.func, ast.Attribute) else ""
        first = node.args[-1] if method else node.args[1] if len(node.args) > 1 else None
        literal = first.value if isinstance(first, ast.Constant) else None
        if not isinstance(literal, str):
            continue
        if method in ("startswith", "removeprefix") and PREFIX.match(literal):
            yield node.lineno, f"dispatches on a name's prefix {literal!r}"
        by_name = configs and name in ("getattr", "hasattr")
        if by_name and CONFIG.search(_receiver(node.args[0])):
            yield node.lineno, f"reads a stack config's {literal!r} by name"


def shared_offences() -> dict[str, list[str]]:
    """Every offence in shared code, per file."""
    mine = tuple(owned())
    store_files = set(store_modules())
    found: dict[str, list[str]] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel.startswith(mine) or rel in store_files:
                continue
            text = path.read_text(encoding="utf-8")
            lines = [f"{n}: {what}" for n, what in offences(text, package in ("infra", "cli"))]
            if lines:
                found[rel] = lines
    return found


def test_shared_code_names_no_cloud() -> None:
    found = shared_offences()
    counts = Counter({path: len(lines) for path, lines in found.items()})
    expected = Counter({path: count for path, (count, _) in DEBT.items()})
    new = {p: found.get(p, []) for p in counts if counts[p] > expected[p]}
    assert not new, f"shared code names a cloud (ask the registered target): {new}"
    moved = {p: (expected[p], counts[p]) for p in expected if counts[p] < expected[p]}
    assert not moved, f"fewer lines name a cloud than DEBT lists: lower it {moved}"


def test_catalog_data_lives_with_the_target_or_cloud_that_owns_it() -> None:
    """Prices and generated catalog tables (instance types, GPUs) are a target's or a cloud's:
    no such file in shared code (a shared ``prices.json`` held every cloud's sections)."""
    mine = tuple(owned())
    shared = [
        path.relative_to(ROOT).as_posix()
        for package in PACKAGES
        for pattern in CATALOG_DATA
        for path in (ROOT / package).rglob(pattern)
        if not path.relative_to(ROOT).as_posix().startswith(mine)
        and path.relative_to(ROOT).as_posix() not in ENGINE_DATA
    ]
    assert not shared, f"catalog data in shared code (move it to its target or cloud): {shared}"
    tables = catalogs.prices().origin.split(", ")
    assert len(tables) >= 3 and all(
        Path(t).relative_to(ROOT).as_posix().startswith(mine) for t in tables
    )


def test_the_registry_says_what_a_target_owns() -> None:
    folders = owned()
    assert "infra/targets/gke/" in folders and "infra/targets/eks/" in folders
    assert "infra/clouds/aws/" in folders and "infra/clouds/gcp/" in folders
    assert not any(f.startswith(("infra/k8s", "cli", "packager")) for f in folders)
    files = store_modules()
    assert {"packager/stores/s3.py", "packager/stores/s3tags.py"} <= set(files)
    assert {"packager/stores/gcs.py", "packager/stores/azblob.py"} <= set(files)
    assert "packager/stores/base.py" not in files and "packager/stores/__init__.py" not in files


def test_the_scan_finds_each_kind() -> None:
    source = """
'''A docstring may say aws and s3://bucket.'''
provider = "aws"  # a provider identifier
url = f"s3://{bucket}/x"
section = "sagemaker" if name.startswith("ml.") else "ec2"
version = getattr(config, "kubernetes_version", None)
fine = getattr(client, "close", None)
"""
    kinds = [what.split(":")[0].split(" '")[0] for _, what in offences(source)]
    assert kinds.count("names a cloud") == 3, kinds  # "aws", "s3://", "ec2"
    assert "dispatches on a name's prefix" in kinds
    assert "reads a stack config's" in kinds
    assert len(kinds) == 5, kinds
