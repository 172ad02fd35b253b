"""The endpoint's work directory: the only place it ever deletes anything.

Every removal goes through ``remove``, which resolves the path and refuses anything that is not
strictly inside the work directory. A work directory the endpoint did not create (no marker file)
and that holds something is refused as a whole, so ``--workdir ~`` cannot wipe ``~/repository``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from infra.triton_runtime.private import private_dir
from tdk.errors import ConfigError, UnsafeInputError

MARKER = ".tdk-local-endpoint"


def claim(root: Path, adopt: bool = False) -> Path:
    """Create ``root`` private to this user (or accept one an endpoint created before); its
    resolved path.

    ``adopt``: the directory is the endpoint's own default (``<state dir>/local-<name>``), taken
    even without the marker (endpoints of earlier versions wrote none).
    """
    resolved = private_dir(root).resolve()
    marker = resolved / MARKER
    if not adopt and not marker.is_file() and any(resolved.iterdir()):
        raise ConfigError(
            f"{resolved} is not empty and was not created by a tdk local endpoint",
            hint="pass an empty or new --workdir (the endpoint deletes its repository/ and "
            "staging/ there)",
        )
    marker.touch()
    return resolved


def inside(root: Path, path: Path) -> Path:
    """``path`` resolved, when it lies strictly inside ``root``; UnsafeInputError otherwise."""
    base = root.resolve()
    target = path.resolve()
    if target == base or not target.is_relative_to(base):
        raise UnsafeInputError(
            f"refusing to delete {path}: it is not inside the endpoint's work dir {base}",
            hint="model names in the manifest must be plain names (re-package the release)",
        )
    return target


def remove(root: Path, path: Path) -> None:
    """Delete ``path`` (a tree or a file) after checking it is inside ``root``."""
    target = inside(root, path)
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target, ignore_errors=True)
    else:
        target.unlink(missing_ok=True)


#: marks a pod's model directory (``--model-dir``) as the front's: cleared at each start
SHARED_MARKER = ".tdk-front-models"


def clear_shared(models: Path) -> None:
    """Empty the model directory the front shares with the pod's Triton (created readable by
    Triton's user, 0755), keeping only the marker. A directory that holds something and no
    marker was not the front's: refused whole, so ``--model-dir ~`` cannot wipe a home."""
    models.mkdir(mode=0o755, parents=True, exist_ok=True)
    marker = models / SHARED_MARKER
    if not marker.is_file() and any(models.iterdir()):
        raise ConfigError(
            f"--model-dir {models} is not empty and was not created by `tdk front serve`",
            hint="give the front and Triton an empty directory (the pod's emptyDir)",
        )
    for child in models.iterdir():
        if child.name != SHARED_MARKER:
            remove(models, child)
    marker.touch()
