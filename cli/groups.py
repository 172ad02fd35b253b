"""Option groups: options declared once, as the fields of a frozen dataclass, and reused by
every command that takes them.

Typer has no dataclass options (fastapi/typer#154): a command's options are its parameters.
``grouped`` fills that gap in a dozen lines: a command parameter whose type is an option group
(``@option_group``, a dataclass whose fields are ``Annotated`` typer options with defaults)
becomes that group's options in the command's signature, and the command receives the group
built from them. Each option is spelled once (its field), the command names the groups it
takes, and the group's own method builds the library's request object explicitly
(docs/cli.md says why this idiom and not a typer callback).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import fields, is_dataclass
from typing import Any, TypeVar, get_type_hints

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])
#: the class attribute marking a dataclass as an option group
MARK = "__option_group__"


def option_group(cls: type[T]) -> type[T]:
    """Mark the dataclass ``cls`` as an option group (its fields are typer options)."""
    if not is_dataclass(cls):
        raise TypeError(f"{cls.__name__}: an option group is a dataclass")
    setattr(cls, MARK, True)
    return cls


def grouped(command: F) -> F:
    """``command`` with each option-group parameter expanded into the group's options in its
    signature (what typer reads); called, it builds each group from them."""
    hints = get_type_hints(command, include_extras=True)
    params: list[inspect.Parameter] = []
    groups: dict[str, tuple[type, list[str]]] = {}
    for param in inspect.signature(command).parameters.values():
        kind = hints[param.name]
        if not getattr(kind, MARK, False):
            params.append(param.replace(annotation=kind, kind=inspect.Parameter.KEYWORD_ONLY))
            continue
        inner = get_type_hints(kind, include_extras=True)
        names = [f.name for f in fields(kind)]
        groups[param.name] = (kind, names)
        params += [
            inspect.Parameter(
                f.name, inspect.Parameter.KEYWORD_ONLY, annotation=inner[f.name], default=f.default
            )
            for f in fields(kind)
        ]
    taken = [p.name for p in params]
    clash = sorted({name for name in taken if taken.count(name) > 1})
    if clash:
        raise TypeError(f"{command.__name__}: option groups share {', '.join(clash)}")

    @functools.wraps(command)
    def run(**values: Any) -> Any:
        for name, (kind, names) in groups.items():
            values[name] = kind(**{field: values.pop(field) for field in names})
        return command(**values)

    run.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in params}
    return run  # type: ignore[return-value]
