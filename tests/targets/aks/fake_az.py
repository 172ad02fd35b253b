"""A stand-in for the Azure CLI's blob commands over a local folder, enforcing role conditions.

Blob storage is ``$FAKE_AZ_ROOT/<container>/<blob name>``; ``$FAKE_AZ_GRANTS`` is a JSON list of
role assignments ``{"actions": [...data actions...], "condition": str | null}``; a request is
allowed when one assignment has its data action and its condition allows it
(``tests/targets/aks/abac.py``). What each command sends, after azure-cli (read 2026-12-07):
``storage blob list --prefix`` is List Blobs with that prefix; ``storage blob download`` is Get
Blob on one path; ``storage blob download-batch`` lists the container with no prefix first
(``command_modules/storage/util.py`` ``collect_blob_objects``). Every call is appended to
``$FAKE_AZ_ROOT/calls.log``.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

from tests.targets.aks.abac import Request, allows

BLOBS = "Microsoft.Storage/storageAccounts/blobServices/containers/blobs"
READ = f"{BLOBS}/read"
PATH = f"@Resource[{BLOBS}:path]"
PREFIX = f"@Request[{BLOBS}:prefix]"


def _option(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


def _allowed(request: Request) -> bool:
    grants = json.loads(os.environ["FAKE_AZ_GRANTS"])
    return any(request.action in g["actions"] and allows(g["condition"], request) for g in grants)


def _deny(what: str) -> int:
    print(f"ERROR: AuthorizationPermissionMismatch: {what}", file=sys.stderr)
    return 1


def _names(root: Path, prefix: str) -> list[str]:
    found = (p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    return sorted(n for n in found if n.startswith(prefix))


def _list(container: Path, prefix: str | None) -> list[str] | None:
    attributes = {PREFIX: prefix} if prefix is not None else {}
    if not _allowed(Request(READ, "Blob.List", attributes)):
        return None
    return _names(container, prefix or "")


def _download(container: Path, name: str, file: str) -> int:
    if not _allowed(Request(READ, None, {PATH: name})):
        return _deny(f"read {name}")
    shutil.copyfile(container / name, file)
    return 0


def main(argv: list[str]) -> int:
    root = Path(os.environ["FAKE_AZ_ROOT"])
    with (root / "calls.log").open("a") as log:
        log.write(json.dumps(argv) + "\n")
    if argv[:1] == ["login"]:
        return 0
    container = root / str(_option(argv, "--container-name") or _option(argv, "--source"))
    if argv[:3] == ["storage", "blob", "list"]:
        names = _list(container, _option(argv, "--prefix"))
        if names is None:
            return _deny("list")
        print("\n".join(names))
        return 0
    if argv[:3] == ["storage", "blob", "download"]:
        return _download(container, str(_option(argv, "--name")), str(_option(argv, "--file")))
    if argv[:3] == ["storage", "blob", "download-batch"]:
        if _list(container, None) is None:
            return _deny("list (download-batch lists the container)")
        raise AssertionError("download-batch past its listing is not faked")
    raise AssertionError(f"az {argv} is not faked")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
