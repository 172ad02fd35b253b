"""Reads what each vLLM engine argument accepts from a release's wheel, without importing it:
the types its ``EngineArgs`` annotation allows, the choices of its ``Literal`` aliases (or of
the ``--flag``'s ``choices=[...]`` in ``add_cli_args``, as the 0.5-0.9 wheels write them), and
the bounds its config dataclass field declares (``Field(ge=1)``, ``Field(gt=0, le=1)``).

    python -m packager.validate.engines.vllm_argsgen --values WHEELS/vllm-*.whl \\
        > packager/validate/engines/vllm_values.json
"""

from __future__ import annotations

import ast
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: the file and the dataclasses whose fields ``AsyncEngineArgs(**model_json)`` takes
ARG_UTILS = "vllm/engine/arg_utils.py"
CLASSES = ("EngineArgs", "AsyncEngineArgs")

#: annotation names -> the JSON kinds they accept (anything else: not checked)
_KINDS = {
    "str": "str", "int": "int", "float": "float", "bool": "bool", "dict": "dict",
    "Dict": "dict", "list": "list", "List": "list", "tuple": "list", "Tuple": "list",
    "None": "none",
}  # fmt: skip
_BOUNDS = ("gt", "ge", "lt", "le")
#: a pseudo-kind: the release lowercases the string before comparing it with the choices
LOWERCASED = "lowercased"
#: files whose module-level ``Literal`` aliases and config dataclasses the fields refer to
_SOURCES = ("vllm/config", "vllm/engine/arg_utils.py", "/quantization/__init__.py",
            "/model_loader/__init__.py")  # fmt: skip
#: where each release lists its quantization methods: ``QuantizationMethods = Literal[...]``
#: (0.9 on), ``QUANTIZATION_METHODS: List[str] = [...]`` (0.6-0.8), or the keys of
#: ``QUANTIZATION_METHODS`` / ``_QUANTIZATION_CONFIG_REGISTRY`` (0.4-0.5); ``ModelConfig``
#: refuses any other ``quantization`` ("Unknown quantization method") unless a plugin
#: registered it (``register_quantization_config``), which the Triton backend does not load
QUANTIZATION_INIT = "vllm/model_executor/layers/quantization/__init__.py"
_METHOD_LISTS = ("QuantizationMethods", "QUANTIZATION_METHODS", "_QUANTIZATION_CONFIG_REGISTRY")


@dataclass(frozen=True)
class ValueSpec:
    """What one argument accepts: JSON kinds ("any" when the annotation names a type JSON
    cannot carry), string choices (empty: any string), numeric bounds."""

    kinds: tuple[str, ...]
    choices: tuple[str, ...]
    bounds: tuple[tuple[str, float], ...]

    def as_json(self) -> dict[str, Any]:
        """The argument's row in ``vllm_values.json``."""
        bounds = dict(self.bounds)
        return {"kinds": list(self.kinds), "choices": list(self.choices), "bounds": bounds}


def _literal(node: ast.expr, aliases: dict[str, tuple[str, ...]]) -> tuple[str, ...] | None:
    """The strings of ``Literal["a", "b"]`` (nested aliases resolved), None if not one."""
    if not (isinstance(node, ast.Subscript) and _name(node.value) == "Literal"):
        return None
    items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    found: list[str] = []
    for item in items:
        if isinstance(item, ast.Constant) and isinstance(item.value, str):
            found.append(item.value)
        elif isinstance(item, ast.Name) and item.id in aliases:
            found += aliases[item.id]
        else:
            return None
    return tuple(found)


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Constant) and node.value is None:
        return "None"
    return ""


