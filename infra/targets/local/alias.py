"""A model loaded under a second Triton name while Triton still unloads it under its own.

A request for a model the front has just unloaded (the least recently used, for room) used to
wait for that unload to end before Triton's load began: a Python stub's finalize takes about a
second (issue 46's cold tail). Triton loads a model of another name at once, so such a load goes
under the model's alias, ``<name>~``: a directory of hard links to the extracted files with the
config renamed. The old instance's memory still counts until Triton reports it unavailable (the
unload's own name is polled), and the new one takes room of its own.

``~`` is not allowed in a release's model names (``packager.names``), so an alias never names
another model. Triton's answers name the model they served: the alias is renamed back in them
(``renamed``, ``Renamer``), so clients never see it. Only a served model without composing
models goes under an alias (an ensemble's steps are shared and unloaded with it).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from infra.targets.local import workdir
from infra.targets.local.upstream import UpstreamResponse
from packager.config import CONFIG_NAME, dump_config, load_config
from packager.manifest import ManifestModel

SUFFIX = "~"


def alias_of(entry: ManifestModel) -> str:
    """The second Triton name of ``entry``'s served model."""
    return entry.name + SUFFIX


def aliasable(entry: ManifestModel) -> bool:
    """Whether ``entry`` may load under its alias: one model directory, the served one."""
    return not entry.contains or tuple(entry.contains) == (entry.name,)


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:  # a filesystem without hard links
        shutil.copy2(source, target)


def make(repository: Path, entry: ManifestModel) -> str:
    """Write ``repository/<alias>``: the served model's files as hard links, its config with
    the alias as name (a new file: the original's links are not touched). The alias."""
    alias = alias_of(entry)
    source = workdir.inside(repository, repository / entry.name)
    target = workdir.inside(repository, repository / alias)
    workdir.remove(repository, target)  # one a crash left behind
    try:
        top = str(source)  # its config.pbtxt is written renamed instead

        def its_config(directory: str, names: list[str]) -> set[str]:
            return {CONFIG_NAME} if directory == top else set()

        shutil.copytree(source, target, copy_function=_link_or_copy, ignore=its_config)
        config = load_config(source / CONFIG_NAME)
        config.name = alias
        (target / CONFIG_NAME).write_text(dump_config(config))
    except BaseException:
        workdir.remove(repository, target)
        raise
    return alias


def remove(repository: Path, alias: str) -> None:
    """Delete ``repository/<alias>`` (its unload is done, or its load failed)."""
    if alias.endswith(SUFFIX):
        workdir.remove(repository, repository / alias)


def _names(alias: str, name: str) -> tuple[bytes, bytes]:
    return b'"model_name":"%s"' % alias.encode(), b'"model_name":"%s"' % name.encode()


def renamed(response: UpstreamResponse, alias: str, name: str) -> UpstreamResponse:
    """Triton's inference answer for ``alias`` as it reads for ``name``: ``model_name`` in its
    JSON (the JSON header of a binary answer, whose length header follows)."""
    old, new = _names(alias, name)
    body = response.body
    declared = response.headers.get("inference-header-content-length")
    size = int(declared) if declared is not None and declared.isdigit() else len(body)
    head, rest = body[:size], body[size:]
    if old in head:
        head = head.replace(old, new, 1)
    else:  # not in Triton's compact form: decoded and written again
        try:
            document = json.loads(head)
        except ValueError:
            return response
        if not isinstance(document, dict) or document.get("model_name") != alias:
            return response
        document["model_name"] = name
        head = json.dumps(document, separators=(",", ":")).encode()
    headers = dict(response.headers)
    if declared is not None:
        headers["inference-header-content-length"] = str(len(head))
    return UpstreamResponse(response.status, headers, head + rest)


class Renamer:
    """``renamed`` for a streamed answer (generate, generate_stream): each chunk with
    ``model_name`` renamed, the bytes that may begin one held back until the next chunk."""

    def __init__(self, alias: str, name: str) -> None:
        self.old, self.new = _names(alias, name)
        self.alias, self.name = alias.encode(), name.encode()
        self.held = b""

    def in_error(self, chunk: bytes) -> bytes:
        """A chunk of Triton's error answer (a short one): the alias named as the model."""
        return chunk.replace(self.alias, self.name)

    def feed(self, chunk: bytes) -> bytes:
        data = self.held + chunk
        pieces, at = [], 0
        while (found := data.find(self.old, at)) >= 0:
            pieces += [data[at:found], self.new]
            at = found + len(self.old)
        rest = data[at:]
        longest = min(len(self.old) - 1, len(rest))
        keep = next((k for k in range(longest, 0, -1) if rest.endswith(self.old[:k])), 0)
        self.held = rest[len(rest) - keep :] if keep else b""
        pieces.append(rest[: len(rest) - keep])
        return b"".join(pieces)

    def flush(self) -> bytes:
        held, self.held = self.held, b""
        return held
