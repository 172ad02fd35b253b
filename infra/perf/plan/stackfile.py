"""Round-trip edits of ``Pulumi.<stack>.yaml``: set config keys, keep comments and order.

ruamel.yaml's round-trip mode keeps every comment, the key order and the quoting of values it
does not touch; a key the file lacks is appended at the end of ``config:``. The file is
replaced atomically, so a failure leaves the old file whole.
"""

from __future__ import annotations

import difflib
import io
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infra.config import MAX_STACK_FILE_BYTES
from tdk import bounded
from tdk.errors import ConfigError

TARGET_KEY = "target"


@dataclass
class StackFile:
    """A stack file loaded for editing; ``project`` prefixes the kit's own keys."""

    path: Path
    text: str
    document: Any
    project: str
    newline: str = "\n"  # the file's own line ending, kept on write

    @property
    def config(self) -> Any:
        return self.document["config"]

    def get(self, key: str, default: Any = None) -> Any:
        """``project:key`` (or a namespaced key such as ``aws:region`` as given)."""
        full = key if ":" in key else f"{self.project}:{key}"
        return self.config.get(full, default)

    def set(self, key: str, value: Any) -> None:
        self.config[f"{self.project}:{key}"] = value

    def render(self) -> str:
        stream = io.StringIO()
        _yaml().dump(self.document, stream)
        return stream.getvalue()

    def diff(self) -> str:
        return "".join(
            difflib.unified_diff(
                self.text.splitlines(keepends=True),
                self.render().splitlines(keepends=True),
                f"a/{self.path.name}",
                f"b/{self.path.name}",
            )
        )

    def write(self) -> None:
        """Replace the file atomically with the edited document, keeping its line endings;
        through a symlink, the file it points at is replaced and the link stays."""
        rendered = self.render()
        target = self.path.resolve()
        try:
            handle, temp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        except OSError as exc:
            raise ConfigError(
                f"--write-stack {self.path}: cannot write in {target.parent} "
                f"({exc.strerror or exc})",
                hint="make the folder writable, or run plan without --write-stack",
            ) from None
        try:
            with os.fdopen(handle, "w", encoding="utf-8", newline=self.newline) as stream:
                stream.write(rendered)
            os.chmod(temp, target.stat().st_mode & 0o777)
            os.replace(temp, target)
        except BaseException as exc:
            Path(temp).unlink(missing_ok=True)
            if isinstance(exc, OSError):
                raise ConfigError(
                    f"--write-stack {self.path}: cannot replace it ({exc.strerror or exc})",
                    hint="check the file's permissions",
                ) from None
            raise
        self.text = rendered


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096  # never re-wrap a long value
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


def load_stack(path: Path) -> StackFile:
    """Load ``Pulumi.<stack>.yaml``; its project is the prefix of its ``...:target`` key."""
    try:  # a regular file, capped; nesting, aliases and text checked before ruamel reads it
        raw = bounded.read_document(path, "check --write-stack", limit=MAX_STACK_FILE_BYTES)
        bounded.parse_yaml(raw, str(path), "fix the file")
        text = raw.decode("utf-8").replace("\r\n", "\n")
    except bounded.DocumentError as exc:
        raise ConfigError(exc.message, hint=exc.hint) from None
    try:
        document = _yaml().load(text)
    except Exception as exc:  # ruamel raises many YAMLError subclasses
        raise ConfigError(f"{path} is not YAML: {exc}", hint="fix the file") from exc
    config = document.get("config") if isinstance(document, dict) else None
    if not isinstance(config, dict):
        raise ConfigError(f"{path}: no 'config:' mapping", hint="is this a Pulumi stack file?")
    projects = [key.rsplit(":", 1)[0] for key in config if str(key).endswith(f":{TARGET_KEY}")]
    if len(projects) != 1:
        raise ConfigError(
            f"{path}: expected one '<project>:target' key, found {len(projects)}",
            hint="set e.g. triton-deploy-kit:target: sagemaker",
        )
    newline = "\r\n" if b"\r\n" in raw else "\n"
    return StackFile(path, text, document, projects[0], newline)
