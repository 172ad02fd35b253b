"""Switch a running local endpoint to another release (``tdk local switch``; issue 40 item 3).

Releases are immutable and kept in their store, so rolling back is switching to an earlier
one. The new release is verified first (its manifest read and checked, each archive present
in its store with the manifest's sha256): a bad or incomplete release is refused and the
endpoint keeps serving the one it has. Then the TargetModel table is swapped in one step of
the event loop: the next request looks its model up in the new release; a request already
holding a model of the old one finishes on it. A model both releases hold unchanged stays
loaded; the others are unloaded (and dropped from the disk cache) once their requests finish,
and a model of the new release that shares a name with one of them loads after that.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hmac
import json
import logging
import shlex
import shutil
import tempfile
import time
from pathlib import Path

from infra.targets.local.cache import fetch_verified, scan_archive
from infra.targets.local.manager import ModelManager, ModelState
from infra.targets.local.release import read_manifest_abandonable
from packager.manifest import Manifest
from packager.stores import Store, open_store
from tdk.errors import TdkError

log = logging.getLogger(__name__)

#: seconds a retired model waits for its requests before it is unloaded regardless
RETIRE_TIMEOUT_S = 600.0


def _archive_problems(store: Store, manifest: Manifest) -> list[str]:
    problems = []
    for entry in manifest.models:
        found = store.sha256_of(entry.archive)
        if found is None:
            problems.append(f"{entry.target_model}: {store.describe(entry.archive)} is missing")
        elif found != entry.sha256:
            problems.append(
                f"{entry.target_model}: {store.describe(entry.archive)} does not match the "
                f"manifest's sha256 {entry.sha256[:16]}…"
            )
    return problems


def _contents_problems(
    store: Store, manifest: Manifest, work: Path, known: frozenset[str]
) -> list[str]:
    """What the loader would refuse in each archive not served now (a link, a path outside
    its model, too many members, a missing config.pbtxt), each fetched and read, not written."""
    problems = []
    downloads = Path(tempfile.mkdtemp(prefix="switch.", dir=work))
    try:
        for entry in manifest.models:
            if not entry.archive or entry.sha256 in known:
                continue
            try:
                archive = fetch_verified(store, entry, downloads)
                try:
                    scan_archive(archive, entry)
                finally:
                    archive.unlink(missing_ok=True)
            except TdkError as exc:
                problems.append(exc.message)
    finally:
        shutil.rmtree(downloads, ignore_errors=True)
    return problems


async def verify_release(
    store: Store, work: Path | None = None, known: frozenset[str] = frozenset()
) -> Manifest:
    """The release's manifest once it and every archive it names check out and (with
    ``work``, a private directory) each archive whose sha256 is not in ``known`` (those served
    now) holds what the loader takes; TdkError if not."""
    manifest = await read_manifest_abandonable(store)
    problems = await asyncio.to_thread(_archive_problems, store, manifest)
    if not problems and work is not None:
        problems = await asyncio.to_thread(_contents_problems, store, manifest, work, known)
    if problems:
        raise TdkError(
            f"not switched: the release at {store.url} is incomplete or damaged: "
            + "; ".join(problems[:5]),
            hint=f"publish it again (`tdk package REPO --release {shlex.quote(store.url)}`), or "
            "switch to another release; the endpoint keeps serving its own",
        )
    return manifest


async def switch(manager: ModelManager, release: str, endpoint_url: str | None = None) -> Manifest:
    """Serve the release at ``release`` from the next request on; its manifest."""
    store = open_store(release, endpoint_url or manager.settings.store_endpoint_url)
    known = frozenset(state.entry.sha256 for state in manager.models.values())
    manifest = await verify_release(store, manager.workdir, known)
    old = manager.models
    models: dict[str, ModelState] = {}
    for entry in manifest.models:
        kept = old.get(entry.target_model)
        models[entry.target_model] = (
            kept if kept is not None and kept.entry == entry else ModelState(entry)
        )
    retired = [state for name, state in old.items() if models.get(name) is not state]
    for state in retired:
        state.retired = True
    # one step of the event loop: no request sees half of it
    manager.store = store
    manager.manifest = manifest
    manager.settings = dataclasses.replace(
        manager.settings,
        release=release,
        store_endpoint_url=endpoint_url or manager.settings.store_endpoint_url,
    )
    manager.models = models
    manager.metrics.known = frozenset(models)
    manager.retiring.extend(retired)
    for state in retired:
        task = asyncio.create_task(_retire(manager, state))
        manager._background.add(task)
        task.add_done_callback(manager._background.discard)
    log.warning("switched to the release at %s (%d models)", release, len(models))
    return manifest


async def _retire(manager: ModelManager, state: ModelState) -> None:
    """Unload a model of the old release once no request uses it; drop its extracted copy."""
    deadline = time.monotonic() + RETIRE_TIMEOUT_S
    try:
        while state.inflight or state.pending or state.loading is not None:
            if time.monotonic() >= deadline - 1:
                log.warning("%s: unloaded with requests still in flight", state.entry.target_model)
                break
            await manager._wait_change(deadline, wake=time.monotonic() + 1)
        if state.loaded:
            await manager._unload(state)
        if manager.disk.has(state.entry):
            manager.disk.drop(state.entry)
    finally:
        manager.retiring.remove(state)
        manager._notify()


#: the header that carries the endpoint's control secret (the state file has it, mode 0600)
CONTROL_HEADER = b"x-tdk-control"


async def handle(
    manager: ModelManager, secret: str, headers: list[tuple[bytes, bytes]], body: bytes
) -> tuple[int, dict[str, object]]:
    """``POST /tdk/switch``: the status and JSON answer; only the endpoint's owner may switch."""
    given = dict(headers).get(CONTROL_HEADER, b"")
    if not secret or not hmac.compare_digest(given, secret.encode()):
        return 403, {"error": "switching needs the endpoint's control secret (its state file)"}
    try:
        request = json.loads(body)
        release = request["release"]
        endpoint_url = request.get("endpoint_url")
        if not isinstance(release, str) or not isinstance(endpoint_url, str | None):
            raise TypeError
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return 400, {"error": 'the body is {"release": URL, "endpoint_url": URL or null}'}
    try:
        manifest = await switch(manager, release, endpoint_url)
    except TdkError as exc:
        return 409, {"error": exc.message, "hint": exc.hint or ""}
    return 200, {"release": release, "models": [m.target_model for m in manifest.models]}
