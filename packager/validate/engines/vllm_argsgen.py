"""Regenerates ``vllm_lists.json``: the EngineArgs field names of each vLLM release, read from
the release's PyPI wheel (``vllm/engine/arg_utils.py``: the ``EngineArgs`` and
``AsyncEngineArgs`` dataclass fields, the keys ``AsyncEngineArgs(**model_json)`` takes), and
with ``--values`` ``vllm_values.json`` (``vllm_valuesgen``). Both tables are data beside this
generator, read by ``packager.validate.engines.args``.

    pip download vllm==0.10.1.1 --no-deps --only-binary :all: -d WHEELS
    python -m packager.validate.engines.vllm_argsgen WHEELS/vllm-*.whl > /tmp/vllm_lists.json
    mv /tmp/vllm_lists.json packager/validate/engines/  # (the package reads the old one)
"""

from __future__ import annotations

import ast
import datetime as dt
import hashlib
import json
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packager.validate.engines.vllm_valuesgen import ARG_UTILS, CLASSES, read_values


@dataclass(frozen=True)
class WheelArgs:
    """One wheel's version, file name, sha256 and engine argument names."""

    version: str
    wheel: str
    sha256: str
    names: tuple[str, ...]


def field_names(source: str) -> tuple[str, ...]:
    """The annotated class-level fields of EngineArgs and AsyncEngineArgs, in order."""
    names: list[str] = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef) and node.name in CLASSES:
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    names.append(item.target.id)
    return tuple(dict.fromkeys(names))


def read_wheel(path: Path) -> WheelArgs:
    """The engine arguments in one vLLM wheel (``vllm-<version>-...whl``)."""
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    with zipfile.ZipFile(path) as wheel:
        source = wheel.read(ARG_UTILS).decode("utf-8")
    version = path.name.split("-")[1]
    return WheelArgs(version, path.name, digest, field_names(source))


def layered(value: Any, depth: int, indent: int = 0) -> str:
    """JSON with objects indented ``depth`` levels deep and each deeper value on one line (one
    engine argument per line: a regenerated table diffs by argument)."""
    if depth == 0 or not isinstance(value, dict) or not value:
        return json.dumps(value)
    pad = " " * (indent + 1)
    items = [f"{pad}{json.dumps(k)}: {layered(v, depth - 1, indent + 1)}" for k, v in value.items()]
    return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"


def render(rows: list[WheelArgs], checked: str) -> str:
    """The generated ``vllm_lists.json``: per version, the wheel, its sha256, the names."""
    table = {
        "generated_by": "python -m packager.validate.engines.vllm_argsgen WHEELS/vllm-*.whl",
        "checked": checked,
        "versions": {
            row.version: {"wheel": row.wheel, "sha256": row.sha256, "names": list(row.names)}
            for row in rows
        },
    }
    return json.dumps(table, indent=1) + "\n"


def render_values(wheels: list[Path], checked: str) -> str:
    """The generated ``vllm_values.json``: per version, the wheel and what each engine argument
    accepts (``vllm_valuesgen``): JSON kinds, string choices and numeric bounds."""
    versions: dict[str, Any] = {}
    for path in sorted(wheels, key=lambda p: _key(p.name.split("-")[1])):
        arguments = {name: spec.as_json() for name, spec in read_values(path).items()}
        versions[path.name.split("-")[1]] = {"wheel": path.name, "arguments": arguments}
    table = {
        "generated_by": "python -m packager.validate.engines.vllm_argsgen --values "
        "WHEELS/vllm-*.whl",
        "checked": checked,
        "versions": versions,
    }
    return layered(table, 4) + "\n"


def main(argv: list[str]) -> None:
    today = dt.date.today().isoformat()
    if argv[:1] == ["--values"]:
        sys.stdout.write(render_values([Path(p) for p in argv[1:]], today))
        return
    rows = sorted((read_wheel(Path(p)) for p in argv), key=lambda r: _key(r.version))
    sys.stdout.write(render(rows, today))


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) if part.isdigit() else 0 for part in version.split("."))


if __name__ == "__main__":
    main(sys.argv[1:])
