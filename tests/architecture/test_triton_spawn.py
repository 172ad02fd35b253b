"""Only the launcher starts ``tritonserver`` (issue 47 item 1): every Triton the kit starts goes
through ``infra/triton_runtime`` (the repository key off its command line, namespaces where the
kernel allows, dead with its parent). A script that spawned the binary itself (as
bench/gpu_server/triton.py did) ran an unrestricted Triton that outlived it.

The check reads every Python file outside tests/ (whose stand-ins play a pod's Triton, run by
someone else): a call that starts a process (subprocess, asyncio, os.exec*/spawn*/system,
pty) may not be given a command naming the binary: a string whose path ends in ``tritonserver``
or a runtime's ``.server``, directly or through a variable assigned from one in the same scope.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: the modules that may start Triton, and why
LAUNCHERS = {
    "infra/triton_runtime/netns.py": "the launcher: it starts the command the front hands it",
}
SKIPPED = ("tests", "node_modules", "__pycache__")
_SPAWNS = re.compile(
    r"(Popen|run|call|check_call|check_output|create_subprocess_exec|create_subprocess_shell"
    r"|exec[lv]p?e?|spawn[lv]p?e?|posix_spawnp?|system|popen|spawn)"
)
_MODULES = ("subprocess", "asyncio", "os", "pty")
_BINARY = re.compile(r"(?:^|[/\s])tritonserver(?:$|\s)")


def _names_binary(node: ast.AST, tainted: set[str]) -> bool:
    for part in ast.walk(node):
        text = part.value if isinstance(part, ast.Constant) else None
        if isinstance(text, str) and _BINARY.search(text):
            return True
        if isinstance(part, ast.Attribute) and part.attr == "server":
            return True
        if isinstance(part, ast.Name | ast.Attribute) and ast.unparse(part) in tainted:
            return True
    return False


def _is_spawn(call: ast.Call, direct: set[str]) -> bool:
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return func.value.id in _MODULES and bool(_SPAWNS.fullmatch(func.attr))
    return isinstance(func, ast.Name) and func.id in direct


def _scopes(tree: ast.Module) -> Iterator[list[ast.stmt]]:
    yield tree.body
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node.body


def _tainted(body: list[ast.stmt]) -> set[str]:
    """Names (and attributes) assigned, in this scope, from something naming the binary."""
    tainted: set[str] = set()
    while True:
        before = len(tainted)
        for stmt in body:
            for node in ast.walk(stmt):
                value = getattr(node, "value", None)
                targets = getattr(node, "targets", None) or [getattr(node, "target", None)]
                assigns = isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign)
                if assigns and value is not None and _names_binary(value, tainted):
                    tainted |= {ast.unparse(t) for t in targets if t is not None}
        if len(tainted) == before:
            return tainted


def spawns_of_triton(source: str) -> list[int]:
    """The lines of ``source`` that start a process whose command names Triton's binary."""
    tree = ast.parse(source)
    direct = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module in _MODULES
        for alias in node.names
        if _SPAWNS.fullmatch(alias.name)
    }
    lines: set[int] = set()
    for body in _scopes(tree):
        tainted = _tainted(body)
        for stmt in body:
            for node in ast.walk(stmt):
                if isinstance(node, ast.Call) and _is_spawn(node, direct):
                    argv = [*node.args, *(k.value for k in node.keywords if k.arg != "input")]
                    if any(_names_binary(arg, tainted) for arg in argv):
                        lines.add(node.lineno)
    return sorted(lines)


def _sources() -> Iterator[Path]:
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in SKIPPED]
        yield from (Path(folder, name) for name in files if name.endswith(".py"))


def test_only_the_launcher_spawns_tritonserver() -> None:
    found = {
        f"{path.relative_to(ROOT)}:{line}"
        for path in _sources()
        if str(path.relative_to(ROOT)) not in LAUNCHERS
        for line in spawns_of_triton(path.read_text(encoding="utf-8"))
    }
    assert found == set(), (
        f"{sorted(found)} start tritonserver themselves: start it with "
        "infra.triton_runtime.runtime.TritonProcess (its launcher keeps the key off the "
        "command line, isolates it and ties it to its parent)"
    )
    assert all((ROOT / launcher).is_file() for launcher in LAUNCHERS)


CASES = {  # source -> whether it spawns Triton itself
    # bench/gpu_server/triton.py before the fix: a command list, then Popen
    "import subprocess\ndef start(self):\n    command = [str(self.runtime / 'bin' / "
    "'tritonserver'), '--x']\n    command += ['--y']\n    self.proc = subprocess.Popen("
    "command, start_new_session=True)\n": True,
    "import subprocess\nsubprocess.run(['tritonserver', '--model-repository=/m'])\n": True,
    "from subprocess import Popen as P\nP([str(find_runtime().server), '--x'])\n": True,
    "import asyncio\nasync def f(rt):\n    cmd = [rt.server]\n    argv = [*cmd, '--y']\n"
    "    await asyncio.create_subprocess_exec(*argv)\n": True,
    "import os\nos.execv('/opt/tritonserver/bin/tritonserver', ['tritonserver'])\n": True,
    "import os\nos.system('tritonserver --model-repository=/m &')\n": True,
    # the kit's way: the launcher gets Triton's command over a socket, not on its argv
    "import asyncio\nasync def f(link, cmd):\n    link.send_command(cmd, [], [])\n"
    "    await asyncio.create_subprocess_exec(sys.executable, '-I', 'netns.py')\n": False,
    "import subprocess\nsubprocess.run(['kubectl', 'apply', '-f', 'triton.yaml'])\n": False,
    "import subprocess\nimage = 'nvcr.io/nvidia/tritonserver:25.09-py3'\n"
    "subprocess.run(['crane', 'digest', image])\n": False,
    "import subprocess\nsubprocess.run(['pgrep', '-f', 'x'], input='tritonserver')\n": False,
}


def test_the_check_finds_a_direct_spawn_and_only_that() -> None:
    assert {source: bool(spawns_of_triton(source)) for source in CASES} == CASES
