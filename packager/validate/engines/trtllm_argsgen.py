"""Regenerates ``trtllm_args.json``: the ``LLM()`` argument names and allowed values of each
TensorRT-LLM release a Triton ``trtllm-python-py3`` image ships, read from the release's
sources without importing them.

The Triton LLM-API model calls ``tensorrt_llm.LLM(**model_yaml)``; ``BaseLLM.__init__``
(``tensorrt_llm/llmapi/llm.py``) picks the argument model by ``backend`` (the strings it
compares ``backend`` with) and refuses any key that is not a field of that model
(``TorchLlmArgs``, a pydantic ``BaseLlmArgs`` with ``extra: forbid``, in
``tensorrt_llm/llmapi/llm_args.py``). From those two files this reads:

- the field names of ``BaseLlmArgs`` and ``TorchLlmArgs`` (and their ``alias=``);
- each field's allowed strings: a ``Literal[...]`` annotation, or an ``Enum`` whose members a
  ``field_validator(mode='before')`` of that field matches after ``.upper()``;
- ``backend``: the strings ``BaseLLM.__init__`` compares it with.

The sources are the versioned pages of the TensorRT-LLM documentation (gh-pages
``<version>/_modules/tensorrt_llm/llmapi/{llm_args,llm}.html``), saved as text beside a
``sources.json`` naming each file's URL; they are not committed (the table records their
URL, read date and sha256)::

    python packager/validate/engines/trtllm_argsgen.py SOURCES_DIR 2026-12-07 > /tmp/t.json
    mv /tmp/t.json packager/validate/engines/trtllm_args.json  # (the package reads the old one)
"""

from __future__ import annotations

import ast
import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: the argument models of the PyTorch ``LLM`` (the one the Triton model constructs)
ARG_CLASSES = ("BaseLlmArgs", "TorchLlmArgs")
#: the class and method that dispatch on ``backend``
DISPATCH = ("BaseLLM", "__init__")
#: keys ``BaseLLM.__init__`` accepts besides the model's fields (``valid_keys``)
EXTRA_KEYS = ("_mpi_session", "backend")


@dataclass(frozen=True)
class Choices:
    """The strings one argument accepts (compared after ``.upper()`` when ``any_case``)."""

    values: tuple[str, ...]
    any_case: bool = False


