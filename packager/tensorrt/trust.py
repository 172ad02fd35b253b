"""Who vouches for a cached TensorRT engine: an HMAC over its record, with a key only the user
of ``tdk build`` holds.

The engine cache lives in the release store, and whoever writes its ``engines/`` prefix (the
build Job's identity, or anyone else granted the bucket) could plant a ``model.plan`` with a
``plan.json`` that claims parity. So the record does not certify itself: ``tdk build``
endorses a record once it has checked it (a local build: its own parity run; a Job: the
record's sha256 that the Job printed in its own log, which no writer of the store can alter)
by writing ``plan.sig``, HMAC-SHA256 of the record's bytes under a key kept 0600 in this
user's tdk cache directory (``TDK_PLAN_KEY_FILE`` names another: the key a CI runner shares
with the builder). ``tdk package`` serves an engine only under a valid endorsement.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
from pathlib import Path

from packager.stores.base import Store
from packager.userdirs import cache_dir, private_dir
from tdk.errors import TdkError

KEY_ENV = "TDK_PLAN_KEY_FILE"
SIGNATURE_FILE = "plan.sig"
KEY_BYTES = 32
#: an endorsement of nothing but an engine record; the bytes keep the word plan, as every
#: plan.sig written so far is computed over them (a new domain would void them all)
_DOMAIN = b"tdk plan record v1\n"


def key_path() -> Path:
    """``$TDK_PLAN_KEY_FILE``, else ``plan.key`` in this user's private ``keys`` directory."""
    configured = os.environ.get(KEY_ENV)
    if configured:
        return Path(configured).expanduser()
    return private_dir(cache_dir() / "keys") / "plan.key"


def load_key(create: bool = False) -> bytes | None:
    """The endorsement key (made, 0600, when ``create`` and there is none); None when absent.
    A key that is a link, another user's, or readable by others is refused: it vouches for
    what pods on a GPU then run."""
    path = key_path()
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        if not create:
            return None
        return _create(path)
    except OSError as exc:
        raise _key_error(path, f"cannot be opened ({exc.strerror})") from exc
    with os.fdopen(fd, "rb") as handle:
        found = os.fstat(handle.fileno())
        problem = _key_problem(found)
        if problem:
            raise _key_error(path, problem)
        key = handle.read(4096)
    if len(key) < KEY_BYTES:
        raise _key_error(path, f"holds {len(key)} bytes, fewer than {KEY_BYTES}")
    return key


def _key_problem(found: os.stat_result) -> str | None:
    if not stat.S_ISREG(found.st_mode):
        return "is not a regular file"
    if found.st_uid != os.geteuid():
        return f"belongs to uid {found.st_uid}, not to you"
    if found.st_mode & 0o077:
        return f"is readable or writable by others (mode {stat.S_IMODE(found.st_mode):o})"
    return None


def _create(path: Path) -> bytes:
    key = secrets.token_bytes(KEY_BYTES)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return load_key() or key  # made meanwhile by another tdk build
    except OSError as exc:
        raise _key_error(path, f"cannot be created ({exc.strerror})") from exc
    with os.fdopen(fd, "wb") as handle:
        handle.write(key)
    return key


def _key_error(path: Path, problem: str) -> TdkError:
    return TdkError(
        f"the engine endorsement key {path} {problem}",
        hint=f"chmod 600 it if it is yours, or point {KEY_ENV} at your key (a new key means "
        "rebuilding the engines: tdk build)",
    )


def endorsement(key: bytes, record: bytes) -> str:
    return hmac.new(key, _DOMAIN + record, hashlib.sha256).hexdigest()


def endorse(store: Store, prefix: str, record: bytes) -> None:
    """Write ``prefix + plan.sig`` for the record bytes ``record`` (checked by the caller)."""
    signature = endorsement(load_key(create=True) or b"", record)
    store.put_bytes(prefix + SIGNATURE_FILE, signature.encode() + b"\n", "text/plain")


def endorsed(store: Store, prefix: str, record: bytes) -> bool:
    """Whether ``prefix + plan.sig`` endorses the record bytes ``record`` under this key."""
    key = load_key()
    if key is None or store.sha256_of(prefix + SIGNATURE_FILE) is None:
        return False
    given = store.get_bytes(prefix + SIGNATURE_FILE)[:256].decode("ascii", "replace").strip()
    return hmac.compare_digest(given, endorsement(key, record))
