"""What ``tdk render k8s --out DIR`` wrote: a ledger per stack, so a re-render removes only its
own files, and never one a person wrote or has since edited.

``DIR/.tdk-render-<stack>.ledger`` (JSON without a .json/.yaml suffix, so `kubectl apply -f DIR`
skips it) lists each file the render wrote with its sha256; it is written last, after every
manifest, so an interrupted render keeps the previous ledger.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from tdk import bounded
from tdk.errors import UsageError

LEDGER_VERSION = 1
MAX_LEDGER_BYTES = 4 * 1024 * 1024  # a ledger lists file names and digests: a few KB per stack
_FILE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")  # what ``file_name`` writes


def ledger_path(out_dir: Path, stack: str) -> Path:
    return out_dir / f".tdk-render-{stack}.ledger"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_ledger(out_dir: Path, stack: str) -> dict[str, str]:
    """name -> sha256 of what the previous render of ``stack`` wrote ({} when none).

    Every name must be a plain file name directly in ``out_dir`` (what a render writes): a
    ledger is committed with GitOps output, so ``../x`` or ``/etc/x`` is refused before any
    file is touched.
    """
    path = ledger_path(out_dir, stack)
    if not path.is_file():
        return {}
    fix = "restore it from version control, or delete it and remove stale manifests yourself"
    try:
        data = bounded.load_json(path, fix, limit=MAX_LEDGER_BYTES)
        files = data["files"]
        entries = {str(name): str(digest) for name, digest in files.items()}
    except bounded.DocumentError as exc:
        raise UsageError(f"{path}: cannot read the render ledger ({exc.reason})", fix) from None
    except (KeyError, TypeError, AttributeError) as exc:
        raise UsageError(
            f"{path}: cannot read the render ledger ({exc.__class__.__name__}: {exc})"[:500],
            hint=fix,
        ) from None
    bad = sorted(name for name in entries if not _FILE_NAME.match(name))
    if bad:
        raise UsageError(
            f"{path}: the render ledger lists {bad[0]!r}"
            + (f" (and {len(bad) - 1} more)" if len(bad) > 1 else "")
            + f", not a file name inside {out_dir}; nothing was written or removed",
            hint=fix,
        )
    return entries


def write_atomic(path: Path, data: bytes) -> None:
    """``data`` at ``path`` through a temp file in the same folder and os.replace."""
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


@dataclass
class StaleFiles:
    """The files of the last render in ``out_dir`` this one no longer writes: to remove, or to
    keep (edited since)."""

    remove: list[Path] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)  # ours once, edited since: left in place


def check_writes(out_dir: Path, stack: str, contents: dict[str, bytes]) -> StaleFiles:
    """Check ``contents`` (name -> bytes) can be written without losing anyone's file.

    A file in the way that the last render did not write as it is now (a person's file, or one
    edited since) is refused, naming it, before anything is written.
    """
    previous = read_ledger(out_dir, stack)
    stale_files = StaleFiles()
    for name, data in contents.items():
        path = out_dir / name
        if path.is_symlink() or (path.exists() and not path.is_file()):
            raise UsageError(
                f"{path} is in the way (not a regular file)", hint="move it or choose another --out"
            )
        if not path.exists() or sha256(path) == hashlib.sha256(data).hexdigest():
            continue
        if previous.get(name) != sha256(path):
            raise UsageError(
                f"{path} exists and was not written by the last render of {stack} (or was "
                "edited since); tdk does not overwrite it",
                hint="move it away, or render into another --out",
            )
    for name, digest in sorted(previous.items()):
        path = out_dir / name
        if name in contents or not path.is_file() or path.is_symlink():
            continue
        (stale_files.remove if sha256(path) == digest else stale_files.kept).append(path)
    return stale_files


def commit(
    out_dir: Path, stack: str, contents: dict[str, bytes], stale_files: StaleFiles
) -> list[Path]:
    """Write ``contents``, remove the stale files ``stale_files`` names, then write the ledger."""
    paths = []
    for name, data in contents.items():
        path = out_dir / name
        write_atomic(path, data)
        paths.append(path)
    for stale in stale_files.remove:
        stale.unlink(missing_ok=True)
    ledger = {
        "version": LEDGER_VERSION,
        "stack": stack,
        "files": {name: hashlib.sha256(data).hexdigest() for name, data in contents.items()},
    }
    write_atomic(ledger_path(out_dir, stack), (json.dumps(ledger, indent=2) + "\n").encode())
    return paths