def _strings(node: ast.expr) -> tuple[str, ...] | None:
    """The strings of ``Literal["a", "b"]`` anywhere inside an annotation, None if none."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Subscript) and _name(sub.value) == "Literal":
            items = sub.slice.elts if isinstance(sub.slice, ast.Tuple) else [sub.slice]
            return tuple(i.value for i in items if isinstance(i, ast.Constant)
                         and isinstance(i.value, str))  # fmt: skip
    return None


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else ""


def _classes(tree: ast.Module) -> dict[str, ast.ClassDef]:
    return {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}


def _enum_members(node: ast.ClassDef) -> tuple[str, ...]:
    return tuple(t.id for item in node.body if isinstance(item, ast.Assign)
                 for t in item.targets if isinstance(t, ast.Name))  # fmt: skip


def _upper_validated(node: ast.ClassDef) -> set[str]:
    """Fields whose ``field_validator`` upper-cases the value and looks it up in an Enum's
    ``__members__`` (``convert_load_format``)."""
    found: set[str] = set()
    for item in node.body:
        if not isinstance(item, ast.FunctionDef):
            continue
        text = ast.unparse(item)
        if ".upper()" not in text or "__members__" not in text:
            continue
        for deco in item.decorator_list:
            if isinstance(deco, ast.Call) and _name(deco.func) == "field_validator":
                found |= {str(a.value) for a in deco.args if isinstance(a, ast.Constant)}
    return found


def _fields(node: ast.ClassDef) -> list[tuple[str, ast.AnnAssign]]:
    return [(item.target.id, item) for item in node.body
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
            and not item.target.id.startswith("_")]  # fmt: skip


def _alias(item: ast.AnnAssign) -> str | None:
    if isinstance(item.value, ast.Call):
        for kw in item.value.keywords:
            if kw.arg == "alias" and isinstance(kw.value, ast.Constant):
                return str(kw.value.value)
    return None


def read_args(source: str) -> tuple[tuple[str, ...], dict[str, Choices]]:
    """The argument names of ``TorchLlmArgs`` (its own and ``BaseLlmArgs``'s fields, aliases)
    and the choices of the fields that restrict their strings."""
    classes = _classes(ast.parse(source))
    enums = {name: _enum_members(c) for name, c in classes.items()
             if any(_name(b) in ("Enum", "StrEnum") for b in c.bases)}  # fmt: skip
    names: dict[str, None] = {}
    choices: dict[str, Choices] = {}
    for cls in ARG_CLASSES:
        if cls not in classes:
            raise ValueError(f"no class {cls} in the source")
        upper = _upper_validated(classes[cls])
        for name, item in _fields(classes[cls]):
            names[name] = None
            alias = _alias(item)
            if alias:
                names[alias] = None
            literal = _strings(item.annotation)
            enum = next((e for e in enums if e in ast.unparse(item.annotation)), None)
            if literal is not None:
                choices[name] = Choices(literal)
            elif enum and name in upper:
                choices[name] = Choices(tuple(m.lower() for m in enums[enum]), any_case=True)
            else:
                choices.pop(name, None)  # a subclass re-declared it without a restriction
    return tuple(names), choices


def read_backends(source: str) -> tuple[str, ...]:
    """The strings ``BaseLLM.__init__`` compares ``backend`` with."""
    cls = _classes(ast.parse(source)).get(DISPATCH[0])
    init = next((f for f in (cls.body if cls else []) if isinstance(f, ast.FunctionDef)
                 and f.name == DISPATCH[1]), None)  # fmt: skip
    if init is None:
        raise ValueError(f"no {'.'.join(DISPATCH)} in the source")
    found = [
        node.comparators[0].value
        for node in ast.walk(init)
        if isinstance(node, ast.Compare) and _name(node.left) == "backend"
        and isinstance(node.ops[0], ast.Eq) and isinstance(node.comparators[0], ast.Constant)
    ]  # fmt: skip
    return tuple(dict.fromkeys(str(v) for v in found))


def release_entry(args_file: Path, args_url: str, llm_file: Path, llm_url: str) -> dict[str, Any]:
    """One release's table entry from its two saved sources."""
    names, choices = read_args(args_file.read_text())
    choices["backend"] = Choices(read_backends(llm_file.read_text()))
    return {
        "sources": [
            {"url": url, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
            for path, url in ((args_file, args_url), (llm_file, llm_url))
        ],
        "names": sorted(set(names) | set(EXTRA_KEYS)),
        "choices": {
            name: {"values": list(c.values), "any_case": c.any_case}
            for name, c in sorted(choices.items())
        },
    }


def render(releases: dict[str, dict[str, Any]], read: str) -> str:
    """The table's text: one canonical JSON document (what the tests compare with)."""
    table = {"generated_by": "packager/validate/engines/trtllm_argsgen.py",
             "read": read, "releases": dict(sorted(releases.items()))}  # fmt: skip
    return json.dumps(table, indent=1, sort_keys=True) + "\n"


def main(argv: list[str]) -> None:
    """``SOURCES_DIR READ_DATE``: ``sources.json`` maps each version to its two files and
    URLs (``{"1.2.1": {"llm_args": [file, url], "llm": [file, url]}}``)."""
    root, read = Path(argv[0]), argv[1]
    index = json.loads((root / "sources.json").read_text())
    releases = {
        version: release_entry(root / row["llm_args"][0], row["llm_args"][1],
                               root / row["llm"][0], row["llm"][1])
        for version, row in index.items()
    }  # fmt: skip
    sys.stdout.write(render(releases, read))


if __name__ == "__main__":
    main(sys.argv[1:])
