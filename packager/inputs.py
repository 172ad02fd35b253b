"""What may enter a release, asked once for ``tdk package`` and ``tdk import``: regular files
and directories only, never a symbolic link (wherever it points), a special file, a name a
reader refuses or what this user cannot read; files are opened without following a link."""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tdk.bounded import open_regular
from tdk.errors import UnsafeInputError

COPY_CHUNK = 16 * 1024 * 1024
_NO_FOLLOW_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
INPUT_HINT = (
    "replace links with the files themselves, remove special files, rename what has a "
    "backslash or control character, and make every file readable (chmod u+r, and u+rx on "
    "directories)"
)


@dataclass(frozen=True)
class SourceFile:
    """A regular file of a model directory: its path relative to the model and on disk."""

    rel: str
    path: Path
    size: int
    executable: bool
    links: int = 1  # st_nlink: above 1, another name (maybe outside the repository) shares it
    inode: tuple[int, int] = (0, 0)  # (st_dev, st_ino): names of one file share it


def name_problem(name: str) -> str | None:
    """Why a file or directory name cannot be packaged (a reader refuses it), or None."""
    if "\\" in name:
        return "has a backslash in its name (Windows readers and the endpoint take it for a path)"
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
        return f"has a control character in its name ({name!r})"
    return None


def scan_model_dir(root: Path, skip: Sequence[str] = ()) -> tuple[list[str], list[SourceFile]]:
    """Directories and regular files under ``root``, sorted; refuses anything else.

    Symlinks (whether they stay inside the tree or not), fifos, sockets, devices, what this
    user cannot read and names a reader would refuse raise UnsafeInputError naming every
    offending path, so nothing unsafe enters an archive and nothing is silently left out.
    """
    dirs: list[str] = []
    files: list[SourceFile] = []
    problems: list[str] = []
    if root.is_symlink():
        problems.append(f"{root} is a symbolic link (to {os.readlink(root)})")
    elif not os.access(root, os.R_OK | os.X_OK):
        problems.append(f"{root} cannot be read (permission denied)")

    def unreadable(exc: OSError) -> None:
        problems.append(f"{exc.filename} cannot be read ({exc.strerror})")

    for current, subdirs, names in os.walk(root, onerror=unreadable, followlinks=False):
        base = Path(current)
        refused: set[str] = set()
        for name in sorted(subdirs + names):
            problem = _classify(root, base / name, skip, dirs, files)
            if problem:
                problems.append(problem)
                refused.add(name)
        subdirs[:] = [d for d in subdirs if d not in refused]  # links, unreadable: not entered
    if problems:
        raise UnsafeInputError(
            f"{root}: {len(problems)} entr{'y' if len(problems) == 1 else 'ies'} cannot be "
            "packaged:\n  " + "\n  ".join(problems),
            hint=INPUT_HINT,
        )
    return sorted(dirs), sorted(files, key=lambda f: f.rel)


def _classify(
    root: Path, path: Path, skip: Sequence[str], dirs: list[str], files: list[SourceFile]
) -> str | None:
    """Add ``path`` to ``dirs`` or ``files``, or say why it cannot be packaged."""
    rel = path.relative_to(root).as_posix()
    info = path.lstat()
    if stat.S_ISREG(info.st_mode) and rel in skip and not name_problem(path.name):
        return None
    problem = path_problem(path, info)
    if problem:
        return problem
    if stat.S_ISDIR(info.st_mode):
        dirs.append(rel)
    else:
        executable = bool(info.st_mode & 0o111)
        inode = (info.st_dev, info.st_ino)
        files.append(SourceFile(rel, path, info.st_size, executable, info.st_nlink, inode))
    return None


def path_problem(path: Path, info: os.stat_result | None = None) -> str | None:
    """Why ``path`` (``info``: its lstat) cannot enter a release, or None: a symbolic link
    (wherever it points), a special file, a name a reader refuses, or what this user cannot
    read. The one answer for ``tdk package`` and ``tdk import``."""
    info = path.lstat() if info is None else info
    bad_name = name_problem(path.name)
    if bad_name:
        return f"{path} {bad_name}"
    if stat.S_ISLNK(info.st_mode):
        return f"{path} is a symbolic link (to {os.readlink(path)})"
    if stat.S_ISDIR(info.st_mode):
        if not os.access(path, os.R_OK | os.X_OK):
            return f"{path} cannot be read (permission denied)"
    elif stat.S_ISREG(info.st_mode):
        if not os.access(path, os.R_OK):
            return f"{path} cannot be read (permission denied)"
    else:
        return f"{path} is not a regular file or directory"
    return None


def input_problem(base: Path, rel: str) -> str | None:
    """Why ``base/rel`` cannot enter a release: ``path_problem`` of every step below ``base``
    (a directory link on the way is refused as the file itself would be); None when each step
    is fine or one is missing (the caller says what is missing)."""
    current = base
    for part in Path(rel).parts:
        current = current / part
        try:
            problem = path_problem(current)
        except FileNotFoundError:
            return None
        if problem:
            return problem
    return None


def open_input(base: Path, rel: str) -> int:
    """A read-only descriptor of the regular file ``base/rel``, refused (UnsafeInputError) as
    ``input_problem`` says; every step is opened without following a link, so one swapped for
    a link after the check is refused too."""
    problem = input_problem(base, rel)
    if problem:
        raise UnsafeInputError(f"{base / rel} cannot be used: {problem}", hint=INPUT_HINT)
    *dirs, name = Path(rel).parts
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in dirs:
            step = os.open(part, _NO_FOLLOW_DIR, dir_fd=fd)
            os.close(fd)
            fd = step
        return open_regular(name, dir_fd=fd, follow=False)
    except OSError as exc:
        raise UnsafeInputError(
            f"{base / rel} cannot be read as a regular file ({exc.strerror or exc}); a step "
            "of it changed or is a link",
            hint=INPUT_HINT,
        ) from exc
    finally:
        os.close(fd)


def copy_input(base: Path, rel: str, dest: Path) -> None:
    """Copy ``base/rel`` (opened by ``open_input``) to the new file ``dest``."""
    with os.fdopen(open_input(base, rel), "rb") as source, dest.open("xb") as out:
        shutil.copyfileobj(source, out, COPY_CHUNK)


def outside_links(files: Sequence[SourceFile]) -> list[str]:
    """Files with more names than ``files`` holds: another name lies outside the inputs, and
    whatever is written through it is what would get packaged."""
    names: dict[tuple[int, int], int] = {}
    for f in files:
        names[f.inode] = names.get(f.inode, 0) + 1
    return [
        f"{f.path} has {f.links} hard links, {f.links - names[f.inode]} of them outside the "
        "models being packaged"
        for f in files
        if f.links > names[f.inode]
    ]
