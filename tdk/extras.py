"""The packages of one of pyproject.toml's extras, one a line: what `make extra EXTRA=NAME`
installs into .venv beside the kit, without reinstalling the kit (a reinstall under a running
local endpoint removed the files its next model load reads)."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def requirements(name: str, pyproject: Path = PYPROJECT) -> list[str]:
    """The requirement strings of extra ``name``; KeyError naming the extras when unknown."""
    extras = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    if name not in extras:
        raise KeyError(f"no extra {name!r} in {pyproject.name}: {', '.join(sorted(extras))}")
    return [str(requirement) for requirement in extras[name]]


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m tdk.extras NAME", file=sys.stderr)
        return 2
    try:
        print("\n".join(requirements(argv[0])))
    except KeyError as exc:
        print(f"make extra: {exc.args[0]}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
