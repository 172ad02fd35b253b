"""``snapshot(root)``: every path under a directory with its type and content digest, so a test
can assert that a command wrote nothing and deleted nothing (``assert after == before``)."""

from __future__ import annotations

import hashlib
import stat
from pathlib import Path

Tree = dict[str, str]


def snapshot(root: Path) -> Tree:
    """Relative path -> ``dir``, ``link:<target>``, ``other`` or ``file:<sha256>``; {} if absent."""
    tree: Tree = {}
    if not root.exists():
        return tree
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        mode = path.lstat().st_mode
        if stat.S_ISLNK(mode):
            tree[rel] = f"link:{path.readlink()}"
        elif stat.S_ISDIR(mode):
            tree[rel] = "dir"
        elif stat.S_ISREG(mode):
            tree[rel] = "file:" + hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            tree[rel] = "other"
    return tree


def changes(before: Tree, after: Tree) -> dict[str, list[str]]:
    """What differs between two snapshots: added, removed and changed paths (empty lists when
    nothing changed), for readable assertion failures."""
    return {
        "added": sorted(after.keys() - before.keys()),
        "removed": sorted(before.keys() - after.keys()),
        "changed": sorted(k for k in before.keys() & after.keys() if before[k] != after[k]),
    }
