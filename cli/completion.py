"""``tdk completion SHELL``: print the shell-completion script for bash, zsh, fish or PowerShell."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer
from typer._completion_shared import get_completion_script

from cli.output import Output


class Shell(StrEnum):
    bash = "bash"
    zsh = "zsh"
    fish = "fish"
    powershell = "powershell"


def completion(
    shell: Annotated[Shell, typer.Argument(help="The shell to complete in.")],
) -> None:
    """Print the completion script, e.g. `tdk completion bash >
    ~/.local/share/bash-completion/completions/tdk` (the folder bash-completion reads)."""
    script = get_completion_script(prog_name="tdk", complete_var="_TDK_COMPLETE", shell=shell.value)
    Output().text(script)
