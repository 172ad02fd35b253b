"""``tdk``: wires the command groups and maps every TdkError to a message and an exit code."""

from __future__ import annotations

import functools
import importlib
import os
import signal
import sys
from typing import Any

import typer
from typer.core import TyperGroup

import cli
from cli.help import use_user_words, whole_option_names
from cli.output import Output
from packager import __version__
from tdk.errors import TdkError

if cli.BEFORE_LOADING is not None:
    signal.signal(signal.SIGINT, cli.BEFORE_LOADING)  # type: ignore[arg-type]


class _TdkGroup(TyperGroup):
    """Root group: help in the user's words; a TdkError anywhere below becomes a message, its
    hint and its exit code."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        use_user_words(self)

    def main(self, *args: Any, **kwargs: Any) -> Any:
        _deprecate_completion_options(self)
        if os.environ.get("NO_COLOR"):  # typer's own help and usage errors too
            from typer import rich_utils  # imported here: it costs a no-op command 50 ms

            rich_utils.COLOR_SYSTEM = None
        return super().main(*args, **kwargs)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        use_user_words(self)  # typer adds the completion options after __init__
        whole_option_names()
        super().format_help(ctx, formatter)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return super().parse_args(ctx, modernize(args))

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except TdkError as exc:
            if os.environ.get("TDK_DEBUG") == "1":
                raise
            Output().error(exc.message, exc.hint)
            ctx.exit(exc.exit_code)


#: old option spellings, accepted for one release with a warning: old -> new
DEPRECATED_OPTIONS: dict[str, str] = {
    "--endpoint-url": "--s3-endpoint-url",
    # one name for the latency target: tune's
    "--slo-ms": "--latency-budget-ms",
}
#: old spellings of one command group only: (group, old) -> new
DEPRECATED_IN: dict[tuple[str, str], str] = {
    # one name for the endpoint: `invoke --endpoint` names what `local up` starts
    ("local", "--name"): "--endpoint",
    # one name for one release (what `package` writes, the stack's releaseUrl): --release;
    # --store names a store that holds releases or the engine cache (`releases`, `build`)
    ("package", "--dest"): "--release",
    ("package", "--plans"): "--store",
    ("invoke", "--store"): "--release",
    ("bench", "--store"): "--release",
    ("local", "--store"): "--release",
}
#: an option value with a spelling of its own now: (group, option, value) -> the new option
DEPRECATED_VALUES: dict[tuple[str, str, str], str] = {
    # one JSON switch for every command: --json (validate's --format keeps sarif and github)
    ("validate", "--format", "json"): "--json",
}


#: the one completion instruction (README, "In your shell"); typer's own root options still
#: work for a release, hidden, and say to use it
COMPLETION = "tdk completion bash > ~/.local/share/bash-completion/completions/tdk"
DEPRECATED_ROOT_OPTIONS = ("--install-completion", "--show-completion")


def _deprecate_completion_options(group: TyperGroup) -> None:
    """Hide typer's ``--install-completion`` / ``--show-completion`` (added to the root after
    ``__init__``) and make each warn, naming ``tdk completion``, before it does its work."""
    for param in group.params:
        opt = next((o for o in param.opts if o in DEPRECATED_ROOT_OPTIONS), None)
        if opt is None or getattr(param, "hidden", True):
            continue
        param.hidden = True  # type: ignore[attr-defined]
        param.callback = _warn_then(opt, param.callback)


def _warn_then(opt: str, callback: Any) -> Any:
    def warned(ctx: Any, param: Any, value: Any) -> Any:
        if value and not ctx.resilient_parsing:
            from infra.targets import registry

            registry.on_deprecated(f"tdk {opt} is now `{COMPLETION}` (or zsh, fish)")
        return callback(ctx, param, value) if callback else value

    return warned


def _deprecated(old: str, new: str) -> str:
    from infra.targets import registry

    registry.on_deprecated(f"{old} is now {new}")
    return new


def _values(args: list[str]) -> list[str]:
    """``args`` with ``DEPRECATED_VALUES`` rewritten (``--format json`` -> ``--json``)."""
    group = args[0] if args else ""
    out: list[str] = []
    rest = iter(args)
    for arg in rest:
        name, eq, value = arg.partition("=")
        if not eq and (group, name) in {(g, o) for g, o, _ in DEPRECATED_VALUES}:
            value = next(rest, "")
            new = DEPRECATED_VALUES.get((group, name, value))
            out += [_deprecated(f"{name} {value}", new)] if new else [arg, value]
            continue
        new = DEPRECATED_VALUES.get((group, name, value)) if eq else None
        out.append(_deprecated(arg, new) if new else arg)
    return out


#: the generation bench's old spelling: ``tdk bench --prompt`` is ``tdk bench generate``
PROMPT_OPTIONS = ("--prompt", "--prompts")


def _bench_generate(args: list[str]) -> list[str]:
    """``bench --prompt ...`` (one command for two modes, before issue 50) as ``bench generate
    --prompt ...``, with a warning; ``tdk bench`` without a command is the tensor bench."""
    if args[:1] != ["bench"] or args[1:2] in (["generate"], ["tensors"]):
        return args
    if not {arg.partition("=")[0] for arg in args} & set(PROMPT_OPTIONS):
        return args
    _deprecated("tdk bench --prompt", "tdk bench generate --prompt")
    return ["bench", "generate", *args[1:]]


def modernize(args: list[str]) -> list[str]:
    """``args`` with the deprecated spellings replaced (each replacement warns once): the old
    option names, old ``--target`` values (the registry's ``DEPRECATED``) and the old
    spelling of the generation bench."""
    args = _bench_generate(_values(args))
    group = args[0] if args else ""
    out: list[str] = []
    target_value = False
    for arg in args:
        if target_value:
            target_value = False
            arg = _new_target(arg)
        elif arg == "--target":
            target_value = True
        elif arg.startswith("--target="):
            arg = "--target=" + _new_target(arg.removeprefix("--target="))
        name, eq, value = arg.partition("=")
        new = DEPRECATED_IN.get((group, name)) or DEPRECATED_OPTIONS.get(name)
        if new is not None:
            arg = _deprecated(name, new) + eq + value
        out.append(arg)
    return out


def _new_target(value: str) -> str:
    from infra.targets import registry

    if value in registry.DEPRECATED:
        return registry.get(value).name  # warns
    return value


#: command name -> (module, attribute): a function for a command, a Typer app for a group
COMMANDS: dict[str, tuple[str, str]] = {
    "import": ("cli.import_", "import_model"),
    "validate": ("cli.validate", "validate"),
    "package": ("cli.package", "package"),
    "releases": ("cli.releases", "releases"),
    "build": ("cli.build", "build"),
    "invoke": ("cli.invoke", "invoke"),
    "bench": ("cli.bench", "app"),
    "metrics": ("cli.metrics", "metrics"),
    "tune": ("cli.tune", "tune"),
    "plan": ("cli.plan", "plan"),
    "completion": ("cli.completion", "completion"),
    "local": ("cli.local", "app"),
    "front": ("cli.front", "app"),
    "endpoint": ("cli.endpoint", "app"),
    "render": ("cli.render", "app"),
    "doctor": ("cli.doctor", "doctor"),
}


def build_app(only: str | None = None) -> typer.Typer:
    """The ``tdk`` app with every command, or with ``only`` that one: a command imports just its
    own modules, so ``tdk package`` does not pay for numpy, rich.markdown and the clouds."""
    app = typer.Typer(
        name="tdk",
        cls=_TdkGroup,
        help="Triton Deploy Kit: validate, package, deploy and invoke Triton models anywhere.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
    )
    for name, (module, attr) in COMMANDS.items():
        if only is not None and name != only:
            continue
        value = getattr(importlib.import_module(module), attr)
        if isinstance(value, typer.Typer):
            app.add_typer(value, name=name)
        else:
            app.command(name)(value)
    app.callback(invoke_without_command=True)(_root)
    return app


def _root(
    version: bool = typer.Option(False, "--version", help="Print the version and exit."),
) -> None:
    if version:
        Output().text(f"tdk {__version__}")
        raise typer.Exit(0)


@functools.cache
def _full_app() -> typer.Typer:
    return build_app()


def __getattr__(name: str) -> Any:
    """``cli.main.app``: the whole app, built on first use (tests, completion, docs)."""
    if name == "app":
        return _full_app()
    raise AttributeError(name)


def main() -> None:
    """Console entry point: only the command named on the line is imported (all of them for
    the root's help and for shell completion)."""
    try:
        _main()
    except KeyboardInterrupt:  # before the command ran (its own Ctrl-C is click's "Aborted!")
        sys.stderr.write("\ninterrupted\n")
        sys.exit(130)


def _main() -> None:
    args = sys.argv[1:]
    only = args[0] if args and args[0] in COMMANDS else None
    try:
        app = build_app(only)
    except TdkError as exc:  # e.g. a target module in TDK_EXTRA_TARGETS that cannot load
        if not {"--help", "-h"} & set(args) and args:
            Output().error(exc.message, exc.hint)
            sys.exit(exc.exit_code)
        Output().warn(f"{exc.message} (showing help without the extra targets)")
        os.environ.pop("TDK_EXTRA_TARGETS", None)  # help still works: the builtin targets
        app = build_app(only)
    app(prog_name="tdk")