def _walk(node: ast.expr, aliases: dict[str, tuple[str, ...]]) -> tuple[set[str], set[str]]:
    """(kinds, choices) an annotation allows; kind "any" for a type JSON cannot be checked
    against (``torch.dtype``, a config class, a string annotation)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = _walk(node.left, aliases), _walk(node.right, aliases)
        return left[0] | right[0], left[1] | right[1]
    literal = _literal(node, aliases)
    if literal is not None:
        return set(), set(literal)
    name = _name(node)
    if name in aliases:
        return set(), set(aliases[name])
    if isinstance(node, ast.Subscript):
        outer = _name(node.value)
        args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if outer in ("Optional", "Union"):
            kinds: set[str] = {"none"} if outer == "Optional" else set()
            choices: set[str] = set()
            for arg in args:
                more = _walk(arg, aliases)
                kinds, choices = kinds | more[0], choices | more[1]
            return kinds, choices
        if outer in _KINDS:
            return {_KINDS[outer]}, set()
    if name in _KINDS:
        return {_KINDS[name]}, set()
    return {"any"}, set()


def _aliases(trees: list[ast.Module]) -> dict[str, tuple[str, ...]]:
    found: dict[str, tuple[str, ...]] = {}
    for _ in range(2):  # an alias made of aliases resolves on the second pass
        for tree in trees:
            for node in tree.body:
                target = (
                    node.targets[0]
                    if isinstance(node, ast.Assign)
                    else getattr(node, "target", None)
                )
                value = getattr(node, "value", None)
                if isinstance(target, ast.Name) and value is not None:
                    literal = _literal(value, found)
                    if literal is not None:
                        found[target.id] = literal
    return found


def _field_bounds(trees: list[ast.Module]) -> dict[str, tuple[tuple[str, float], ...]]:
    """Field name -> bounds of ``name: T = Field(..., ge=1)`` in any class body; a name two
    classes bound differently is left out."""
    found: dict[str, tuple[tuple[str, float], ...] | None] = {}
    for tree in trees:
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            for item in cls.body:
                if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
                    continue
                call = item.value
                if not (isinstance(call, ast.Call) and _name(call.func) == "Field"):
                    continue
                bounds = tuple(
                    (k.arg, float(k.value.value))
                    for k in call.keywords
                    if k.arg in _BOUNDS
                    and isinstance(k.value, ast.Constant)
                    and isinstance(k.value.value, int | float)
                )
                if bounds:
                    name = item.target.id
                    found[name] = bounds if found.get(name, bounds) == bounds else None
    return {name: bounds for name, bounds in found.items() if bounds is not None}


def _cli_choices(tree: ast.Module) -> dict[str, tuple[str, ...]]:
    """``add_argument('--kv-cache-dtype', ..., choices=['auto', 'fp8'])`` -> kv_cache_dtype."""
    found: dict[str, tuple[str, ...]] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _name(node.func) == "add_argument" and node.args):
            continue
        flag = node.args[0]
        choices = next((k.value for k in node.keywords if k.arg == "choices"), None)
        if not (isinstance(flag, ast.Constant) and isinstance(choices, ast.List | ast.Tuple)):
            continue
        values = [
            e.value
            for e in choices.elts
            if isinstance(e, ast.Constant) and isinstance(e.value, str)
        ]
        if values and len(values) == len(choices.elts):
            found[str(flag.value).lstrip("-").replace("-", "_")] = tuple(values)
    return found


def _strings(node: ast.expr | None) -> tuple[str, ...] | None:
    """The strings of a list literal, or the string keys of a dict literal (None otherwise)."""
    items = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", None)
    if not isinstance(node, ast.List | ast.Dict) or items is None:
        return None
    found = [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]
    return tuple(found) if found and len(found) == len(items) else None


def quantization_methods(tree: ast.Module) -> tuple[str, ...]:
    """The methods a release's quantization package lists (empty when it lists none)."""
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        if not (isinstance(target, ast.Name) and target.id in _METHOD_LISTS):
            continue
        value = getattr(node, "value", None)
        found = _literal(value, {}) if value is not None else None
        found = found or _strings(value)
        if found:
            return tuple(sorted(set(found)))
    return ()


def _lowercases_quantization(trees: list[ast.Module]) -> bool:
    """Whether ``ModelConfig`` lowercases ``quantization`` before checking it (vLLM up to
    0.9.0.1: ``self.quantization = self.quantization.lower()``)."""
    return any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "lower"
        and _name(node.func.value) == "quantization"
        for tree in trees
        for node in ast.walk(tree)
    )


def read_values(path: Path) -> dict[str, ValueSpec]:
    """Argument name -> what it accepts, for one vLLM wheel."""
    with zipfile.ZipFile(path) as wheel:
        names = [n for n in wheel.namelist() if n.endswith(".py") and any(s in n for s in _SOURCES)]
        trees = {n: ast.parse(wheel.read(n).decode("utf-8")) for n in names}
    aliases = _aliases(list(trees.values()))
    bounds = _field_bounds(list(trees.values()))
    cli = _cli_choices(trees[ARG_UTILS])
    configs = [tree for name, tree in trees.items() if "vllm/config" in name]
    if QUANTIZATION_INIT in trees and (methods := quantization_methods(trees[QUANTIZATION_INIT])):
        cli["quantization"] = methods  # "| str" in the annotation is for plugins only
    specs: dict[str, ValueSpec] = {}
    for node in trees[ARG_UTILS].body:
        if not (isinstance(node, ast.ClassDef) and node.name in CLASSES):
            continue
        for item in node.body:
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                name = item.target.id
                kinds, choices = _walk(item.annotation, aliases)
                listed = name == "quantization" or not choices  # its methods list wins
                if listed and name in cli and kinds <= {"str", "none"}:
                    choices, kinds = set(cli[name]), kinds - {"str"}
                    if name == "quantization" and _lowercases_quantization(configs):
                        kinds.add(LOWERCASED)
                ordered = tuple(sorted(kinds)) if "any" not in kinds else ("any",)
                specs.setdefault(
                    name, ValueSpec(ordered, tuple(sorted(choices)), bounds.get(name, ()))
                )
    return specs
