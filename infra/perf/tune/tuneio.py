"""What ``tdk tune`` reads and writes: every input and output checked before anything is
measured, and the tuned config written as a textual edit of the user's ``config.pbtxt``."""

from __future__ import annotations

import contextlib
import difflib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infra.perf.tune.pbtxt import PatchRefused, patch_text
from packager.config import CONFIG_NAME, dump_config, load_config
from tdk.errors import UsageError, ValidationFailed

TUNE_HINT = "e.g. tdk tune model_repos/samples/image_classifier --latency-budget-ms 50"


def read_model(model_dir: Path) -> Any:
    """The model's parsed config, after ``tdk validate``'s rules passed on the whole model."""
    from packager.validate.runner import require_valid

    if not (model_dir / CONFIG_NAME).is_file():
        raise UsageError(
            f"{model_dir}: no {CONFIG_NAME} (tdk tune takes one model directory)", hint=TUNE_HINT
        )
    try:
        require_valid([model_dir])
    except ValidationFailed as exc:
        raise ValidationFailed(
            f"{model_dir} does not validate; nothing was measured:\n{exc.message}",
            exc.findings,
            hint=f"fix it first (`tdk validate {model_dir}` lists every finding)",
        ) from exc
    return load_config(model_dir / CONFIG_NAME)


def check_out(model_dir: Path, out: Path) -> None:
    """Refuse an ``--out`` that overlaps the model, already holds it, or cannot be written."""
    model, target = model_dir.resolve(), out.resolve()
    hint = "choose an --out outside the model, e.g. --out ./tuned"
    if target == model or model in target.parents:
        raise UsageError(f"--out {out} is inside the model {model_dir}", hint=hint)
    if target in model.parents:
        raise UsageError(f"--out {out} holds the model {model_dir} itself", hint=hint)
    if (target / model_dir.name).exists() or (target / model_dir.name).is_symlink():
        raise UsageError(
            f"--out: {target / model_dir.name} already exists",
            hint="choose another --out or pass --write",
        )
    existing = target
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise UsageError(f"--out {out}: {existing} is not a directory", hint=hint)
    if not _writable(existing):
        raise UsageError(f"--out {out}: {existing} is not writable", hint=hint)


def check_write(model_dir: Path) -> None:
    """``--write`` replaces ``config.pbtxt`` through a temporary file next to it."""
    if not _writable(model_dir) or not os.access(model_dir / CONFIG_NAME, os.R_OK):
        raise UsageError(
            f"--write: {model_dir} is not writable", hint="use --out DIR to write a copy instead"
        )


def _writable(directory: Path) -> bool:
    try:
        read_only = bool(os.statvfs(directory).f_flag & os.ST_RDONLY)
    except OSError:
        return False
    return not read_only and os.access(directory, os.W_OK | os.X_OK)


@dataclass(frozen=True)
class Written:
    """Where the tuned config went and the diff of its ``config.pbtxt``."""

    path: Path
    diff: str


def tuned_text(model_dir: Path, tuned: Any) -> tuple[str, str]:
    """(before, after): the config text as shipped and as edited to hold ``tuned``.

    Only the fields that change are rewritten; when the edit cannot be proven equal to
    ``tuned`` nothing is written and the full diff is shown instead."""
    before = (model_dir / CONFIG_NAME).read_text(encoding="utf-8")
    try:
        return before, patch_text(before, tuned)
    except PatchRefused as exc:
        diff = _diff(before, dump_config(tuned), model_dir / CONFIG_NAME, model_dir / CONFIG_NAME)
        raise PatchRefused(
            f"{model_dir / CONFIG_NAME}: cannot edit it keeping its comments ({exc.message}); "
            f"nothing was written. The change:\n{diff}",
            hint="apply the diff by hand",
        ) from exc


def write_tuned(model_dir: Path, tuned: Any, out: Path | None) -> Written:
    """The model with the ``tuned`` config: a new model directory ``out/<model>`` (a repository
    Triton can load), or ``model_dir`` in place (``out`` None). The result is validated with
    ``tdk validate``'s rules before it lands."""
    from packager.repository import ModelDir
    from packager.validate.runner import require_valid

    before, after = tuned_text(model_dir, tuned)
    config_path = model_dir / CONFIG_NAME
    if out is None:
        _valid(model_dir, lambda: require_valid([ModelDir(model_dir, tuned)]))
        fd, staged = tempfile.mkstemp(prefix=".tdk-tune-", dir=model_dir)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(after)
            os.chmod(staged, config_path.stat().st_mode & 0o777)
            os.replace(staged, config_path)
        finally:
            Path(staged).unlink(missing_ok=True)
        return Written(model_dir, _diff(before, after, config_path, config_path))
    destination = out / model_dir.name
    created = [p for p in (out, *out.parents) if not p.exists()]
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".tdk-tune-", dir=out))
    try:
        candidate = staging / model_dir.name
        shutil.copytree(model_dir, candidate, symlinks=True)
        (candidate / CONFIG_NAME).write_text(after, encoding="utf-8")
        _valid(model_dir, lambda: require_valid([candidate]))
        candidate.rename(destination)
        created = []
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        for directory in created:  # only the (empty) directories made for this write
            with contextlib.suppress(OSError):
                directory.rmdir()
    return Written(destination, _diff(before, after, config_path, destination / CONFIG_NAME))


def _valid(model_dir: Path, check: Any) -> None:
    try:
        check()
    except ValidationFailed as exc:
        raise ValidationFailed(
            f"the tuned config for {model_dir} does not validate; nothing was written:\n"
            f"{exc.message}",
            exc.findings,
            hint="narrow the search space (e.g. --max-batch-sizes) to what the model allows",
        ) from exc


def _diff(before: str, after: str, old: Path, new: Path) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True), after.splitlines(keepends=True), str(old), str(new)
        )
    )
