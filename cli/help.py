"""Help text in the user's words: ``INTEGER``, ``TEXT``, ``PATH``, ``[a | b]``, nothing for flags.

Typer prints Python annotations (``<bool>``, ``<int range>``, ``<list[Path]>``) as metavars; the
root group swaps every parameter of the command tree for one that describes its value instead.
"""

from __future__ import annotations

import inspect
from enum import Enum
from pathlib import PurePath
from typing import Any, get_args, get_origin

from rich.table import Table
from rich.text import Text
from typer import _click as click
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

_WORDS: dict[type, str] = {int: "INTEGER", float: "FLOAT", str: "TEXT", bool: "BOOLEAN"}


def user_type(param: TyperArgument | TyperOption) -> str | None:
    """The value a user types, e.g. ``INTEGER`` or ``[json|sarif]``; ``None`` for a flag."""
    if isinstance(param, TyperOption) and (param.is_flag or param.count):
        return None
    desc = param.type_descriptor
    if desc.is_choice:
        values = [str(c.value if isinstance(c, Enum) else c) for c in desc.choices or ()]
        return choices_metavar(values)
    annotation: Any = desc.annotation
    while get_origin(annotation) in (list, tuple) and get_args(annotation):
        annotation = get_args(annotation)[0]
    if isinstance(annotation, type) and issubclass(annotation, PurePath):
        return "PATH"
    if desc.is_path or desc.is_file:
        return "PATH" if desc.is_path else "FILE"
    if isinstance(annotation, type):
        return _WORDS.get(annotation, annotation.__name__.upper())
    return "TEXT"


def choices_metavar(values: list[str]) -> str:
    """``[a | b | c]``: spaces around the bars, so a narrow help column wraps the list between
    two choices (``sagemaker | sagemaker-ic``), never inside one (``sagemaker-i`` ``c``)."""
    return "[" + " | ".join(values) + "]"


class _Option(TyperOption):
    def display_type_rich(self, ctx: click.Context) -> str | None:
        if self.metavar is not None:
            inner = self.metavar[1:-1] if self.metavar.startswith("[") else ""
            return choices_metavar(inner.split("|")) if "|" in inner else self.metavar
        return user_type(self)


class _Argument(TyperArgument):
    def display_type_rich(self, ctx: click.Context) -> str | None:
        return None if self.metavar is not None else user_type(self)  # no `PATH  PATH`

    def _usage_display_name(self) -> str:
        """One usage style, click's: ``SOURCE``, ``[MODEL_DIR]``, ``PATH...`` (typer 0.29 writes
        ``{SOURCE}``, ``[model_dir]``: braces and the Python name)."""
        name = (self.metavar or str(self.name or "")).upper()
        name = name if self.required else f"[{name}]"
        return f"{name}..." if self.nargs != 1 else name


class _HelpTable(Table):
    """typer's help tables with the option names kept whole: at 80 columns rich shrank every
    column, cutting names (``--hardware-compatibil…``); the type column wraps between choices,
    and the help column folds a word longer than itself instead of cutting it."""

    def add_row(self, *renderables: Any, **kwargs: Any) -> None:
        last_cell = renderables[-1] if renderables else None
        for part in getattr(last_cell, "renderables", [last_cell]):  # typer's Columns of Texts
            if isinstance(part, Text):
                part.overflow = "fold"
        super().add_row(*renderables, **kwargs)
        *names, _type, last = self.columns  # options: required mark, names, type, help
        for column in names if len(self.columns) > 3 else []:
            column.no_wrap = True
        last.overflow = "fold"


def whole_option_names() -> None:
    """Make typer's help (``typer.rich_utils``, imported only for help) use ``_HelpTable``."""
    from typer import rich_utils

    rich_utils.Table = _HelpTable  # type: ignore[misc]


class _Command(TyperCommand):
    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        whole_option_names()
        super().format_help(ctx, formatter)


class _Group(TyperGroup):
    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        whole_option_names()
        super().format_help(ctx, formatter)


def use_user_words(command: click.Command) -> None:
    """Give every parameter under ``command`` (help options included) user-word metavars, and
    every command below it help with whole option names."""
    if type(command) is TyperCommand:
        command.__class__ = _Command
    elif type(command) is TyperGroup:
        command.__class__ = _Group
    ctx = click.Context(command, **command.context_settings)
    help_option = command.get_help_option(ctx)
    for param in [*command.params, *([help_option] if help_option else [])]:
        if type(param) is TyperOption:
            param.__class__ = _Option
        elif type(param) is TyperArgument:
            param.__class__ = _Argument
    for sub in getattr(command, "commands", {}).values():
        if sub.short_help is None and sub.help:
            sub.short_help = one_paragraph(sub.help)
        use_user_words(sub)


def one_paragraph(help_text: str) -> str:
    """The first paragraph of ``help_text`` on one line: typer's command list keeps a
    docstring's line breaks, which broke lines at the docstring's width, not the terminal's."""
    return " ".join(inspect.cleandoc(help_text).split("\n\n")[0].split())
